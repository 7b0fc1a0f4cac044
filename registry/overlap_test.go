package registry

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// ovRefMatch is a reference matcher written straight from the grammar: it
// tries every split of the key and checks each placeholder value with Valid.
func ovRefMatch(p *Pattern, key string, sep byte) bool {
	var rec func(i, pos int) bool
	rec = func(i, pos int) bool {
		if i == len(p.Parts) {
			return pos == len(key)
		}
		pt := p.Parts[i]
		if !pt.IsPlaceholder() {
			return strings.HasPrefix(key[pos:], pt.Lit) && rec(i+1, pos+len(pt.Lit))
		}
		for end := pos + 1; end <= len(key); end++ {
			if pt.Type.Valid(key[pos:end], sep) && rec(i+1, end) {
				return true
			}
		}
		return false
	}
	return rec(0, 0)
}

func ovFamilies(t testing.TB, sep byte, srcs ...string) []*Family {
	t.Helper()
	fams := make([]*Family, len(srcs))
	for i, src := range srcs {
		p, err := ParsePattern(src, sep)
		if err != nil {
			t.Fatalf("ParsePattern(%q): %v", src, err)
		}
		fams[i] = &Family{Index: i, Name: fmt.Sprintf("f%d", i), Pattern: p}
	}
	return fams
}

// ovCheck verifies the invariants of an Overlaps result: order, one entry
// per pair, and examples that match both patterns.
func ovCheck(t testing.TB, got []Overlap, sep byte) {
	t.Helper()
	seen := map[[2]int]bool{}
	for i, o := range got {
		if o.A.Index >= o.B.Index {
			t.Errorf("overlap %d: A.Index %d >= B.Index %d", i, o.A.Index, o.B.Index)
		}
		k := [2]int{o.A.Index, o.B.Index}
		if seen[k] {
			t.Errorf("pair %v reported twice", k)
		}
		seen[k] = true
		if i > 0 {
			p := got[i-1]
			if p.A.Index > o.A.Index || (p.A.Index == o.A.Index && p.B.Index >= o.B.Index) {
				t.Errorf("result not sorted at %d", i)
			}
		}
		if !ovRefMatch(o.A.Pattern, o.Example, sep) || !ovRefMatch(o.B.Pattern, o.Example, sep) {
			t.Errorf("example %q does not match both %q and %q", o.Example, o.A.Pattern.Source, o.B.Pattern.Source)
		}
	}
}

// ovPair runs Overlaps on two patterns in both orders and returns the example.
func ovPair(t *testing.T, sep byte, a, b string) (string, bool) {
	t.Helper()
	var ex [2]string
	var ok [2]bool
	for i, srcs := range [][]string{{a, b}, {b, a}} {
		got := Overlaps(ovFamilies(t, sep, srcs...), sep)
		ovCheck(t, got, sep)
		if len(got) > 1 {
			t.Fatalf("%d overlaps for one pair", len(got))
		}
		if len(got) == 1 {
			ex[i], ok[i] = got[0].Example, true
		}
	}
	if ok[0] != ok[1] || len(ex[0]) != len(ex[1]) {
		t.Errorf("%q vs %q: order matters: %q,%v vs %q,%v", a, b, ex[0], ok[0], ex[1], ok[1])
	}
	return ex[0], ok[0]
}

