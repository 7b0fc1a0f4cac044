package infer

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
)

func TestTTLPolicy(t *testing.T) {
	for _, tc := range []struct {
		ttls []time.Duration // -1: none
		want string
	}{
		{[]time.Duration{-1, -1}, "persistent"},
		{[]time.Duration{50 * time.Minute, 59 * time.Minute}, "max 1h"},
		{[]time.Duration{86399 * time.Second}, "max 24h"},
		{[]time.Duration{3 * 24 * time.Hour, -1}, "optional"},
		{[]time.Duration{500 * 24 * time.Hour}, "max 730d"},
	} {
		var st Stats
		for i, d := range tc.ttls {
			st.Add(Fact{Key: string(rune('a' + i)), Type: "string", TTL: d, Memory: -1, Len: -1})
		}
		if got, _ := ttlPolicy(&st); got.String() != tc.want {
			t.Errorf("TTLs %v: policy %s, want %s", tc.ttls, got, tc.want)
		}
	}
}

// TestFamilyName: names come from the literal words of the patterns; a
// number only from a version, when two families would share a name.
func TestFamilyName(t *testing.T) {
	used := map[string]bool{"sidekiq-queues": true} // a preset entry's family
	tcs := []struct{ pattern, want string }{
		{"v2:user:session:{session_id:uuid}", "user-session-v2"},
		{"v1:user:session:{x:hex}", "user-session-v1"},
		{"celery-task-meta-{id:uuid}", "celery-task-meta"},
		{"{a:word}:{b:int}", "keys"},
		{"v2:user:session:{id:int}:x", "user-session-x"},
		{"9lives:{n:int}", "keys-9lives"},
		{"migration:2023:{id:int}", "migration"},
		{"h264:{id:int}", "h264"},
		{"sidekiq:queues:{n:word}", "sidekiq-queues-word"},
		{"cart:{id:int}:items", "cart-items-int"},
		{"cart:{id:uuid}:items", "cart-items-uuid"},
		{"cart:{{id:uuid}}:items", "cart-items-uuid-b"},
	}
	var cs []*candidate
	for _, tc := range tcs {
		p, err := registry.ParsePattern(tc.pattern, ':')
		if err != nil {
			t.Fatal(err)
		}
		v := 0
		if strings.HasPrefix(tc.pattern, "v") {
			v = int(tc.pattern[1] - '0')
		}
		_ = p
		cs = append(cs, &candidate{Candidate: Candidate{Pattern: tc.pattern, Version: v}})
	}
	nameFamilies(cs, ':', used)
	for i, tc := range tcs {
		if cs[i].name != tc.want {
			t.Errorf("%q is named %q, want %q", tc.pattern, cs[i].name, tc.want)
		}
	}
}

// TestInferenceDraft feeds a small keyspace with samples through an
// Inference and checks the draft loads, names its families, and holds a
// schema that validates the samples.
func TestInferenceDraft(t *testing.T) {
	in := New(Options{})
	for i := range 40 {
		in.Add(Fact{Key: "v1:order:" + string(rune('0'+i%10)) + strings.Repeat("1", i/10+1), Type: "string", TTL: time.Hour, Memory: -1, Len: -1})
	}
	targets := in.Candidates(5)
	if len(targets) == 0 {
		t.Fatal("no keys to sample")
	}
	var keys []string
	var ss []payload.Sample
	for _, tg := range targets {
		keys = append(keys, tg.Key)
		ss = append(ss, payload.Sample{Type: "string", String: []byte(`{"id":1,"state":"new"}`)})
	}
	in.AddSamples(targets[0].Candidate, keys, ss)
	d, schemas, sum := in.Draft()
	if sum.Families != 1 || sum.Registered != 40 || len(schemas) != 1 {
		t.Fatalf("summary %+v, %d schemas", sum, len(schemas))
	}
	f := d.Families[0]
	if f.Name != "order" || f.Pattern != "v1:order:{order_id:int}" || f.Version != 1 || !slices.Equal(f.Encodings, []string{"json"}) || f.TTL.String() != "max 1h" {
		t.Errorf("family %+v", f)
	}
	if _, ok := schemas["schemas/order.json"]; !ok {
		t.Errorf("schemas %v", schemas)
	}
	if _, err := d.Marshal(); err != nil {
		t.Fatal(err)
	}
}

