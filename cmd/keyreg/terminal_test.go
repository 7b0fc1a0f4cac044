package main

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestDemoTableFits80Columns renders the demo's table report with
// COLUMNS=80 and requires every line to fit 80 display columns. The output
// holds ASCII, box drawing and "…", all one column wide, so the display
// width of a line is its rune count; a wide rune would fail the test.
func TestDemoTableFits80Columns(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	t.Setenv("NO_COLOR", "")
	code, out, errs := cli(t, "demo", "--format", "table")
	if code != 0 && code != 1 {
		t.Fatalf("demo: exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 50 {
		t.Fatalf("demo printed %d lines:\n%s", len(lines), out)
	}
	for i, line := range lines {
		for _, r := range line {
			if r > 0x7f && r != '…' && (r < 0x2500 || r > 0x257f) {
				t.Errorf("line %d holds %q, whose width the test does not know", i+1, r)
			}
		}
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("line %d is %d columns wide: %s", i+1, n, line)
		}
	}
	if strings.Contains(out, "\033[") {
		t.Errorf("colour escapes written to a pipe")
	}
	for _, want := range []string{"largest keys by bytes", "TTL histogram", "% memory", "\nseverity  error\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q", want)
		}
	}
}

func TestTerminalWidth(t *testing.T) {
	var b strings.Builder
	for _, tc := range []struct {
		columns string
		want    int
	}{{"120", 120}, {" 100 ", 100}, {"", defaultWidth}, {"-3", defaultWidth}, {"wide", defaultWidth}} {
		t.Setenv("COLUMNS", tc.columns)
		if got := terminalWidth(&b); got != tc.want {
			t.Errorf("COLUMNS=%q: width %d, want %d", tc.columns, got, tc.want)
		}
	}
	if (&app{color: "auto"}).useColor(&b) {
		t.Errorf("colour on a strings.Builder")
	}
}

func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		keys, total int64
		elapsed     time.Duration
		want        string
	}{
		{1200, 5000, 2 * time.Second, "keyreg: audited 1200 of 5000 keys (24%, 600 keys/s, ETA 6s)"},
		{6000, 5000, 2 * time.Second, "keyreg: audited 6000 of 5000 keys (99%, 3000 keys/s, ETA 0s)"},
		{0, 5000, 0, "keyreg: audited 0 of 5000 keys (0%, 0 keys/s, ETA ?)"},
		{1200, 0, 2 * time.Second, "keyreg: audited 1200 keys (600 keys/s)"},
	} {
		if got := progressLine("audited", tc.keys, tc.total, tc.elapsed); got != tc.want {
			t.Errorf("progressLine(%d, %d, %v) = %q, want %q", tc.keys, tc.total, tc.elapsed, got, tc.want)
		}
	}
}
