package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// TTLPolicyChanged reports a family whose TTL policy changed (the
// effective policy, defaults included). A shorter max makes keys expire
// before readers that rely on them expect; a longer one, or none, grows
// memory. Neither breaks a decoder, so the rule warns: review the change
// with whoever runs the Redis.
var TTLPolicyChanged = &Rule{
	ID:       "ttl-policy-changed",
	Doc:      "a family's ttl policy changed: keys expire sooner, later or never",
	Kind:     KindBreaking,
	Category: CategoryOps,
	Severity: diag.Warn,
	Breaking: func(p *BreakingPass) {
		p.Pairs(func(of, nf *registry.Family) {
			o, n := of.TTL, nf.TTL
			if o == n {
				return
			}
			var why string
			switch {
			case o.Kind == registry.TTLMax && n.Kind == registry.TTLMax && n.Max < o.Max:
				why = "keys expire sooner, so readers may miss keys they expect"
			case o.Kind == registry.TTLMax && n.Kind == registry.TTLMax:
				why = "keys live longer and use more memory"
			case n.Kind == registry.TTLPersistent:
				why = "keys never expire, so memory grows until something deletes them"
			case o.Kind == registry.TTLPersistent:
				why = "keys that readers expect to persist may now expire"
			case n.Kind == registry.TTLMax:
				why = "keys that may have lived forever must now expire"
			default:
				why = "key lifetime is no longer bounded"
			}
			p.Reportf(nf, nf.PosOf("ttl"), "ttl policy changed from %q to %q: %s", o, n, why)
		})
	},
}
