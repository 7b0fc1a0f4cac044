package rules

import "github.com/keyreg/keyreg/diag"

// ChannelModeMismatch reports a channel declared sharded but
// subscribed with SUBSCRIBE, or declared classic or pattern but
// subscribed with SSUBSCRIBE.
var ChannelModeMismatch = channelAuditRule("channel-mode-mismatch", diag.Error,
	"a channel declared sharded is subscribed in classic Pub/Sub, or the other way", "live channels subscribed in the other Pub/Sub mode")
