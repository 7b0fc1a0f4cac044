package scanner

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/source"
	"github.com/redis/go-redis/v9"
)

// MaxChannels bounds the channels read from one node per kind (classic,
// sharded); a node with more is marked Truncated.
const MaxChannels = 100_000

// maxChannelsTotal bounds the channels one read keeps over all the nodes
// of a cluster, whatever their number: the nodes past it are marked
// Truncated too. A variable for the tests.
var maxChannelsTotal = 1_000_000

// numsubBatch is the number of channels per PUBSUB NUMSUB call.
const numsubBatch = 1000

// Channels reads the Pub/Sub state of every node: PUBSUB CHANNELS, NUMSUB,
// NUMPAT, SHARDCHANNELS and SHARDNUMSUB, which are node-local. On a
// cluster it reads every node CLUSTER NODES lists, replicas included; a
// node that cannot be read carries its error. A standalone or Sentinel
// primary's replicas are not read, and UnreadReplicas counts them. It
// writes nothing.
func (c *Conn) Channels(ctx context.Context) ([]source.NodeChannels, error) {
	budget := maxChannelsTotal
	return c.eachChannelNode(ctx, func(cl *redis.Client, nc *source.NodeChannels) error {
		readChannelCounters(ctx, cl, nc)
		if c.mode != modeCluster {
			// A replica's subscribers are its own, and only a cluster's
			// replicas are read: say how many were not.
			if info, err := cl.Info(ctx, "replication").Result(); err == nil {
				if n, ok := infoField(info, "connected_slaves", ""); ok {
					nc.UnreadReplicas = int(min(n, 1<<20))
				}
			}
		}
		return readNodeChannels(ctx, cl, nc, &budget)
	})
}

// ChannelCounters reads only the Pub/Sub counters of every node Channels
// reads (INFO commandstats' cmdstat_publish, INFO server's version, and on
// a cluster CLUSTER INFO's cluster_stats_messages_publish_*): the first of
// the two readings a fan-out estimate compares, cheap whatever the number
// of channels. A counter that could not be read is -1, with CountersErr
// saying why. It writes nothing.
func (c *Conn) ChannelCounters(ctx context.Context) ([]source.NodeChannels, error) {
	return c.eachChannelNode(ctx, func(cl *redis.Client, nc *source.NodeChannels) error {
		readChannelCounters(ctx, cl, nc)
		return nil
	})
}

// eachChannelNode runs read on every node whose Pub/Sub state is its own:
// on a cluster, every healthy node CLUSTER NODES lists, replicas included,
// in address order; else the one server. A node read fails on carries its
// error instead. The nodes CLUSTER NODES flags as failing (fail,
// handshake, noaddr, a link not connected) come last, not read, with
// Skipped saying so.
func (c *Conn) eachChannelNode(ctx context.Context, read func(*redis.Client, *source.NodeChannels) error) ([]source.NodeChannels, error) {
	type target struct {
		addr    string
		primary bool
		slots   [][2]int
	}
	var targets []target
	var skipped []source.NodeChannels // nodes CLUSTER NODES flags as failing
	switch c.mode {
	case modeCluster:
		out, err := c.client(c.base.Addr, 0, false).ClusterNodes(ctx).Result()
		if err != nil {
			return nil, c.redact(fmt.Errorf("cluster nodes: %w", err))
		}
		seedHost, _, _ := net.SplitHostPort(c.base.Addr)
		nodes, err := parseClusterNodes(out, seedHost)
		if err != nil {
			return nil, fmt.Errorf("cluster nodes: %w", err)
		}
		for _, n := range nodes {
			if !n.healthy {
				skipped = append(skipped, source.NodeChannels{Node: n.addr, Skipped: n.state,
					PublishCalls: -1, BusPublishSent: -1, BusPublishReceived: -1})
				continue
			}
			targets = append(targets, target{n.addr, n.master && len(n.slots) > 0, n.slots})
		}
		sort.Slice(targets, func(i, j int) bool { return targets[i].addr < targets[j].addr })
	default:
		targets = []target{{addr: c.base.Addr, primary: true}}
	}
	out := make([]source.NodeChannels, 0, len(targets))
	for _, t := range targets {
		nc := source.NodeChannels{Node: t.addr, Primary: t.primary, Slots: t.slots}
		var cl *redis.Client
		if c.mode == modeSentinel {
			cl = c.clientOf(clientKey{db: c.firstDB(), primary: true})
		} else {
			cl = c.client(t.addr, 0, false)
		}
		if err := read(cl, &nc); err != nil {
			if isNoPerm(err) {
				err = fmt.Errorf("%w (the channel audit needs +pubsub and +cluster|info in the ACL)", err)
			}
			nc = source.NodeChannels{Node: t.addr, Primary: t.primary, Slots: t.slots, Err: c.redact(err),
				PublishCalls: -1, BusPublishSent: -1, BusPublishReceived: -1}
		}
		if nc.CountersErr != nil {
			nc.CountersErr = c.redact(nc.CountersErr)
		}
		out = append(out, nc)
	}
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Node < skipped[j].Node })
	return append(out, skipped...), nil
}

func isNoPerm(err error) bool {
	return strings.HasPrefix(err.Error(), "NOPERM") || strings.Contains(err.Error(), ": NOPERM")
}

