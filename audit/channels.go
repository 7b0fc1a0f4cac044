package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
	"github.com/keyreg/keyreg/source"
)

// The channel audit's rules (issue 27). They judge the Pub/Sub state every
// node reports against the registry's channels:.
const (
	RuleChannelUnregistered     = "channel-unregistered"       // a live channel no declaration names, grouped by prefix
	RuleChannelModeMismatch     = "channel-mode-mismatch"      // declared sharded but live in classic Pub/Sub, or the other way
	RuleChannelNoSubscribers    = "channel-no-subscribers"     // a declared, non-deprecated channel nobody subscribes to
	RuleChannelClassicOnCluster = "channel-classic-on-cluster" // a classic channel subscribed on a cluster
	RuleChannelDeprecatedLive   = "channel-deprecated-live"    // a deprecated channel still has subscribers
)

// maxChannelExamples bounds the example names per finding.
const maxChannelExamples = 5

// maxChannelGroups bounds the prefix groups of unregistered channels (a
// name without a separator is a group of its own): the live channels past
// it are one group, OtherChannels, in the findings and in the report.
const maxChannelGroups = 1000

// OtherChannels is the prefix group of the unregistered channels whose
// own group did not fit under the cap.
const OtherChannels = "*"

// LiveChannel is one channel as the whole deployment sees it: subscribers
// summed over every node it is subscribed on.
type LiveChannel struct {
	Name        string
	Sharded     bool   // seen in SHARDCHANNELS (else CHANNELS)
	Channel     string // the declaration it matches, or ""
	Subscribers int64
	Nodes       int
}

// ChannelFinding is one channel rule's finding on one declaration, or on
// one prefix group of unregistered channels.
type ChannelFinding struct {
	Rule     string
	Severity diag.Severity
	Channel  string // the declaration, or the prefix group for channel-unregistered
	Count    int    // live channels it is about
	Examples []string
	Message  string
}

// ChannelReport is the channel audit of one run.
type ChannelReport struct {
	Nodes    int
	NumPat   int64 // pattern subscriptions, summed over nodes
	Channels []LiveChannel
	Findings []ChannelFinding
	// Partial lists the nodes that could not be read, with why: the
	// checks are then incomplete (a refused PUBSUB needs +pubsub).
	Partial []string
	// Skipped names the cluster nodes CLUSTER NODES flags as failing,
	// which were not read (a note, not partial: a failed node after a
	// failover stays listed until it is forgotten), with their state.
	Skipped []string
	// UnreadReplicas counts the replicas of standalone or Sentinel
	// primaries, which the read did not cover (a note, not partial).
	UnreadReplicas int
	// Misplaced says which masters hold sharded subscribers of a channel
	// whose slot they do not serve (after a resharding, say): a message
	// SPUBLISHed to the slot's owner never reaches them.
	Misplaced []string
}

