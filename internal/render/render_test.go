package render

import (
	"testing"

	"github.com/keyreg/keyreg/audit"
)

func TestMDCode(t *testing.T) {
	for in, want := range map[string]string{
		`"a"`:   "`\"a\"`",
		"a`b":   "``a`b``",
		"`a":    "`` `a ``",
		"a|b":   "`a\\|b`",
		"a``b`": "``` a``b` ```",
	} {
		if got := MDCode(in); got != want {
			t.Errorf("MDCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"redis://localhost:6379":                   "redis://localhost:6379",
		"redis://:secret@host:6379/0":              "redis://:xxxxx@host:6379/0",
		"rediss://user:p%40ss@host":                "rediss://user:xxxxx@host",
		"redis://:***@host":                        "redis://:***@host",
		"redis://:xxxxx@host":                      "redis://:xxxxx@host",
		"unix:///tmp/redis.sock?password=abc&db=1": "unix:///tmp/redis.sock?password=xxxxx&db=1",
		"ratio=3": "ratio=3",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain: ok é":   "plain: ok é",
		"a\nb\tc":       `a\nb\tc`,
		"\x00\xffbin":   `\x00\xffbin`,
		"rtl\u202eevil": `rtl\u202eevil`,
		"\x1b[31m":      `\x1b[31m`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB",
	} {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestKeyCounts checks that the header says what the totals say.
func TestKeyCounts(t *testing.T) {
	r := &audit.Report{
		Totals:       audit.Totals{Keys: 388, Registered: 358, Unregistered: 30},
		Unregistered: audit.UnregisteredReport{Keys: 30, Other: 2, Groups: []*audit.Group{{Prefix: "tmp:", Keys: 28}}},
	}
	if got, want := KeyCounts(r), "388 (358 registered, 30 unregistered)"; got != want {
		t.Errorf("KeyCounts = %q, want %q", got, want)
	}
}
