package rules

import (
	"fmt"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// StreamPending reports a live stream whose consumer group holds more
// pending entries (delivered to a consumer, never acknowledged with XACK)
// than the group's max_pending: consumers crash or forget to XACK, and
// nothing reclaims the entries (XAUTOCLAIM). The count is the pending field
// of XINFO GROUPS.
var StreamPending = &Rule{
	ID:       "stream-pending",
	Doc:      "a consumer group of a live stream has more pending entries than its max_pending",
	Kind:     KindKey,
	Severity: diag.Warn,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Reads:    FactGroups,
	Key:      func(k *KeyFacts) bool { return streamGroups(k, overPending) },
	Detail: func(k *KeyFacts) string {
		return groupsDetail(k, func(g *source.GroupInfo, d *registry.StreamGroup) string {
			if !overPending(g, d) {
				return ""
			}
			return fmt.Sprintf("group %q: %d pending (max %d)", g.Name, g.Pending, d.MaxPending)
		})
	},
	Summary: func(*registry.Family) string { return "streams with a consumer group over its max_pending" },
}

func overPending(g *source.GroupInfo, d *registry.StreamGroup) bool {
	return d.MaxPending != registry.NoLimit && g.Pending > d.MaxPending
}