// Channels aggregates the PUBSUB state of every node and applies the
// channel rules. Classic and sharded channels are separate namespaces in
// Redis too, so a name seen in both is two live channels.
func Channels(reg *registry.Registry, nodes []source.NodeChannels) *ChannelReport {
	rep := &ChannelReport{}
	cluster := false
	type k struct {
		name    string
		sharded bool
	}
	live := map[k]*LiveChannel{}
	add := func(c source.ChannelCount, sharded bool) {
		lc := live[k{c.Name, sharded}]
		if lc == nil {
			lc = &LiveChannel{Name: c.Name, Sharded: sharded}
			live[k{c.Name, sharded}] = lc
		}
		lc.Subscribers += c.Subscribers
		lc.Nodes++
	}
	for _, n := range nodes {
		if n.Skipped != "" {
			if len(rep.Skipped) < maxChannelExamples*10 {
				rep.Skipped = append(rep.Skipped, shortKey(n.Node)+" ("+shortKey(n.Skipped)+")")
			}
			continue
		}
		rep.Nodes++
		if len(n.Slots) > 0 {
			cluster = true
		}
		if n.Err != nil {
			rep.Partial = append(rep.Partial, n.Node+": "+n.Err.Error())
			continue
		}
		if n.Truncated {
			rep.Partial = append(rep.Partial, fmt.Sprintf("%s: more than the channels read", n.Node))
		}
		rep.NumPat += n.NumPat
		rep.UnreadReplicas += n.UnreadReplicas
		for _, c := range n.Classic {
			add(c, false)
		}
		for _, c := range n.Sharded {
			add(c, true)
			if n.Primary && len(n.Slots) > 0 && !inSlots(c.Slot, n.Slots) && len(rep.Misplaced) < maxChannelExamples*10 {
				rep.Misplaced = append(rep.Misplaced, fmt.Sprintf("%s: %d sharded subscribers of %q, whose slot %d it does not serve", shortKey(n.Node), c.Subscribers, shortKey(c.Name), c.Slot))
			}
		}
	}
	m := reg.ChannelMatcher()
	for _, lc := range live {
		if f := m.Match(lc.Name); f != nil {
			lc.Channel = f.Name
		}
		rep.Channels = append(rep.Channels, *lc)
	}
	sort.Slice(rep.Channels, func(i, j int) bool {
		a, b := rep.Channels[i], rep.Channels[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return !a.Sharded && b.Sharded
	})

	// A group's message is written once, from its final count: a rule
	// may fire on each of 100,000 live channels.
	type group struct {
		f   *ChannelFinding
		msg func(n int) string
	}
	groups := map[string]*group{}
	var order []string
	finding := func(rule, key string, sev diag.Severity, msg func(n int) string, example string) {
		g := groups[rule+"\x00"+key]
		if g == nil {
			g = &group{f: &ChannelFinding{Rule: rule, Severity: channelSeverity(reg, rule, sev), Channel: key}, msg: msg}
			groups[rule+"\x00"+key] = g
			order = append(order, rule+"\x00"+key)
		}
		g.f.Count++
		if len(g.f.Examples) < maxChannelExamples {
			g.f.Examples = append(g.f.Examples, example)
		}
	}
	subscribed := map[string]bool{}
	unregistered := 0   // prefix groups
	overflowed := false // a channel went to OtherChannels by the cap
	for _, lc := range rep.Channels {
		name := lc.Name
		if lc.Channel == "" {
			p := channelPrefix(name, reg.Separator)
			if _, ok := groups[RuleChannelUnregistered+"\x00"+p]; !ok && unregistered >= maxChannelGroups {
				p, overflowed = OtherChannels, true
			}
			if _, ok := groups[RuleChannelUnregistered+"\x00"+p]; !ok {
				unregistered++
			}
			msg := func(n int) string {
				return fmt.Sprintf("%d live channels under %q match no channel in the registry", n, p)
			}
			if p == OtherChannels {
				// The cap's group, or a live channel named "*": decided
				// once every channel is counted.
				msg = func(n int) string {
					if !overflowed {
						return fmt.Sprintf("%d live channels under %q match no channel in the registry", n, p)
					}
					return fmt.Sprintf("%d more live channels, under more prefixes than the %d the report keeps (or named %q), match no channel in the registry", n, maxChannelGroups, OtherChannels)
				}
			}
			finding(RuleChannelUnregistered, p, diag.Error, msg, name)
			continue
		}
		c, _ := reg.Channel(lc.Channel)
		if lc.Subscribers > 0 {
			subscribed[c.Name] = true
		}
		switch {
		case c.Mode == registry.ModeSharded && !lc.Sharded:
			finding(RuleChannelModeMismatch, c.Name, diag.Error, func(n int) string {
				return fmt.Sprintf("channel %q is declared sharded, but %d of its channels are subscribed in classic Pub/Sub (SUBSCRIBE)", c.Name, n)
			}, name)
		case c.Mode != registry.ModeSharded && lc.Sharded:
			finding(RuleChannelModeMismatch, c.Name, diag.Error, func(n int) string {
				return fmt.Sprintf("channel %q is declared %s, but %d of its channels are subscribed in sharded Pub/Sub (SSUBSCRIBE)", c.Name, c.Mode, n)
			}, name)
		case cluster && !lc.Sharded:
			finding(RuleChannelClassicOnCluster, c.Name, diag.Warn, func(n int) string {
				return fmt.Sprintf("channel %q: %d classic channels on a cluster of %d nodes: every PUBLISH to them is sent to every node over the cluster bus", c.Name, n, rep.Nodes)
			}, name)
		}
		if c.Deprecated != nil && lc.Subscribers > 0 {
			finding(RuleChannelDeprecatedLive, c.Name, diag.Warn, func(n int) string {
				msg := fmt.Sprintf("channel %q is deprecated, but %d of its channels still have subscribers", c.Name, n)
				if r := c.Deprecated.ReplacedBy; r != "" {
					msg += "; move them to " + r
				}
				return msg
			}, name)
		}
	}
	if len(rep.Partial) == 0 {
		for _, c := range reg.Channels {
			if c.Deprecated != nil || subscribed[c.Name] {
				continue
			}
			if c.Mode == registry.ModePattern && rep.NumPat > 0 {
				continue // its PSUBSCRIBE may be one of the patterns NUMPAT counts
			}
			finding(RuleChannelNoSubscribers, c.Name, diag.Info, func(int) string {
				return fmt.Sprintf("channel %q has no subscriber on any of the %d nodes", c.Name, rep.Nodes)
			}, c.Pattern.Source)
		}
	}
	for _, key := range order {
		f := groups[key].f
		f.Message = groups[key].msg(f.Count)
		if _, ok := reg.Channel(f.Channel); ok && f.Rule != RuleChannelUnregistered {
			c, _ := reg.Channel(f.Channel)
			if ig, ok := c.Ignored(f.Rule); ok {
				f.Message += " (ignored: " + ig.Reason + ")"
				f.Severity = diag.Off
			}
		}
		rep.Findings = append(rep.Findings, *f)
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Channel < b.Channel
	})
	return rep
}

