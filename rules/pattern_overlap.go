package rules

import (
	"fmt"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// PatternOverlap reports pairs of families whose patterns can match the same
// key. Each key must belong to at most one family, or audit, explain and
// generated code cannot tell whose it is.
//
// The check is an exact proof by registry.Overlaps, not a sample: a pair is
// reported iff some key matches both patterns, and the message shows a
// shortest such key. The finding sits on the pattern of the family declared
// later, since that is usually the one just added.
var PatternOverlap = &Rule{
	ID:       "pattern-overlap",
	Doc:      "two family patterns can match the same key, so the key's family is ambiguous",
	Kind:     KindLint,
	Severity: diag.Error,
	Lint: func(p *Pass) {
		overlaps, complete := registry.OverlapsWithin(p.Reg.Families, p.Reg.Separator, registry.OverlapBudget, registry.MaxOverlaps)
		// At most maxOverlapsShown findings per family, the last one
		// counting the rest, so that a registry of many overlapping
		// families gives a readable report, not one line per pair.
		total := map[*registry.Family]int{}
		for _, o := range overlaps {
			total[o.B]++
		}
		shown := map[*registry.Family]int{}
		for _, o := range overlaps {
			if shown[o.B] == maxOverlapsShown {
				continue
			}
			shown[o.B]++
			msg := fmt.Sprintf("pattern %q overlaps family %q (pattern %q): both match %q",
				o.B.Pattern.Source, o.A.Name, o.A.Pattern.Source, o.Example)
			if rest := total[o.B] - maxOverlapsShown; shown[o.B] == maxOverlapsShown && rest > 0 {
				msg += fmt.Sprintf(" (and %d more overlapping families)", rest)
			}
			p.Reportf(o.B, o.B.PosOf("pattern"), "%s", msg)
		}
		if !complete {
			p.Reportf(nil, p.Reg.KeyPos("families"),
				"the overlap proof stopped at its bound (%d overlaps, or %d product states searched): some pairs of families were not checked; make patterns more distinct (literal prefixes, typed placeholders)",
				registry.MaxOverlaps, registry.OverlapBudget)
		}
	},
}

// maxOverlapsShown is the number of overlaps reported per family.
const maxOverlapsShown = 3
