// Package demo seeds an embedded Redis (miniredis) with a realistic keyspace
// for a registry, for `keyreg demo`.
//
// Seed writes clean keys for every family (key names built from the
// family's pattern, values generated from its payload schema and checked
// against it, TTLs and types per its policy) and plants a few keys of each
// kind of problem the audit reports: keys without a TTL or with one too
// long, TTLs on persistent families, wrong Redis types, placeholder values
// of the wrong type, payloads that break their schema or are in another
// encoding (a Python pickle or msgpack value in a json family), oversized
// values, over-long collections, stale keys, keys of a deprecated family
// after its sunset, locks without their fence and fences that expire or
// are not integers, streams without a declared consumer group, with a
// lagging group, a backlog of pending entries or a dead consumer holding
// some, and unregistered keys in a few prefix groups. A clean lock has its
// fence and a clean stream its groups. Seed also gives m OBJECT ENCODING,
// which miniredis lacks (objectEncoding). Planted
// records every key with the rules the audit must fire on it, so a test can
// check that the audit finds exactly those.
//
// The same Options give the same keys and values: every random choice comes
// from one math/rand/v2 source, and timestamps are drawn around a fixed
// date rather than the clock.
package demo

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
)

// DefaultSeed and DefaultKeys are the Options zero values stand for.
const (
	DefaultSeed = 1
	DefaultKeys = 20
)

// Options tunes Seed.
type Options struct {
	// Seed selects the keyspace; 0 means DefaultSeed.
	Seed uint64
	// Keys is the number of clean keys per family; 0 means DefaultKeys.
	// A family whose pattern has no placeholder holds one key; a deprecated
	// family gets a quarter as many, since its writers are mostly gone.
	Keys int
	// Now is the audit time, which decides whether a deprecated family is
	// past its sunset (deprecated-live); zero means time.Now.
	Now time.Time
}

// Problem is one (family, rule) pair of the audit report. Family is empty
// for unregistered keys.
type Problem struct {
	Family string
	Rule   string
}

// Key is one key Seed wrote.
type Key struct {
	Name string
	// Family is the family whose findings the key counts under: the family
	// it matches, or for a placeholder-invalid key the family whose shape
	// it has. It is empty for an unregistered key.
	Family string
	// Rules lists the rules the audit must fire on the key; empty for a
	// clean key.
	Rules []string
	// Suppressed lists rules that fire on the key but that its family
	// ignores (keys.yaml ignore:); the audit reports them as suppressed.
	Suppressed []string
}

// Clean reports whether no rule fires on the key, not even a suppressed one.
func (k Key) Clean() bool { return len(k.Rules) == 0 && len(k.Suppressed) == 0 }

// Planted records what Seed wrote.
type Planted struct {
	Keys []Key
	// Findings counts, per (family, rule), the keys the rule must fire on.
	Findings map[Problem]int
	// Suppressed counts the keys of findings the registry suppresses.
	Suppressed map[Problem]int
	// Unregistered counts the unregistered keys per prefix group.
	Unregistered map[string]int
}

// Registered reports whether the key matches its family (it is neither
// unregistered nor placeholder-invalid).
func (k Key) Registered() bool {
	return k.Family != "" && !slices.Contains(k.Rules, rules.PlaceholderInvalid.ID)
}

// FamilyKeys returns the number of keys the audit counts for a family:
// those that match it and those with its shape but a bad placeholder value
// (docs/audit-report.md, counting).
func (p *Planted) FamilyKeys(family string) int {
	n := 0
	for _, k := range p.Keys {
		if k.Family == family {
			n++
		}
	}
	return n
}

// MaxFamilyKeys returns the key count of the largest family, the sample
// size at which the audit reads every key's payload.
func (p *Planted) MaxFamilyKeys() int {
	per := map[string]int{}
	top := 0
	for _, k := range p.Keys {
		if k.Registered() {
			per[k.Family]++
			top = max(top, per[k.Family])
		}
	}
	return top
}

