package demo

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
)

// want is a family of the example registry and how many keys of a problem
// it gets.
type want struct {
	family string
	n      int
}

// spec is one kind of planted problem.
type spec struct {
	rule string
	// prefer names the families of the repository's keys.yaml that get the
	// problem, where it tells a story (rate-limit counters without TTL, a
	// pickled django cache entry). A registry without any of them gets n
	// keys in the first family that ok accepts.
	prefer []want
	n      int
	ok     func(*registry.Family) bool
	// make writes one key of f with the problem and returns its name, or
	// errSkip when it cannot.
	make func(s *seeder, f *registry.Family) (string, error)
}

// plan lists the planted problems, in the order they are written.
var plan = []spec{
	{
		rule:   rules.TTLMissing.ID,
		prefer: []want{{"rate-limit", 3}, {"product-cache", 2}, {"user-session-v1", 2}},
		n:      3,
		ok:     hasMax,
		make:   func(s *seeder, f *registry.Family) (string, error) { return s.plain(f, 0) },
	},
	{
		rule:   rules.TTLExceedsMax.ID,
		prefer: []want{{"idempotency-key", 2}, {"user-session", 1}},
		n:      2,
		ok:     hasMax,
		make: func(s *seeder, f *registry.Family) (string, error) {
			return s.plain(f, f.TTL.Max*time.Duration(3+s.g.r.IntN(5)))
		},
	},
	{
		rule:   rules.TTLUnexpected.ID,
		prefer: []want{{"leaderboard", 2}},
		n:      2,
		ok: func(f *registry.Family) bool {
			return f.TTL.Kind == registry.TTLPersistent && f.Kind != registry.KindFence
		},
		make: func(s *seeder, f *registry.Family) (string, error) {
			return s.plain(f, time.Duration(1+s.g.r.IntN(30))*24*time.Hour) // EXPIRE in whole days
		},
	},
	{
		// A holder that takes the lock but skips the INCR of its fence.
		rule:   rules.FenceMissing.ID,
		prefer: []want{{"lock", 2}},
		n:      2,
		ok:     isLock,
		make:   (*seeder).unfenced,
	},
	{
		// A fence someone reset with SET, or gave an EXPIRE.
		rule:   rules.FenceInvalid.ID,
		prefer: []want{{"lock-fence", 2}},
		n:      2,
		ok:     isFence,
		make:   (*seeder).badFence,
	},
	{
		rule:   rules.StreamGroupMissing.ID,
		prefer: []want{{"chat-messages", 1}},
		n:      1,
		ok:     hasGroups,
		make:   (*seeder).missingGroup,
	},
	{
		rule:   rules.StreamGroupLag.ID,
		prefer: []want{{"chat-messages", 1}},
		n:      1,
		ok:     hasGroups,
		make:   (*seeder).lagging,
	},
	{
		rule:   rules.StreamPending.ID,
		prefer: []want{{"chat-messages", 1}},
		n:      1,
		ok:     hasGroups,
		make:   (*seeder).backlog,
	},
	{
		// A push worker that died holding two messages.
		rule:   rules.StreamConsumerIdle.ID,
		prefer: []want{{"chat-messages", 1}},
		n:      1,
		ok:     hasGroups,
		make:   (*seeder).deadConsumer,
	},
	{
		rule:   rules.TypeMismatch.ID,
		prefer: []want{{"cart-items", 2}, {"feature-flags", 1}},
		n:      2,
		ok:     func(f *registry.Family) bool { return f.Type != "" && f.Type != "json" },
		make:   (*seeder).wrongType,
	},
	{
		rule:   rules.PlaceholderInvalid.ID,
		prefer: []want{{"user-session", 2}, {"product-cache", 1}, {"chat-presence", 1}},
		n:      2,
		ok:     func(f *registry.Family) bool { return typedPlaceholder(f) != nil },
		make:   (*seeder).wrongPlaceholder,
	},
	{
		rule:   rules.PayloadInvalid.ID,
		prefer: []want{{"user-session", 2}, {"cart-items", 1}, {"chat-messages", 1}, {"email-verification", 1}},
		n:      2,
		ok:     func(f *registry.Family) bool { return f.Schema != nil && f.Schema.Compiled != nil },
		make:   (*seeder).brokenPayload,
	},
	{
		// django-redis pickles by default: a host that missed the
		// JSONSerializer setting.
		rule:   rules.EncodingMismatch.ID,
		prefer: []want{{"django-cache", 3}},
		n:      2,
		ok:     stringOf(payload.JSON, payload.Msgpack),
		make: func(s *seeder, f *registry.Family) (string, error) {
			return s.wrongEncoding(f, func(doc any) ([]byte, error) { return pickle(doc), nil })
		},
	},
	{
		// One Celery worker still configured with result_serializer=msgpack.
		rule:   rules.EncodingMismatch.ID,
		prefer: []want{{"celery-task-result", 2}},
		n:      2,
		ok:     stringOf(payload.JSON),
		make: func(s *seeder, f *registry.Family) (string, error) {
			return s.wrongEncoding(f, func(doc any) ([]byte, error) { return encode(payload.Msgpack, doc) })
		},
	},
	{
		rule:   rules.ValueTooLarge.ID,
		prefer: []want{{"html-fragment-cache", 2}},
		n:      2,
		ok: func(f *registry.Family) bool {
			return f.MaxBytes > 0 && f.MaxBytes < 1<<19 && f.Schema == nil && stringOf(payload.Text, payload.JSON)(f)
		},
		make: (*seeder).oversized,
	},
	{
		rule:   rules.CollectionTooLong.ID,
		prefer: []want{{"user-session-index", 2}},
		n:      2,
		ok: func(f *registry.Family) bool {
			return f.MaxLen > 0 && f.MaxLen <= 1000 && slices.Contains([]string{"list", "set", "zset", "stream"}, f.Type)
		},
		make: (*seeder).overlong,
	},
	{
		rule:   rules.StaleKey.ID,
		prefer: []want{{"leaderboard", 2}, {"feature-flags", 1}},
		n:      2,
		ok:     func(f *registry.Family) bool { return f.MaxIdle > 0 && f.TTL.Kind != registry.TTLMax },
		make:   (*seeder).stale,
	},
}