// draftOf runs an inference over keys (every key a string with a TTL of
// an hour, no values sampled) and returns the draft, its bytes and the
// registry they load into.
func draftOf(t *testing.T, keys []string, types ...string) (*registry.Draft, []byte, *registry.Registry, Summary) {
	t.Helper()
	in := New(Options{})
	for i, k := range keys {
		typ := "string"
		if len(types) > 0 {
			typ = types[i%len(types)]
		}
		in.Add(Fact{Key: k, Type: typ, TTL: time.Hour, Memory: -1, Len: -1})
	}
	in.Candidates(0)
	d, schemas, sum := in.Draft()
	reg, data, err := loadDraft(d, schemas)
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, data)
	}
	return d, data, reg, sum
}

func hexString(r *rand.Rand, k int) string {
	b := make([]byte, k)
	for i := range b {
		b[i] = "0123456789abcdef"[r.IntN(16)]
	}
	return string(b)
}

// TestLeftovers: keys of no shared shape are listed in a commented
// leftovers list, never proposed as families: not one-off literal keys,
// and not a catch-all without a literal byte, which would register every
// future key of its form.
func TestLeftovers(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	oneOffs := []string{"foo", "x", "test", "asdf"}
	word := func() string {
		b := make([]byte, 3+r.IntN(6))
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		return string(b)
	}
	small := slices.Clone(oneOffs)
	for range 500 {
		small = append(small, "sess_"+hexString(r, 32))
	}
	// Enough one-segment junk for the miner to generalise it, beside
	// keys that have a shape.
	var shapeless []string
	for range 40 {
		shapeless = append(shapeless, word())
	}
	for i := range 300 {
		shapeless = append(shapeless, "v1:order:"+strconv.Itoa(i))
	}
	for _, tc := range []struct {
		name     string
		keys     []string
		families []string // the patterns proposed
		listed   []string // lines of the leftovers list, in part
		left     int64
	}{
		{"one-offs and glued hex ids", small, []string{"sess_{sess_id:hex}"}, []string{`  - "asdf"`, `  - "foo"`, `  - "test"`, `  - "x"`}, 4},
		{"shapeless junk", shapeless, []string{"v1:order:{order_id:int}"}, []string{"  - 40 keys like {name:word}, e.g. "}, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, data, reg, sum := draftOf(t, tc.keys)
			var pats []string
			for _, f := range d.Families {
				pats = append(pats, f.Pattern)
			}
			if !slices.Equal(pats, tc.families) {
				t.Errorf("families %v, want %v\n%s", pats, tc.families, data)
			}
			if sum.Leftovers != tc.left || sum.Registered+sum.Leftovers != int64(len(tc.keys)) {
				t.Errorf("summary %+v, want %d leftovers of %d keys", sum, tc.left, len(tc.keys))
			}
			text := string(data)
			if !strings.Contains(text, "\n# unregistered leftovers: ") {
				t.Errorf("no leftovers list:\n%s", data)
			}
			for _, l := range tc.listed {
				if !strings.Contains(text, "\n# "+l) {
					t.Errorf("the leftovers list lacks %q:\n%s", l, data)
				}
			}
			// The leftovers stay unregistered: the audit reports them.
			m := reg.Matcher()
			unreg := 0
			for _, k := range tc.keys {
				if m.Match(k) == nil {
					unreg++
				}
			}
			if int64(unreg) != tc.left {
				t.Errorf("%d keys unregistered, want the %d leftovers", unreg, tc.left)
			}
		})
	}
}

