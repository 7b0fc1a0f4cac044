package registry

import (
	"math/rand/v2"
	"testing"
)

// inClaim reports whether key starts with a match of glob, in which "*"
// matches any run of bytes other than sep: the reference the proof is
// checked against, by backtracking.
func inClaim(glob, key string, sep byte) bool {
	if glob == "" {
		return true
	}
	if glob[0] == '*' {
		for i := 0; ; i++ {
			if inClaim(glob[1:], key[i:], sep) {
				return true
			}
			if i == len(key) || key[i] == sep {
				return false
			}
		}
	}
	return key != "" && key[0] == glob[0] && inClaim(glob[1:], key[1:], sep)
}

func TestClaimOverlaps(t *testing.T) {
	owner := func(name string, globs ...string) *Owner {
		o := &Owner{Name: name}
		for _, g := range globs {
			o.Prefixes = append(o.Prefixes, Prefix{Glob: g})
		}
		return o
	}
	for _, tc := range []struct {
		a, b string
		want string // the example; "-" for none
	}{
		{"v2:user:", "v2:user:", "v2:user:"},
		{"v*:user:", "v2:user:", "v2:user:"},
		{"v*:user:", "v12:user:prefs:", "v12:user:prefs:"},
		{"v1:user:", "v1:user:session:", "v1:user:session:"},
		{"v1:user:", "v1:users:", "-"},
		{"v*:user:", "v1:x:user:", "-"},
		{"lock:", "lock:*:", "lock::"},
		{"tmp*", "tmpfiles:", "tmpfiles:"},
		{"*", "x:", "x:"},
		{"*", "*", ""},
		{"a*b", "ac", "acb"},
		{"a*:", "*b:", "ab:"},
		{"a:*", "a:b", "a:b"},
		{"a*:", "a:b*:", "a:b:"},
		{"*:", "a*b", "ab:"},
		{"x:", "y:", "-"},
	} {
		got, complete := ClaimOverlapsWithin([]*Owner{owner("a", tc.a), owner("b", tc.b)}, ':', -1, -1)
		if !complete {
			t.Fatalf("%q, %q: incomplete without bounds", tc.a, tc.b)
		}
		switch {
		case tc.want == "-" && len(got) != 0:
			t.Errorf("%q and %q: overlap with example %q, want none", tc.a, tc.b, got[0].Example)
		case tc.want != "-" && len(got) != 1:
			t.Errorf("%q and %q: %d overlaps, want 1", tc.a, tc.b, len(got))
		case tc.want != "-" && got[0].Example != tc.want:
			t.Errorf("%q and %q: example %q, want %q", tc.a, tc.b, got[0].Example, tc.want)
		}
	}
	// One owner's own prefixes never conflict; A is declared first.
	got, _ := ClaimOverlapsWithin([]*Owner{owner("a", "v1:", "v1:x:"), owner("b", "v1:x:y:")}, ':', -1, -1)
	if len(got) != 2 || got[0].A.Name != "a" || got[0].B.Name != "b" || got[0].PA.Glob != "v1:" || got[1].PA.Glob != "v1:x:" {
		t.Errorf("got %+v, want a's two prefixes against b's", got)
	}
	// The bounds stop the proof and say so.
	if got, complete := ClaimOverlapsWithin([]*Owner{owner("a", "v1:", "v2:"), owner("b", "v1:", "v2:")}, ':', -1, 1); complete || len(got) != 1 {
		t.Errorf("max 1: %d overlaps, complete %v; want 1, false", len(got), complete)
	}
	if _, complete := ClaimOverlapsWithin([]*Owner{owner("a", "v1:", "v2:"), owner("b", "v1:", "v2:")}, ':', 0, -1); complete {
		t.Error("budget 0: complete, want a stop")
	}
}

// TestClaimOverlapsReference checks the proof against backtracking over
// every key of up to 8 bytes of {a, b, :}, for random pairs of globs of
// {a, b, :, *}. A shortest common key of two such claims is never longer
// than their literal bytes together, so 8 bytes decide globs of 4.
func TestClaimOverlapsReference(t *testing.T) {
	var keys []string
	level := []string{""}
	for n := 0; n <= 8; n++ {
		keys = append(keys, level...)
		var next []string
		for _, k := range level {
			for _, c := range "ab:" {
				next = append(next, k+string(c))
			}
		}
		level = next
	}
	rnd := rand.New(rand.NewPCG(22, 14))
	glob := func() string {
		b := make([]byte, 1+rnd.IntN(4))
		for i := range b {
			b[i] = "ab:*"[rnd.IntN(4)]
		}
		return string(b)
	}
	for range 3000 {
		a, b := glob(), glob()
		want := ""
		found := false
		for _, k := range keys { // shortest first
			if inClaim(a, k, ':') && inClaim(b, k, ':') {
				want, found = k, true
				break
			}
		}
		got, _ := ClaimOverlapsWithin([]*Owner{{Name: "a", Prefixes: []Prefix{{Glob: a}}}, {Name: "b", Prefixes: []Prefix{{Glob: b}}}}, ':', -1, -1)
		if found != (len(got) == 1) {
			t.Fatalf("%q and %q: proof says overlap %v, reference %v (%q)", a, b, len(got) == 1, found, want)
		}
		if found {
			ex := got[0].Example
			if len(ex) != len(want) || !inClaim(a, ex, ':') || !inClaim(b, ex, ':') {
				t.Fatalf("%q and %q: example %q is not a shortest common key (reference %q)", a, b, ex, want)
			}
		}
	}
}
