package rules

import "github.com/keyreg/keyreg/diag"

// OwnerUnknown reports families whose owner is not declared under owners:,
// usually a typo. The message suggests the closest declared owner when one
// is within edit distance 2.
var OwnerUnknown = &Rule{
	ID:       "owner-unknown",
	Doc:      "a family's owner is not declared under owners",
	Kind:     KindLint,
	Severity: diag.Error,
	Lint: func(p *Pass) {
		var names []string
		for _, o := range p.Reg.Owners {
			names = append(names, o.Name)
		}
		for _, f := range p.Reg.Families {
			if f.Owner == "" {
				continue // owner-missing
			}
			if _, ok := p.Reg.Owner(f.Owner); ok {
				continue
			}
			p.Reportf(f, f.PosOf("owner"), "owner %q is not declared under owners%s", f.Owner, diag.DidYouMean(f.Owner, names))
		}
	},
}
