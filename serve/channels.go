package serve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
	"github.com/prometheus/client_golang/prometheus"
)

// ChannelsMode says when an audit cycle also reads the Pub/Sub channels of
// every node (keyreg audit --channels).
type ChannelsMode int

const (
	// ChannelsAuto reads them when the registry in use declares channels.
	ChannelsAuto ChannelsMode = iota
	// ChannelsOn reads them every cycle (--channels).
	ChannelsOn
	// ChannelsOff never reads them (--channels=false).
	ChannelsOff
)

// maxNodeSeries bounds the per-node publish counters: the nodes past it
// are summed under node="other".
const maxNodeSeries = 1000

var (
	chLabels = []string{"channel", "mode", "owner"}

	channelLive        = desc("keyreg_channel_live", "Live channels (classic and sharded) of each channel declaration, from the last complete channel read.", chLabels...)
	channelSubscribers = desc("keyreg_channel_subscribers", "Subscribers of the live channels of each channel declaration, summed over every node.", chLabels...)
	channelFindings    = desc("keyreg_channel_findings", "Live channels an active channel audit finding fired on, by rule, channel declaration (or unregistered prefix), its owner and severity.", "channel", "owner", "rule", "severity")
	unregChannels      = desc("keyreg_unregistered_channels", "Live channels of no channel declaration, by prefix: the largest --max-groups prefixes, the rest as the prefix other.", "prefix")
	unregChannelSubs   = desc("keyreg_unregistered_channel_subscribers", "Subscribers of the live channels of no channel declaration, summed over every node, by prefix.", "prefix")
	channelPatterns    = desc("keyreg_channel_pattern_subscriptions", "Pattern subscriptions (PUBSUB NUMPAT), summed over every node.")
	channelNodes       = desc("keyreg_channel_nodes", "Nodes whose Pub/Sub state the last complete channel read asked for.")
	channelSkipped     = desc("keyreg_channel_nodes_skipped", "Cluster nodes CLUSTER NODES flags as failing (fail, handshake, noaddr, link not connected), which the last complete channel read left out: their subscribers are not counted.")
	channelReplicas    = desc("keyreg_channel_replicas_unread", "Replicas of a standalone or Sentinel primary the last complete channel read did not read: subscribers connected to them are not counted.")
	publishCalls       = desc("keyreg_channel_publish_calls_total", "PUBLISH commands a node ran (INFO commandstats cmdstat_publish calls), as the node counts them, at the last complete channel read.", "node")
	busPublishSent     = desc("keyreg_channel_bus_publish_sent_total", "Pub/Sub messages a cluster node sent over the cluster bus (CLUSTER INFO cluster_stats_messages_publish_sent), at the last complete channel read.", "node")
	busPublishRecv     = desc("keyreg_channel_bus_publish_received_total", "Pub/Sub messages a cluster node received over the cluster bus (CLUSTER INFO cluster_stats_messages_publish_received), at the last complete channel read.", "node")

	channelSuccess    = desc("keyreg_channel_audit_success", "1 when the last channel read covered every node, else 0 (present once a channel read was attempted).")
	channelPartial    = desc("keyreg_channel_audit_partial", "1 when the last channel read left nodes unread (PUBSUB refused: the ACL lacks +pubsub; a node down; more channels than read), else 0.")
	channelNotChecked = desc("keyreg_channel_nodes_not_checked", "Nodes whose Pub/Sub state the last channel read could not read (all of them when the read failed as a whole).")
	channelLastOK     = desc("keyreg_channel_audit_last_success_timestamp_seconds", "Unix time at which the last complete channel read finished (absent before the first).")
)

// chanStatus is the state of a target's channel reads.
type chanStatus struct {
	attempted, success bool
	notChecked         int
	lastSuccess        time.Time
}

// channelsWanted says whether a cycle with reg reads the channels.
func (e *Exporter) channelsWanted(reg *registry.Registry) bool {
	switch e.o.Channels {
	case ChannelsOn:
		return true
	case ChannelsOff:
		return false
	}
	return reg != nil && len(reg.Channels) > 0
}

// channelRead is one cycle's channel read.
type channelRead struct {
	cr    *audit.ChannelReport // nil when the read failed as a whole
	nodes []source.NodeChannels
	err   error // why it is not complete
}

// readChannels reads the Pub/Sub state of every node of src and audits it
// against reg. It never writes: the scanner sends PUBSUB, INFO and CLUSTER
// INFO/NODES only.
func readChannels(ctx context.Context, src *Source, reg *registry.Registry) *channelRead {
	if src.Channels == nil {
		return &channelRead{err: errors.New("channels not audited: this source holds no Pub/Sub state (a snapshot)")}
	}
	nodes, err := src.Channels(ctx)
	if err != nil {
		return &channelRead{err: fmt.Errorf("channel audit: %w", err)}
	}
	cr := audit.Channels(reg, nodes)
	rd := &channelRead{cr: cr, nodes: nodes}
	if len(cr.Partial) > 0 {
		rd.err = fmt.Errorf("channel audit: %d of %d nodes not read: %s", len(cr.Partial), cr.Nodes, cr.Partial[0])
	}
	return rd
}

