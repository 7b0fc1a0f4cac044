package registry

import (
	"fmt"
	"strings"
	"testing"
)

// TestPatternErrorPositions: a pattern error points at the character where
// the offending byte is written, whatever the YAML quoting (issue 10 item
// 11). Columns count characters.
func TestPatternErrorPositions(t *testing.T) {
	head := "version: 1\nfamilies:\n  - name: a\n"
	for _, tc := range []struct {
		name, pattern string // the pattern: line(s) as written after "    pattern: "
		want          string // line:col of the error
	}{
		{"plain", `v1:a:{id`, "4:19"},
		{"double-quoted", `"v1:a:{id"`, "4:20"},
		{"non-ASCII before", `"café:日本:{id"`, "4:23"},
		{"non-ASCII plain", `café:{id`, "4:19"},
		{"YAML escaped quote before", `"v1:\"x\":{id"`, "4:24"},
		{"YAML \\u escape before", `"caf\u00e9:{id"`, "4:25"},
		{"YAML \\x escape", `"v1:\x7b"`, "4:18"},
		{"doubled backslash", `"v1:\\{x\\}:{id"`, "4:26"},
		{"single-quoted with ''", `'it''s:{id'`, "4:21"},
		{"pattern escape, single-quoted", `'v1:\{x\}:\q'`, "4:24"},
		{"folded", ">-\n      v1:a:\n      {id\n", "6:7"},
		{"folded, kept break is a control byte", ">-\n      v1:a:\n\n      b:{id\n", "6:1"},
		{"folded, after a break", ">-\n      v1:a:\n      b:\n      c:{id\n", "7:9"},
		{"literal", "|-\n      v1:a:{id\n", "5:12"},
		{"plain multi-line", "v1:a:x\n      b:{id\n", "5:9"},
		{"double-quoted multi-line", "\"v1:a:\n      b:{id\"\n", "5:9"},
		{"escaped line break", "\"v1:a:\\\n      b:{id\"\n", "5:9"},
		{"injected newline", `"v1:a:{id:int}\nvar _, _ = fmt.Println(\"INJECTED\")\n//"`, "4:28"},
		{"raw control byte, YAML \\x", `"celery\x06\x16{p:int}"`, "4:21"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + "    pattern: " + tc.pattern
			if !strings.HasSuffix(src, "\n") {
				src += "\n"
			}
			got := diagnostics(t, src)
			if !strings.Contains(got, "keys.yaml:"+tc.want+": error: pattern") {
				t.Errorf("source:\n%s\ndiagnostics:\n%s\nwant the error at %s", src, got, tc.want)
			}
		})
	}
}

// TestTabPosition: YAML reports some tab errors on the line before the tab.
func TestTabPosition(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"version: 1\nfamilies:\n\t- name: a\n", "3:1"},
		{"version: 1\nfamilies:\n  - name: a\n\tpattern: x\n", "4:1"},
		{"version: 1\nfamilies:\n  - name: a\n  \tpattern: x\n", "4:3"},
		{"version: 1\nfamilies:\n  - name: a\n    pattern: x\n\towner: y\n", "5:1"},
	} {
		got := diagnostics(t, tc.src)
		want := fmt.Sprintf("keys.yaml:%s: error: invalid YAML: ", tc.want)
		if !strings.Contains(got, want) || !strings.Contains(got, "(YAML forbids tabs for indentation: use spaces)") {
			t.Errorf("%q:\n%s\nwant %s... with the tab hint", tc.src, got, want)
		}
	}
}

// TestPatternPos places the bytes of a pattern for rules that point inside
// it, and falls back to the whole pattern when asked for bytes it lacks.
func TestPatternPos(t *testing.T) {
	r, err := load(t, "version: 1\nfamilies:\n  - name: a\n    pattern: 'it''s:{x}'\n")
	if err != nil {
		t.Fatal(err)
	}
	f := r.Families[0]
	ph := f.Pattern.Placeholders()[0]
	if got := f.PatternPos(ph.Offset-1, len(ph.Name)+2); got.Line != 4 || got.Col != 21 || got.EndCol != 24 {
		t.Errorf("PatternPos of {x} = %+v, want 4:21 to 4:24", got)
	}
	if got := f.PatternPos(100, 1); got != f.PosOf("pattern") {
		t.Errorf("PatternPos out of range = %+v, want the pattern's position %+v", got, f.PosOf("pattern"))
	}
}
