package infer

import (
	"fmt"
	_ "math/rand/v2"
	"regexp"
	_ "runtime"
	_ "slices"
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

func sepOf(o MinerOptions) byte {
	if o.Separator == 0 {
		return ':'
	}
	return o.Separator
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
		for _, s := range strings.Split(c.Pattern, registry.EscapeLiteral(string(sep))) {
			if v := versionSeg.FindStringSubmatch(s); v != nil {
				if n, err := strconv.Atoi(v[1]); err == nil && n >= 1 {
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
		if f == nil {
			t.Fatalf("key %q matches no true family", k)
		}
		trueOf[i] = f.Index
		counts[where[i]][f.Index]++
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
	ok := 0
	for i := range keys {
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
	return float64(ok) / float64(len(keys)), float64(len(cands)) / float64(len(truth)), missing
}

func TestMinerSynthBars(t *testing.T) {
	for _, tc := range []struct{ families, keys int }{{10, 20_000}, {100, 200_000}} {
		t.Run(fmt.Sprintf("%d", tc.families), func(t *testing.T) {
			truth := synth.Patterns(tc.families)
			keys := synth.Keys(truth, ':', tc.keys, 7, 0)
			cands := mine(keys, MinerOptions{})
			where := checkInvariants(t, keys, cands, ':')
			right, per, missing := quality(t, truth, keys, cands, where)
			t.Logf("%d true families: %d candidates (%.2f per family), %.3f%% of keys in the right family",
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
