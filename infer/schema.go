package infer

import (
	"encoding/json"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// SchemaDraft is the $schema of the documents SchemaInferrer writes.
const SchemaDraft = "https://json-schema.org/draft/2020-12/schema"

// SchemaOptions bound a SchemaInferrer. Zero fields take their defaults.
type SchemaOptions struct {
	// MaxEnum is the largest set of distinct strings that may become an
	// enum (default 8, at most 64).
	MaxEnum int
	// MaxDepth is the deepest nesting described (default 16, at most 32, so
	// that the schema stays within the registry's nesting limit of 100).
	// Values below it are described by their types only.
	MaxDepth int
	// MaxProperties is the number of properties tracked per object
	// (default 200). Properties past it are left to the open
	// additionalProperties.
	MaxProperties int
}

// Bounds of a SchemaInferrer that are not options.
const (
	// maxNodes bounds the schema nodes tracked per inferrer: what gets no
	// node is left unconstrained.
	maxNodes = 2048
	// maxSchemaValues bounds the JSON values of the document Schema
	// returns, below the registry's 10,000 per payload schema so that the
	// writer may add a title or an $id. Past it, the deepest nodes (in
	// breadth-first order) are written as {}.
	maxSchemaValues = 8000
	// maxVisits bounds the values one Add walks. Decoded payloads are
	// trees, far below this; only a huge or cyclic in-memory value
	// reaches it, and then the schema accepts everything.
	maxVisits = 1 << 22
	// maxNameLen bounds a tracked property name; longer names (and names
	// that are not UTF-8) are left to additionalProperties.
	maxNameLen = 256
	// maxEnumLen bounds an enum value; a longer string is no enum member.
	maxEnumLen = 64
)

// Kinds of JSON value, as bits of node.kinds.
const (
	kNull uint8 = 1 << iota
	kBool
	kInteger
	kNumber
	kString
	kArray
	kObject
)

// JSON Schema type names by kind bit, in the order they are written.
var kindNames = [...]struct {
	bit  uint8
	name string
}{
	{kArray, "array"}, {kBool, "boolean"}, {kInteger, "integer"}, {kNull, "null"},
	{kNumber, "number"}, {kObject, "object"}, {kString, "string"},
}

// Formats, as bits of node.formats, in the order one is preferred.
const (
	fUUID uint8 = 1 << iota
	fDateTime
	fDate
	fEmail
	fURI
	fAll = fUUID | fDateTime | fDate | fEmail | fURI
)

var formatNames = [...]struct {
	bit  uint8
	name string
}{{fUUID, "uuid"}, {fDateTime, "date-time"}, {fDate, "date"}, {fEmail, "email"}, {fURI, "uri"}}

// SchemaInferrer infers a JSON Schema from sampled values, fed one by one.
// Its memory is bounded by its options, never by the number or size of the
// values: at most maxNodes nodes, each with at most MaxProperties
// properties of bounded names and MaxEnum+1 enum candidates of bounded
// length. The zero value is not usable; call NewSchemaInferrer.
//
// Every schema it returns validates every value it was given: a bound that
// stops the inferrer from describing part of a value leaves that part
// unconstrained.
type SchemaInferrer struct {
	o      SchemaOptions
	root   *schemaNode
	nodes  int
	visits int
}

// node describes every value seen at one place of the samples.
type schemaNode struct {
	kinds uint8
	any   bool // a value outside the value model was seen: no constraint

	// strings
	strings int64 // how many strings
	formats uint8 // the formats every string so far fits
	enumOff bool  // no enum: too many values, or unsuitable ones
	enum    []enumValue

	// objects
	objects  int64
	props    []*prop // sorted by name
	idLike   bool    // the property name says it holds ids: never an enum
	overflow bool    // a property was left out

	// arrays
	items *schemaNode // nil: no element seen, or elements left unconstrained
}

type enumValue struct {
	s string
	n int64
}

type prop struct {
	name       string
	seen       int64 // objects that had it
	schemaNode *schemaNode
}

// NewSchemaInferrer returns an inferrer with the given bounds.
func NewSchemaInferrer(o SchemaOptions) *SchemaInferrer {
	if o.MaxEnum <= 0 {
		o.MaxEnum = 8
	}
	o.MaxEnum = min(o.MaxEnum, 64)
	if o.MaxDepth <= 0 {
		o.MaxDepth = 16
	}
	o.MaxDepth = min(o.MaxDepth, 32)
	if o.MaxProperties <= 0 {
		o.MaxProperties = 200
	}
	s := &SchemaInferrer{o: o}
	s.root = s.newNode(false)
	return s
}

func (s *SchemaInferrer) newNode(idLike bool) *schemaNode {
	if s.nodes >= maxNodes {
		return nil
	}
	s.nodes++
	return &schemaNode{formats: fAll, idLike: idLike, enumOff: idLike}
}

// Add merges one sampled value into the schema. v is in the value model of
// payload.Decode: map[string]any, []any, string, json.Number, float64,
// bool and nil. A value of any other Go type (or a NaN, an infinity, or a
// json.Number that is no JSON number) leaves its place unconstrained.
func (s *SchemaInferrer) Add(v any) {
	if s.root.any {
		return
	}
	s.visits = 0
	if !s.add(s.root, v, 0) {
		// The walk was cut short: parts of v are not described, so
		// nothing may be claimed about any of it.
		s.root.any = true
	}
}

// add merges v into n, which describes depth d. It returns false when the
// visit budget ran out before v was fully described.
func (s *SchemaInferrer) add(n *schemaNode, v any, d int) bool {
	if s.visits++; s.visits > maxVisits {
		return false
	}
	if n.any {
		return true
	}
	switch v := v.(type) {
	case nil:
		n.kinds |= kNull
	case bool:
		n.kinds |= kBool
	case json.Number:
		switch numberKind(string(v)) {
		case kInteger:
			n.kinds |= kInteger
		case kNumber:
			n.kinds |= kNumber
		default:
			n.any = true
		}
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			n.any = true
			return true
		}
		n.kinds |= kNumber
	case string:
		n.kinds |= kString
		s.addString(n, v)
	case []any:
		n.kinds |= kArray
		if d >= s.o.MaxDepth {
			return true
		}
		for _, e := range v {
			if n.items == nil {
				if n.items = s.newNode(false); n.items == nil {
					return true
				}
			}
			if !s.add(n.items, e, d+1) {
				return false
			}
		}
	case map[string]any:
		n.kinds |= kObject
		n.objects++
		if d >= s.o.MaxDepth {
			return true // properties not described, none required
		}
		return s.addObject(n, v, d)
	default:
		n.any = true
	}
	return true
}