func hasMax(f *registry.Family) bool { return f.TTL.Kind == registry.TTLMax }

// stringOf accepts string families of the given encodings.
func stringOf(encs ...string) func(*registry.Family) bool {
	return func(f *registry.Family) bool {
		return (f.Type == "string" || f.Type == "") && slices.Contains(encs, f.Encoding)
	}
}

// plant writes the keys of one spec.
func (s *seeder) plant(sp spec) error {
	var targets []want
	for _, w := range sp.prefer {
		if f, ok := s.reg.Family(w.family); ok && f.Pattern != nil && sp.ok(f) {
			targets = append(targets, w)
		}
	}
	if len(targets) == 0 {
		for _, f := range s.reg.Families {
			if f.Pattern != nil && len(f.Pattern.Placeholders()) > 0 && f.Type != "json" && sp.ok(f) {
				targets = append(targets, want{f.Name, sp.n})
				break
			}
		}
	}
	for _, w := range targets {
		f, _ := s.reg.Family(w.family)
		for range w.n {
			key, err := sp.make(s, f)
			if err == errSkip {
				continue
			}
			if err != nil {
				return fmt.Errorf("family %q: %w", f.Name, err)
			}
			s.record(key, f, sp.rule)
			if err := s.companions(key, f, []string{sp.rule}); err != nil {
				return fmt.Errorf("family %q: %w", f.Name, err)
			}
		}
	}
	return nil
}

// fresh returns an unused key of f and a clean value for it.
func (s *seeder) fresh(f *registry.Family) (string, value, error) {
	key, err := s.keyFor(f)
	if err != nil {
		return "", value{}, err
	}
	v, err := s.good(f)
	return key, v, err
}

// plain writes a clean value with the given TTL (0: none), for the TTL
// problems.
func (s *seeder) plain(f *registry.Family, ttl time.Duration) (string, error) {
	key, v, err := s.fresh(f)
	if err != nil {
		return "", err
	}
	return key, s.write(key, v, ttl)
}

