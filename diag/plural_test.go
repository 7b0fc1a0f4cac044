package diag

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n          int64
		word, want string
	}{
		{1, "key", "1 key"}, {0, "key", "0 keys"}, {2, "key", "2 keys"},
		{2, "entry", "2 entries"}, {2, "family", "2 families"}, {2, "day", "2 days"},
		{1, "entry", "1 entry"}, {3, "info", "3 info"}, {2, "more hunk", "2 more hunks"},
	} {
		if got := Count(c.n, c.word); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
}
