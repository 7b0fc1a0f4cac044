package rules

import "github.com/keyreg/keyreg/diag"

// DescriptionMissing reports families without a description. The
// description is what explain shows to the engineer who finds a key at 3 a.m.
var DescriptionMissing = &Rule{
	ID:       "description-missing",
	Doc:      "a family has no description, so nobody can tell what its keys are for",
	Kind:     KindLint,
	Severity: diag.Warn,
	Lint: func(p *Pass) {
		for _, f := range p.Reg.Families {
			if f.Description == "" {
				p.Reportf(f, f.PosOf("name"), "family %q has no description", f.Name)
			}
		}
	},
}
