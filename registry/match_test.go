package registry

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/internal/synth"
)

// families parses patterns into families named f0, f1, ... in order.
func families(t testing.TB, sep byte, patterns ...string) []*Family {
	t.Helper()
	fs := make([]*Family, len(patterns))
	for i, src := range patterns {
		p, err := ParsePattern(src, sep)
		if err != nil {
			t.Fatalf("ParsePattern(%q): %v", src, err)
		}
		fs[i] = &Family{Index: i, Name: fmt.Sprintf("f%d", i), Pattern: p}
	}
	return fs
}

func famName(f *Family) string {
	if f == nil {
		return "<nil>"
	}
	return f.Name
}

// refMatch is the reference matcher: it tries every pattern on its own, with
// plain backtracking over Valid, and applies the priority rule to the
// families that match.
func refMatch(fams []*Family, key string) (*Family, []Param) {
	var best *Family
	var bestParams []Param
	for _, f := range fams {
		if f == nil || f.Pattern == nil {
			continue
		}
		params, ok := refBind(f.Pattern, key)
		if !ok {
			continue
		}
		if best == nil || f.Pattern.LiteralBytes() > best.Pattern.LiteralBytes() ||
			(f.Pattern.LiteralBytes() == best.Pattern.LiteralBytes() && f.Index < best.Index) {
			best, bestParams = f, params
		}
	}
	return best, bestParams
}

// refBind matches key against p, trying the longest value first for each
// placeholder.
func refBind(p *Pattern, key string) ([]Param, bool) {
	failed := map[[2]int]bool{}
	var rec func(i, pos int, out []Param) ([]Param, bool)
	rec = func(i, pos int, out []Param) ([]Param, bool) {
		if i == len(p.Parts) {
			return out, pos == len(key)
		}
		if failed[[2]int{i, pos}] {
			return nil, false
		}
		pt := p.Parts[i]
		if !pt.IsPlaceholder() {
			if strings.HasPrefix(key[pos:], pt.Lit) {
				if r, ok := rec(i+1, pos+len(pt.Lit), out); ok {
					return r, true
				}
			}
		} else {
			for end := len(key); end > pos; end-- {
				if pt.Type.Valid(key[pos:end], p.Sep) {
					if r, ok := rec(i+1, end, append(out, Param{pt.Name, key[pos:end]})); ok {
						return r, true
					}
				}
			}
		}
		failed[[2]int{i, pos}] = true
		return nil, false
	}
	out, ok := rec(0, 0, []Param{})
	return out, ok
}

// checkAgainstRef fails t when m and the reference disagree on key.
func checkAgainstRef(t testing.TB, m *Matcher, fams []*Family, key string) {
	t.Helper()
	wantF, wantP := refMatch(fams, key)
	gotF := m.Match(key)
	gotF2, gotP := m.MatchParams(key, nil)
	if gotF != wantF || gotF2 != wantF {
		t.Fatalf("key %q: Match = %s, MatchParams = %s, reference = %s", key, famName(gotF), famName(gotF2), famName(wantF))
	}
	if wantF != nil && !slices.Equal(gotP, wantP) {
		t.Fatalf("key %q (%s %q): params = %q, reference = %q", key, wantF.Name, wantF.Pattern.Source, gotP, wantP)
	}
	if wantF == nil && len(gotP) != 0 {
		t.Fatalf("key %q: no family but params %q", key, gotP)
	}
}

const (
	uuidLower = "123e4567-e89b-12d3-a456-426614174000"
	uuidUpper = "123E4567-E89B-12D3-A456-426614174000"
	ulidOK    = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
)