func TestOverlapCases(t *testing.T) {
	uuid := "0123abcd-0000-0000-0000-000000000000"
	tests := []struct {
		a, b    string
		sep     byte // ':' when zero
		overlap bool
		example string // checked when set
	}{
		// must be caught
		{a: "v1:user:{id}", b: "v1:user:{n:int}", overlap: true, example: "v1:user:0"},
		{a: "v1:{a}:x", b: "v1:y:{b}", overlap: true, example: "v1:y:x"},
		{a: ":1:{k:any}", b: ":1:views:{x}", overlap: true, example: ":1:views:a"},
		{a: "c:{{a}}", b: "c:{x}", overlap: true, example: "c:{a}"},
		{a: "cart:{{user_id}}:items", b: "cart:\\{{id:int}\\}:{what}", overlap: true, example: "cart:{0}:items"},
		{a: "v1:user:{id}", b: "v1:user:{id}", overlap: true, example: "v1:user:a"},
		{a: "v1:user:me", b: "v1:user:me", overlap: true, example: "v1:user:me"},
		{a: "{a:any}", b: "{b}", overlap: true, example: "a"},
		{a: "{a:any}:{b}", b: "{c}:{d:any}", overlap: true, example: "a:a"},
		{a: "{a:any}x", b: "x{b:any}", overlap: true, example: "xx"},
		{a: "{a:any}xy", b: "xy{b:any}", overlap: true, example: "xyxy"},
		{a: "{a:int}", b: "{b:hex}", overlap: true, example: "0"},
		{a: "x{a:int}", b: "x-{b}", overlap: true, example: "x-0"},
		{a: "{a}:{b:any}", b: "{c:any}:{d}:{e}", overlap: true, example: "a:a:a"},
		// must not be flagged
		{a: "v1:user:{id:int}", b: "v1:user:me"},
		{a: "v1:{a:int}", b: "v1:{b:uuid}"},
		{a: "v1:{a:hex}:x", b: "v1:{b:hex}:y"},
		{a: "v1:lock:{r}", b: "v1:lock-fence:{r}"},
		{a: "v1:user:{id}", b: "v1:user:{id}:x"},
		{a: "{a}", b: "{b}:{c}"},
		{a: "x{a:int}", b: "x-"},
		{a: "{a:int}", b: "-"},
		{a: "{a:int}", b: "{b:int}-"},
		{a: "{a:hex}", b: "{b:int}-{c:int}"},
		{a: "c:{{a}}", b: "c:{x:int}"},
		{a: "v1:{a:any}", b: "v2:{b:any}"},
		{a: "{a:any}:x", b: "{b:any}:y"},
		// fixed-length types, both directions via ovPair
		{a: "{a:ulid}", b: "{b:int}", overlap: true, example: strings.Repeat("0", 26)},
		{a: "{a:ulid}", b: "{b:hex}", overlap: true, example: strings.Repeat("a", 26)},
		{a: "{a:ulid}", b: "{b}", overlap: true, example: strings.Repeat("a", 26)},
		{a: "{a:ulid}", b: "{b:any}", overlap: true, example: strings.Repeat("a", 26)},
		{a: "{a:ulid}", b: "{b:ulid}", overlap: true, example: strings.Repeat("a", 26)},
		{a: "{a:ulid}", b: "0123456789abcdefghjkmnpqrs", overlap: true, example: "0123456789abcdefghjkmnpqrs"},
		{a: "{a:ulid}", b: "0123456789abcdefghjkmnpqri"}, // i is not Crockford
		{a: "{a:ulid}", b: "8123456789abcdefghjkmnpqrs"}, // a first 8 overflows 128 bits
		{a: "x{a:ulid}", b: "x{b:word}", overlap: true, example: "x" + strings.Repeat("0", 26)},
		{a: "{a:ulid}", b: "0123456789abcdefghjkmnpqrsu"},
		{a: "{a:ulid}", b: "{b:int}u"}, // u is not Crockford
		{a: "{a:ulid}", b: "{b:int}x", overlap: true, example: strings.Repeat("0", 25) + "x"},
		{a: "{a:ulid}", b: "{b:int}x{c:int}", overlap: true, example: strings.Repeat("0", 24) + "x0"},
		{a: "{a:ulid}", b: "-{b:int}"},
		{a: "{a:ulid}", b: "{b:uuid}"},
		{a: "{a:uuid}", b: "{b:hex}"},
		{a: "{a:uuid}", b: "{b:int}"},
		{a: "{a:uuid}", b: "{b}", overlap: true, example: "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"},
		{a: "{a:uuid}", b: "{b}", sep: '-'}, // the '-' of a uuid is the separator
		{a: "{a:uuid}", b: "{b:any}", sep: '-', overlap: true},
		{a: "{a:uuid}", b: "{b}-{c}-{d}-{e}-{f}", sep: '-', overlap: true},
		{a: "{a:uuid}", b: "{b:any}", overlap: true},
		{a: "{a:uuid}", b: "{b:uuid}", overlap: true},
		{a: "{a:uuid}", b: uuid, overlap: true, example: uuid},
		{a: "{a:uuid}", b: strings.ToUpper(uuid), overlap: true},
		{a: "{a:uuid}", b: strings.Replace(uuid, "-", "x", 1)},
		{a: "{a:uuid}", b: "{b:hex}-{c:hex}-{d:hex}-{e:hex}-{f:hex}", overlap: true, example: "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"},
		{a: "{a:uuid}", b: "{b:hex}-{c:hex}"},
		{a: "{a:uuid}", b: "{b:int}-{c:hex}-{d:hex}-{e:hex}-{f:int}", overlap: true, example: "00000000-aaaa-aaaa-aaaa-000000000000"},
		{a: "{a:uuid}", b: "{b:any}-{c:int}-{d:any}", overlap: true},
		{a: "{a:uuid}", b: "{b:int}-{c:int}-{d:int}-{e:int}-{f:int}", overlap: true},
		{a: "{a:uuid}", b: "{b:int}-{c:int}-{d:int}-{e:int}-{f:int}-{g:int}"},
		{a: "s:{a:uuid}:x", b: "s:{b:ulid}:x"},
		{a: "s:{a:uuid}:x", b: "s:{b:int}:x"},
		{a: "s:{a:ulid}:x", b: "s:{b:int}:x", overlap: true},
		// separators inside typed values
		{a: "{a:hex}", b: "{b:any}", sep: 'a', overlap: true, example: "b"},
		{a: "{a:hex}", b: "a", overlap: true, example: "a"},
		{a: "{a:hex}", b: "a", sep: 'a'},
		{a: "{a:int}", b: "{b}", sep: '-', overlap: true, example: "0"},
		{a: "{a:int}", b: "-{b}", sep: '-', overlap: true, example: "-0"},
		{a: "{a}", b: "-{b}", sep: '-'},
	}
	for _, tt := range tests {
		sep := tt.sep
		if sep == 0 {
			sep = ':'
		}
		t.Run(tt.a+" vs "+tt.b+" sep "+string(sep), func(t *testing.T) {
			ex, ok := ovPair(t, sep, tt.a, tt.b)
			if ok != tt.overlap {
				t.Fatalf("overlap = %v (example %q), want %v", ok, ex, tt.overlap)
			}
			if tt.example != "" && ex != tt.example {
				if len(ex) != len(tt.example) {
					t.Errorf("example %q (len %d), want %q (len %d): not shortest", ex, len(ex), tt.example, len(tt.example))
				} else {
					t.Logf("example %q, expected something like %q", ex, tt.example)
				}
			}
		})
	}
}

