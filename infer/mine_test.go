package infer

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/synth"
	"github.com/keyreg/keyreg/registry"
)

func mine(keys []string, o MinerOptions) []Candidate {
	m := NewMiner(o)
	for i, k := range keys {
		m.Add(Fact{Key: k, Type: "string", TTL: time.Duration(i%3-1) * time.Second, Memory: int64(len(k)), Len: -1})
	}
	return m.Families()
}

// families builds registry families from the candidates, in order.
func families(t testing.TB, cands []Candidate, sep byte) []*registry.Family {
	t.Helper()
	fams := make([]*registry.Family, len(cands))
	for i, c := range cands {
		p, err := registry.ParsePattern(c.Pattern, sep)
		if err != nil {
			t.Fatalf("candidate %d: pattern %q does not parse: %v", i, c.Pattern, err)
		}
		fams[i] = &registry.Family{Index: i, Name: "c" + strconv.Itoa(i), Pattern: p}
	}
	return fams
}

var versionSeg = regexp.MustCompile(`^v([0-9]+)$`)

// checkInvariants checks what every result must satisfy: patterns parse,
// no two overlap, every key matches the candidate it was counted in (the
// matcher's count per candidate equals Stats.Keys), the counts sum to the
// keys, examples match their candidate, and Version is the v<N> segment.
// It returns the candidate index of each key.
func checkInvariants(t testing.TB, keys []string, cands []Candidate, sep byte) []int {
	t.Helper()
	fams := families(t, cands, sep)
	if ovs, complete := registry.OverlapsWithin(fams, sep, registry.OverlapBudget, 20); len(ovs) > 0 || !complete {
		for _, o := range ovs {
			t.Errorf("candidates overlap: %q and %q both match %q", o.A.Pattern.Source, o.B.Pattern.Source, o.Example)
		}
		if !complete {
			t.Errorf("overlap proof incomplete")
		}
	}
	index := map[*registry.Family]int{}
	for i, f := range fams {
		index[f] = i
	}
	mt := registry.NewMatcher(fams, sep)
	got := make([]int64, len(cands))
	where := make([]int, len(keys))
	var nonEmpty int64
	for i, k := range keys {
		where[i] = -1
		if k == "" {
			continue
		}
		nonEmpty++
		f := mt.Match(k)
		if f == nil {
			t.Errorf("key %q matches no candidate", k)
			continue
		}
		got[index[f]]++
		where[i] = index[f]
	}
	var sum int64
	for i, c := range cands {
		sum += c.Stats.Keys
		if got[i] != c.Stats.Keys {
			t.Errorf("candidate %q: counted %d keys, %d keys match it", c.Pattern, c.Stats.Keys, got[i])
		}
		for _, e := range c.Stats.Examples {
			if !matches(fams[i].Pattern, e) {
				t.Errorf("candidate %q: example %q does not match", c.Pattern, e)
			}
		}
		want := 0
		for _, s := range strings.Split(c.Pattern, registry.EscapeLiteral(string([]byte{sep}))) {
			if v := versionSeg.FindStringSubmatch(s); v != nil {
				// The miner reads versions of up to 9 digits.
				if n, err := strconv.Atoi(v[1]); err == nil && n >= 1 && len(v[1]) <= 9 {
					want = n
					break
				}
			}
		}
		if c.Version != want {
			t.Errorf("candidate %q: version %d, want %d", c.Pattern, c.Version, want)
		}
	}
	if sum != nonEmpty {
		t.Errorf("Stats.Keys sum to %d, want %d", sum, nonEmpty)
	}
	if t.Failed() {
		for _, c := range cands[:min(len(cands), 60)] {
			t.Logf("  %6d %s", c.Stats.Keys, c.Pattern)
		}
		t.FailNow()
	}
	return where
}

func matches(p *registry.Pattern, key string) bool {
	f := &registry.Family{Name: "x", Pattern: p}
	return registry.NewMatcher([]*registry.Family{f}, p.Sep).Match(key) == f
}

var (
	tagRe = regexp.MustCompile(`\{\{[a-z_][a-z0-9_]*(:[a-z]+)?\}\}`)
	phRe  = regexp.MustCompile(`\{[a-z_][a-z0-9_]*(:[a-z]+)?\}`)
)

