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