func TestOverlapsSkipsNilAndOrdersByIndex(t *testing.T) {
	fams := ovFamilies(t, ':', "a:{x}", "a:{y:int}", "b", "a:{z:any}")
	// Indexes do not follow slice order, and a nil pattern is skipped.
	fams[0].Index, fams[1].Index, fams[2].Index, fams[3].Index = 7, 3, 5, 1
	fams = append(fams, &Family{Index: 9, Name: "broken"}, nil)
	got := Overlaps(fams, ':')
	ovCheck(t, got, ':')
	var pairs []string
	for _, o := range got {
		pairs = append(pairs, fmt.Sprintf("%d-%d", o.A.Index, o.B.Index))
	}
	if want := "1-3 1-7 3-7"; strings.Join(pairs, " ") != want {
		t.Errorf("pairs %q, want %q", strings.Join(pairs, " "), want)
	}
	if got := Overlaps(nil, ':'); len(got) != 0 {
		t.Errorf("Overlaps(nil) = %v", got)
	}
}

// TestOverlapsLongPatterns covers products too large for the dense search
// buffers, and patterns whose subset automaton is exponential.
func TestOverlapsLongPatterns(t *testing.T) {
	long := strings.Repeat("ab", 500) // near MaxPatternLen
	ex, ok := ovPair(t, ':', long+"{x}", "{y:any}"+long)
	if !ok || len(ex) != len(long)+2 {
		t.Errorf("long patterns: example %q, %v; want length %d", ex, ok, len(long)+2)
	}
	if _, ok := ovPair(t, ':', long+"{x:int}", "{y:any}"+long); ok {
		t.Errorf("long patterns: an int ending in b")
	}
	// An any followed by a Crockford byte and a ulid: a subset construction
	// would track up to 2^26 sets of positions in the ulid.
	if ex, ok := ovPair(t, ':', "{a:any}0{id:ulid}", "{b:any}x{id:ulid}"); ok {
		t.Errorf("ulid tails: byte -27 is both 0 and x, yet example %q", ex)
	}
	ex, ok = ovPair(t, ':', "{a:any}0{id:ulid}", "{b:any}x{id:ulid}:{c:int}")
	if !ok || len(ex) != 56 { // c needs 27 digits: the ':' must be outside A's 0+ulid
		t.Errorf("ulid tails: example %q, %v; want length 56", ex, ok)
	}
	ex, ok = ovPair(t, ':', "{a:any}0{id:ulid}", "{b:any}x{id:ulid}0")
	if !ok || len(ex) != 29 {
		t.Errorf("ulid tails: example %q, %v; want length 29", ex, ok)
	}
}