// normalize drops placeholder names: {user_id:int} -> {:int}, {name} -> {:word}.
func normalize(p string) string {
	typ := func(m string, open int) string {
		if i := strings.IndexByte(m, ':'); i >= 0 {
			return m[i : len(m)-open]
		}
		return ":word"
	}
	p = tagRe.ReplaceAllStringFunc(p, func(m string) string { return "{{" + typ(m, 2) + "}}" })
	return phRe.ReplaceAllStringFunc(p, func(m string) string {
		if strings.HasPrefix(m, "{{") {
			return m
		}
		return "{" + typ(m, 1) + "}"
	})
}

// quality measures a result against the true families: the share of keys
// in a candidate whose majority is their own family, candidates per family,
// and the true patterns without a candidate of the same pattern (up to
// placeholder names).
func quality(t *testing.T, truth []string, keys []string, cands []Candidate, where []int) (right float64, perFamily float64, missing []string) {
	t.Helper()
	tf := make([]*registry.Family, len(truth))
	for i, p := range truth {
		pp, err := registry.ParsePattern(p, ':')
		if err != nil {
			t.Fatal(err)
		}
		tf[i] = &registry.Family{Index: i, Name: "t" + strconv.Itoa(i), Pattern: pp}
	}
	tm := registry.NewMatcher(tf, ':')
	trueOf := make([]int, len(keys))
	counts := make([]map[int]int, len(cands))
	for i := range counts {
		counts[i] = map[int]int{}
	}
	for i, k := range keys {
		f := tm.Match(k)
		trueOf[i] = -1 // junk: a family of its own
		if f != nil {
			trueOf[i] = f.Index
		}
		counts[where[i]][trueOf[i]]++
	}
	major := make([]int, len(cands))
	perTrue := map[int]int{}
	for i, c := range counts {
		best, bn := -1, 0
		for f, n := range c {
			if n > bn || n == bn && f < best {
				best, bn = f, n
			}
		}
		major[i] = best
		perTrue[best]++
	}
	ok, total := 0, 0
	for i := range keys {
		if trueOf[i] < 0 {
			continue
		}
		total++
		if major[where[i]] == trueOf[i] {
			ok++
		}
	}
	have := map[string]bool{}
	for _, c := range cands {
		have[normalize(c.Pattern)] = true
	}
	lr := regexp.MustCompile(`\{:word\}-\{:word\}`)
	for _, p := range truth {
		n := normalize(p)
		// {lang}-{region} of random words is one word placeholder: the
		// words hold '-' themselves.
		n = lr.ReplaceAllString(n, "{:word}")
		if !have[n] {
			missing = append(missing, p)
		}
	}
	n := 0 // candidates of true families
	for f, c := range perTrue {
		if f >= 0 {
			n += c
		}
	}
	return float64(ok) / float64(total), float64(n) / float64(len(truth)), missing
}

func TestMinerSynthBars(t *testing.T) {
	for _, tc := range []struct {
		families, keys int
		seed           int64
		junk           float64
	}{
		{10, 20_000, 7, 0}, {100, 200_000, 7, 0}, {10, 300, 3, 0}, {100, 3000, 5, 0},
		{100, 50_000, 11, 0}, {300, 300_000, 13, 0},
		// With 10% junk: leftovers, framework keys and typos of real keys.
		{10, 20_000, 17, 0.1}, {100, 200_000, 19, 0.1},
	} {
		t.Run(fmt.Sprintf("%d-%d-%v", tc.families, tc.keys, tc.junk), func(t *testing.T) {
			truth := synth.Patterns(tc.families)
			keys := synth.Keys(truth, ':', tc.keys, tc.seed, tc.junk)
			cands := mine(keys, MinerOptions{})
			where := checkInvariants(t, keys, cands, ':')
			right, per, missing := quality(t, truth, keys, cands, where)
			t.Logf("%d true families: %d candidates (%.2f per true family), %.3f%% of their keys in the right family",
				len(truth), len(cands), per, 100*right)
			for _, p := range missing {
				t.Errorf("true family %q not recovered", p)
			}
			if right < 0.99 {
				t.Errorf("%.3f%% of keys in the right family, want >= 99%%", 100*right)
			}
			if per > 1.5 {
				t.Errorf("%.2f candidates per true family, want <= 1.5", per)
			}
			if t.Failed() {
				for _, c := range cands {
					t.Logf("  %6d %s", c.Stats.Keys, c.Pattern)
				}
			}
		})
	}
}