// TestLeftoversBounded: the leftovers list holds at most
// maxLeftoverLines keys and shapes, with the count of the rest, and a
// hostile key name reaches the file only escaped.
func TestLeftoversBounded(t *testing.T) {
	var cs []*candidate
	for i := range 300 {
		st := &Stats{}
		st.Add(Fact{Key: fmt.Sprintf("junk-%03d", i), Type: "string", TTL: -1, Memory: -1, Len: -1})
		cs = append(cs, &candidate{Candidate: Candidate{Pattern: fmt.Sprintf("junk-%03d", i), Stats: st}})
	}
	lines := leftoverLines(cs)
	if n := len(lines); n != 3+maxLeftoverLines+1 || lines[3] != `  - "junk-000"` || lines[n-1] != "  ... and 200 more" {
		t.Errorf("%d lines: %q ... %q", n, lines[3], lines[n-1])
	}
	var keys []string
	for i := range 5000 {
		keys = append(keys, "v1:user:"+strconv.Itoa(i))
	}
	keys = append(keys, "evil\u202e\nversion: 2", "bin\xff\x00\nowners:")
	d, data, _, sum := draftOf(t, keys)
	if len(d.Families) != 1 || sum.Leftovers != 2 {
		t.Fatalf("%d families, %d leftovers, want 1 and 2:\n%s", len(d.Families), sum.Leftovers, data)
	}
	if bytes.Contains(data, []byte("\u202e")) || bytes.Contains(data, []byte("\nversion: 2")) || bytes.Contains(data, []byte("\xff")) || bytes.Count(data, []byte("\nowners:")) != 1 {
		t.Errorf("hostile key names reach the file raw:\n%s", data)
	}
	for _, want := range []string{`#   - "bin\xff\x00\nowners:"`, `#   - "evil\u202e\nversion: 2"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the leftovers lack %s:\n%s", want, data)
		}
	}
}

// TestNamesFromLiterals: the outlier v2:user:session:12345 is a leftover,
// not a family named after its number, and the real sessions are named
// from their literal words, with the version only to tell two layouts
// apart.
func TestNamesFromLiterals(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	uuid := func() string {
		h := hexString(r, 32)
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	keys := []string{"v2:user:session:12345"}
	for i := range 1000 {
		keys = append(keys, "v2:user:session:"+uuid(), "migration:2023:"+strconv.Itoa(i))
	}
	d, data, _, sum := draftOf(t, keys)
	names := map[string]string{}
	for _, f := range d.Families {
		names[f.Pattern] = f.Name
	}
	want := map[string]string{"v2:user:session:{session_id:uuid}": "user-session", "migration:2023:{migration_id:int}": "migration"}
	if !maps.Equal(names, want) || sum.Leftovers != 1 || !strings.Contains(string(data), `#   - "v2:user:session:12345"`) {
		t.Errorf("families %v (want %v), %d leftovers:\n%s", names, want, sum.Leftovers, data)
	}
	// Two layouts of one family: their versions tell them apart.
	for range 1000 {
		keys = append(keys, "v1:user:session:"+hexString(r, 40))
	}
	d, data, _, _ = draftOf(t, keys)
	clear(names)
	for _, f := range d.Families {
		names[f.Pattern] = f.Name
	}
	want = map[string]string{"v2:user:session:{session_id:uuid}": "user-session-v2", "v1:user:session:{session_id:hex}": "user-session-v1", "migration:2023:{migration_id:int}": "migration"}
	if !maps.Equal(names, want) {
		t.Errorf("families %v, want %v:\n%s", names, want, data)
	}
}

// TestCeleryQueueFromBinding: a queue with no message has no list key;
// its _kombu.binding.<queue> set is all there is of it, and it must be
// one of the preset's queues, while kombu's own exchanges are not.
func TestCeleryQueueFromBinding(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	in := New(Options{})
	add := func(k, typ string, ttl time.Duration) {
		in.Add(Fact{Key: k, Type: typ, TTL: ttl, Memory: -1, Len: -1})
	}
	for _, ex := range []string{"celery", "celery.pidbox", "celeryev", "reply.celery.pidbox", "emails", "reports"} {
		add("_kombu.binding."+ex, "set", -1)
	}
	add("celery", "list", -1)
	for range 20 {
		h := hexString(r, 32)
		add("celery-task-meta-"+h[:8]+"-"+h[8:12]+"-"+h[12:16]+"-"+h[16:20]+"-"+h[20:], "string", time.Hour)
	}
	in.Candidates(0)
	d, _, _ := in.Draft()
	if len(d.Presets) != 1 || d.Presets[0].Use != "celery" {
		t.Fatalf("presets %+v", d.Presets)
	}
	var queues []string
	for _, p := range d.Presets[0].With {
		if p.Name == "queues" {
			queues = p.Values
		}
	}
	if want := []string{"celery", "emails", "reports"}; !slices.Equal(queues, want) {
		t.Errorf("queues %v, want %v", queues, want)
	}
}

// TestMixedEncodingsMajority: 17 JSON and 3 msgpack profiles are json,
// with a comment that 3 sampled keys disagree, not binary, which would
// hide the drift from the audit.
func TestMixedEncodingsMajority(t *testing.T) {
	in := New(Options{})
	for i := range 20 {
		in.Add(Fact{Key: "v1:profile:" + strconv.Itoa(i), Type: "string", TTL: -1, Memory: -1, Len: -1})
	}
	targets := in.Candidates(20)
	var keys []string
	var ss []payload.Sample
	for i, tg := range targets {
		v := []byte(fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i))
		if i%7 == 3 {
			v = mpack(t, map[string]any{"id": i, "name": "n"})
		}
		keys = append(keys, tg.Key)
		ss = append(ss, payload.Sample{Type: "string", String: v})
	}
	if len(ss) != 20 {
		t.Fatalf("%d targets", len(ss))
	}
	in.AddSamples(targets[0].Candidate, keys, ss)
	d, schemas, _ := in.Draft()
	f := d.Families[0]
	if !slices.Equal(f.Encodings, []string{"json"}) || len(schemas) != 1 {
		t.Fatalf("encodings %v, %d schemas", f.Encodings, len(schemas))
	}
	if want := "3 of them do not decode as json (msgpack 3): the first audit reports them."; !slices.Contains(f.Comment, want) {
		t.Errorf("comment %q lacks %q", f.Comment, want)
	}
	// Without a majority, binary.
	enc, off := majorityEncoding([]payload.Sample{{String: []byte(`{"a":1}`)}, {String: mpack(t, map[string]any{"a": 1})}})
	if enc != "binary" || off != nil {
		t.Errorf("no majority: %s %v", enc, off)
	}
}

