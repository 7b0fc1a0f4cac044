package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// FencingChanged reports a lock whose fencing: names another fence family
// than before, while its keys stayed the same. Holders that deploy the new
// registry take their tokens from the new counter, which starts elsewhere
// (usually at 1), while holders of the old one keep incrementing the old
// counter: the storage that compares tokens sees them go backwards and
// refuses the new holders, or, once the new counter passes the old one,
// accepts a stale holder's writes. Move the counters first (copy each old
// fence's value into the new key, then switch), or bump the lock's version.
//
// Declaring fencing where there was none, or dropping it, changes what the
// registry checks, not what holders do, and is not reported. Changing
// kind: lock or kind: fence alone is not reported either: the keys' type,
// encoding and TTL policy that the kinds imply are compared by
// type-changed, encoding-changed and ttl-policy-changed.
var FencingChanged = &Rule{
	ID:       "fencing-changed",
	Doc:      "a lock's fencing names another fence family, so its tokens come from another counter",
	Kind:     KindBreaking,
	Category: CategoryKey,
	Severity: diag.Error,
	Breaking: func(p *BreakingPass) {
		p.Pairs(func(of, nf *registry.Family) {
			if of.Fencing == "" || nf.Fencing == "" || of.Fencing == nf.Fencing || newKeySpace(of, nf) {
				return
			}
			p.Reportf(nf, nf.PosOf("fencing"), "fencing changed from %q to %q: holders on the new registry take tokens from another counter, which the storage sees go backwards; copy the old fences' values into the new keys first, or bump the lock's version", of.Fencing, nf.Fencing)
		})
	},
}