// benchKeys generates the key shapes of bench/seed.go: the families of
// bench/keys.yaml plus its junk prefixes, in the same proportions.
func benchKeys(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	hex := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = "0123456789abcdef"[r.IntN(16)]
		}
		return string(b)
	}
	uuid := func(i int) string {
		return fmt.Sprintf("%08x-%04x-4%03x-%04x-%04x%08x", r.Uint32(), r.IntN(1<<16), r.IntN(1<<12), 0x8000|r.IntN(1<<14), r.IntN(1<<16), uint32(i))
	}
	const crock = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	ulid := func(i int) string {
		b := []byte("01HZ")
		for range 12 {
			b = append(b, crock[r.IntN(32)])
		}
		for k := 9; k >= 0; k-- {
			b = append(b, crock[(i>>(5*k))&31])
		}
		return string(b)
	}
	locales := []string{"en-us", "en-gb", "de-de", "fr-fr", "es-es", "ja-jp", "pt-br"}
	junk := []string{"tmp:debug:", "legacy_cache_", "sess:", "test:foo:", "scratch/", "migration:2023:"}
	mix := []int{400, 50, 100, 50, 100, 30, 1, 50, 20, 99, 100}
	keys := make([]string, n)
	for i := range keys {
		x, k := r.IntN(1000), 0
		for x >= mix[k] {
			x -= mix[k]
			k++
		}
		switch k {
		case 0:
			keys[i] = "v2:user:session:" + uuid(i)
		case 1:
			keys[i] = "v2:user:" + strconv.Itoa(10_000_000+i) + ":sessions"
		case 2:
			keys[i] = "v1:cache:product:" + strconv.Itoa(1+i)
		case 3:
			keys[i] = "v1:cache:page:" + strconv.Itoa(1+i) + ":" + locales[r.IntN(len(locales))]
		case 4:
			keys[i] = "v1:cart:{" + strconv.Itoa(20_000_000+i) + "}:items"
		case 5:
			keys[i] = "v1:leaderboard:" + strconv.Itoa(1+r.IntN(50)) + ":" + strconv.Itoa(1+i)
		case 6:
			keys[i] = "v1:chat:room:" + ulid(i) + ":messages"
		case 7:
			keys[i] = "celery-task-meta-" + uuid(i)
		case 8:
			keys[i] = "v1:lock:job-" + strconv.Itoa(i)
		case 9:
			keys[i] = "v1:stats:views:" + strconv.Itoa(1+i) + ":" + strconv.Itoa(20260101+r.IntN(28))
		default:
			keys[i] = junk[r.IntN(len(junk))] + strconv.Itoa(i) + hex(0)
		}
	}
	return keys
}

func TestMinerBenchKeyspace(t *testing.T) {
	for _, n := range []int{2_000, 100_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			keys := benchKeys(n)
			cands := mine(keys, MinerOptions{})
			checkInvariants(t, keys, cands, ':')
			have := map[string]bool{}
			for _, c := range cands {
				have[normalize(c.Pattern)] = true
				t.Logf("%6d %s", c.Stats.Keys, c.Pattern)
			}
			// The families of bench/keys.yaml, and the junk of bench/seed.go.
			want := []string{
				"v2:user:session:{:uuid}",
				"v2:user:{:int}:sessions",
				"v1:cache:product:{:int}",
				"v1:cache:page:{:int}:{:word}",
				"v1:cart:{{:int}}:items",
				"v1:leaderboard:{:int}:{:int}",
				"celery-task-meta-{:uuid}",
				"v1:lock:job-{:int}", // the registry says v1:lock:{resource:word}; every lock here is job-N
				"v1:stats:views:{:int}:{:int}",
				"tmp:debug:{:int}", "legacy_cache_{:int}", "sess:{:int}", "test:foo:{:int}", "scratch/{:int}",
				"migration:2023:{:int}",
			}
			if n >= 100_000 {
				want = append(want, "v1:chat:room:{:ulid}:messages") // 1 key in 1000
			}
			for _, w := range want {
				if !have[w] {
					t.Errorf("no candidate %s", w)
				}
			}
			if len(cands) > 20 {
				t.Errorf("%d candidates, want <= 20", len(cands))
			}
			for _, c := range cands {
				if strings.HasPrefix(c.Pattern, "v2:") && c.Version != 2 || strings.HasPrefix(c.Pattern, "v1:") && c.Version != 1 {
					t.Errorf("%s: version %d", c.Pattern, c.Version)
				}
			}
		})
	}
}

// patternsOf returns the normalised patterns of cands.
func patternsOf(cands []Candidate) []string {
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = normalize(c.Pattern)
	}
	return out
}

func TestMinerShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	word := func() string {
		b := make([]byte, 3+r.IntN(8))
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		return string(b)
	}
	hex := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = "0123456789abcdef"[r.IntN(16)]
		}
		return string(b)
	}
	uuid := func() string {
		h := hex(32)
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	ulid := func() string {
		const crock = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
		b := []byte("01")
		for range 24 {
			b = append(b, crock[r.IntN(32)])
		}
		return string(b)
	}
	gen := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		keys []string
		want []string // exact patterns
		norm []string // patterns up to placeholder names
		max  int      // most candidates; 0: len(want)+len(norm)
	}{
		{
			name: "names from the neighbouring literal",
			keys: slices.Concat(
				gen(50, func(i int) string { return "user:" + strconv.Itoa(i*7) }),
				gen(50, func(int) string { return "session:" + uuid() }),
				gen(50, func(int) string { return "room:" + ulid() }),
				gen(50, func(int) string { return "lock:" + word() }),
				gen(50, func(int) string { return "v2:token:" + hex(40) })),
			want: []string{"user:{user_id:int}", "session:{session_id:uuid}", "room:{room_id:ulid}", "lock:{lock:word}", "v2:token:{token_id:hex}"},
		},
		{
			name: "product and page stay two families",
			keys: slices.Concat(
				gen(300, func(i int) string { return "v1:cache:product:" + strconv.Itoa(i) }),
				gen(300, func(i int) string {
					return "v1:cache:page:" + strconv.Itoa(i) + ":" + []string{"en-us", "de-de", "fr-fr", "ja-jp", "pt-br", "es-es", "it-it"}[i%7]
				})),
			want: []string{"v1:cache:product:{product_id:int}", "v1:cache:page:{page_id:int}:{page:word}"},
		},
		{
			name: "suffix families after a placeholder stay literal",
			keys: slices.Concat(
				gen(200, func(i int) string { return "user:" + strconv.Itoa(i) + ":profile" }),
				gen(200, func(i int) string { return "user:" + strconv.Itoa(i) + ":settings" }),
				gen(200, func(i int) string { return "user:" + strconv.Itoa(i) + ":sessions" })),
			norm: []string{"user:{:int}:profile", "user:{:int}:settings", "user:{:int}:sessions"},
		},
		{
			name: "high-cardinality segment in the middle",
			keys: gen(5000, func(i int) string { return "tenant:" + word() + ":user:" + strconv.Itoa(i) }),
			norm: []string{"tenant:{:word}:user:{:int}"},
		},
		{
			name: "keys without a separator",
			keys: slices.Concat(
				gen(100, func(int) string { return "celery-task-meta-" + uuid() }),
				gen(100, func(i int) string { return "legacy_cache_" + strconv.Itoa(i) }),
				gen(100, func(int) string { return "sess_" + hex(24) }),
				gen(100, func(i int) string { return "job" + strconv.Itoa(i) }),
				gen(100, func(i int) string { return strconv.Itoa(i) + ".json" }),
				gen(100, func(int) string { return "_kombu.binding." + word() })),
			norm: []string{"celery-task-meta-{:uuid}", "legacy_cache_{:int}", "sess_{:hex}", "job{:int}", "{:int}.json"},
			max:  7,
		},
		{
			name: "words that look like hex stay literal without evidence",
			keys: slices.Concat(
				gen(100, func(i int) string { return "cafe:" + strconv.Itoa(i) }),
				gen(100, func(i int) string { return "deadbeef:" + strconv.Itoa(i) })),
			want: []string{"cafe:{cafe_id:int}", "deadbeef:{deadbeef_id:int}"},
		},
		{
			name: "constant numbers stay literal",
			keys: gen(100, func(i int) string { return "app:1:h264:" + uuid() }),
			want: []string{"app:1:h264:{h264_id:uuid}"},
		},
		{
			name: "django-redis keys with colons become any",
			keys: gen(500, func(i int) string {
				return ":1:" + strings.Join(gen(1+r.IntN(4), func(int) string { return word() }), ":")
			}),
			want: []string{":1:{key:any}"},
		},
		{
			name: "dates",
			keys: slices.Concat(
				gen(500, func(i int) string {
					return fmt.Sprintf("stats:%d-%02d-%02d:%d", 2020+r.IntN(6), 1+r.IntN(12), 1+r.IntN(28), i)
				}),
				gen(500, func(i int) string { return fmt.Sprintf("daily:%d%02d%02d", 2020+r.IntN(6), 1+r.IntN(12), 1+r.IntN(28)) })),
			norm: []string{"stats:{:word}:{:int}", "daily:{:int}"},
		},
		{
			name: "hash tags",
			keys: slices.Concat(
				gen(100, func(i int) string { return "cart:{" + strconv.Itoa(i) + "}:items" }),
				gen(100, func(int) string { return "{" + word() + "}:queue" }),
				gen(100, func(int) string { return "s:{" + uuid() + "}" })),
			norm: []string{"cart:{{:int}}:items", "{{:word}}:queue", "s:{{:uuid}}"},
		},
		{
			name: "empty segments",
			keys: slices.Concat(
				gen(100, func(i int) string { return "a::" + strconv.Itoa(i) }),
				gen(100, func(i int) string { return "a:" + strconv.Itoa(i) + ":" }),
				[]string{":", "::", "a:", ":a"}),
			want: []string{"a::{a_id:int}", "a:{a_id:int}:", ":", "::", "a:", ":a"},
		},
		{
			name: "version segments",
			keys: slices.Concat(
				gen(100, func(i int) string { return "v3:order:" + strconv.Itoa(i) }),
				gen(100, func(i int) string { return "v12:order:" + strconv.Itoa(i) })),
			want: []string{"v3:order:{order_id:int}", "v12:order:{order_id:int}"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cands := mine(tc.keys, MinerOptions{})
			checkInvariants(t, tc.keys, cands, ':')
			pats := make([]string, len(cands))
			for i, c := range cands {
				pats[i] = c.Pattern
			}
			norms := patternsOf(cands)
			for _, w := range tc.want {
				if !slices.Contains(pats, w) {
					t.Errorf("no candidate %s", w)
				}
			}
			for _, w := range tc.norm {
				if !slices.Contains(norms, w) {
					t.Errorf("no candidate %s (up to names)", w)
				}
			}
			max := tc.max
			if max == 0 {
				max = len(tc.want) + len(tc.norm)
			}
			if len(cands) > max {
				t.Errorf("%d candidates, want <= %d", len(cands), max)
			}
			if t.Failed() {
				for _, c := range cands {
					t.Logf("%6d %s", c.Stats.Keys, c.Pattern)
				}
			}
		})
	}
}