// wrongType writes the value as a JSON string (a whole cart in one SET),
// or a string family's value as a hash.
func (s *seeder) wrongType(f *registry.Family) (string, error) {
	key, v, err := s.fresh(f)
	if err != nil {
		return "", err
	}
	if v.typ == "string" {
		v = value{typ: "hash", fields: map[string][]byte{"value": v.str}}
	} else {
		b, err := json.Marshal(v.doc)
		if err != nil {
			return "", err
		}
		v = value{typ: "string", str: b}
	}
	return key, s.write(key, v, s.ttl(f))
}

// wrongValues are the mistakes writers make, per placeholder type whose
// language a wrong value misses: a user ID where the session UUID belongs,
// "undefined" from JavaScript, a room's name instead of its ULID. Word and
// Any accept nearly any value, so they have none; a test fails when another
// type of registry.PlaceholderTypes has none.
var wrongValues = map[registry.PlaceholderType]func(g *gen) string{
	registry.UUID: func(g *gen) string { return fmt.Sprint(1000 + g.r.IntN(2_000_000)) },
	registry.Int: func(g *gen) string {
		return pick(g.r, "undefined", "null", fmt.Sprintf("SKU-%05d", g.r.IntN(100_000)))
	},
	registry.Hex:  func(g *gen) string { return "tok_" + g.hex(12) },
	registry.ULID: func(g *gen) string { return pick(g.r, "general", "random", "lobby", "support") },
}

// typedPlaceholder returns the first placeholder of f whose type a wrong
// value can fail (one of wrongValues).
func typedPlaceholder(f *registry.Family) *registry.Part {
	if f.Pattern == nil {
		return nil
	}
	for _, pt := range f.Pattern.Placeholders() {
		if wrongValues[pt.Type] != nil {
			return &pt
		}
	}
	return nil
}

// wrongPlaceholder writes a key with f's shape whose typed placeholder
// holds a value of the wrong type (wrongValues).
func (s *seeder) wrongPlaceholder(f *registry.Family) (string, error) {
	bad := typedPlaceholder(f)
	g := s.g
	for range 20 {
		vals := map[string]string{}
		for _, pt := range f.Pattern.Placeholders() {
			vals[pt.Name] = s.placeholder(pt, 0)
		}
		vals[bad.Name] = wrongValues[bad.Type](g)
		key := join(f.Pattern, vals)
		if s.used[key] || s.match.Match(key) != nil || s.shape.Match(key) != f {
			continue
		}
		v, err := s.good(f)
		if err != nil {
			return "", err
		}
		return key, s.write(key, v, s.ttl(f))
	}
	return "", errSkip
}

// brokenPayload writes a value that decodes but breaks f's schema: an
// integer sent as a string, a required property missing, an unknown one
// added, a value outside its enum.
func (s *seeder) brokenPayload(f *registry.Family) (string, error) {
	key, err := s.keyFor(f)
	if err != nil {
		return "", err
	}
	off := s.g.r.IntN(4) // which kind of breakage comes first
	for i := range attempts {
		doc := s.doc(f)
		doc = s.g.breakDoc(f.Type, doc, off+i)
		v, err := s.encode(f, doc)
		if err != nil || v.empty() {
			continue
		}
		res := payload.Check(f, v.sample(), payload.Options{})
		if res.DecodeErrors == 0 && len(res.Violations) > 0 {
			return key, s.write(key, v, s.ttl(f))
		}
	}
	return "", fmt.Errorf("cannot generate a value that breaks the schema")
}

// breakDoc changes one spot of a generated doc: the value of a string, one
// hash field's value (or the field map), the first member or entry.
func (g *gen) breakDoc(typ string, doc any, attempt int) any {
	switch typ {
	case "list", "set", "zset", "stream":
		if ms, ok := doc.([]any); ok && len(ms) > 0 {
			ms[0] = g.mutate(ms[0], attempt)
		}
		return doc
	case "hash":
		if obj, ok := doc.(map[string]any); ok && attempt%2 == 0 {
			for _, k := range sortedKeys(obj) {
				if _, nested := obj[k].(map[string]any); nested {
					obj[k] = g.mutate(obj[k], attempt/2)
					return doc
				}
			}
		}
	}
	return g.mutate(doc, attempt)
}