// ovRandomPattern returns a random pattern source from a small alphabet.
func ovRandomPattern(r *rand.Rand, types []string, litAlpha string) string {
	var b strings.Builder
	n := 1 + r.Intn(4)
	ph := r.Intn(2) == 0
	for i := 0; i < n; i++ {
		if ph {
			name := fmt.Sprintf("p%d", i)
			typ := types[r.Intn(len(types))]
			body := name
			if typ != "" {
				body += ":" + typ
			}
			if r.Intn(8) == 0 {
				b.WriteString("{{" + body + "}}")
			} else {
				b.WriteString("{" + body + "}")
			}
		} else {
			for k := 1 + r.Intn(2); k > 0; k-- {
				c := litAlpha[r.Intn(len(litAlpha))]
				if c == '{' || c == '}' || c == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(c)
			}
		}
		ph = !ph
	}
	return b.String()
}

// TestOverlapsBruteForce compares Overlaps with an enumeration of every key
// up to a length over an alphabet that has one byte of every class the
// patterns can tell apart, so the shortest common key over that alphabet is
// a shortest common key over all bytes.
func TestOverlapsBruteForce(t *testing.T) {
	const alpha = ":-0az{}" // literals use these bytes only
	maxLen, trials := 5, 300
	if testing.Short() {
		trials = 60
	}
	r := rand.New(rand.NewSource(1))
	types := []string{"", "word", "int", "hex", "any"}
	// When the separator is a digit or a hex letter, the other digits or
	// hex letters form a class of their own: add one of them.
	keysBySep := map[byte][]string{}
	for sep, extra := range map[byte]string{':': "", '-': "", '0': "1", 'a': "b"} {
		a := alpha + extra
		var gen func(prefix string)
		gen = func(prefix string) {
			keysBySep[sep] = append(keysBySep[sep], prefix)
			if len(prefix) < maxLen {
				for i := 0; i < len(a); i++ {
					gen(prefix + a[i:i+1])
				}
			}
		}
		gen("")
	}
	found, checked := 0, 0
	for trial := 0; trial < trials; trial++ {
		sep := alpha[r.Intn(4)] // ':', '-', '0' or 'a'
		keys := keysBySep[sep]
		srcs := make([]string, 4)
		for i := range srcs {
			srcs[i] = ovRandomPattern(r, types, alpha)
		}
		fams := ovFamilies(t, sep, srcs...)
		// shortest[i][j] is the length of the shortest key matching both.
		var shortest [4][4]int
		for _, k := range keys {
			var m []int
			for i, f := range fams {
				if ovRefMatch(f.Pattern, k, sep) {
					m = append(m, i)
				}
			}
			for x := 0; x < len(m); x++ {
				for y := x + 1; y < len(m); y++ {
					if s := shortest[m[x]][m[y]]; s == 0 || len(k)+1 < s {
						shortest[m[x]][m[y]] = len(k) + 1 // +1: 0 means none
					}
				}
			}
		}
		got := Overlaps(fams, sep)
		ovCheck(t, got, sep)
		rep := map[[2]int]string{}
		for _, o := range got {
			rep[[2]int{o.A.Index, o.B.Index}] = o.Example
		}
		for i := 0; i < 4; i++ {
			for j := i + 1; j < 4; j++ {
				checked++
				ex, ok := rep[[2]int{i, j}]
				want := shortest[i][j] - 1
				switch {
				case want >= 0 && !ok:
					t.Errorf("sep %q: %q vs %q: missed overlap (brute force: length %d)", sep, srcs[i], srcs[j], want)
				case want >= 0 && len(ex) != want:
					t.Errorf("sep %q: %q vs %q: example %q, shortest has length %d", sep, srcs[i], srcs[j], ex, want)
				case want < 0 && ok && len(ex) <= maxLen:
					t.Errorf("sep %q: %q vs %q: example %q not confirmed by brute force", sep, srcs[i], srcs[j], ex)
				}
				if want >= 0 {
					found++
				}
			}
		}
	}
	t.Logf("%d pairs checked, %d overlapping within length %d", checked, found, maxLen)
}