// notChecked is the nodes a read left unread: all of them, at least one,
// when it failed as a whole.
func (rd *channelRead) notChecked() int {
	if rd.cr == nil {
		return 1
	}
	return len(rd.cr.Partial)
}

// newChannelSnapshot builds the metrics of a complete channel read. Its
// series are bounded by the registry's channels and rules, by maxGroups
// prefixes of unregistered channels and by maxNodeSeries nodes, never by
// the live channels: a channel name is never a label, only a declaration
// or a prefix group.
func newChannelSnapshot(reg *registry.Registry, cr *audit.ChannelReport, nodes []source.NodeChannels, maxGroups int) *snapshot {
	var sec audit.Report
	audit.AddChannels(&sec, reg, cr)
	ch := sec.Channels
	var ms []prometheus.Metric
	owner := map[string]string{}
	for _, d := range ch.Declared {
		name, own := label(d.Name), label(d.Owner)
		owner[d.Name] = own
		ms = append(ms,
			gauge(channelLive, float64(d.Live), name, label(d.Mode), own),
			gauge(channelSubscribers, float64(d.Subscribers), name, label(d.Mode), own))
	}

	// The unregistered prefixes: the largest maxGroups (ch.Unregistered
	// is sorted by channels, most first), the rest as other; prefixes
	// equal once clipped are one series. The audit's own cap group
	// (audit.OtherChannels, the channels past its 1,000 prefixes) is
	// other too, never a series of its own beside it.
	type row struct {
		name           string
		channels, subs int64
	}
	var rows []*row
	at := map[string]*row{}
	other := &row{name: OtherGroup}
	group := map[string]string{} // prefix → its label
	for _, g := range ch.Unregistered {
		name := label(g.Prefix)
		r := at[name]
		if r == nil {
			if name == OtherGroup || g.Prefix == audit.OtherChannels || len(rows) == maxGroups {
				r = other
			} else {
				r = &row{name: name}
				at[name] = r
				rows = append(rows, r)
			}
		}
		r.channels += int64(g.Channels)
		r.subs += g.Subscribers
		group[g.Prefix] = r.name
	}
	if other.channels > 0 {
		rows = append(rows, other)
	}
	for _, r := range rows {
		ms = append(ms, gauge(unregChannels, float64(r.channels), r.name), gauge(unregChannelSubs, float64(r.subs), r.name))
	}

	type fkey struct{ channel, owner, rule, sev string }
	var order []fkey
	counts := map[fkey]int64{}
	for _, f := range sec.Findings {
		if f == nil || f.Suppressed || f.Severity <= diag.Off {
			continue
		}
		k := fkey{label(f.Channel), owner[f.Channel], label(f.Rule), f.Severity.String()}
		if f.Rule == audit.RuleChannelUnregistered {
			k.channel, k.owner = OtherGroup, ""
			if l, ok := group[f.Channel]; ok {
				k.channel = l
			}
		}
		if _, ok := counts[k]; !ok {
			order = append(order, k)
		}
		counts[k] += f.Count
	}
	for _, k := range order {
		ms = append(ms, gauge(channelFindings, float64(counts[k]), k.channel, k.owner, k.rule, k.sev))
	}

	ms = append(ms, gauge(channelPatterns, float64(ch.PatternSubscriptions)), gauge(channelNodes, float64(ch.Nodes)),
		gauge(channelSkipped, float64(len(cr.Skipped))), gauge(channelReplicas, float64(cr.UnreadReplicas)))
	ms = append(ms, nodeCounters(nodes)...)
	return &snapshot{metrics: ms}
}

// nodeCounters are the raw publish counters of every node that reported
// them: rate() of them is the publishes and the bus messages per second.
func nodeCounters(nodes []source.NodeChannels) []prometheus.Metric {
	type sums struct{ calls, sent, recv int64 }
	var order []string
	at := map[string]*sums{}
	for i, n := range nodes {
		if n.Err != nil {
			continue
		}
		name := label(n.Node)
		if i >= maxNodeSeries || name == OtherGroup {
			name = OtherGroup
		}
		s := at[name]
		if s == nil {
			s = &sums{-1, -1, -1}
			at[name] = s
			order = append(order, name)
		}
		add := func(to *int64, v int64) {
			if v >= 0 {
				*to = max(*to, 0) + v
			}
		}
		add(&s.calls, n.PublishCalls)
		add(&s.sent, n.BusPublishSent)
		add(&s.recv, n.BusPublishReceived)
	}
	var ms []prometheus.Metric
	for _, name := range order {
		s := at[name]
		for _, c := range [...]struct {
			d *prometheus.Desc
			v int64
		}{{publishCalls, s.calls}, {busPublishSent, s.sent}, {busPublishRecv, s.recv}} {
			if c.v >= 0 { // absent where the node does not report it (standalone: no bus)
				ms = append(ms, counter(c.d, float64(c.v), name))
			}
		}
	}
	return ms
}
