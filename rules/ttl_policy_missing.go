package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// TTLPolicyMissing reports families without a TTL policy: neither the
// family nor defaults: sets ttl, so audit cannot tell a key that should
// expire from one that must not.
var TTLPolicyMissing = &Rule{
	ID:       "ttl-policy-missing",
	Doc:      "neither a family nor defaults sets a ttl policy",
	Kind:     KindLint,
	Severity: diag.Error,
	Lint: func(p *Pass) {
		for _, f := range p.Reg.Families {
			if f.TTL.Kind == registry.TTLUnset {
				p.Reportf(f, f.PosOf("name"), `family %q has no ttl policy: set ttl (a duration, "persistent" or "optional") or defaults.ttl`, f.Name)
			}
		}
	},
}