func TestMatchTypes(t *testing.T) {
	tests := []struct {
		pattern string
		key     string
		want    []string // bound values; nil when key must not match
	}{
		// word
		{"u:{id}", "u:abc", []string{"abc"}},
		{"u:{id}", "u:a-b.c_d", []string{"a-b.c_d"}},
		{"u:{id}", "u:a:b", nil}, // never crosses the separator
		{"u:{id}", "u:", nil},    // one or more bytes
		{"u:{id}:x", "u::x", nil},
		{"u:{id:word}:x", "u:ü\x00\xff:x", []string{"ü\x00\xff"}},
		// int
		{"n:{n:int}", "n:42", []string{"42"}},
		{"n:{n:int}", "n:-5", []string{"-5"}},
		{"n:{n:int}", "n:-", nil},
		{"n:{n:int}", "n:--5", nil},
		{"n:{n:int}", "n:5-", nil},
		{"n:{n:int}", "n:4x2", nil},
		{"n:{n:int}", "n:007", []string{"007"}},
		{"n:{n:int}-{m:int}", "n:-1--2", []string{"-1", "-2"}},
		{"n:{n:int}-{m:int}", "n:1-2", []string{"1", "2"}},
		// uuid
		{"s:{id:uuid}", "s:" + uuidLower, []string{uuidLower}},
		{"s:{id:uuid}", "s:" + uuidUpper, []string{uuidUpper}},
		{"s:{id:uuid}", "s:" + uuidLower[:35], nil},
		{"s:{id:uuid}", "s:" + uuidLower + "0", nil},
		{"s:{id:uuid}", "s:" + strings.ReplaceAll(uuidLower, "-", "x"), nil},
		{"s:{id:uuid}", "s:123e4567e-89b-12d3-a456-42661417400", nil},
		{"s:{id:uuid}", "s:g23e4567-e89b-12d3-a456-426614174000", nil},
		{"s:{id:uuid}:{n:int}", "s:" + uuidLower + ":7", []string{uuidLower, "7"}},
		// hex
		{"h:{h:hex}", "h:DeadBeef09", []string{"DeadBeef09"}},
		{"h:{h:hex}", "h:abcg", nil},
		{"h:{h:hex}", "h:", nil},
		{"h:{h:hex}b", "h:abb", []string{"ab"}},
		// ulid
		{"l:{id:ulid}", "l:" + ulidOK, []string{ulidOK}},
		{"l:{id:ulid}", "l:" + strings.ToLower(ulidOK), []string{strings.ToLower(ulidOK)}},
		{"l:{id:ulid}", "l:" + ulidOK[:25], nil},
		{"l:{id:ulid}", "l:" + ulidOK + "0", nil},
		{"l:{id:ulid}", "l:I" + ulidOK[1:], nil},
		{"l:{id:ulid}", "l:L" + ulidOK[1:], nil},
		{"l:{id:ulid}", "l:o" + ulidOK[1:], nil},
		{"l:{id:ulid}", "l:U" + ulidOK[1:], nil},
		// 26 base32 characters hold 130 bits: a ULID's first is 0-7.
		{"l:{id:ulid}", "l:7ZZZZZZZZZZZZZZZZZZZZZZZZZ", []string{"7ZZZZZZZZZZZZZZZZZZZZZZZZZ"}},
		{"l:{id:ulid}", "l:8" + ulidOK[1:], nil},
		{"l:{id:ulid}", "l:Z" + ulidOK[1:], nil},
		{"l:{id:ulid}", "l:z" + ulidOK[1:], nil},
		{"l:{id:ulid}", "l:0" + ulidOK[1:], []string{"0" + ulidOK[1:]}},
		{"l:{id:ulid}:x", "l:9" + ulidOK[1:] + ":x", nil},
		// any
		{":1:{key:any}", ":1:views:product:42", []string{"views:product:42"}},
		{":1:{key:any}", ":1:", nil},
		{":1:{key:any}", ":1::", []string{":"}},
		{"a:{x:any}:{y:any}", "a:1:2:3", []string{"1:2", "3"}}, // greedy: earlier takes the most
		{"a:{x:any}:b", "a:1:b:b", []string{"1:b"}},
		{"a:{x:any}:b", "a:\x00:\xff:b", []string{"\x00:\xff"}},
		// hash tags and escapes
		{"cart:{{user_id:int}}:items", "cart:{42}:items", []string{"42"}},
		{"cart:{{user_id:int}}:items", "cart:42:items", nil},
		{"cart:{{user_id:int}}:items", "cart:{x}:items", nil},
		{"cart:{{user_id}}:items", "cart:{a}b}:items", []string{"a}b"}},
		{`lit:\{x\}:{id}`, "lit:{x}:7", []string{"7"}},
		{`lit:\{x\}:{id}`, "lit:x:7", nil},
		{`back\\slash:{id}`, `back\slash:7`, []string{"7"}},
		// whole key, binary keys
		{"v1:user:{id:int}", "v1:user:42:x", nil},
		{"v1:user:{id:int}", "v1:user:", nil},
		{"v1:user:{id:int}", "v1:use", nil},
		{"v1:user:{id:int}", "", nil},
		{"v1:user:{id:int}", "xv1:user:1", nil},
		{`\x00bin:{id}`, "\x00bin:\x01\xff", []string{"\x01\xff"}},
		{"plain:literal", "plain:literal", []string{}},
		{"plain:literal", "plain:literal:", nil},
		{"plain:literal", "plain:litera", nil},
		{"{id}", "abc", []string{"abc"}},
		{"{id}:x", "a:x", []string{"a"}},
		{"{id:any}", ":", []string{":"}},
		// word next to a literal it can contain: greedy backtracking
		{"i18n:{lang}-{region}", "i18n:pt-br-x", []string{"pt-br", "x"}},
		{"i18n:{lang}-{region}", "i18n:pt", nil},
		{"f:{name}.json", "f:a.b.json", []string{"a.b"}},
	}
	for _, tc := range tests {
		fams := families(t, ':', tc.pattern)
		m := NewMatcher(fams, ':')
		f, params := m.MatchParams(tc.key, nil)
		var got []string
		if f != nil {
			got = []string{}
			for _, p := range params {
				got = append(got, p.Value)
			}
		}
		if !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("pattern %q, key %q: got %q (matched %v), want %q (match %v)", tc.pattern, tc.key, got, f != nil, tc.want, tc.want != nil)
		}
		checkAgainstRef(t, m, fams, tc.key)
	}
}

