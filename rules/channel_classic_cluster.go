package rules

import (
	"github.com/keyreg/keyreg/diag"
)

// ChannelClassicCluster warns about channels published with PUBLISH (mode
// classic, and pattern, whose messages are PUBLISHed too) in a registry
// that says cluster: true. On a Redis Cluster every such message is sent to
// every node over the cluster bus, whoever subscribes there; sharded
// channels (SPUBLISH) stay on their slot's shard. docs/channels.md has the
// figures and the migration.
var ChannelClassicCluster = &Rule{
	ID:       "channel-classic-cluster",
	Doc:      "a classic channel on a cluster: every message is sent to every node over the cluster bus",
	Kind:     KindLint,
	Severity: diag.Warn,
	Channel:  true,
	Lint: func(p *Pass) {
		if !p.Reg.Cluster {
			return
		}
		for _, c := range p.Reg.Channels {
			if c.Mode == "sharded" {
				continue
			}
			pos := c.PosOf("mode")
			p.ReportChannel(c, pos, "mode %s on a cluster (cluster: true): every PUBLISH is sent to every node over the cluster bus, so its traffic grows with the number of nodes; use mode: sharded (SPUBLISH) with a hash tag, or a stream", c.Mode)
		}
	},
}
