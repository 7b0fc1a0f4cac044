package demo

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// base is the fixed "now" that generated timestamps, Unix minutes and ULIDs
// are drawn around, so that the same seed gives the same keys and values
// whenever the demo runs.
var base = time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)

// gen draws placeholder values and payload values from one random source.
type gen struct {
	r    *rand.Rand
	root any // the schema document being generated from, for local $refs
	// all makes objects carry every declared property instead of the
	// required ones plus a random choice of the others.
	all bool
}

const maxDepth = 8

// value generates a JSON value (map[string]any, []any, string, int64,
// float64, bool or nil) for schema s. name is the property the value is
// for, used to pick realistic strings and numbers.
func (g *gen) value(s any, name string, depth int) any {
	m, ok := s.(map[string]any)
	if !ok || depth > maxDepth {
		return g.word()
	}
	if ref, ok := m["$ref"].(string); ok {
		if t := g.resolve(ref); t != nil {
			return g.value(t, name, depth+1)
		}
	}
	if ex, ok := m["examples"].([]any); ok && len(ex) > 0 {
		return plain(ex[g.r.IntN(len(ex))])
	}
	if c, ok := m["const"]; ok {
		return plain(c)
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return plain(e[g.r.IntN(len(e))])
	}
	if d, ok := m["default"]; ok && g.r.IntN(2) == 0 {
		return plain(d)
	}
	switch schemaType(m) {
	case "object":
		return g.object(m, name, depth)
	case "array":
		return g.array(m, name, depth)
	case "integer":
		return g.integer(m, name)
	case "number":
		return float64(g.integer(m, name)) + float64(g.r.IntN(100))/100
	case "boolean":
		return g.r.IntN(2) == 0
	case "null":
		return nil
	case "string":
		return g.str(m, name)
	}
	// No type: a free-form value, as Celery's "result".
	return g.word()
}

// plain turns schema literals (json.Number) into generated-value types.
func plain(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

// resolve follows a local reference such as "#/$defs/price".
func (g *gen) resolve(ref string) any {
	p, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	cur := g.root
	for seg := range strings.SplitSeq(strings.TrimPrefix(p, "/"), "/") {
		if seg == "" {
			continue
		}
		seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[seg]
	}
	return cur
}

// schemaType returns the type a value for m should have: the first
// non-null entry of "type", else what the keywords suggest.
func schemaType(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok && s != "null" {
				return s
			}
		}
		if len(t) > 0 {
			return "null"
		}
	}
	switch {
	case m["properties"] != nil, m["additionalProperties"] != nil, m["required"] != nil, m["propertyNames"] != nil:
		return "object"
	case m["items"] != nil:
		return "array"
	case m["pattern"] != nil, m["format"] != nil, m["minLength"] != nil, m["maxLength"] != nil:
		return "string"
	case m["minimum"] != nil, m["maximum"] != nil:
		return "integer"
	}
	return ""
}

