package rules

import "github.com/keyreg/keyreg/diag"

// DeprecatedReplacementUnknown reports deprecated families whose
// replaced_by names no family, usually a typo or a replacement that was
// renamed. The message suggests the closest family name within edit
// distance 2.
var DeprecatedReplacementUnknown = &Rule{
	ID:       "deprecated-replacement-unknown",
	Doc:      "a deprecated family's replaced_by names no family",
	Kind:     KindLint,
	Severity: diag.Error,
	Lint: func(p *Pass) {
		var names []string
		for _, f := range p.Reg.Families {
			names = append(names, f.Name)
		}
		for _, f := range p.Reg.Families {
			d := f.Deprecated
			if d == nil || d.ReplacedBy == "" {
				continue
			}
			if _, ok := p.Reg.Family(d.ReplacedBy); ok {
				continue
			}
			others := make([]string, 0, len(names))
			for _, n := range names {
				if n != f.Name {
					others = append(others, n)
				}
			}
			p.Reportf(f, f.PosOf("deprecated"), "replaced_by %q names no family%s", d.ReplacedBy, diag.DidYouMean(d.ReplacedBy, others))
		}
	},
}
