package rules

import "github.com/keyreg/keyreg/diag"

// OwnerMissing reports families without an owner. Without one, nobody is
// paged when audit finds its keys growing, expiring wrongly or breaking
// their schema.
var OwnerMissing = &Rule{
	ID:       "owner-missing",
	Doc:      "a family has no owner, so nobody answers for its keys",
	Kind:     KindLint,
	Severity: diag.Error,
	Lint: func(p *Pass) {
		for _, f := range p.Reg.Families {
			if f.Owner != "" {
				continue
			}
			pos := f.PosOf("name")
			if f.Has("owner") {
				pos = f.PosOf("owner")
			}
			p.Reportf(f, pos, "family %q has no owner", f.Name)
		}
	},
}
