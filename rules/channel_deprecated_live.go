package rules

import "github.com/keyreg/keyreg/diag"

// ChannelDeprecatedLive reports a deprecated channel that still has
// subscribers.
var ChannelDeprecatedLive = channelAuditRule("channel-deprecated-live", diag.Warn,
	"a deprecated channel still has subscribers", "live channels of a deprecated channel with subscribers")