// ovSampleKey builds a random key of p, biased towards values that other
// types may also accept (all digits, all hex, lone separators).
func ovSampleKey(r *rand.Rand, p *Pattern, sep byte) string {
	pools := []string{"0123456789", "0123456789abcdefABCDEF", "0a-:zZ{}", "0123456789abcdefghjkmnpqrstvwxyz", "-0"}
	var b strings.Builder
	for _, pt := range p.Parts {
		if !pt.IsPlaceholder() {
			b.WriteString(pt.Lit)
			continue
		}
		pool := pools[r.Intn(len(pools))] + string(sep)
		n := pt.Type.FixedLen()
		if n == 0 {
			n = 1 + r.Intn(4)
			if r.Intn(6) == 0 {
				n = 26 + r.Intn(12)
			}
		}
		var v []byte
		for i := 0; i < n; i++ {
			var ok []byte
			for k := 0; k < len(pool); k++ {
				if pt.Type.AcceptsAt(i, pool[k], sep) {
					ok = append(ok, pool[k])
				}
			}
			for c := 0; len(ok) == 0 && c < 256; c++ {
				if pt.Type.AcceptsAt(i, byte(c), sep) {
					ok = append(ok, byte(c))
				}
			}
			v = append(v, ok[r.Intn(len(ok))])
		}
		if pt.Type == Int && string(v) == "-" {
			v = []byte("-0")
		}
		b.Write(v)
	}
	return b.String()
}

// TestOverlapsSampled covers uuid and ulid, whose keys are too long to
// enumerate: any sampled key of one pattern that matches another is an
// overlap Overlaps must report.
func TestOverlapsSampled(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	types := []string{"", "int", "hex", "any", "uuid", "ulid", "uuid", "ulid"}
	trials := 300
	if testing.Short() {
		trials = 60
	}
	hits := 0
	for trial := 0; trial < trials; trial++ {
		sep := ":-0a"[r.Intn(4)]
		srcs := make([]string, 5)
		for i := range srcs {
			srcs[i] = ovRandomPattern(r, types, ":-0a")
		}
		fams := ovFamilies(t, sep, srcs...)
		got := Overlaps(fams, sep)
		ovCheck(t, got, sep)
		rep := map[[2]int]bool{}
		for _, o := range got {
			rep[[2]int{o.A.Index, o.B.Index}] = true
		}
		for i, f := range fams {
			for s := 0; s < 200; s++ {
				k := ovSampleKey(r, f.Pattern, sep)
				if !ovRefMatch(f.Pattern, k, sep) {
					t.Fatalf("sampled %q does not match %q", k, f.Pattern.Source)
				}
				for j, g := range fams {
					if j == i || !ovRefMatch(g.Pattern, k, sep) {
						continue
					}
					hits++
					if !rep[[2]int{min(i, j), max(i, j)}] {
						t.Fatalf("sep %q: %q and %q both match %q, not reported", sep, f.Pattern.Source, g.Pattern.Source, k)
					}
				}
			}
		}
	}
	t.Logf("%d sampled keys matched a second pattern", hits)
}

var (
	ovDomains = []string{
		"billing", "identity", "catalog", "search", "orders", "payments", "shipping", "inventory", "pricing",
		"promo", "reviews", "media", "notify", "email", "sms", "push", "chat", "social", "feed", "ads",
		"analytics", "metrics", "audit", "export", "import", "reports", "support", "tickets", "kb", "forum",
		"geo", "maps", "weather", "news", "jobs", "hr", "payroll", "crm", "sales", "leads",
		"partners", "vendors", "fleet", "drivers", "rides", "booking", "hotels", "flights", "loyalty", "wallet",
	}
	ovEntities = []string{"user", "account", "order", "item", "invoice", "session", "device", "profile", "team", "project", "doc", "event"}
	ovTypes    = []string{"int", "uuid", "ulid", "hex", "word", "int", "uuid"}
)