// readChannelCounters reads the node's publish counters and version into
// nc. A refusal leaves the counter at -1 and says why in CountersErr; it
// does not fail the channel audit, only the fan-out estimate.
func readChannelCounters(ctx context.Context, cl *redis.Client, nc *source.NodeChannels) {
	nc.PublishCalls, nc.BusPublishSent, nc.BusPublishReceived = -1, -1, -1
	fail := func(what string, err error) {
		if nc.CountersErr == nil {
			if isNoPerm(err) {
				err = fmt.Errorf("%w (the fan-out estimate needs +info and +cluster|info in the ACL)", err)
			}
			nc.CountersErr = fmt.Errorf("%s: %w", what, err)
		}
	}
	if info, err := cl.Info(ctx, "server").Result(); err == nil {
		nc.Server, nc.Version = serverVersion(info)
	}
	if info, err := cl.Info(ctx, "commandstats").Result(); err == nil {
		nc.PublishCalls = 0
		if v, ok := infoField(info, "cmdstat_publish", "calls"); ok {
			nc.PublishCalls = v
		}
	} else {
		fail("INFO commandstats", err)
	}
	if len(nc.Slots) > 0 || !nc.Primary {
		if info, err := cl.ClusterInfo(ctx).Result(); err == nil {
			// Redis lists a message type only once it was counted.
			nc.BusPublishSent, nc.BusPublishReceived = 0, 0
			if v, ok := infoField(info, "cluster_stats_messages_publish_sent", ""); ok {
				nc.BusPublishSent = v
			}
			if v, ok := infoField(info, "cluster_stats_messages_publish_received", ""); ok {
				nc.BusPublishReceived = v
			}
		} else {
			fail("CLUSTER INFO", err)
		}
	}
}

// serverVersion reads INFO server's server name and version: valkey and
// valkey_version when the server says it is Valkey (which also reports a
// redis_version for compatibility), else redis and redis_version. Bounded:
// a version longer than 32 bytes is not one.
func serverVersion(info string) (server, version string) {
	field := func(name string) string {
		for line := range strings.SplitSeq(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok && len(v) <= 32 {
				return v
			}
		}
		return ""
	}
	if v := field("valkey_version"); v != "" {
		return "valkey", v
	}
	if v := field("redis_version"); v != "" {
		return "redis", v
	}
	return "", ""
}

// readNodeChannels reads one node's channels into nc: at most MaxChannels
// of each kind, and at most *budget in all, which it lowers by what it
// keeps.
func readNodeChannels(ctx context.Context, cl *redis.Client, nc *source.NodeChannels, budget *int) error {
	keep := func(names []string) []string {
		if n := min(MaxChannels, max(*budget, 0)); len(names) > n {
			names, nc.Truncated = names[:n], true
		}
		*budget -= len(names)
		return names
	}
	classic, err := cl.PubSubChannels(ctx, "*").Result()
	if err != nil {
		return fmt.Errorf("PUBSUB CHANNELS: %w", err)
	}
	classic = keep(classic)
	if nc.Classic, err = counts(ctx, cl, classic, redis.Pipeliner.PubSubNumSub); err != nil {
		return fmt.Errorf("PUBSUB NUMSUB: %w", err)
	}
	if nc.NumPat, err = cl.PubSubNumPat(ctx).Result(); err != nil {
		return fmt.Errorf("PUBSUB NUMPAT: %w", err)
	}
	sharded, err := cl.PubSubShardChannels(ctx, "*").Result()
	if err != nil {
		if isUnknownCommand(err) {
			return nil // before Redis 7: no sharded Pub/Sub
		}
		return fmt.Errorf("PUBSUB SHARDCHANNELS: %w", err)
	}
	sharded = keep(sharded)
	if nc.Sharded, err = counts(ctx, cl, sharded, redis.Pipeliner.PubSubShardNumSub); err != nil {
		return fmt.Errorf("PUBSUB SHARDNUMSUB: %w", err)
	}
	for i := range nc.Sharded {
		nc.Sharded[i].Slot = int(keySlot(nc.Sharded[i].Name))
	}
	return nil
}

// counts asks numsub (NUMSUB or SHARDNUMSUB) for the subscribers of
// names, numsubBatch names a call, all the calls in one pipeline: one round
// trip however many channels a node has (at most MaxChannels).
func counts(ctx context.Context, cl *redis.Client, names []string, numsub func(redis.Pipeliner, context.Context, ...string) *redis.MapStringIntCmd) ([]source.ChannelCount, error) {
	sort.Strings(names)
	out := make([]source.ChannelCount, 0, len(names))
	if len(names) == 0 {
		return out, nil
	}
	var cmds []*redis.MapStringIntCmd
	if _, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := 0; i < len(names); i += numsubBatch {
			cmds = append(cmds, numsub(p, ctx, names[i:min(i+numsubBatch, len(names))]...))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for i, cmd := range cmds {
		m := cmd.Val()
		for _, n := range names[i*numsubBatch : min((i+1)*numsubBatch, len(names))] {
			out = append(out, source.ChannelCount{Name: n, Subscribers: m[n]})
		}
	}
	return out, nil
}

// isUnknownCommand reports a server that does not know a command or
// subcommand (PUBSUB SHARDCHANNELS before Redis 7).
func isUnknownCommand(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "ERR unknown command") || strings.HasPrefix(s, "ERR unknown subcommand") || strings.Contains(s, "Unknown subcommand")
}

// infoField reads a number from an INFO-style reply: the value of
// "name:N", or with sub, the N of "sub=N" in "name:a=1,sub=N,...".
func infoField(info, name, sub string) (int64, bool) {
	for line := range strings.SplitSeq(info, "\n") {
		line = strings.TrimSpace(line)
		v, ok := strings.CutPrefix(line, name+":")
		if !ok {
			continue
		}
		if sub != "" {
			found := false
			for kv := range strings.SplitSeq(v, ",") {
				if x, ok := strings.CutPrefix(kv, sub+"="); ok {
					v, found = x, true
					break
				}
			}
			if !found {
				return 0, false
			}
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil && n >= 0
	}
	return 0, false
}
