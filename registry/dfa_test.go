package registry

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/internal/synth"
)

// checkDFA fails t when the automaton and the trie disagree on key. The
// automaton may give up (ok == false) only when it was cut short.
func checkDFA(t *testing.T, m *Matcher, key string, complete bool) (fellBack bool) {
	t.Helper()
	want := m.find(key)
	got, ok := m.dfa.match(key)
	if !ok {
		if complete {
			t.Fatalf("key %q: the automaton is complete but did not finish", key)
		}
		return true
	}
	if (got < 0) != (want == nil) || (got >= 0 && &m.terms[got] != want) {
		wantName := "<nil>"
		if want != nil {
			wantName = want.fam.Name
		}
		gotName := "<nil>"
		if got >= 0 {
			gotName = m.terms[got].fam.Name
		}
		t.Fatalf("key %q: automaton %s, trie %s", key, gotName, wantName)
	}
	return false
}

// mutate returns key with a random edit.
func mutate(r *rand.Rand, key string) string {
	alphabet := []byte(":-.{}0123456789abcdefABCDEFxyzIOU\x00\xff")
	b := []byte(key)
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
		b = slices.Insert(b, r.IntN(len(b)+1), alphabet[r.IntN(len(alphabet))])
	case 3:
		b = b[:r.IntN(len(b)+1)]
	}
	return string(b)
}

// TestDFADifferential compares the automaton with the trie search on
// generated keys and random edits of them. The automaton of the realistic
// registry is complete; the one with overlaps and a catch-all {all:any}
// prefix outgrows its budget, so some keys fall back to the trie.
func TestDFADifferential(t *testing.T) {
	tricky := append(synth.Patterns(300),
		"v1:billing:{entity}:{id}",
		"v1:{domain}:invoice:{id:any}",
		"v2:{{user_id:int}}:{x:any}",
		"{all:any}:end",
		"v3:i18n:{lang}-{region}:{rest:any}",
		"v3:i18n:{lang:hex}-{n:int}-{region}",
		`v4:\{lit\}:{a:int}.{b:hex}.{c}`,
	)
	for _, tc := range []struct {
		pats     []string
		complete bool
	}{
		{synth.Patterns(1000), true},
		{tricky, false},
	} {
		m := NewMatcher(families(t, ':', tc.pats...), ':')
		r := rand.New(rand.NewPCG(3, 4))
		for _, k := range synth.Keys(tc.pats, ':', 30000, 7, 0.15) {
			checkDFA(t, m, k, tc.complete)
			for range 3 {
				checkDFA(t, m, mutate(r, k), tc.complete)
			}
		}
	}
}

// TestDFAFallback checks that a registry whose automaton outgrows its
// budget still matches every key: keys that reach a transition that was
// not built fall back to the trie.
func TestDFAFallback(t *testing.T) {
	fams := families(t, ':',
		"{a:any}0{id:ulid}", // after each "0", a ULID may start: 2^26 states
		"v1:user:{id:int}",
		"{b:any}:end",
	)
	for _, budget := range []int{3, 50, 2000, maxDFAStates} {
		m := newMatcher(fams, ':', budget)
		r := rand.New(rand.NewPCG(5, 6))
		fell := 0
		for range 3000 {
			var b strings.Builder
			for range r.IntN(6) {
				b.WriteString([]string{"0", "x", ":", "v1:user:", "7", ulidOK}[r.IntN(6)])
			}
			switch r.IntN(3) {
			case 0:
				b.WriteString("0" + ulidOK)
			case 1:
				b.WriteString(":end")
			}
			key := b.String()
			if checkDFA(t, m, key, false) {
				fell++
			}
			checkAgainstRef(t, m, fams, key)
		}
		if budget < 100 && fell == 0 {
			t.Errorf("budget %d: no key fell back to the trie", budget)
		}
		t.Logf("budget %d: %d of 3000 keys fell back", budget, fell)
	}
}