// ovGenerate returns n realistic families that do not overlap: versioned,
// per-domain prefixes with mixed placeholder types, plus a few families that
// start with a placeholder, end in an any, or use a hash tag.
func ovGenerate(t testing.TB, n int) []*Family {
	specials := []string{
		"{tenant}:rl:{bucket}:{window:int}",
		"{tenant:hex}:quota:{user_id:int}",
		"{region}:feature:{flag}",
		"{env}:svc:{svc}:health",
		"v1:cache:{key:any}",
		"v2:cache:{key:any}",
		":1:{key:any}",
		"celery-task-meta-{id:uuid}",
		"lock:{name}",
		"cart:{{user_id}}:items",
		"sess:{{sid:hex}}:{field:any}",
	}
	var srcs []string
	for v := 1; v <= 3 && len(srcs) < n; v++ {
		for d, dom := range ovDomains {
			e1 := ovEntities[(d*3+v)%len(ovEntities)]
			e2 := ovEntities[(d*5+v+1)%len(ovEntities)]
			if e2 == e1 {
				e2 = ovEntities[(d*5+v+2)%len(ovEntities)]
			}
			for k, e := range []string{e1, e2} {
				typ := ovTypes[(d+v+k)%len(ovTypes)]
				base := fmt.Sprintf("v%d:%s:%s:{id:%s}", v, dom, e, typ)
				srcs = append(srcs, base, base+":meta", base+":{field}:hist")
			}
			srcs = append(srcs, fmt.Sprintf("v%d:%s:index:{day:int}", v, dom))
		}
	}
	srcs = append(srcs[:n-len(specials)], specials...)
	return ovFamilies(t, ':', srcs...)
}

// ovPlanted returns ovGenerate(n) with a handful of planted overlaps and the
// pairs (by pattern source) that must be reported.
func ovPlanted(t testing.TB, n int) ([]*Family, []string) {
	plant := []string{
		"v1:billing:invoice:{id}",      // word vs v1:billing:invoice:{id:...}
		"v2:cache:{key}:x",             // vs v2:cache:{key:any}
		"{tenant}:rl:{bucket}:{w:hex}", // vs {tenant}:rl:{bucket}:{window:int}
		"v3:search:{e}:{id:any}",       // vs everything under v3:search:
		":1:views:{x}",                 // vs :1:{key:any}
	}
	fams := ovGenerate(t, n-len(plant))
	fams = append(fams, ovFamilies(t, ':', plant...)...)
	for i, f := range fams {
		f.Index = i
		f.Name = fmt.Sprintf("f%d", i)
	}
	var want []string
	for _, pl := range fams[len(fams)-len(plant):] {
		for _, f := range fams[:len(fams)-len(plant)] {
			ps := f.Pattern.Source
			switch {
			case pl.Pattern.Source == "v1:billing:invoice:{id}" && strings.HasPrefix(ps, "v1:billing:invoice:{id:") && strings.Count(ps, ":") == 3,
				pl.Pattern.Source == "v2:cache:{key}:x" && ps == "v2:cache:{key:any}",
				pl.Pattern.Source == "{tenant}:rl:{bucket}:{w:hex}" && ps == "{tenant}:rl:{bucket}:{window:int}",
				pl.Pattern.Source == "v3:search:{e}:{id:any}" && strings.HasPrefix(ps, "v3:search:"),
				pl.Pattern.Source == ":1:views:{x}" && ps == ":1:{key:any}":
				want = append(want, ps+" & "+pl.Pattern.Source)
			}
		}
	}
	sort.Strings(want)
	return fams, want
}

func ovPairs(got []Overlap) []string {
	var out []string
	for _, o := range got {
		out = append(out, o.A.Pattern.Source+" & "+o.B.Pattern.Source)
	}
	sort.Strings(out)
	return out
}

func TestOverlapsGenerated(t *testing.T) {
	fams := ovGenerate(t, 1000)
	if len(fams) != 1000 {
		t.Fatalf("generated %d families", len(fams))
	}
	if got := Overlaps(fams, ':'); len(got) != 0 {
		t.Errorf("clean registry: %d overlaps, first %q & %q (%q)", len(got), got[0].A.Pattern.Source, got[0].B.Pattern.Source, got[0].Example)
	}

	fams, want := ovPlanted(t, 1000)
	got := Overlaps(fams, ':')
	ovCheck(t, got, ':')
	if g, w := strings.Join(ovPairs(got), "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("planted overlaps:\n%s\nwant:\n%s", g, w)
	}
	if len(want) < 5 {
		t.Errorf("only %d planted overlaps expected; generator changed?", len(want))
	}
}