// addObject merges the properties of obj into n. The tracked properties
// are visited in name order, then new ones in name order, so that the
// bounds (node budget, MaxProperties) cut at the same place whatever the
// map's iteration order.
func (s *SchemaInferrer) addObject(n *schemaNode, obj map[string]any, d int) bool {
	found := 0
	for _, p := range n.props {
		v, ok := obj[p.name]
		if !ok {
			continue
		}
		found++
		p.seen++
		if !s.add(p.schemaNode, v, d+1) {
			return false
		}
	}
	if found == len(obj) {
		return true
	}
	if len(n.props) >= s.o.MaxProperties || s.nodes >= maxNodes {
		n.overflow = true // no room: the new properties stay open
		return true
	}
	var fresh []string
	for k := range obj {
		if !trackable(k) {
			n.overflow = true
			continue
		}
		if _, ok := n.find(k); !ok {
			fresh = append(fresh, k)
		}
	}
	slices.Sort(fresh)
	for _, k := range fresh {
		if len(n.props) >= s.o.MaxProperties {
			n.overflow = true
			break
		}
		c := s.newNode(idName(k))
		if c == nil {
			n.overflow = true
			break
		}
		// seen counts this object only: a property absent from earlier
		// objects is never required.
		p := &prop{name: strings.Clone(k), seen: 1, schemaNode: c}
		i, _ := n.find(k)
		n.props = slices.Insert(n.props, i, p)
		if !s.add(c, obj[k], d+1) {
			return false
		}
	}
	return true
}

