package demo

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
)

// seeder is the state of one Seed call.
type seeder struct {
	m       *miniredis.Miniredis
	reg     *registry.Registry
	o       Options
	g       *gen
	match   *registry.Matcher
	shape   *registry.ShapeMatcher
	used    map[string]bool
	planted Planted
}

func newSeeder(m *miniredis.Miniredis, reg *registry.Registry, o Options) *seeder {
	return &seeder{
		m:     m,
		reg:   reg,
		o:     o,
		g:     &gen{r: rand.New(rand.NewPCG(o.Seed, o.Seed^0x6b6579726567))},
		match: reg.Matcher(),
		shape: reg.ShapeMatcher(),
		used:  map[string]bool{},
	}
}

// value is what one key holds, encoded.
type value struct {
	typ     string              // Redis type
	str     []byte              // string
	fields  map[string][]byte   // hash
	members [][]byte            // list, set, zset
	entries []map[string][]byte // stream
	doc     any                 // the JSON value it was encoded from
}

// sample is what the audit would read from v.
func (v value) sample() payload.Sample {
	return payload.Sample{Type: v.typ, String: v.str, Fields: v.fields, Members: v.members, Entries: v.entries}
}

// attempts bounds the retries of the value generator per key.
const attempts = 40

// good generates a value of f that its encoding and schema accept, and
// that stays under its max_bytes.
func (s *seeder) good(f *registry.Family) (value, error) {
	var last string
	for i := range attempts {
		s.g.all = i%2 == 1
		doc := s.doc(f)
		v, err := s.encode(f, doc)
		if err != nil {
			return value{}, err
		}
		res := payload.Check(f, v.sample(), payload.Options{})
		switch {
		case res.DecodeErrors > 0:
			last = res.DecodeError
		case len(res.Violations) > 0:
			last = res.Violations[0].String()
		case v.empty():
			last = "an empty " + v.typ
		case f.MaxBytes > 0 && v.size() > f.MaxBytes:
			last = fmt.Sprintf("%d bytes, over max_bytes %d", v.size(), f.MaxBytes)
		default:
			s.g.all = false
			return v, nil
		}
	}
	s.g.all = false
	return value{}, fmt.Errorf("cannot generate a value its schema accepts (last try: %s); "+
		`add "examples" to the schema's properties that have a pattern`, last)
}

// empty reports whether a collection has no element: Redis does not keep
// empty collections.
func (v value) empty() bool {
	switch v.typ {
	case "hash":
		return len(v.fields) == 0
	case "list", "set", "zset":
		return len(v.members) == 0
	case "stream":
		return len(v.entries) == 0
	}
	return false
}

// size estimates the MEMORY USAGE of v, generously.
func (v value) size() int64 {
	n := int64(len(v.str)) + 64
	for k, b := range v.fields {
		n += int64(len(k)+len(b)) + 32
	}
	for _, b := range v.members {
		n += int64(len(b)) + 32
	}
	for _, e := range v.entries {
		for k, b := range e {
			n += int64(len(k)+len(b)) + 32
		}
	}
	return n
}

// doc generates the JSON value of one key of f: the value of a string, the
// field map of a hash, the members of a list, set or zset, the entries of a
// stream.
func (s *seeder) doc(f *registry.Family) any {
	g := s.g
	one := func() any {
		if f.Schema != nil && f.Schema.Doc != nil {
			g.root = f.Schema.Doc
			return g.value(f.Schema.Doc, "", 0)
		}
		return s.schemaless(f)
	}
	switch f.Type {
	case "list", "set", "zset", "stream":
		n := 1 + g.r.IntN(6)
		if f.MaxLen > 0 {
			n = min(n, int(f.MaxLen))
		}
		out := make([]any, 0, n)
		for range n {
			out = append(out, one())
		}
		return out
	case "hash":
		if f.Schema == nil {
			out := map[string]any{}
			for range 2 + g.r.IntN(3) {
				out[g.word()] = s.schemaless(f)
			}
			return out
		}
	}
	return one()
}

