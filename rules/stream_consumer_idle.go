package rules

import (
	"fmt"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// StreamConsumerIdle reports a live stream with a consumer that holds
// pending entries and has been idle for longer than its group's
// max_consumer_idle: a dead consumer whose entries nobody claims. Idle
// consumers without pending entries are not reported: they hold nothing
// up. Consumers are read with XINFO CONSUMERS, only for the groups that
// declare max_consumer_idle; the detail names the idlest one.
var StreamConsumerIdle = &Rule{
	ID:       "stream-consumer-idle",
	Doc:      "a consumer holding pending entries of a live stream is idle for longer than its group's max_consumer_idle",
	Kind:     KindKey,
	Severity: diag.Warn,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Reads:    FactGroups,
	Key:      func(k *KeyFacts) bool { return streamGroups(k, idleHolder) },
	Detail: func(k *KeyFacts) string {
		return groupsDetail(k, func(g *source.GroupInfo, d *registry.StreamGroup) string {
			if !idleHolder(g, d) {
				return ""
			}
			return fmt.Sprintf("group %q: consumer %q idle %s with pending entries (max %s)", g.Name, g.IdleConsumer,
				registry.FormatDuration(g.IdlePending.Round(1e9)), registry.FormatDuration(d.MaxConsumerIdle))
		})
	},
	Summary: func(*registry.Family) string {
		return "streams with a consumer holding pending entries idle over max_consumer_idle"
	},
}

func idleHolder(g *source.GroupInfo, d *registry.StreamGroup) bool {
	return d.MaxConsumerIdle != registry.NoLimit && g.HasIdle && g.IdlePending > d.MaxConsumerIdle
}
