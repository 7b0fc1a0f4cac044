package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/registry"
)

// TestPatternOverlapBounded lints many families that all overlap: each
// family gets at most maxOverlapsShown findings, the last counting the
// rest, and a proof cut short by MaxOverlaps says so on the families: key.
func TestPatternOverlapBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nowners:\n  web: {contact: \"#web\"}\nfamilies:\n")
	n := 30 // 435 overlapping pairs, over MaxOverlaps
	for i := range n {
		fmt.Fprintf(&b, "  - {name: f%d, description: d, pattern: \"v1:{a%d:any}\", version: 1, owner: web, type: string, encoding: text, ttl: optional}\n", i, i)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keys.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Load(os.DirFS(dir), "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	perFamily := map[string]int{}
	var stopped, summed int
	for _, d := range Lint(reg) {
		if d.Rule != PatternOverlap.ID {
			continue
		}
		if d.Family == "" {
			stopped++
			if d.Pos.Line != 4 || !strings.Contains(d.Message, "stopped at its bound") {
				t.Errorf("incomplete proof reported as %v: %s", d.Pos, d.Message)
			}
			continue
		}
		perFamily[d.Family]++
		if strings.Contains(d.Message, "more overlapping families)") {
			summed++
		}
	}
	if stopped != 1 {
		t.Errorf("%d incomplete-proof findings, want 1", stopped)
	}
	for f, k := range perFamily {
		if k > maxOverlapsShown {
			t.Errorf("family %s: %d overlap findings, want at most %d", f, k, maxOverlapsShown)
		}
	}
	if perFamily["f29"] != maxOverlapsShown || summed == 0 {
		t.Errorf("f29 (overlapping every earlier family): %d findings, %d summing the rest; want %d and some", perFamily["f29"], summed, maxOverlapsShown)
	}
}