func BenchmarkOverlaps1000(b *testing.B) {
	clean := ovGenerate(b, 1000)
	planted, want := ovPlanted(b, 1000)
	// Worst case for the prefix index: every family starts with a
	// placeholder, so every pair is a candidate.
	var srcs []string
	for i := 0; len(srcs) < 1000; i++ {
		srcs = append(srcs, fmt.Sprintf("{tenant}:%s:%s:{id:%s}", ovDomains[i%len(ovDomains)], ovEntities[i/len(ovDomains)%len(ovEntities)], ovTypes[i%len(ovTypes)]))
		srcs = append(srcs, fmt.Sprintf("{tenant}:%s:%s:{id:%s}:{f}", ovDomains[i%len(ovDomains)], ovEntities[i/len(ovDomains)%len(ovEntities)], ovTypes[i%len(ovTypes)]))
	}
	leading := ovFamilies(b, ':', srcs[:1000]...)
	for _, bc := range []struct {
		name string
		fams []*Family
		want int
	}{
		{"clean", clean, 0},
		{"planted", planted, len(want)},
		{"leading-placeholders", leading, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := Overlaps(bc.fams, ':'); len(got) != bc.want {
					b.Fatalf("%d overlaps, want %d", len(got), bc.want)
				}
			}
		})
	}
}

// TestOverlapsWithin checks the bounds lint runs the proof under: a cap on
// the overlaps found and on the product states searched, each reported as
// an incomplete proof.
func TestOverlapsWithin(t *testing.T) {
	var srcs []string
	for i := range 10 {
		srcs = append(srcs, fmt.Sprintf("v1:{a%d:any}", i))
	}
	fams := ovFamilies(t, ':', srcs...)
	all, complete := OverlapsWithin(fams, ':', -1, -1)
	if len(all) != 45 || !complete {
		t.Fatalf("unbounded: %d overlaps, complete %v; want all 45 pairs", len(all), complete)
	}
	if got, complete := OverlapsWithin(fams, ':', -1, 5); len(got) != 5 || complete {
		t.Errorf("max 5: %d overlaps, complete %v", len(got), complete)
	}
	// The budget is checked before each pair: budget 0 searches one.
	if got, complete := OverlapsWithin(fams, ':', 0, -1); len(got) != 1 || complete {
		t.Errorf("budget 0: %d overlaps, complete %v; want the first pair only", len(got), complete)
	}
	if got, complete := OverlapsWithin(fams[:1], ':', 0, 0); len(got) != 0 || !complete {
		t.Errorf("one family: %d overlaps, complete %v; nothing to search is complete", len(got), complete)
	}
}

// TestOverlapBoundsFitRealRegistries checks that lint's bounds leave the
// benchmark's 1,000-family registries, the worst case for the prefix index
// included, fully proven, with room to spare.
func TestOverlapBoundsFitRealRegistries(t *testing.T) {
	planted, want := ovPlanted(t, 1000)
	var srcs []string
	for i := 0; len(srcs) < 1000; i++ {
		srcs = append(srcs, fmt.Sprintf("{tenant}:%s:%s:{id:%s}", ovDomains[i%len(ovDomains)], ovEntities[i/len(ovDomains)%len(ovEntities)], ovTypes[i%len(ovTypes)]))
		srcs = append(srcs, fmt.Sprintf("{tenant}:%s:%s:{id:%s}:{f}", ovDomains[i%len(ovDomains)], ovEntities[i/len(ovDomains)%len(ovEntities)], ovTypes[i%len(ovTypes)]))
	}
	for name, c := range map[string]struct {
		fams []*Family
		want int
	}{
		"clean":                {ovGenerate(t, 1000), 0},
		"planted":              {planted, len(want)},
		"leading-placeholders": {ovFamilies(t, ':', srcs[:1000]...), 0},
	} {
		// A tenth of the budget must do.
		got, complete := OverlapsWithin(c.fams, ':', OverlapBudget/10, MaxOverlaps)
		if !complete || len(got) != c.want {
			t.Errorf("%s: %d overlaps, complete %v; want %d, complete", name, len(got), complete, c.want)
		}
	}
}