func TestMinerVersion(t *testing.T) {
	var keys []string
	for i := range 20 {
		n := strconv.Itoa(i)
		keys = append(keys, fmt.Sprintf("v2:user:session:d9b1d7db-a3a4-4d8a-9c33-5c2b5a0b%04d", i), "x:v7:v8:a:"+n, "v0:a:"+n, "v:b:"+n)
	}
	cands := mine(keys, MinerOptions{})
	checkInvariants(t, keys, cands, ':')
	want := map[string]int{"v2:user:session:{session_id:uuid}": 2, "x:v7:v8:a:{a_id:int}": 7, "v0:a:{a_id:int}": 0, "v:b:{b_id:int}": 0}
	for _, c := range cands {
		if v, ok := want[c.Pattern]; !ok || v != c.Version {
			t.Errorf("%s: version %d, want %d (known %v)", c.Pattern, c.Version, v, ok)
		}
	}
}

func TestMinerMixedTypes(t *testing.T) {
	m := NewMiner(MinerOptions{})
	types := []string{"string", "hash", "zset"}
	for i := range 300 {
		m.Add(Fact{Key: "obj:" + strconv.Itoa(i), Type: types[i%3], TTL: -1, Memory: -1, Len: -1})
	}
	cands := m.Families()
	if len(cands) != 1 || cands[0].Pattern != "obj:{obj_id:int}" {
		t.Fatalf("got %v", patternsOf(cands))
	}
	if s := cands[0].Stats; s.Keys != 300 || len(s.Types) != 3 || s.Types["hash"] != 100 {
		t.Errorf("stats: %d keys, types %v", s.Keys, s.Types)
	}
	if typ, all := cands[0].Stats.Type(); all || typ != "hash" {
		t.Errorf("Type() = %s, %v", typ, all)
	}
}

