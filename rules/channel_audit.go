package rules

import (
	"slices"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// PhaseChannels rules decide once per run, from the Pub/Sub state every
// node reported (PUBSUB CHANNELS, NUMSUB, NUMPAT, SHARDCHANNELS,
// SHARDNUMSUB), aggregated over the nodes: audit.Channels applies them.
const PhaseChannels Phase = "channels"

// UnitChannels counts live channels: a channel finding's count is the
// live channels it is about (1 for channel-no-subscribers, which is about
// a declaration).
const UnitChannels Unit = "live channels"

// The channel audit's rules (issue 27). Their findings are about channels
// (Channel is set): the channel's ignore: entries apply, and keys.yaml
// rules: overrides their severity. The decisions are made by
// audit.Channels from the aggregated Pub/Sub state, which this package
// does not see; the rule values carry the IDs, default severities, docs
// and counting semantics.

func channelAuditRule(id string, sev diag.Severity, doc, summary string) *Rule {
	return &Rule{
		ID: id, Doc: doc, Kind: KindKey, Severity: sev, Channel: true,
		Phase: PhaseChannels, Unit: UnitChannels,
		Summary: func(*registry.Family) string { return summary },
	}
}

// channelAuditRules are applied by the channel audit, in this order.
var channelAuditRules = []*Rule{
	ChannelUnregistered,
	ChannelModeMismatch,
	ChannelNoSubscribers,
	ChannelClassicOnCluster,
	ChannelDeprecatedLive,
}

// ChannelAuditRules returns the channel audit's rules.
func ChannelAuditRules() []*Rule { return slices.Clone(channelAuditRules) }
