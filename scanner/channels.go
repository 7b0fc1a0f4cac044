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

// numsubBatch is the number of channels per PUBSUB NUMSUB call.
const numsubBatch = 1000

// Channels reads the Pub/Sub state of every node: PUBSUB CHANNELS, NUMSUB,
// NUMPAT, SHARDCHANNELS and SHARDNUMSUB, which are node-local. On a
// cluster it reads every node CLUSTER NODES lists, replicas included; a
// node that cannot be read carries its error. It writes nothing.
func (c *Conn) Channels(ctx context.Context) ([]source.NodeChannels, error) {
	type target struct {
		addr    string
		primary bool
		slots   [][2]int
	}
	var targets []target
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
		if err := readNodeChannels(ctx, cl, &nc); err != nil {
			if strings.HasPrefix(err.Error(), "NOPERM") || strings.Contains(err.Error(), ": NOPERM") {
				err = fmt.Errorf("%w (the channel audit needs +pubsub and +cluster|info in the ACL)", err)
			}
			nc = source.NodeChannels{Node: t.addr, Primary: t.primary, Slots: t.slots, Err: c.redact(err)}
		}
		out = append(out, nc)
	}
	return out, nil
}

func readNodeChannels(ctx context.Context, cl *redis.Client, nc *source.NodeChannels) error {
	nc.PublishCalls, nc.BusPublishSent, nc.BusPublishReceived = -1, -1, -1
	if info, err := cl.Info(ctx, "commandstats").Result(); err == nil {
		nc.PublishCalls = 0
		if v, ok := infoField(info, "cmdstat_publish", "calls"); ok {
			nc.PublishCalls = v
		}
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
		}
	}
	classic, err := cl.PubSubChannels(ctx, "*").Result()
	if err != nil {
		return fmt.Errorf("PUBSUB CHANNELS: %w", err)
	}
	if len(classic) > MaxChannels {
		classic, nc.Truncated = classic[:MaxChannels], true
	}
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
	if len(sharded) > MaxChannels {
		sharded, nc.Truncated = sharded[:MaxChannels], true
	}
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