func TestMinerHostile(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	randBytes := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	long := strings.Repeat("segment:", 20_000) + "end"
	cases := map[string][]string{
		"binary": func() []string {
			out := make([]string, 2000)
			for i := range out {
				out[i] = randBytes(1 + r.IntN(40))
			}
			return out
		}(),
		"binary with structure": func() []string {
			out := make([]string, 2000)
			for i := range out {
				out[i] = "bin:\x00\xff{}\\:" + randBytes(8) + ":" + strconv.Itoa(i)
			}
			return out
		}(),
		"very long": {long, long + "x", strings.Repeat("x", 100_000), strings.Repeat("{", 3000), strings.Repeat(":", 5000),
			strings.Repeat("a:", 40) + "b", strings.Repeat("\x01:", 400), strings.Repeat("é", 600)},
		"braces and escapes": {"{", "}", "{}", "{{}}", "{a}{b}", "\\", "\\x41", "{x:int}", "a{b}c:{1}:{", "{{1}}"},
		"empty key":          {"", "", "a"},
	}
	for name, keys := range cases {
		t.Run(name, func(t *testing.T) {
			for _, max := range []int{0, 64} {
				cands := mine(keys, MinerOptions{MaxShapes: max})
				checkInvariants(t, keys, cands, ':')
				for _, c := range cands {
					if len(c.Pattern) > registry.MaxPatternLen {
						t.Errorf("pattern of %d bytes", len(c.Pattern))
					}
				}
			}
		})
	}
	m := NewMiner(MinerOptions{})
	m.Add(Fact{Key: ""})
	if m.Dropped() != 1 || len(m.Families()) != 0 {
		t.Errorf("the empty key: dropped %d", m.Dropped())
	}
}

func TestMinerSeparators(t *testing.T) {
	for _, sep := range []byte{'/', '.', '-', '\x01', '|', 0xff} {
		truth := synth.Patterns(30)
		keys := synth.Keys(truth, ':', 5000, 9, 0.1)
		for i, k := range keys {
			keys[i] = strings.ReplaceAll(k, ":", string([]byte{sep}))
		}
		cands := mine(keys, MinerOptions{Separator: sep})
		checkInvariants(t, keys, cands, sep)
		// Synth values hold '.' and '-' themselves, so with those
		// separators segment counts vary and only the invariants hold.
		if sep != '.' && sep != '-' && len(cands) > 60 {
			t.Errorf("separator %q: %d candidates for 30 families", sep, len(cands))
			for _, c := range cands {
				t.Logf("%6d %q", c.Stats.Keys, c.Pattern)
			}
		}
	}
}

func TestMinerDeterministic(t *testing.T) {
	truth := synth.Patterns(50)
	keys := synth.Keys(truth, ':', 30_000, 21, 0.1)
	for _, max := range []int{0, 200} {
		a := mine(keys, MinerOptions{MaxShapes: max})
		b := mine(keys, MinerOptions{MaxShapes: max})
		if len(a) != len(b) {
			t.Fatalf("%d vs %d candidates", len(a), len(b))
		}
		for i := range a {
			if a[i].Pattern != b[i].Pattern || a[i].Stats.Keys != b[i].Stats.Keys || !slices.Equal(a[i].Stats.Examples, b[i].Stats.Examples) {
				t.Fatalf("candidate %d differs: %s %d vs %s %d", i, a[i].Pattern, a[i].Stats.Keys, b[i].Pattern, b[i].Stats.Keys)
			}
		}
	}
}

// Under a small bound the miner merges shapes early; the result is coarser
// but keeps every invariant.
func TestMinerSmallBound(t *testing.T) {
	truth := synth.Patterns(100)
	keys := synth.Keys(truth, ':', 50_000, 23, 0.1)
	for _, bound := range []int{300, 2000} {
		m := NewMiner(MinerOptions{MaxShapes: bound})
		for _, k := range keys {
			m.Add(Fact{Key: k, TTL: -1, Memory: -1, Len: -1})
			if m.nodes > bound {
				t.Fatalf("%d nodes, bound %d", m.nodes, bound)
			}
		}
		cands := m.Families()
		checkInvariants(t, keys, cands, ':')
		t.Logf("%d candidates for 100 true families under a bound of %d shapes", len(cands), bound)
	}
}

// Calling Families, adding more keys and calling it again stays consistent.
func TestMinerIncremental(t *testing.T) {
	truth := synth.Patterns(40)
	keys := synth.Keys(truth, ':', 20_000, 25, 0.1)
	m := NewMiner(MinerOptions{})
	for i, k := range keys {
		m.Add(Fact{Key: k, TTL: -1, Memory: -1, Len: -1})
		if i == len(keys)/2 {
			checkInvariants(t, keys[:i+1], m.Families(), ':')
		}
	}
	checkInvariants(t, keys, m.Families(), ':')
}

