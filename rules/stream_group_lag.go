package rules

import (
	"fmt"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// StreamGroupLag reports a live stream whose consumer group has more
// unread entries than the group's max_lag: its consumers fall behind the
// producers. The lag is the lag field of XINFO GROUPS (Redis 7.0 and
// later); when Redis cannot compute it (entries deleted from the middle of
// the stream), or an older Redis does not report it, the group is not
// checked, and explain --live says the lag is not measurable.
var StreamGroupLag = &Rule{
	ID:       "stream-group-lag",
	Doc:      "a consumer group of a live stream lags more entries behind than its max_lag",
	Kind:     KindKey,
	Severity: diag.Warn,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Reads:    FactGroups,
	Key:      func(k *KeyFacts) bool { return streamGroups(k, lagging) },
	Detail: func(k *KeyFacts) string {
		return groupsDetail(k, func(g *source.GroupInfo, d *registry.StreamGroup) string {
			if !lagging(g, d) {
				return ""
			}
			return fmt.Sprintf("group %q: lag %d (max %d)", g.Name, g.Lag, d.MaxLag)
		})
	},
	Summary: func(*registry.Family) string { return "streams with a consumer group over its max_lag" },
}

func lagging(g *source.GroupInfo, d *registry.StreamGroup) bool {
	return d.MaxLag != registry.NoLimit && g.HasLag && g.Lag > d.MaxLag
}