// channelCountPhrases are the phrases of the channel findings' messages
// (Channels) that state a finding's count, and channelNodesPhrase the one
// that states the nodes read: a merge rewrites them with its totals
// (recountChannelMessage). TestMergeChannelMessagesRecounted keeps them
// in step with the messages.
var channelCountPhrases = []string{"%d live channels under ", "%d more live channels", "but %d of its channels", ": %d classic channels on a cluster"}

const channelNodesPhrase = "on any of the %d nodes"

// recountChannelMessage replaces the count from in a channel finding's
// message by to, where one of the phrases states it.
func recountChannelMessage(msg string, phrases []string, from, to int64) string {
	if from == to {
		return msg
	}
	for _, ph := range phrases {
		old := fmt.Sprintf(ph, from)
		if i := strings.Index(msg, old); i >= 0 {
			return msg[:i] + fmt.Sprintf(ph, to) + msg[i+len(old):]
		}
	}
	return msg
}

// channelSeverity is the severity of a channel rule after keys.yaml
// rules: overrides; sev, the rules package's default, when the rule is
// unknown to it.
func channelSeverity(reg *registry.Registry, id string, sev diag.Severity) diag.Severity {
	r, ok := rules.Lookup(id)
	if !ok {
		return sev
	}
	out, _, _ := rules.Effective(reg, r, "", r.Severity)
	return out
}

// channelPrefix is the group of an unregistered channel: its name up to
// and including the first separator, or the whole name, clipped as a
// report keeps a prefix (shortPrefix). Channels whose prefixes agree on
// their first MaxKeyBytes bytes share a group, as unregistered keys do, so
// that no two groups print the same prefix.
func channelPrefix(name string, sep byte) string {
	p := name
	if i := strings.IndexByte(name, sep); i >= 0 {
		p = name[:i+1]
	}
	if len(p) > MaxKeyBytes {
		return shortPrefix(p)
	}
	return p
}

// FanOut is the cluster bus cost of classic Pub/Sub over an interval,
// from two readings of every node.
type FanOut struct {
	Seconds float64
	// Published is the PUBLISH commands the nodes ran (cmdstat_publish),
	// and BusSent the messages they copied to other nodes over the
	// cluster bus (cluster_stats_messages_publish_sent).
	Published, BusSent int64
	// PerSecond are both per second; Nodes is the nodes read. A classic
	// message published on one node is sent to each of the others, so
	// BusSent is about Published × (Nodes − 1).
	PublishedPerSecond, BusSentPerSecond float64
	Nodes                                int
	// Known is false when a node did not report its counters.
	Known bool
}

// EstimateFanOut compares two readings (before, after) of the same nodes
// taken seconds apart.
func EstimateFanOut(before, after []source.NodeChannels, seconds float64) FanOut {
	fo := FanOut{Seconds: seconds, Known: true}
	prev := map[string]source.NodeChannels{}
	for _, n := range before {
		prev[n.Node] = n
	}
	for _, n := range after {
		if n.Skipped != "" {
			continue // not read, in neither reading: no node
		}
		fo.Nodes++
		p, ok := prev[n.Node]
		if !ok || n.Err != nil || p.Err != nil || n.PublishCalls < 0 || p.PublishCalls < 0 || n.BusPublishSent < 0 || p.BusPublishSent < 0 {
			fo.Known = false
			continue
		}
		// A counter that went down was reset (CONFIG RESETSTAT, a
		// restart): count from zero.
		fo.Published += max(n.PublishCalls-p.PublishCalls, 0)
		if n.PublishCalls < p.PublishCalls {
			fo.Published += n.PublishCalls
		}
		fo.BusSent += max(n.BusPublishSent-p.BusPublishSent, 0)
		if n.BusPublishSent < p.BusPublishSent {
			fo.BusSent += n.BusPublishSent
		}
	}
	fo.Known = fo.Known && fo.Nodes > 0
	if seconds > 0 {
		fo.PublishedPerSecond = float64(fo.Published) / seconds
		fo.BusSentPerSecond = float64(fo.BusSent) / seconds
	}
	return fo
}

func inSlots(slot int, ranges [][2]int) bool {
	for _, r := range ranges {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}