func (g *gen) object(m map[string]any, name string, depth int) map[string]any {
	out := map[string]any{}
	props, _ := m["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	// Sorted, so that the same seed draws the same values.
	for _, k := range sortedKeys(props) {
		if required[k] || g.all || g.r.IntN(10) < 6 {
			out[k] = g.value(props[k], k, depth+1)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(required)) {
		if _, ok := out[k]; !ok && props[k] == nil {
			out[k] = g.word()
		}
	}
	if len(props) > 0 {
		return out
	}
	// A map: field names from propertyNames, values from additionalProperties.
	extra, _ := m["additionalProperties"].(map[string]any)
	names, _ := m["propertyNames"].(map[string]any)
	if extra == nil && names == nil && m["additionalProperties"] == false {
		return out
	}
	n := 1 + g.r.IntN(4)
	if mx, ok := number(m["maxProperties"]); ok && int(mx) < n {
		n = max(int(mx), 0)
	}
	if mn, ok := number(m["minProperties"]); ok && int(mn) > n {
		n = int(mn)
	}
	for i := 0; len(out) < n && i < 4*n; i++ {
		k := g.word()
		if names != nil {
			k = g.str(names, name+"_field")
		}
		if extra != nil {
			out[k] = g.value(extra, k, depth+1)
		} else {
			out[k] = g.text(k)
		}
	}
	return out
}

func (g *gen) array(m map[string]any, name string, depth int) []any {
	lo, hi := 0, 3
	if v, ok := number(m["minItems"]); ok {
		lo = int(v)
	}
	if v, ok := number(m["maxItems"]); ok {
		hi = min(hi, int(v))
	}
	hi = max(hi, lo)
	n := lo + g.r.IntN(hi-lo+1)
	unique := m["uniqueItems"] == true
	out := []any{}
	seen := map[string]bool{}
	for i := 0; len(out) < n && i < 8*n; i++ {
		v := g.value(m["items"], strings.TrimSuffix(name, "s"), depth+1)
		b, _ := json.Marshal(v)
		if unique && seen[string(b)] {
			continue
		}
		seen[string(b)] = true
		out = append(out, v)
	}
	return out
}

// number reads a schema number (json.Number, float64 or int).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func (g *gen) integer(m map[string]any, name string) int64 {
	lo, hi := g.intRange(name)
	mn, hasMin := number(m["minimum"])
	if v, ok := number(m["exclusiveMinimum"]); ok {
		mn, hasMin = math.Floor(v)+1, true
	}
	mx, hasMax := number(m["maximum"])
	if v, ok := number(m["exclusiveMaximum"]); ok {
		mx, hasMax = math.Ceil(v)-1, true
	}
	if hasMin {
		lo = max(lo, int64(math.Ceil(mn)))
	}
	if hasMax {
		hi = min(hi, int64(math.Floor(mx)))
	}
	if lo > hi {
		switch {
		case hasMin && hasMax:
			lo, hi = int64(math.Ceil(mn)), int64(math.Floor(mx))
		case hasMin:
			hi = lo + 1000
		default:
			lo = hi - 1000
		}
	}
	if hi < lo {
		return lo
	}
	return lo + g.r.Int64N(hi-lo+1)
}

// intRange is a realistic range for an integer property or placeholder.
func (g *gen) intRange(name string) (int64, int64) {
	switch {
	case name == "status":
		return 200, 201
	case name == "qty" || name == "attempts":
		return 1, 4
	case strings.Contains(name, "percent"):
		return 0, 100
	case name == "ts" || strings.HasSuffix(name, "_at"):
		return base.Unix() - 86400, base.Unix()
	case name == "window":
		return base.Unix()/60 - 1, base.Unix() / 60
	case name == "season":
		return 1, 60
	case name == "client_id":
		return 1, 500
	case strings.Contains(name, "price") || name == "amount":
		return 199, 49999
	case name == "user_id" || name == "uid" || name == "allow_user_id" || name == "user":
		return 1000, 2_000_000
	case strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "_ids"):
		return 1000, 99_999
	}
	return 1, 100_000
}

func (g *gen) str(m map[string]any, name string) string {
	minLen, maxLen := 0, -1
	if v, ok := number(m["minLength"]); ok {
		minLen = int(v)
	}
	if v, ok := number(m["maxLength"]); ok {
		maxLen = int(v)
	}
	var re *regexp.Regexp
	if p, ok := m["pattern"].(string); ok {
		re, _ = regexp.Compile(p) // an ECMA-only pattern fails every candidate below
		if re == nil {
			re = regexp.MustCompile(`^\b$`) // matches nothing
		}
	}
	fits := func(s string) bool {
		n := utf8.RuneCountInString(s)
		return n >= minLen && (maxLen < 0 || n <= maxLen) && (re == nil || re.MatchString(s))
	}
	if re != nil {
		for _, c := range g.candidates(name) {
			if fits(c) {
				return c
			}
		}
		return "" // the caller's validation reports the property
	}
	var s string
	switch m["format"] {
	case "date-time":
		s = g.timeAround().Format(time.RFC3339)
	case "date":
		s = g.timeAround().Format(time.DateOnly)
	case "email", "idn-email":
		s = g.email()
	case "uuid":
		s = g.uuid()
	case "ipv4":
		s = g.ipv4()
	case "uri", "iri", "uri-reference":
		s = fmt.Sprintf("https://cdn.example.com/img/%d/%s.jpg", 1000+g.r.IntN(90000), g.hex(8))
	default:
		s = g.text(name)
	}
	for utf8.RuneCountInString(s) < minLen {
		s += " " + g.word()
	}
	if maxLen >= 0 && utf8.RuneCountInString(s) > maxLen {
		s = string([]rune(s)[:maxLen])
	}
	return s
}

// candidates are strings of common shapes, tried in turn against a
// property's pattern.
func (g *gen) candidates(name string) []string {
	c := []string{
		strconv.Itoa(1 + g.r.IntN(999_999)),
		g.snake(name),
		pick(g.r, "EUR", "USD", "GBP", "CHF", "SEK"),
		g.hex(64), g.hex(32), g.hex(16),
		g.uuid(),
		g.ulid(),
		fmt.Sprintf("%d-%d", base.UnixMilli()-int64(g.r.IntN(3_600_000)), g.r.IntN(3)),
		g.word(),
	}
	return c
}