// find returns the index of the property named k in n.props, or where it
// would be inserted.
func (n *schemaNode) find(k string) (int, bool) {
	return slices.BinarySearchFunc(n.props, k, func(p *prop, k string) int { return strings.Compare(p.name, k) })
}

func trackable(k string) bool { return len(k) <= maxNameLen && utf8.ValidString(k) }

// idName reports whether a property name says its values are identifiers
// (id, user_id, userId, uuid, token...): such a property never gets an
// enum, however few its values.
func idName(k string) bool {
	l := strings.ToLower(k)
	for _, suf := range [...]string{"id", "ids", "uuid", "guid", "key", "token", "hash", "email", "url", "uri"} {
		if l == suf {
			return true
		}
		if strings.HasSuffix(l, suf) && len(l) > len(suf) {
			c := k[len(k)-len(suf)-1]
			first := k[len(k)-len(suf)]
			if c == '_' || c == '-' || c == '.' || c == ' ' || (first >= 'A' && first <= 'Z') {
				return true
			}
		}
	}
	return false
}

func (s *SchemaInferrer) addString(n *schemaNode, v string) {
	n.strings++
	if n.formats != 0 {
		n.formats &= formatsOf(v)
	}
	if n.enumOff {
		return
	}
	if !enumable(v) {
		n.enumOff, n.enum = true, nil
		return
	}
	for i := range n.enum {
		if n.enum[i].s == v {
			n.enum[i].n++
			return
		}
	}
	if len(n.enum) >= s.o.MaxEnum {
		n.enumOff, n.enum = true, nil
		return
	}
	n.enum = append(n.enum, enumValue{s: strings.Clone(v), n: 1})
}

// enumable reports whether v may be an enum member: short, UTF-8, and not
// shaped like an identifier, a timestamp or an address. Identifiers repeat
// (a tenant id, a shard), so counting alone would make enums of them.
func enumable(v string) bool {
	if len(v) > maxEnumLen || !utf8.ValidString(v) || formatsOf(v) != 0 {
		return false
	}
	run, digits, letters := 0, 0, 0
	space := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			if run++; run >= 4 {
				return false // 12345, u_1001, order-2024
			}
			continue
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
		case c == ' ':
			space = true
		}
		run = 0
	}
	if len(v) >= 8 && digits >= 2 && letters > 0 && !space {
		return false // a1b2c3d4, cus_8fk2Ha
	}
	if len(v) >= 20 && !space {
		return false // tokens, ULIDs, hashes
	}
	return true
}

// numberKind classifies a json.Number: kInteger for an integer literal
// (no fraction, no exponent), kNumber for any other JSON number, 0 for
// text that is no JSON number.
func numberKind(s string) uint8 {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return 0
	}
	k := kInteger
	if i < len(s) && s[i] == '.' {
		i++
		if !digitRun(s, &i) {
			return 0
		}
		k = kNumber
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digitRun(s, &i) {
			return 0
		}
		k = kNumber
	}
	if i != len(s) {
		return 0
	}
	return k
}

func digitRun(s string, i *int) bool {
	start := *i
	for *i < len(s) && s[*i] >= '0' && s[*i] <= '9' {
		*i++
	}
	return *i > start
}