// 1M keys of 1M distinct random shapes: the trie stays under MaxShapes
// nodes and the heap stays bounded.
func TestMinerBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("1M keys")
	}
	r := rand.New(rand.NewPCG(7, 8))
	const n = 1_000_000
	buf := make([]byte, 0, 64)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := NewMiner(MinerOptions{})
	sample := make([]string, 0, 20_000)
	for i := range n {
		buf = buf[:0]
		for s := range 1 + r.IntN(6) {
			if s > 0 {
				buf = append(buf, ':')
			}
			for range 1 + r.IntN(8) {
				buf = append(buf, "abcdefghijklmnopqrstuvwxyz0123456789-_.{}"[r.IntN(41)])
			}
		}
		k := string(buf)
		m.Add(Fact{Key: k, Type: "string", TTL: -1, Memory: int64(i % 1000), Len: -1})
		if m.nodes > m.max {
			t.Fatalf("%d nodes, bound %d", m.nodes, m.max)
		}
		if i%50 == 0 {
			sample = append(sample, k)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("1M random keys: %d nodes, heap %.1f MiB (%.0f bytes per node)", m.nodes, float64(heap)/(1<<20), float64(heap)/float64(m.nodes))
	if heap > 64<<20 {
		t.Errorf("heap grew by %d MiB", heap>>20)
	}
	cands := m.Families()
	var sum int64
	for _, c := range cands {
		sum += c.Stats.Keys
	}
	if sum != n {
		t.Errorf("Stats.Keys sum to %d, want %d", sum, n)
	}
	t.Logf("%d candidates", len(cands))
	// Every sampled key matches a candidate and the counts are consistent.
	fams := families(t, cands, ':')
	mt := registry.NewMatcher(fams, ':')
	for _, k := range sample {
		if mt.Match(k) == nil {
			t.Fatalf("key %q matches no candidate", k)
		}
	}
	if ovs, _ := registry.OverlapsWithin(fams, ':', registry.OverlapBudget, 5); len(ovs) > 0 {
		t.Errorf("overlap: %s %s", ovs[0].A.Pattern.Source, ovs[0].B.Pattern.Source)
	}
}

func FuzzMiner(f *testing.F) {
	f.Add([]byte("v1:user:1\nv1:user:2\nv1:cache:page:1:en-us\n:1:a:b:c\ncelery-task-meta-d9b1d7db-a3a4-4d8a-9c33-5c2b5a0b3b1e"), byte(':'), false)
	f.Add([]byte("a::b\n::\n{1}:x\n{{\n\\x00\xff\x00:\x01"), byte(':'), true)
	f.Add([]byte("a/b/c\na/b\na/{b}/c\n"), byte('/'), false)
	f.Fuzz(func(t *testing.T, data []byte, sep byte, small bool) {
		if len(data) > 1<<14 {
			return
		}
		keys := strings.Split(string(data), "\n")
		// Repeat the keys with numbers so that shapes get evidence.
		n := len(keys)
		for i := range min(n, 50) {
			for j := range 3 {
				keys = append(keys, keys[i]+string([]byte{sep})+strconv.Itoa(j))
			}
		}
		o := MinerOptions{Separator: sep}
		if small {
			o.MaxShapes = 64
		}
		cands := mine(keys, o)
		s := sep
		if s == 0 || s == '{' || s == '}' || s == '\\' {
			s = ':'
		}
		checkInvariants(t, keys, cands, s)
	})
}

func BenchmarkMinerAdd(b *testing.B) {
	truth := synth.Patterns(100)
	keys := synth.Keys(truth, ':', 1<<16, 1, 0.1)
	m := NewMiner(MinerOptions{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		m.Add(Fact{Key: keys[i&(len(keys)-1)], Type: "string", TTL: -1, Memory: 100, Len: -1})
	}
}

func BenchmarkMinerFamilies(b *testing.B) {
	truth := synth.Patterns(100)
	keys := synth.Keys(truth, ':', 100_000, 1, 0.1)
	b.ReportAllocs()
	for b.Loop() {
		m := NewMiner(MinerOptions{})
		for _, k := range keys {
			m.Add(Fact{Key: k, Type: "string", TTL: -1, Memory: 100, Len: -1})
		}
		m.Families()
	}
}

// TestMinerGluedHexIDs: a hex ID glued to a literal head ("sess_" and 32
// hex digits) is one family, not one per key: the last 26 digits are hex,
// not a ULID, whatever the head.
func TestMinerGluedHexIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	hex := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = "0123456789abcdef"[r.IntN(16)]
		}
		return string(b)
	}
	var keys []string
	for i := range 2500 {
		keys = append(keys, "sess_"+hex(32))
		if i%2 == 0 {
			keys = append(keys, "v1:user:"+strconv.Itoa(i), "token_"+hex(26), "sessions:"+strconv.Itoa(i))
		}
	}
	cands := mine(keys, MinerOptions{})
	checkInvariants(t, keys, cands, ':')
	want := []string{"sess_{:hex}", "v1:user:{:int}", "token_{:hex}", "sessions:{:int}"}
	got := patternsOf(cands)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
}

