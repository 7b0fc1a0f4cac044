package rules

import "github.com/keyreg/keyreg/diag"

// ChannelNoSubscribers reports a declared, non-deprecated channel with
// no subscriber on any node (a pattern channel counts as subscribed
// while any node has a pattern subscription).
var ChannelNoSubscribers = channelAuditRule("channel-no-subscribers", diag.Info,
	"a declared, non-deprecated channel has no subscriber on any node", "declared channels without a subscriber")