// TestMatchNonASCIILiteral: patterns are byte strings, so a literal byte
// such as 0xff or the UTF-8 of "é" must match itself, and so must a byte
// written as a \xHH escape.
func TestMatchNonASCIILiteral(t *testing.T) {
	for _, tc := range []struct{ pattern, lit, key string }{
		{`\x00bin\xff:{id}`, "\x00bin\xff:", "\x00bin\xff:\x01"},
		{"bin\xff:{id}", "bin\xff:", "bin\xff:\x01"},
		{"café:{id}", "café:", "café:1"},
	} {
		p, err := ParsePattern(tc.pattern, ':')
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Parts[0].Lit; got != tc.lit {
			t.Errorf("ParsePattern(%q): literal %q, want %q (bytes >= 0x80 must not be re-encoded as runes)", tc.pattern, got, tc.lit)
		}
		fams := families(t, ':', tc.pattern)
		if NewMatcher(fams, ':').Match(tc.key) == nil {
			t.Errorf("pattern %q does not match key %q", tc.pattern, tc.key)
		}
	}
}

func TestMatchSeparator(t *testing.T) {
	fams := families(t, '/', "api/{version}/{path:any}", "u/{id:int}")
	m := NewMatcher(fams, '/')
	for key, want := range map[string]string{
		"api/v1/a/b": "f0",
		"api/v1":     "<nil>",
		"u/7":        "f1",
		"u/7/8":      "<nil>",
		"u/a:b":      "<nil>",
	} {
		if got := famName(m.Match(key)); got != want {
			t.Errorf("Match(%q) = %s, want %s", key, got, want)
		}
	}
	// ':' is an ordinary byte when the separator is '/'
	m2 := NewMatcher(families(t, '/', "x:{w}"), '/')
	if m2.Match("x:a:b") == nil {
		t.Error(`word with separator "/" should accept ":"`)
	}
}