// TestMinerULIDRange: 26 Crockford characters whose first is above 7 are
// not a ULID (they would overflow 128 bits), so they are not typed ulid;
// a true ULID still is.
func TestMinerULIDRange(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const crock = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	base32 := func(first string) string {
		b := []byte(first)
		for len(b) < 26 {
			b = append(b, crock[r.IntN(32)])
		}
		return string(b)
	}
	var keys []string
	for i := range 300 {
		keys = append(keys, "room:"+base32(string("89ABCDEFGHJKMNPQRSTVWXYZ"[i%24])), "chat:"+base32("01"))
	}
	cands := mine(keys, MinerOptions{})
	checkInvariants(t, keys, cands, ':')
	got := patternsOf(cands)
	slices.Sort(got)
	if want := []string{"chat:{:ulid}", "room:{:word}"}; !slices.Equal(got, want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
}

// TestMinerSiblings: literal siblings of one sub-shape, each with many
// keys of the same Redis types, are one placeholder that lists the values
// it took: twelve scratch areas, four locales. Siblings of other types, of
// another shape, or with few keys stay apart.
func TestMinerSiblings(t *testing.T) {
	names := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike", "november"}
	for _, tc := range []struct {
		name string
		keys func(add func(key, typ string))
		want []string // normalised patterns
		saw  []string // the values listed, of the first candidate with any
		more int
	}{
		{
			name: "twelve areas of one shape",
			keys: func(add func(string, string)) {
				for _, w := range names[:12] {
					for i := range 550 {
						add("scratch:"+w+":"+strconv.Itoa(i), "string")
					}
				}
			},
			want: []string{"scratch:{:word}:{:int}"},
			saw:  slices.Sorted(slices.Values(names[:12])),
		},
		{
			name: "locales after a placeholder",
			keys: func(add func(string, string)) {
				for i := range 400 {
					for _, l := range []string{"de", "en", "fr", "ja"} {
						add("cms:page:"+strconv.Itoa(i)+":"+l, "string")
					}
				}
			},
			want: []string{"cms:page:{:int}:{:word}"},
			saw:  []string{"de", "en", "fr", "ja"},
		},
		{
			name: "fourteen values, twelve listed",
			keys: func(add func(string, string)) {
				for _, w := range names {
					for i := range 40 {
						add("scratch:"+w+":"+strconv.Itoa(i), "hash")
					}
				}
			},
			want: []string{"scratch:{:word}:{:int}"},
			saw:  slices.Sorted(slices.Values(names))[:12],
			more: 2,
		},
		{
			name: "different types stay apart",
			keys: func(add func(string, string)) {
				for i := range 300 {
					add("user:"+strconv.Itoa(i)+":profile", "hash")
					add("user:"+strconv.Itoa(i)+":settings", "string")
					add("user:"+strconv.Itoa(i)+":sessions", "set")
					add("user:"+strconv.Itoa(i)+":cart", "list")
				}
			},
			want: []string{"user:{:int}:profile", "user:{:int}:settings", "user:{:int}:sessions", "user:{:int}:cart"},
		},
		{
			name: "few keys each stay apart",
			keys: func(add func(string, string)) {
				for _, w := range names[:5] {
					for i := range 10 {
						add("scratch:"+w+":"+strconv.Itoa(i), "string")
					}
				}
			},
			want: []string{"scratch:alpha:{:int}", "scratch:bravo:{:int}", "scratch:charlie:{:int}", "scratch:delta:{:int}", "scratch:echo:{:int}"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMiner(MinerOptions{})
			var keys []string
			tc.keys(func(k, typ string) {
				keys = append(keys, k)
				m.Add(Fact{Key: k, Type: typ, TTL: -1, Memory: -1, Len: -1})
			})
			cands := m.Families()
			checkInvariants(t, keys, cands, ':')
			got := patternsOf(cands)
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(tc.want))) {
				t.Errorf("candidates %v, want %v", got, tc.want)
			}
			var saw []Saw
			for _, c := range cands {
				saw = append(saw, c.Saw...)
			}
			switch {
			case tc.saw == nil && len(saw) > 0:
				t.Errorf("values listed: %+v", saw)
			case tc.saw != nil && (len(saw) != 1 || !slices.Equal(saw[0].Values, tc.saw) || saw[0].More != tc.more):
				t.Errorf("values listed %+v, want %v and %d more", saw, tc.saw, tc.more)
			}
		})
	}
}
