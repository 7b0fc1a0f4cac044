package rules

import (
	"strconv"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// HashTagChanged reports a family whose Redis Cluster hash tag changed: the
// bytes between the first "{" and the next "}" of its keys, which alone
// decide a key's slot when present. A new tag (or none) moves keys to other
// slots, and multi-key commands, transactions and Lua scripts that relied
// on keys of several families sharing a tag fail with CROSSSLOT.
//
// Unlike pattern-changed, a version bump does not excuse it: other
// families' keys that shared the old tag are still written with it. Tags
// are compared by placeholder type and position, so renaming the
// placeholder inside a tag is not a change.
var HashTagChanged = &Rule{
	ID:       "hash-tag-changed",
	Doc:      "a family's redis cluster hash tag changed, moving its keys to other slots",
	Kind:     KindBreaking,
	Category: CategoryKey,
	Severity: diag.Error,
	Breaking: func(p *BreakingPass) {
		p.Pairs(func(of, nf *registry.Family) {
			if of.Pattern == nil || nf.Pattern == nil {
				return
			}
			od, ok := hashTag(of.Pattern)
			nd, nk := hashTag(nf.Pattern)
			if ok == nk {
				return
			}
			none := func(s string) string {
				if s == "" {
					return "none (the whole key is hashed)"
				}
				return strconv.Quote(s)
			}
			p.Reportf(nf, nf.PosOf("pattern"), "hash tag changed from %s to %s: keys hash to other cluster slots, and multi-key commands and scripts that relied on the old tag fail with CROSSSLOT", none(od), none(nd))
		})
	},
}
