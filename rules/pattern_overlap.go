package rules

import (
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
		for _, o := range registry.Overlaps(p.Reg.Families, p.Reg.Separator) {
			p.Reportf(o.B, o.B.PosOf("pattern"), "pattern %q overlaps family %q (pattern %q): both match %q",
				o.B.Pattern.Source, o.A.Name, o.A.Pattern.Source, o.Example)
		}
	},
}
