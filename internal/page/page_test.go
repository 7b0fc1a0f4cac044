package page

import (
	"strings"
	"testing"
)

// TestBreakable: keys, prefixes and addresses break after their
// separators and nowhere else, escaped; the style sheet never lets text
// break mid-word (overflow-wrap: anywhere did, cutting user-sessio|n).
func TestBreakable(t *testing.T) {
	for in, want := range map[string]string{
		"v1:user-session:{42}": "v1:<wbr>user-<wbr>session:<wbr>{42}",
		"platform@example.com": "platform@<wbr>example.<wbr>com",
		"redis://a:6379/0":     "redis://<wbr>a:<wbr>6379/<wbr>0",
		"<b>:x&":               "&lt;b&gt;:<wbr>x&amp;",
		"sessions":             "sessions",
		"trailing:":            "trailing:",
	} {
		if got := string(Breakable(in)); got != want {
			t.Errorf("Breakable(%q) = %q, want %q", in, got, want)
		}
	}
	if strings.Contains(Style(), "anywhere") || strings.Contains(Style(), "break-all") {
		t.Error("page.css lets words break anywhere")
	}
}