// errSkip says a problem cannot be planted in a family (for example, no
// unused key name is left); the seeder moves on.
var errSkip = errors.New("cannot plant here")

// Seed writes a keyspace for reg into m. It fails when a family cannot be
// seeded at all (such as type json, which miniredis lacks) or when its
// generator cannot produce a value its schema accepts; the error names the
// family and says what to add to the schema.
func Seed(m *miniredis.Miniredis, reg *registry.Registry, o Options) (Planted, error) {
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Keys == 0 {
		o.Keys = DefaultKeys
	}
	if o.Keys < 0 {
		return Planted{}, fmt.Errorf("keys per family must be positive, not %d", o.Keys)
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	objectEncoding(m)
	s := newSeeder(m, reg, o)
	for _, f := range reg.Families {
		if err := s.family(f); err != nil {
			return Planted{}, fmt.Errorf("seeding family %q: %w", f.Name, err)
		}
	}
	for _, sp := range plan {
		if err := s.plant(sp); err != nil {
			return Planted{}, fmt.Errorf("planting %s: %w", sp.rule, err)
		}
	}
	if err := s.unregistered(); err != nil {
		return Planted{}, fmt.Errorf("seeding unregistered keys: %w", err)
	}
	p := s.planted
	p.Findings, p.Suppressed = map[Problem]int{}, map[Problem]int{}
	for _, k := range p.Keys {
		for _, r := range k.Rules {
			p.Findings[Problem{k.Family, r}]++
		}
		for _, r := range k.Suppressed {
			p.Suppressed[Problem{k.Family, r}]++
		}
	}
	return p, nil
}

// family writes the clean keys of f.
func (s *seeder) family(f *registry.Family) error {
	if f.Pattern == nil {
		return nil
	}
	if f.Type == "json" {
		return errors.New("type json (RedisJSON) cannot be stored in the embedded Redis")
	}
	n := s.o.Keys
	if f.Deprecated != nil {
		n = max(1, n/4)
	}
	if len(f.Pattern.Placeholders()) == 0 {
		n = 1
	}
	for range n {
		key, err := s.keyFor(f)
		if errors.Is(err, errSkip) {
			break // the pattern has fewer names than n
		}
		if err != nil {
			return err
		}
		v, err := s.good(f)
		if err != nil {
			return err
		}
		if err := s.write(key, v, s.ttl(f)); err != nil {
			return err
		}
		s.record(key, f)
		if err := s.companions(key, f, nil); err != nil {
			return err
		}
	}
	return nil
}

// record adds a key of f with the rules it breaks, plus deprecated-live
// when f is past its sunset, after the registry's severity overrides and
// ignores.
func (s *seeder) record(key string, f *registry.Family, rs ...string) {
	if f != nil && f.Deprecated != nil && !f.Deprecated.Sunset.IsZero() && s.o.Now.After(f.Deprecated.Sunset) &&
		!slices.Contains(rs, rules.PlaceholderInvalid.ID) {
		rs = append(rs, rules.DeprecatedLive.ID)
	}
	k := Key{Name: key}
	if f != nil {
		k.Family = f.Name
	}
	for _, id := range rs {
		r, _ := rules.Lookup(id)
		switch sev, suppressed, _ := rules.Effective(s.reg, r, k.Family, r.Severity); {
		case sev == diag.Off:
		case suppressed:
			k.Suppressed = append(k.Suppressed, id)
		default:
			k.Rules = append(k.Rules, id)
		}
	}
	s.planted.Keys = append(s.planted.Keys, k)
}

// ttl draws a TTL that f's policy accepts; 0 means none.
func (s *seeder) ttl(f *registry.Family) time.Duration {
	switch f.TTL.Kind {
	case registry.TTLMax:
		lo := max(f.TTL.Max/10, time.Second)
		return (lo + time.Duration(s.g.r.Int64N(int64(f.TTL.Max-lo)+1))).Truncate(time.Second)
	case registry.TTLPersistent:
		return 0
	}
	if s.g.r.IntN(2) == 0 {
		return 0
	}
	return s.days(1, 30)
}

// days is a random whole-minute duration between lo and hi days.
func (s *seeder) days(lo, hi int) time.Duration {
	d := time.Duration(lo)*24*time.Hour + time.Duration(s.g.r.Int64N(int64(time.Duration(hi-lo)*24*time.Hour)))
	return d.Truncate(time.Minute)
}

// keyFor builds an unused key of f from random placeholder values.
func (s *seeder) keyFor(f *registry.Family) (string, error) {
	for attempt := range 80 {
		vals := map[string]string{}
		for _, pt := range f.Pattern.Placeholders() {
			vals[pt.Name] = s.placeholder(pt, attempt)
		}
		key, err := f.Pattern.Build(vals)
		if err != nil {
			return "", fmt.Errorf("building a key from %q: %w", f.Pattern.Source, err)
		}
		if s.used[key] || s.match.Match(key) != f {
			continue
		}
		return key, nil
	}
	return "", errSkip
}

// placeholder draws a value of pt's type. From the 40th attempt at an
// unused key on, integers come from a wider range and words get a numeric
// suffix (wider from the 60th), for families with more keys than the
// realistic values allow.
func (s *seeder) placeholder(pt registry.Part, attempt int) string {
	g := s.g
	switch pt.Type {
	case registry.UUID:
		return g.uuid()
	case registry.Hex:
		if pt.Name == "token" || pt.Name == "api_key" {
			return g.hex(32)
		}
		return g.hex(16)
	case registry.ULID:
		return g.ulid()
	case registry.Int:
		lo, hi := g.intRange(pt.Name)
		if attempt >= 40 {
			hi = lo + (hi-lo+1)*1000 // more keys than the realistic range holds
		}
		return fmt.Sprint(lo + g.r.Int64N(hi-lo+1))
	case registry.Any:
		return pick(g.r,
			"views.decorators.cache.cache_page..GET."+g.hex(32)+"."+g.hex(32)+".en-us.UTC",
			"template.cache.product_footer."+g.hex(32),
			"product_count:category:"+fmt.Sprint(10+g.r.IntN(400)),
			"site_settings:"+pick(g.r, "en", "de", "fr")+":"+g.hex(6),
		)
	}
	var w string
	switch pt.Name {
	case "template":
		w = pick(g.r, "header", "footer", "mega_menu", "cookie_banner", "product_grid", "breadcrumbs", "newsletter")
	case "locale":
		w = pick(g.r, "en-US", "en-GB", "de-DE", "fr-FR", "nl-NL", "es-ES")
	case "service":
		w = pick(g.r, "search", "checkout", "catalog", "cart-api", "mailer", "auth-api", "games-api",
			"chat-gateway", "storefront-web", "account-web", "order-worker", "admin", "catalog-api",
			"payments", "shipping", "inventory", "reviews", "recommendations", "notifications", "billing",
			"support-desk", "pricing", "loyalty", "returns", "media", "webhooks", "fraud", "analytics")
	case "resource":
		w = pick(g.r, "invoice-run/2026-11", "invoice-run/2026-10", "nightly-export", "payout-batch",
			"reindex-products", "sitemap-build", "inventory-sync", "search-reindex", "gdpr-erasure",
			"order-42817", "order-51230", "order-60094", "cart-merge-18832", "coupon-BLACKFRIDAY",
			"price-import", "feed-google-shopping", "warehouse-ams1", "warehouse-ber2", "refund-run",
			"newsletter-send", "cache-warmup", "tax-rates-sync", "user-export-77310", "avatar-resize",
			"settlement-2026-11-28", "ledger-close", "report-weekly-sales", "webhook-retry", "sso-keys-rotate")
	default:
		w = g.word()
	}
	switch {
	case attempt >= 60:
		w += fmt.Sprintf("-%d", 2+g.r.IntN(99_998))
	case attempt >= 40:
		w += fmt.Sprintf("-%d", 2+g.r.IntN(98))
	}
	return w
}

// unregistered writes about thirty keys that no family declares, in four
// prefix groups an operator would recognise: a job queue of another stack,
// export leftovers, a new deploy writing a typo'd layout version, and an
// old unversioned cache.
func (s *seeder) unregistered() error {
	g := s.g
	s.planted.Unregistered = map[string]int{}
	add := func(prefix, key string, v value, ttl time.Duration) error {
		if s.used[key] || s.match.Match(key) != nil || s.shape.Match(key) != nil {
			return nil // the registry declares it after all
		}
		if err := s.write(key, v, ttl); err != nil {
			return err
		}
		s.planted.Keys = append(s.planted.Keys, Key{Name: key, Rules: []string{rules.UnregisteredKey.ID}})
		s.planted.Unregistered[prefix]++
		return nil
	}
	for i := range 12 {
		ttl := time.Duration(1+g.r.IntN(6)) * time.Hour
		if i%4 == 3 {
			ttl = 0 // the export job crashed before its cleanup
		}
		csv := "order_id,created_at,total\n"
		for range 3 + g.r.IntN(5) {
			csv += fmt.Sprintf("%d,%s,%d.%02d\n", 100000+g.r.IntN(900000), g.timeAround().Format(time.RFC3339), g.r.IntN(500), g.r.IntN(100))
		}
		if err := add("tmp:export:", "tmp:export:"+g.uuid(), value{typ: "string", str: []byte(csv)}, ttl); err != nil {
			return err
		}
	}
	for range 8 {
		doc := map[string]any{"user_id": 1000 + g.r.Int64N(2_000_000), "created_at": g.timeAround().Format(time.RFC3339), "auth_method": "password"}
		b, _ := encode("json", doc)
		if err := add("v3:user:", "v3:user:session:"+g.uuid(), value{typ: "string", str: b}, s.days(0, 1)+time.Hour); err != nil {
			return err
		}
	}
	for range 6 {
		doc := map[string]any{"id": 1000 + g.r.Int64N(99_000), "price": 199 + g.r.Int64N(49_800)}
		b, _ := encode("json", doc)
		if err := add("cache:product:", fmt.Sprintf("cache:product:%d", doc["id"]), value{typ: "string", str: b}, 0); err != nil {
			return err
		}
	}
	for _, q := range []string{"default", "mailers", "low", "critical"} {
		var jobs [][]byte
		for range 1 + g.r.IntN(5) {
			b, _ := encode("json", map[string]any{"class": pick(g.r, "InvoiceMailer", "ReindexJob", "WebhookDelivery"),
				"jid": g.hex(24), "queue": q, "retry": true, "args": []any{g.r.Int64N(100_000)}})
			jobs = append(jobs, b)
		}
		if err := add("sidekiq:queue:", "sidekiq:queue:"+q, value{typ: "list", members: jobs}, 0); err != nil {
			return err
		}
	}
	return nil
}

// join renders a pattern with values, without checking their types.
func join(p *registry.Pattern, vals map[string]string) string {
	var b strings.Builder
	for _, pt := range p.Parts {
		if pt.IsPlaceholder() {
			b.WriteString(vals[pt.Name])
		} else {
			b.WriteString(pt.Lit)
		}
	}
	return b.String()
}

// Server is an embedded Redis seeded by Start.
type Server struct {
	m *miniredis.Miniredis
	// Planted is what Seed wrote.
	Planted Planted
}

// Start starts an embedded Redis on a free loopback port and seeds it for
// reg. Close stops it.
func Start(reg *registry.Registry, o Options) (*Server, error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("starting the embedded redis: %w", err)
	}
	p, err := Seed(m, reg, o)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("seeding the embedded redis: %w", err)
	}
	return &Server{m: m, Planted: p}, nil
}

// URL returns the redis:// URL of the embedded server.
func (s *Server) URL() string { return "redis://" + s.m.Addr() }

// Close stops the embedded server.
func (s *Server) Close() { s.m.Close() }