// Schema returns the inferred JSON Schema (draft 2020-12) as JSON values:
// map[string]any, []any, string and bool. Objects stay open (no
// additionalProperties), so a registry built from it accepts optional
// fields the samples did not show. Before any Add it accepts everything.
func (s *SchemaInferrer) Schema() map[string]any {
	e := emitter{s: s, left: maxSchemaValues - 2}
	doc := e.emit(s.root)
	doc["$schema"] = SchemaDraft
	return doc
}

// emitter writes the nodes breadth first within a budget of JSON values
// (counted as the registry counts them), so that a bound cuts the deepest
// detail, and a node past the budget becomes {}.
type emitter struct {
	s    *SchemaInferrer
	left int
}

type pending struct {
	n   *schemaNode
	out map[string]any
}

func (e *emitter) emit(root *schemaNode) map[string]any {
	out := map[string]any{}
	queue := []pending{{root, out}}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		kw, children, cost := e.keywords(p.n)
		if cost > e.left {
			continue // stays {}
		}
		e.left -= cost
		for k, v := range kw {
			p.out[k] = v
		}
		queue = append(queue, children...)
	}
	return out
}

// keywords returns n's own keywords, the children still to be written
// into them, and the JSON values the keywords add, counted as the
// registry's schema limit counts them: every value, list members and map
// members included, each child's map counted once as {} (its own keywords
// are counted when it is filled).
func (e *emitter) keywords(n *schemaNode) (kw map[string]any, children []pending, cost int) {
	kw = map[string]any{}
	if n == nil || n.any || n.kinds == 0 {
		return kw, nil, 0
	}
	kinds := n.kinds
	if kinds&kNumber != 0 {
		kinds &^= kInteger // number admits the integers
	}
	var types []any
	for _, k := range kindNames {
		if kinds&k.bit != 0 {
			types = append(types, k.name)
		}
	}
	if len(types) == 1 {
		kw["type"] = types[0]
		cost++
	} else {
		kw["type"] = types
		cost += 1 + len(types)
	}
	if n.kinds&kString != 0 {
		for _, f := range formatNames {
			if n.formats&f.bit != 0 {
				kw["format"] = f.name
				cost++
				break
			}
		}
		if enum := e.enum(n); enum != nil {
			kw["enum"] = enum
			cost += 1 + len(enum)
		}
	}
	if n.kinds&kObject != 0 && len(n.props) > 0 {
		props := map[string]any{}
		var required []any
		for _, p := range n.props {
			child := map[string]any{}
			props[p.name] = child
			children = append(children, pending{p.schemaNode, child})
			if p.seen == n.objects {
				required = append(required, p.name)
			}
		}
		kw["properties"] = props
		cost += 1 + len(props)
		if len(required) > 0 {
			kw["required"] = required
			cost += 1 + len(required)
		}
	}
	if n.kinds&kArray != 0 && n.items != nil && n.items.kinds != 0 {
		child := map[string]any{}
		kw["items"] = child
		children = append(children, pending{n.items, child})
		cost++
	}
	return kw, children, cost
}

// enum returns the enum of a node, or nil. The rule: every value of the
// node is a string (or null), there are 2 to MaxEnum distinct strings,
// none shaped like an identifier (see enumable) nor under a property named
// like one (see idName), and the evidence is enough: every value was seen
// at least twice, or there are at least 4*MaxEnum strings (a closed set
// among many samples, where a rare value may show once).
func (e *emitter) enum(n *schemaNode) []any {
	if n.enumOff || n.kinds&^(kString|kNull) != 0 || len(n.enum) < 2 {
		return nil
	}
	many := n.strings >= int64(4*e.s.o.MaxEnum)
	vals := make([]string, 0, len(n.enum))
	for _, v := range n.enum {
		if v.n < 2 && !many {
			return nil
		}
		vals = append(vals, v.s)
	}
	slices.Sort(vals)
	out := make([]any, 0, len(vals)+1)
	for _, v := range vals {
		out = append(out, v)
	}
	if n.kinds&kNull != 0 {
		out = append(out, nil)
	}
	return out
}