func TestMatchPriority(t *testing.T) {
	// An overlapping registry, as lint would reject it.
	fams := families(t, ':',
		"v1:{kind}:{id}",             // f0: 4 literal bytes
		"v1:user:{id}",               // f1: 8
		"v1:user:{id:int}",           // f2: 8, later than f1
		"v1:user:{id}",               // f3: same as f1, later
		"v1:{x:any}",                 // f4: 3
		"v1:user:42",                 // f5: 10
		"v1:{kind}:{id}:x",           // f6: 6
		"{all:any}",                  // f7: 0
		"v1:user:{a:any}:x",          // f8: 10
		"v1:user:{id:int}:profile",   // f9: 16
		"v1:user:{name}:{field:any}", // f10: 9
	)
	m := NewMatcher(fams, ':')
	for key, want := range map[string]string{
		"v1:user:42":           "f5",
		"v1:user:43":           "f1",
		"v1:user:abc":          "f1",
		"v1:team:abc":          "f0",
		"v1:a:b:c":             "f4",
		"v1:a:b:x":             "f6",
		"v1:user:1:x":          "f8",
		"v1:user:1:profile":    "f9",
		"v1:user:1:other":      "f10",
		"v2:anything":          "f7",
		"v1:user:a:b:c:x":      "f8",
		"v1:user:ab:profile:y": "f10",
	} {
		if got := famName(m.Match(key)); got != want {
			t.Errorf("Match(%q) = %s, want %s", key, got, want)
		}
		checkAgainstRef(t, m, fams, key)
	}
	// Reversing the declaration order changes only the ties.
	rev := families(t, ':', "v1:user:{id}", "v1:user:{uid}")
	if f, p := NewMatcher(rev, ':').MatchParams("v1:user:x", nil); f != rev[0] || p[0].Name != "id" {
		t.Errorf("tie: got %s %v, want f0 with param id", famName(f), p)
	}
}

func TestMatchParamsNoAlloc(t *testing.T) {
	fams := families(t, ':', "v1:user:{user_id:int}:session:{session_id:uuid}", "v1:x:{a:any}:{b}")
	m := NewMatcher(fams, ':')
	buf := make([]Param, 0, 4)
	key := "v1:user:42:session:" + uuidLower
	f, params := m.MatchParams(key, buf)
	if f != fams[0] || len(params) != 2 || params[0] != (Param{"user_id", "42"}) || params[1] != (Param{"session_id", uuidLower}) {
		t.Fatalf("MatchParams = %s %v", famName(f), params)
	}
	if &params[0] != &buf[:1][0] {
		t.Error("MatchParams did not reuse buf")
	}
	// Values are substrings of key, not copies.
	if !strings.Contains(key, params[1].Value) {
		t.Error("value not in key")
	}
	keys := []string{key, "v1:x:a:b:c", "nope", "v1:user:42:session:zz"}
	for _, k := range keys {
		if n := testing.AllocsPerRun(100, func() { m.Match(k) }); n != 0 {
			t.Errorf("Match(%q): %v allocs", k, n)
		}
		if n := testing.AllocsPerRun(100, func() { m.MatchParams(k, buf) }); n != 0 {
			t.Errorf("MatchParams(%q): %v allocs", k, n)
		}
	}
	if f, p := m.MatchParams("nope", buf); f != nil || len(p) != 0 {
		t.Errorf("no match: %v %v", f, p)
	}
	// Too small a buffer grows.
	if _, p := m.MatchParams(key, make([]Param, 0, 1)); len(p) != 2 {
		t.Errorf("small buf: %v", p)
	}
}

func TestMatchEmpty(t *testing.T) {
	var nilM *Matcher
	for _, m := range []*Matcher{nilM, NewMatcher(nil, ':'), NewMatcher([]*Family{{Name: "broken"}, nil}, ':')} {
		if f := m.Match("x"); f != nil {
			t.Errorf("Match = %v", f)
		}
		if f, _ := m.MatchParams("", nil); f != nil {
			t.Errorf("MatchParams = %v", f)
		}
		if f, r := m.Closest("x"); f != nil || r != "" {
			t.Errorf("Closest = %v %q", f, r)
		}
	}
}

// TestMatchPathological checks that keys with many candidate splits stay
// fast: the search memoises states once its budget is spent.
func TestMatchPathological(t *testing.T) {
	fams := families(t, ':',
		"{a:any}:{b:any}:{c:any}:{d:any}:{e:any}:end",
		"{a:any}-{b:any}-{c:any}-{d:any}-{e:any}-x",
		"{a}-{b}-{c}-{d}-{e}-{f}-y",
	)
	m := NewMatcher(fams, ':')
	for _, key := range []string{
		strings.Repeat(":", 300) + "nope",
		strings.Repeat("-", 300) + "nope",
		strings.Repeat("a-", 300) + "z",
		strings.Repeat(":", 300) + "end",
		strings.Repeat("-", 300) + "y",
	} {
		checkAgainstRef(t, m, fams, key)
		m.Closest(key)
	}
}

