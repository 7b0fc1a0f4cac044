package audit

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShortKey(t *testing.T) {
	a := strings.Repeat("a", MaxKeyBytes)
	for _, tc := range []struct{ key, want string }{
		{"", ""},
		{"v1:x", "v1:x"},
		{a, a},
		{a + "b", a + "…(+1 bytes)"},
		// A cut never splits a UTF-8 sequence: "é" is 2 bytes at 255 and 256.
		{a[1:] + "éxyz", a[1:] + "…(+5 bytes)"},
		{a + strings.Repeat("\xff", 1000), a + "…(+1000 bytes)"},
	} {
		got := shortKey(tc.key)
		if got != tc.want {
			t.Errorf("shortKey(%d bytes) = %q, want %q", len(tc.key), got, tc.want)
		}
		if utf8.ValidString(tc.key) && !utf8.ValidString(got) {
			t.Errorf("shortKey(%q) = %q: not valid UTF-8", tc.key, got)
		}
	}
	if got, want := shortPrefix(a+"bcd:"), a+"…"; got != want {
		t.Errorf("shortPrefix = %q, want %q", got, want)
	}
}