// text is a realistic free-text string for a property name.
func (g *gen) text(name string) string {
	switch {
	case name == "sku":
		return fmt.Sprintf("SKU-%05d-%s", g.r.IntN(100_000), pick(g.r, "BK", "RD", "WH", "XL", "S"))
	case name == "title":
		return pick(g.r, "Merino", "Linen", "Trail", "Classic", "Compact", "Everyday") + " " +
			pick(g.r, "Crew Sweater", "Running Shoe", "Backpack 22L", "Desk Lamp", "Water Bottle", "Rain Jacket")
	case name == "body":
		return pick(g.r, "see you at 6?", "ok, shipping it today", "can someone review #4821", "lunch?", "thanks, that fixed it", "https://cdn.example.com/img/cat.png")
	case name == "ip":
		return g.ipv4()
	case name == "user_agent":
		return pick(g.r, "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15",
			"Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0 Safari/537.36",
			"okhttp/4.12.0", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) Mobile/15E148")
	case name == "variant":
		return pick(g.r, "size-s", "size-m", "size-l", "black", "navy", "oat")
	case name == "updated_by":
		return pick(g.r, "alice", "bob", "carol", "deploy-bot", "dmitri")
	case name == "locale":
		return pick(g.r, "en", "de", "fr", "nl", "en-GB")
	case name == "role":
		return pick(g.r, "customer", "admin", "support", "beta", "staff")
	case name == "date_done" || strings.HasSuffix(name, "_at"):
		return g.timeAround().Format(time.RFC3339)
	case strings.Contains(name, "name"):
		return pick(g.r, "Ada", "Grace", "Linus", "Barbara", "Ken")
	}
	return g.word()
}

var vocab = []string{
	"alpha", "amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "harbor", "iris",
	"juniper", "kestrel", "lumen", "maple", "nova", "onyx", "pebble", "quartz", "raven", "sierra",
	"tundra", "umber", "vale", "willow", "xenon", "yarrow", "zephyr",
}

func (g *gen) word() string { return vocab[g.r.IntN(len(vocab))] }

// snake is a snake_case identifier: a mail template or a flag name.
func (g *gen) snake(name string) string {
	if name == "template" {
		return pick(g.r, "order_confirmation", "password_reset", "welcome", "shipping_update", "email_verify", "invoice")
	}
	return pick(g.r, "new_checkout", "dark_mode", "one_click_pay", "search_v2", "gift_cards",
		"recommendations", "holiday_banner", "passkeys", "bulk_export", "live_chat", "apple_pay", "reorder_button")
}

func pick(r *rand.Rand, s ...string) string { return s[r.IntN(len(s))] }

func (g *gen) timeAround() time.Time {
	return base.Add(-time.Duration(g.r.Int64N(int64(72 * time.Hour)))).Truncate(time.Second)
}

func (g *gen) email() string {
	return fmt.Sprintf("%s.%s%d@%s", pick(g.r, "ada", "grace", "linus", "barbara", "ken", "margaret", "alan"),
		pick(g.r, "lovelace", "hopper", "liskov", "thompson", "hamilton", "turing"), g.r.IntN(100),
		pick(g.r, "example.com", "example.org", "mail.example.net"))
}

func (g *gen) ipv4() string {
	return fmt.Sprintf("%d.%d.%d.%d", 10+g.r.IntN(180), g.r.IntN(256), g.r.IntN(256), 1+g.r.IntN(254))
}

const hexDigits = "0123456789abcdef"

func (g *gen) hex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = hexDigits[g.r.IntN(16)]
	}
	return string(b)
}

func (g *gen) uuid() string {
	h := []byte(g.hex(32))
	h[12] = '4'
	h[16] = "89ab"[g.r.IntN(4)]
	s := string(h)
	return s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ulid is a ULID whose time part lies in the days before base.
func (g *gen) ulid() string {
	ms := uint64(base.UnixMilli() - g.r.Int64N(int64(30*24*time.Hour/time.Millisecond)))
	b := make([]byte, 26)
	for i := 9; i >= 0; i-- {
		b[i] = crockford[ms&31]
		ms >>= 5
	}
	for i := 10; i < 26; i++ {
		b[i] = crockford[g.r.IntN(32)]
	}
	return string(b)
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
