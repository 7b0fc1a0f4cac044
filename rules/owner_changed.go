package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// OwnerChanged reports a family whose owner changed. It never blocks a
// change; it is shown so that both teams review the hand-over.
var OwnerChanged = &Rule{
	ID:       "owner-changed",
	Doc:      "a family's owner changed, so both teams should review",
	Kind:     KindBreaking,
	Category: CategoryOwnership,
	Severity: diag.Info,
	Breaking: func(p *BreakingPass) {
		p.Pairs(func(of, nf *registry.Family) {
			switch {
			case of.Owner == nf.Owner:
			case nf.Owner == "":
				p.Reportf(nf, nf.PosOf("name"), "owner %q was removed: the family has no owner now", of.Owner)
			case of.Owner == "":
				p.Reportf(nf, nf.PosOf("owner"), "owner %q was added", nf.Owner)
			default:
				p.Reportf(nf, nf.PosOf("owner"), "owner changed from %q to %q: both teams should review this change", of.Owner, nf.Owner)
			}
		})
	},
}