// schemaless is a value for a family without a payload schema.
func (s *seeder) schemaless(f *registry.Family) any {
	g := s.g
	switch f.Encoding {
	case payload.Int:
		return 1 + g.r.Int64N(5000)
	case payload.Float:
		return float64(g.r.IntN(100_000)) / 100
	case payload.Text:
		if strings.Contains(f.Name, "html") || strings.Contains(f.Name, "fragment") {
			return s.html(200 + g.r.IntN(2000))
		}
		return g.hex(32)
	}
	switch g.r.IntN(3) {
	case 0:
		return 1 + g.r.Int64N(5000)
	case 1:
		return map[string]any{"html": s.html(100 + g.r.IntN(600)), "etag": g.hex(16)}
	}
	return map[string]any{"id": 1 + g.r.Int64N(99_999), "name": g.word(), "updated_at": g.timeAround().Format(time.RFC3339)}
}

// html is an HTML fragment of about n bytes.
func (s *seeder) html(n int) string {
	var b strings.Builder
	b.WriteString(`<nav class="mega-menu">`)
	for b.Len() < n {
		fmt.Fprintf(&b, `<a href="/c/%s-%d">%s</a>`, s.g.word(), s.g.r.IntN(1000), s.g.word())
	}
	b.WriteString(`</nav>`)
	return b.String()
}

// encode turns a doc into a value of f's type, each unit in f's encoding.
func (s *seeder) encode(f *registry.Family, doc any) (value, error) {
	enc := f.Encoding
	if enc == "" {
		enc = payload.JSON
	}
	v := value{typ: f.Type, doc: doc}
	if v.typ == "" {
		v.typ = "string"
	}
	var err error
	switch v.typ {
	case "string":
		v.str, err = encode(enc, doc)
	case "hash":
		obj, ok := doc.(map[string]any)
		if !ok {
			return value{}, fmt.Errorf("the schema of a hash must describe an object")
		}
		v.fields, err = encodeFields(enc, obj)
	case "list", "set", "zset":
		seen := map[string]bool{}
		for _, d := range doc.([]any) {
			b, err := encode(enc, d)
			if err != nil {
				return value{}, err
			}
			if v.typ != "list" && seen[string(b)] {
				continue // sets hold each member once
			}
			seen[string(b)] = true
			v.members = append(v.members, b)
		}
	case "stream":
		for _, d := range doc.([]any) {
			obj, ok := d.(map[string]any)
			if !ok {
				return value{}, fmt.Errorf("the schema of a stream must describe an entry object")
			}
			e, err := encodeFields(enc, obj)
			if err != nil {
				return value{}, err
			}
			v.entries = append(v.entries, e)
		}
	default:
		return value{}, fmt.Errorf("type %s cannot be stored in the embedded Redis", v.typ)
	}
	return v, err
}

func encodeFields(enc string, obj map[string]any) (map[string][]byte, error) {
	out := make(map[string][]byte, len(obj))
	for k, d := range obj {
		b, err := encode(enc, d)
		if err != nil {
			return nil, err
		}
		out[k] = b
	}
	return out, nil
}

// write stores v under key with a TTL (0: none).
func (s *seeder) write(key string, v value, ttl time.Duration) error {
	m := s.m
	var err error
	switch v.typ {
	case "string":
		err = m.Set(key, string(v.str))
	case "hash":
		var fv []string
		for _, k := range slices.Sorted(maps.Keys(v.fields)) {
			fv = append(fv, k, string(v.fields[k]))
		}
		m.HSet(key, fv...)
	case "list":
		for _, b := range v.members {
			if _, err = m.RPush(key, string(b)); err != nil {
				break
			}
		}
	case "set":
		for _, b := range v.members {
			if _, err = m.SAdd(key, string(b)); err != nil {
				break
			}
		}
	case "zset":
		for _, b := range v.members {
			if _, err = m.ZAdd(key, float64(s.g.r.IntN(50_000)), string(b)); err != nil {
				break
			}
		}
	case "stream":
		// Entry IDs a minute apart before base, so the stream is the same
		// on every run.
		for i, e := range v.entries {
			var fv []string
			for _, k := range slices.Sorted(maps.Keys(e)) {
				fv = append(fv, k, string(e[k]))
			}
			id := fmt.Sprintf("%d-0", base.UnixMilli()-int64(len(v.entries)-i)*60_000)
			if _, err = m.XAdd(key, id, fv); err != nil {
				break
			}
		}
	default:
		err = fmt.Errorf("type %s cannot be stored in the embedded Redis", v.typ)
	}
	if err != nil {
		return fmt.Errorf("writing %q: %w", key, err)
	}
	if ttl > 0 {
		m.SetTTL(key, ttl)
	}
	s.used[key] = true
	return nil
}
