package rules

import "github.com/keyreg/keyreg/diag"

// ChannelClassicOnCluster reports classic channels subscribed on a
// cluster: every PUBLISH to them is copied to every node over the
// cluster bus.
var ChannelClassicOnCluster = channelAuditRule("channel-classic-on-cluster", diag.Warn,
	"a classic channel is subscribed on a cluster, where every message is sent to every node", "classic channels on a cluster")
