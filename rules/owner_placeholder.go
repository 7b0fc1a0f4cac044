package rules

import (
	"strings"

	"github.com/keyreg/keyreg/diag"
)

// placeholderContacts are contacts that say nobody has been found yet:
// keyreg init writes owner "unknown" with contact "TODO".
var placeholderContacts = []string{"", "todo", "tbd", "fixme", "unknown", "none", "n/a", "?"}

// OwnerPlaceholder reports owners that stand for nobody yet: an owner
// named "unknown" or one whose contact is a placeholder such as TODO, as
// keyreg init writes them. The registry works, but its keys have no one to
// ask, which is what the registry is for. One finding per owner, at its
// declaration, counting the families it owns.
var OwnerPlaceholder = &Rule{
	ID:       "owner-placeholder",
	Doc:      "an owner is a placeholder (named unknown, or its contact is TODO), as keyreg init writes it",
	Kind:     KindLint,
	Severity: diag.Warn,
	Lint: func(p *Pass) {
		owned := map[string]int{}
		for _, f := range p.Reg.Families {
			owned[f.Owner]++
		}
		for _, o := range p.Reg.Owners {
			contact := strings.ToLower(strings.TrimSpace(o.Contact))
			placeholder := false
			for _, c := range placeholderContacts {
				placeholder = placeholder || contact == c
			}
			if !placeholder && !strings.EqualFold(o.Name, "unknown") {
				continue
			}
			n := owned[o.Name]
			fams := "families"
			if n == 1 {
				fams = "family"
			}
			p.Reportf(nil, o.Pos, "owner %q (contact %q) is a placeholder and owns %d %s: find the teams that own them, declare those owners with a real contact and move the families to them", o.Name, o.Contact, n, fams)
		}
	},
}