// mutate returns v with one change that a schema is likely to reject.
func (g *gen) mutate(v any, attempt int) any {
	obj, ok := v.(map[string]any)
	if !ok {
		switch x := v.(type) {
		case int64:
			if attempt%2 == 0 {
				return int64(0)
			}
			return fmt.Sprint(x)
		case string:
			return "N/A " + x
		}
		return "unexpected"
	}
	ks := sortedKeys(obj)
	for try := range 4 {
		switch (attempt + try) % 4 {
		case 0: // an integer written as a string
			for _, k := range ks {
				if n, ok := obj[k].(int64); ok {
					obj[k] = fmt.Sprint(n)
					return obj
				}
			}
		case 1: // a property dropped
			if len(ks) > 0 {
				delete(obj, ks[g.r.IntN(len(ks))])
				return obj
			}
		case 2: // a property nobody declared
			obj[pick(g.r, "debug", "legacy_payload", "tmp")] = true
			return obj
		case 3: // a string outside its enum or pattern
			for _, k := range ks {
				if s, ok := obj[k].(string); ok {
					obj[k] = "N/A " + s
					return obj
				}
			}
		}
	}
	return obj
}

// wrongEncoding writes a clean value of f in another encoding.
func (s *seeder) wrongEncoding(f *registry.Family, enc func(any) ([]byte, error)) (string, error) {
	key, v, err := s.fresh(f)
	if err != nil {
		return "", err
	}
	b, err := enc(v.doc)
	if err != nil {
		return "", err
	}
	w := value{typ: "string", str: b}
	if res := payload.Check(f, w.sample(), payload.Options{}); res.DecodeErrors == 0 {
		return "", errSkip // the bytes happen to decode as declared
	}
	return key, s.write(key, w, s.ttl(f))
}

// oversized writes a value 20-45% over f's max_bytes.
func (s *seeder) oversized(f *registry.Family) (string, error) {
	key, err := s.keyFor(f)
	if err != nil {
		return "", err
	}
	n := int(f.MaxBytes + f.MaxBytes/5 + s.g.r.Int64N(f.MaxBytes/4+1))
	var doc any = s.html(n)
	if f.Encoding == payload.JSON {
		doc = map[string]any{"html": doc}
	}
	b, err := encode(f.Encoding, doc)
	if err != nil {
		return "", err
	}
	return key, s.write(key, value{typ: "string", str: b}, s.ttl(f))
}

// overlong writes a collection 1-50% over f's max_len, every element clean.
func (s *seeder) overlong(f *registry.Family) (string, error) {
	key, err := s.keyFor(f)
	if err != nil {
		return "", err
	}
	want := int(f.MaxLen) + 1 + s.g.r.IntN(int(f.MaxLen)/2+1)
	var all []any
	for i := 0; len(all) < 2*want && i < 4*want; i++ {
		all = append(all, s.doc(f).([]any)...)
	}
	v, err := s.encode(f, all)
	if err != nil {
		return "", err
	}
	if len(v.members) > want {
		v.members = v.members[:want]
	}
	if len(v.entries) > want {
		v.entries = v.entries[:want]
	}
	if len(v.members)+len(v.entries) <= int(f.MaxLen) {
		return "", errSkip // too few distinct members
	}
	return key, s.write(key, v, s.ttl(f))
}

// stale writes a clean key that was last touched longer ago than f's
// max_idle: the embedded Redis' clock is turned back while it is written.
func (s *seeder) stale(f *registry.Family) (string, error) {
	key, v, err := s.fresh(f)
	if err != nil {
		return "", err
	}
	idle := f.MaxIdle + s.days(30, 200)
	s.m.SetTime(time.Now().Add(-idle))
	defer s.m.SetTime(time.Time{})
	return key, s.write(key, v, 0)
}
