package diag

import (
	"strings"
	"testing"
)

func TestClosest(t *testing.T) {
	names := []string{"identity", "platform", "db"}
	for _, tc := range []struct{ name, want string }{
		{"identiy", "identity"},
		{"idnetity", "identity"},
		{"platfrm", "platform"},
		{"growth", ""},
		{"qa", ""}, // distance 2 to "db" is the whole name
		{"identity", ""},
	} {
		if got, _ := Closest(tc.name, names); got != tc.want {
			t.Errorf("closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestEditDistanceBounded(t *testing.T) {
	long := strings.Repeat("a", 10_000)
	if d := editDistance(long, "a"); d < 3 {
		t.Errorf("editDistance of a 10,000-byte name = %d, want at least 3", d)
	}
	if _, ok := Closest(long, []string{long + "b"}); ok {
		t.Error("a name over the comparison bound was matched")
	}
}