func TestMatchDifferential(t *testing.T) {
	pats := synth.Patterns(300)
	// Add some overlapping and tricky patterns so the priority rule and
	// backtracking get exercised too.
	pats = append(pats,
		"v1:billing:{entity}:{id}",
		"v1:{domain}:invoice:{id:any}",
		"v2:{{user_id:int}}:{x:any}",
		"{all:any}:end",
		"v3:i18n:{lang}-{region}:{rest:any}",
		"v3:i18n:{lang:hex}-{n:int}-{region}",
		`v4:\{lit\}:{a:int}.{b:hex}.{c}`,
	)
	fams := families(t, ':', pats...)
	m := NewMatcher(fams, ':')
	keys := synth.Keys(pats, ':', 20000, 42, 0.15)
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(":-.{}0123456789abcdefABCDEFxyzIOU\x00\xff")
	for _, k := range keys {
		checkAgainstRef(t, m, fams, k)
		// a few random mutations of each key
		for range 3 {
			b := []byte(k)
			switch r.IntN(4) {
			case 0:
				if len(b) > 0 {
					b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
				}
			case 1:
				if len(b) > 0 {
					i := r.IntN(len(b))
					b = append(b[:i], b[i+1:]...)
				}
			case 2:
				i := r.IntN(len(b) + 1)
				b = slices.Insert(b, i, alphabet[r.IntN(len(alphabet))])
			case 3:
				b = b[:r.IntN(len(b)+1)]
			}
			checkAgainstRef(t, m, fams, string(b))
		}
	}
}

// TestSynthRegistry loads a generated keys.yaml and checks that every
// generated key belongs to exactly one family.
func TestSynthRegistry(t *testing.T) {
	const n = 1000
	reg, err := Parse(fstest.MapFS{}, "keys.yaml", synth.YAML(n))
	if err != nil {
		t.Fatalf("synth.YAML(%d) does not load: %v", n, err)
	}
	pats := synth.Patterns(n)
	if len(reg.Families) != n {
		t.Fatalf("%d families, want %d", len(reg.Families), n)
	}
	for i, f := range reg.Families {
		if f.Pattern.Source != pats[i] {
			t.Fatalf("family %d pattern %q, want %q", i, f.Pattern.Source, pats[i])
		}
	}
	m := reg.Matcher()
	if m != reg.Matcher() {
		t.Error("Matcher is rebuilt")
	}
	matched := 0
	for _, k := range synth.Keys(pats, ':', 20000, 3, 0.1) {
		count := 0
		for _, f := range reg.Families {
			if _, ok := refBind(f.Pattern, k); ok {
				count++
			}
		}
		if count > 1 {
			t.Fatalf("key %q matches %d generated patterns", k, count)
		}
		f, params := reg.Match(k)
		if (f != nil) != (count == 1) {
			t.Fatalf("key %q: Match = %s, reference count %d", k, famName(f), count)
		}
		if f != nil {
			matched++
			vals := map[string]string{}
			for _, p := range params {
				vals[p.Name] = p.Value
			}
			if got, err := f.Pattern.Build(vals); err != nil || got != k {
				t.Fatalf("key %q: Build(params) = %q, %v", k, got, err)
			}
		}
	}
	if matched < 17000 || matched > 18500 {
		t.Errorf("%d of 20000 keys matched, want about 90%%", matched)
	}
}

func TestRegistryMatcherLazy(t *testing.T) {
	reg := &Registry{Separator: ':', Families: families(t, ':', "a:{id:int}")}
	var wg sync.WaitGroup
	ms := make([]*Matcher, 8)
	for i := range ms {
		wg.Go(func() { ms[i] = reg.Matcher() })
	}
	wg.Wait()
	for _, m := range ms {
		if m != ms[0] {
			t.Fatal("Matcher built more than once")
		}
	}
	f, params := reg.Match("a:7")
	if f == nil || len(params) != 1 || params[0] != (Param{"id", "7"}) {
		t.Errorf("Match = %v %v", f, params)
	}
	if f, params := reg.Match("b"); f != nil || params != nil {
		t.Errorf("Match(b) = %v %v", f, params)
	}
}