// TestDraftLoadsHostile: whatever the keyspace, the registry init writes
// loads (and lints without errors): module types, expiries far in the
// future, names a preset entry's families already have, binary and
// YAML-looking keys.
func TestDraftLoadsHostile(t *testing.T) {
	type fact struct {
		key, typ string
		ttl      time.Duration
	}
	r := rand.New(rand.NewPCG(51, 52))
	gen := func(n int, f func(i int) fact) []fact {
		out := make([]fact, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	sidekiq := []fact{{"queues", "set", -1}, {"queue:low", "list", -1}, {"dead", "zset", -1}, {"retry", "zset", -1}, {"schedule", "zset", -1}, {"stat:processed", "string", -1}, {"processes", "set", -1}}
	for _, tc := range []struct {
		name  string
		facts []fact
		check func(t *testing.T, d *registry.Draft, reg *registry.Registry)
	}{
		{"module types", slices.Concat(
			gen(100, func(i int) fact { return fact{"doc:" + strconv.Itoa(i), "ReJSON-RL", -1} }),
			gen(100, func(i int) fact { return fact{"ts:" + strconv.Itoa(i), "TSDB-TYPE", -1} }),
			gen(100, func(i int) fact { return fact{"bf:" + strconv.Itoa(i), "MBbloom--", time.Hour} })),
			func(t *testing.T, d *registry.Draft, reg *registry.Registry) {
				types := map[string]string{}
				for _, f := range reg.Families {
					types[f.Pattern.Source] = f.Type
				}
				if types["doc:{doc_id:int}"] != "json" || types["ts:{ts_id:int}"] != "" || len(types) != 3 {
					t.Errorf("types %v", types)
				}
			}},
		{"expiries far away", slices.Concat(
			gen(50, func(i int) fact { return fact{"far:" + strconv.Itoa(i), "string", time.Duration(math.MaxInt64)} }),
			gen(50, func(i int) fact {
				return fact{"mixed:" + strconv.Itoa(i), "string", time.Duration(math.MaxInt64 - int64(i))}
			}),
			gen(50, func(i int) fact {
				return fact{"odd:" + strconv.Itoa(i), "string", []time.Duration{-1, 0, time.Nanosecond, time.Duration(math.MaxInt64)}[i%4]}
			})),
			func(t *testing.T, d *registry.Draft, reg *registry.Registry) {
				for _, f := range reg.Families {
					if f.TTL.Kind == registry.TTLMax && (f.TTL.Max <= 0 || f.TTL.Max > 100*365*24*time.Hour) {
						t.Errorf("%s: ttl max %v", f.Name, f.TTL.Max)
					}
				}
			}},
		{"names of a preset's families", slices.Concat(sidekiq,
			gen(100, func(i int) fact { return fact{"sidekiq:queues:" + strconv.Itoa(i), "hash", -1} }),
			gen(100, func(i int) fact { return fact{"sidekiq:dead:" + hexString(r, 16), "zset", -1} })),
			func(t *testing.T, d *registry.Draft, reg *registry.Registry) {
				if len(d.Presets) != 1 || d.Presets[0].Use != "sidekiq" || len(d.Families) != 2 {
					t.Errorf("presets %+v, %d families", d.Presets, len(d.Families))
				}
			}},
		{"hostile names", slices.Concat(
			gen(100, func(i int) fact { return fact{"a: b\n- c: {d}:" + strconv.Itoa(i), "string", -1} }),
			gen(100, func(i int) fact { return fact{"\xff\x00{}\\:" + strconv.Itoa(i) + ":'\"#", "hash", time.Minute} }),
			gen(100, func(i int) fact { return fact{"&anchor *alias !tag %:" + strconv.Itoa(i), "list", -1} }),
			gen(100, func(i int) fact { return fact{strings.Repeat("x:", 40) + strconv.Itoa(i), "set", -1} }),
			gen(50, func(i int) fact { return fact{"true:" + strconv.Itoa(i) + ":null", "string", -1} })),
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := New(Options{})
			for _, f := range tc.facts {
				in.Add(Fact{Key: f.key, Type: f.typ, TTL: f.ttl, Memory: -1, Len: -1})
			}
			in.Candidates(0)
			d, schemas, _ := in.Draft()
			reg, data, err := loadDraft(d, schemas)
			if err != nil {
				t.Fatalf("the draft does not load: %v\n%s", err, data)
			}
			if c := rules.Lint(reg).Active().Count(); c.Error > 0 {
				t.Errorf("lint errors: %s\n%s", c, data)
			}
			if tc.check != nil {
				tc.check(t, d, reg)
			}
		})
	}
}

// FuzzDraftLoads: the draft of any keyspace loads.
func FuzzDraftLoads(f *testing.F) {
	f.Add([]byte("v1:user:1\nv1:user:2\nfoo\nsess_0123456789abcdef0123456789abcdef\n_kombu.binding.reports\nqueues"), int64(-1))
	f.Add([]byte("a::b\n{x}:1\n\xff\x00\n- a: b\n"), int64(math.MaxInt64))
	types := []string{"string", "hash", "ReJSON-RL", "list", "TSDB-TYPE", "set", "zset", "stream"}
	f.Fuzz(func(t *testing.T, data []byte, ttl int64) {
		if len(data) > 1<<12 {
			return
		}
		in := New(Options{})
		for i, k := range strings.Split(string(data), "\n") {
			for j := range 3 {
				in.Add(Fact{Key: k + ":" + strconv.Itoa(j), Type: types[(i+j)%len(types)], TTL: time.Duration(ttl) * time.Duration(j), Memory: -1, Len: -1})
			}
			in.Add(Fact{Key: k, Type: types[i%len(types)], TTL: time.Duration(ttl), Memory: -1, Len: -1})
		}
		in.Candidates(0)
		d, schemas, _ := in.Draft()
		if _, data, err := loadDraft(d, schemas); err != nil {
			t.Fatalf("the draft does not load: %v\n%s", err, data)
		}
	})
}

// TestProbeBound: the probes read keys of at most maxProbeSegs separators
// and maxProbeKey bytes, so a long key costs the miner's bounded work
// only; a Celery queue is still read up to the bound.
func TestProbeBound(t *testing.T) {
	queues := func(segs int) []string {
		r := rand.New(rand.NewPCG(61, 62))
		in := New(Options{})
		// A queue known from its binding, of segs separators.
		in.Add(Fact{Key: "_kombu.binding." + strings.Repeat("q:", segs) + "q", Type: "set", TTL: -1, Memory: -1, Len: -1})
		for _, k := range []string{"celery", "celery\x06\x166"} {
			in.Add(Fact{Key: k, Type: "list", TTL: -1, Memory: -1, Len: -1})
		}
		for range 10 {
			h := hexString(r, 32)
			in.Add(Fact{Key: "celery-task-meta-" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], Type: "string", TTL: time.Hour, Memory: -1, Len: -1})
		}
		in.Candidates(0)
		d, _, _ := in.Draft()
		for _, p := range d.Presets {
			for _, w := range p.With {
				if w.Name == "queues" {
					return w.Values
				}
			}
		}
		return nil
	}
	if got := queues(maxProbeSegs); len(got) != 2 {
		t.Errorf("a queue of %d separators: queues %q, want it read", maxProbeSegs, got)
	}
	if got := queues(maxProbeSegs + 1); len(got) != 0 {
		t.Errorf("a queue of %d separators: queues %q, want it past the bound", maxProbeSegs+1, got)
	}
	long := strings.Repeat("a:", 20_000)
	if probeable(long, ':') || probeable(strings.Repeat("a", maxProbeKey+1), ':') || !probeable(strings.Repeat("a", maxProbeKey), ':') {
		t.Error("probeable does not hold its bounds")
	}
}

// BenchmarkInferenceAddLong adds keys of 20,000 segments (40 KB): linear
// in the key, where the probes alone took 21 s per key before the bound.
func BenchmarkInferenceAddLong(b *testing.B) {
	in := New(Options{})
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = strings.Repeat("a:", 20_000) + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(keys[0])))
	for i := 0; b.Loop(); i++ {
		in.Add(Fact{Key: keys[i%len(keys)], Type: "string", TTL: -1, Memory: -1, Len: -1})
	}
}
