package rules

import (
	"strings"

	"github.com/keyreg/keyreg/diag"
)

// IgnoreWithoutReason reports ignore: entries without a reason. An ignore
// silences a check for good; the reason (ideally with a ticket) is what
// lets a later reader decide whether it still applies.
var IgnoreWithoutReason = &Rule{
	ID:       "ignore-without-reason",
	Doc:      "an ignore entry gives no reason for silencing its rule",
	Kind:     KindLint,
	Severity: diag.Warn,
	Lint: func(p *Pass) {
		for _, f := range p.Reg.Families {
			for _, ig := range f.Ignore {
				if strings.TrimSpace(ig.Reason) == "" {
					p.Reportf(f, ig.Pos, "ignore of %q has no reason: say why the rule does not apply, ideally with a ticket", ig.Rule)
				}
			}
		}
	},
}
