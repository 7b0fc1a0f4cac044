package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/internal/synth"
)

// minimalYAML is a registry of n families with a name, a pattern and a
// version only: the largest registry in families that fits the loader's
// 4 MiB and 200,000-value limits (30,000 families is about 2.5 MB).
func minimalYAML(n int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\ndefaults: {ttl: 1h}\nfamilies:\n")
	for i, p := range synth.Patterns(n) {
		v := "1"
		if strings.HasPrefix(p, "v2:") {
			v = "2"
		} else if strings.HasPrefix(p, "v3:") {
			v = "3"
		}
		fmt.Fprintf(&b, "- {name: f%d, pattern: '%s', version: %s}\n", i, strings.ReplaceAll(p, "'", "''"), v)
	}
	return []byte(b.String())
}

// BenchmarkLint30000 measures keyreg lint on the registry of issue 22 item
// 29 (30,000 families; it took 280 MB): Load and Lint, with -benchmem for
// the memory. Load built the matcher's automaton, which lint never uses
// (now built on first Matcher call), and Lookup built the rule list once
// per finding: 794 MB and 5.56M allocations per run before, 379 MB and
// 3.20M after (-benchtime 3x on 2 shared cores).
func BenchmarkLint30000(b *testing.B) { benchLint(b, minimalYAML(30000), 30000) }

// TestLookupAllocatesNothing: Lookup runs once per finding (Apply), and
// building the rule list there made 28 MB of garbage on the 30,000-family
// registry.
func TestLookupAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { Lookup("pattern-overlap") }); n != 0 {
		t.Errorf("Lookup allocates %v times per call, want 0", n)
	}
}
