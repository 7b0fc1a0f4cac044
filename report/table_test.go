package report

import (
	"strings"
	"testing"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/internal/render/rendertest"
)

// longReport is sampleReport with key names and messages long enough that
// no terminal fits them on one line.
func longReport() *audit.Report {
	r := rendertest.SampleReport()
	long := "v2:user:session:" + strings.Repeat("0b8e1c4e-5f1a-4d7e-9c1a-", 8) + "\u00e9\u4e16"
	r.Findings[0].Examples[0].Key = long
	r.Findings[1].Message += strings.Repeat(" and a very long explanation", 6)
	r.Unregistered.Groups[0].Examples[0] = long
	r.TopKeys.ByBytes[0].Key = long
	return r
}

func TestTableFitsWidth(t *testing.T) {
	for _, width := range []int{40, 60, 80, 100, 160} {
		for _, color := range []bool{false, true} {
			var b strings.Builder
			if err := Audit(&b, Table, longReport(), Options{Width: width, Color: color}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for i, line := range strings.Split(out, "\n") {
				if w := textWidth(line); w > width {
					t.Errorf("width %d: line %d is %d columns: %q", width, i+1, w, line)
				}
			}
			if got := strings.Contains(out, "\033["); got != color {
				t.Errorf("width %d, color %v: output has ANSI escapes: %v", width, color, got)
			}
			// A key or an identifier is never continued on the next line:
			// a line holding part of the long key holds its start, and
			// ends it whole or with "…"; a family name is never split.
			for i, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "5f1a-4d7e") && !strings.Contains(line, `"v2:user:session:0b8e1c4e-`) {
					t.Errorf("width %d: line %d continues a key from the line before: %q", width, i+1, line)
				}
				if strings.Contains(line, `"v2:user:session:`) && !strings.Contains(line, "…") && !strings.Contains(line, "\u00e9\u4e16\"") {
					t.Errorf("width %d: line %d holds part of a key, not cut with …: %q", width, i+1, line)
				}
				for _, frag := range []string{"user-sessio ", "feature-fla ", "payload-sch "} {
					if strings.Contains(line, frag) {
						t.Errorf("width %d: line %d cuts an identifier: %q", width, i+1, line)
					}
				}
			}
		}
	}
	// At 80 columns the findings do not fit a boxed table: one block per row.
	var b strings.Builder
	if err := Audit(&b, Table, longReport(), Options{Width: 80}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\nseverity  error\nrule      payload-schema\n") {
		t.Errorf("findings are not in the vertical layout at 80 columns:\n%s", b.String())
	}
	// Without a width, the boxed tables are as wide as their content.
	b.Reset()
	if err := Audit(&b, Table, longReport(), Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "0b8e1c4e-5f1a-4d7e-9c1a-0b8e1c4e-5f1a-4d7e-9c1a-") {
		t.Errorf("without a width, the long key was wrapped")
	}
}

func TestWrapText(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"a bc def", 4, "a bc\ndef"},
		{"abcdefgh", 3, "ab…"},                                       // cut, never continued
		{"ab \u4e16\u4e16\u4e16", 4, "ab\n\u4e16…"},                  // at display widths
		{"see v1:user-session:42 now", 12, "see\nv1:user-ses…\nnow"}, // a key in a message
		{"x", 0, "x"},
		{"one\ntwo three", 5, "one\ntwo\nthree"},
	} {
		if got := wrapText(tc.in, tc.width); got != tc.want {
			t.Errorf("wrapText(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// TestTableGolden80 keeps the table of the full report at 80 columns, with
// colour, in a golden file that a reviewer can read.
func TestTableGolden80(t *testing.T) {
	var b strings.Builder
	if err := Audit(&b, Table, rendertest.SampleReport(), Options{Width: 80, Color: true}); err != nil {
		t.Fatal(err)
	}
	golden(t, "audit.full.table80.golden", b.String())
}
