package rules

import "github.com/keyreg/keyreg/diag"

// ChannelUnregistered reports live channels that no channel
// declaration names, grouped by the prefix up to the first separator.
var ChannelUnregistered = channelAuditRule("channel-unregistered", diag.Error,
	"live channels that no channel in keys.yaml names, grouped by prefix", "live channels of no channel declaration")