// formatsOf returns the formats s fits. Each check is the definition
// jsonschema v6 uses or a stricter one, so a format written validates
// every string it was inferred from when formats are asserted.
func formatsOf(s string) uint8 {
	var f uint8
	switch {
	case len(s) == 36 && fitsUUID(s):
		f |= fUUID
	case len(s) == 10 && isDate(s):
		f |= fDate
	case len(s) >= 20 && isDateTime(s):
		f |= fDateTime
	}
	if strings.IndexByte(s, '@') > 0 && isEmail(s) {
		f |= fEmail
	}
	if strings.IndexByte(s, ':') > 0 && isURI(s) {
		f |= fURI
	}
	return f
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isDecimalDigit(c byte) bool { return c >= '0' && c <= '9' }

// isUUID: 8-4-4-4-12 hex digits, as jsonschema v6.
func fitsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// isDate: YYYY-MM-DD that time.Parse accepts, as jsonschema v6.
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9} {
		if !isDecimalDigit(s[i]) {
			return false
		}
	}
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// isDateTime: RFC 3339 date-time, stricter than jsonschema v6: no leap
// second, 1 to 9 fraction digits, at most 64 bytes.
func isDateTime(s string) bool {
	if len(s) < 20 || len(s) > 64 || (s[10] != 'T' && s[10] != 't') || !isDate(s[:10]) {
		return false
	}
	t := s[11:]
	if len(t) < 9 || t[2] != ':' || t[5] != ':' || !twoDigits(t[0:2], 23) || !twoDigits(t[3:5], 59) || !twoDigits(t[6:8], 59) {
		return false
	}
	t = t[8:]
	if len(t) > 0 && t[0] == '.' {
		i := 1
		for i < len(t) && isDecimalDigit(t[i]) {
			i++
		}
		if i == 1 || i > 10 {
			return false
		}
		t = t[i:]
	}
	if t == "Z" || t == "z" {
		return true
	}
	return len(t) == 6 && (t[0] == '+' || t[0] == '-') && t[3] == ':' && twoDigits(t[1:3], 23) && twoDigits(t[4:6], 59)
}

func twoDigits(s string, max int) bool {
	return len(s) == 2 && isDecimalDigit(s[0]) && isDecimalDigit(s[1]) && int(s[0]-'0')*10+int(s[1]-'0') <= max
}

// isEmail: an unquoted dot-atom local part of at most 64 bytes, and a
// host name of at least two labels; stricter than jsonschema v6 (no
// quoted local parts, no address literals, no trailing dot).
func isEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	at := strings.IndexByte(s, '@')
	if at <= 0 || at > 64 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, "..") {
		return false
	}
	for i := 0; i < len(local); i++ {
		c := local[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDecimalDigit(c) || strings.IndexByte(".!#$%&'*+-/=?^_`{|}~", c) >= 0) {
			return false
		}
	}
	return isHostname(domain) && strings.IndexByte(domain, '.') > 0
}

// isHostname: labels of 1 to 63 letters, digits and inner hyphens, at
// most 253 bytes, no trailing dot.
func isHostname(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDecimalDigit(c) || c == '-') {
				return false
			}
		}
	}
	return true
}

// isURI: an absolute URI of RFC 3986 characters that net/url parses, with
// no IPv6 host; stricter than jsonschema v6, which accepts whatever
// net/url does.
func isURI(s string) bool {
	if len(s) > 2048 {
		return false
	}
	colon := strings.IndexByte(s, ':')
	if colon <= 0 {
		return false
	}
	for i := 0; i < colon; i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (isDecimalDigit(c) || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDecimalDigit(c):
		case strings.IndexByte("-._~:/?#@!$&'()*+,;=", c) >= 0:
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
		default:
			return false // spaces, brackets, controls, non-ASCII
		}
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		return false
	}
	return !strings.Contains(u.Hostname(), ":")
}