func TestClosest(t *testing.T) {
	fams := families(t, ':',
		"v2:user:session:{session_id:uuid}", // f0
		"v2:user:{user_id:int}:sessions",    // f1
		"v1:item:{id}-{rev:int}",            // f2
		"v1:user:{id:int}",                  // f3
		"v3:search:cache:{query_hash:hex}",  // f4
		"cart:{{user_id:int}}:items",        // f5
		"{tenant}:cfg",                      // f6
	)
	m := NewMatcher(fams, ':')
	tests := []struct {
		key, fam, reason string
	}{
		{"v2:user:session:abc", "f0", `placeholder {session_id:uuid} does not accept "abc"`},
		{"v2:user:session:" + uuidLower[:30], "f0", `placeholder {session_id:uuid} does not accept "123e4567-e89b-12d3-a456-426614"`},
		{"v2:user:session:", "f0", `key ends after "v2:user:session:" where {session_id:uuid} was expected`},
		{"v2:user:sess", "f0", `key ends after "v2:user:sess" where "ion:" was expected`},
		{"v2:user:sessoin:x", "f0", `expected "ion:" at byte 12`},
		{"v2:user:42:session", "f1", `key ends after "v2:user:42:session" where "s" was expected`},
		{"v2:user:42x:sessions", "f1", `placeholder {user_id:int} does not accept "42x"`},
		{"v1:item:abc:1", "f2", `expected "-" after {id} at byte 11`},
		{"v1:item:abc-x", "f2", `placeholder {rev:int} does not accept "x"`},
		{"v1:user:42:x", "f3", `unexpected trailing bytes ":x" after the pattern ends`},
		{"v1:user:42x", "f3", `placeholder {id:int} does not accept "42x"`},
		{"v3:search:cache:abcxyz", "f4", `placeholder {query_hash:hex} does not accept "abcxyz"`},
		{"cart:42:items", "f5", `expected "{" at byte 5`},
		{"cart:{42:items", "f5", `expected "}:items" after {user_id:int} at byte 8`},
		{"cart:{4a}:items", "f5", `placeholder {user_id:int} does not accept "4a}"`},
		{"acme:cfx", "f6", `expected "g" at byte 7`},
		{"zzz", "<nil>", ""},
		{"", "<nil>", ""},
		{"v2:user:7:sessions", "f1", ""}, // matches
	}
	for _, tc := range tests {
		f, reason := m.Closest(tc.key)
		if famName(f) != tc.fam || reason != tc.reason {
			t.Errorf("Closest(%q) = %s, %q\n\twant %s, %q", tc.key, famName(f), reason, tc.fam, tc.reason)
		}
	}
}

// benchKeys caches the benchmark key sets: they take a while to generate.
var benchKeys = map[int][]string{}

func benchMatcher(b *testing.B, n int) (*Matcher, []string) {
	b.Helper()
	pats := synth.Patterns(n)
	m := NewMatcher(families(b, ':', pats...), ':')
	keys, ok := benchKeys[n]
	if !ok {
		keys = synth.Keys(pats, ':', 1<<20, 1, 0.1)
		benchKeys[n] = keys
	}
	return m, keys
}

// BenchmarkMatch matches a million generated keys (10% of them unmatched)
// against 10, 100 and 1,000 families.
func BenchmarkMatch(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("families=%d", n), func(b *testing.B) {
			m, keys := benchMatcher(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			hits := 0
			for i := range b.N {
				if m.Match(keys[i&(len(keys)-1)]) != nil {
					hits++
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
			if b.N >= len(keys) && hits < b.N/2 {
				b.Fatalf("only %d of %d keys matched", hits, b.N)
			}
		})
	}
}

// BenchmarkMatchParams is BenchmarkMatch with params bound into a reused
// buffer.
func BenchmarkMatchParams(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("families=%d", n), func(b *testing.B) {
			m, keys := benchMatcher(b, n)
			buf := make([]Param, 0, 8)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				_, buf = m.MatchParams(keys[i&(len(keys)-1)], buf)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}

func BenchmarkNewMatcher(b *testing.B) {
	fams := families(b, ':', synth.Patterns(1000)...)
	b.ReportAllocs()
	for b.Loop() {
		NewMatcher(fams, ':')
	}
}
