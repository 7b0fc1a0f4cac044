package scanner_test

import (
	"testing"

	"github.com/keyreg/keyreg/scanner"
)

func TestPrefixGlob(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"v2:user:", "v2:user:*"},
		{"a*b?c", `a\*b\?c*`},
		{"[x]", `\[x\]*`},
		{`back\slash`, `back\\slash*`},
		{"{tag}:\x00", "{tag}:\x00*"},
	} {
		if got := scanner.PrefixGlob(tc.in); got != tc.want {
			t.Errorf("PrefixGlob(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestGlobPrefix(t *testing.T) {
	for _, tc := range []struct {
		in     string
		prefix string
		ok     bool
	}{
		{"*", "", true},
		{"v1:*", "v1:", true},
		{`a\*b\?c\[*`, "a*b?c[", true},
		{`back\\slash*`, `back\slash`, true},
		{"", "", false},
		{"v1:", "", false},
		{"v1:*:x", "", false},
		{"v?:*", "", false},
		{"v[12]:*", "", false},
		{"v1:**", "", false},
		{`v1\*`, "", false},
	} {
		p, ok := scanner.GlobPrefix(tc.in)
		if p != tc.prefix || ok != tc.ok {
			t.Errorf("GlobPrefix(%q) = %q, %v; want %q, %v", tc.in, p, ok, tc.prefix, tc.ok)
		}
		// A prefix round-trips through PrefixGlob.
		if ok {
			if q, ok2 := scanner.GlobPrefix(scanner.PrefixGlob(p)); p != "" && (q != p || !ok2) {
				t.Errorf("GlobPrefix(PrefixGlob(%q)) = %q, %v", p, q, ok2)
			}
		}
	}
}
