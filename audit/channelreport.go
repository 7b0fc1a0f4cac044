package audit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// ChannelsReport is the channel audit's section of a Report: what the
// PUBSUB commands of every node said, against the registry's channels:.
// Its findings are in Report.Findings, with Finding.Channel set.
type ChannelsReport struct {
	// Nodes is the nodes whose Pub/Sub state was asked for.
	Nodes int `json:"nodes"`
	// PatternSubscriptions sums PUBSUB NUMPAT over the nodes.
	PatternSubscriptions int64 `json:"pattern_subscriptions"`
	// Declared has one entry per channel declaration, in registry order.
	Declared []*ChannelDeclReport `json:"declared"`
	// Unregistered groups the live channels of no declaration by prefix.
	Unregistered []*ChannelGroup `json:"unregistered"`
	// NotChecked lists the nodes whose PUBSUB could not be read, with why;
	// the report is then partial.
	NotChecked []string `json:"not_checked,omitempty"`
	// Misplaced names masters holding sharded subscribers of a slot they
	// do not serve.
	Misplaced []string `json:"misplaced,omitempty"`
	// FanOut is the cluster bus cost of classic Pub/Sub over the audit;
	// nil in a report that did not consider it.
	FanOut *FanOutReport `json:"fan_out,omitempty"`
}

// ChannelDeclReport is one channel declaration as the nodes see it.
type ChannelDeclReport struct {
	Name     string   `json:"name"`
	Mode     string   `json:"mode"` // classic, sharded or pattern
	Owner    string   `json:"owner"`
	Pos      diag.Pos `json:"-"`
	Position string   `json:"position"`
	// Live counts the live channels (classic and sharded) it names.
	Live int `json:"live"`
	// Subscribers sums their subscribers over every node.
	Subscribers int64 `json:"subscribers"`
	// Nodes is the most nodes any one of its live channels is subscribed on.
	Nodes int `json:"nodes"`
}

// ChannelGroup is a set of live channels of no declaration sharing a prefix.
type ChannelGroup struct {
	Prefix string `json:"prefix"`
	// PrefixBase64 is set in a json report only, when Prefix is not valid
	// UTF-8 (which prefix then shows with U+FFFD): its exact bytes.
	PrefixBase64 string   `json:"prefix_base64,omitempty"`
	Channels     int      `json:"channels"`
	Subscribers  int64    `json:"subscribers"`
	Examples     []string `json:"examples"` // up to maxChannelExamples names
}

// runChannels reads the nodes' Pub/Sub state and adds the channel audit
// to rep. A node that could not be read makes the run fail (partial),
// never a silent clean.
func runChannels(ctx context.Context, rep *Report, reg *registry.Registry, read func(context.Context) ([]source.NodeChannels, error), fan *fanOutPlan) error {
	at := time.Now()
	nodes, err := read(ctx)
	if err != nil {
		rep.Channels = &ChannelsReport{Declared: []*ChannelDeclReport{}, Unregistered: []*ChannelGroup{}, NotChecked: []string{clip(err.Error(), maxDetailBytes, true)}}
		return fmt.Errorf("channel audit: %w", err)
	}
	AddChannels(rep, reg, Channels(reg, nodes))
	SetFanOut(rep, fanOut(ctx, fan, nodes, at))
	if n := len(rep.Channels.NotChecked); n > 0 {
		return fmt.Errorf("channel audit: %d of %d nodes not read: %s", n, rep.Channels.Nodes, rep.Channels.NotChecked[0])
	}
	return nil
}

// AddChannels puts the channel audit cr into rep: its section, and its
// findings as Findings (with Channel set, positioned on the declaration),
// so that severities, totals, exit codes and baselines count them as they
// count the key findings. Unread nodes make rep partial.
func AddChannels(rep *Report, reg *registry.Registry, cr *ChannelReport) {
	sec := &ChannelsReport{
		Nodes:                cr.Nodes,
		PatternSubscriptions: cr.NumPat,
		Declared:             []*ChannelDeclReport{},
		Unregistered:         []*ChannelGroup{},
		Misplaced:            cr.Misplaced,
	}
	for _, p := range cr.Partial {
		sec.NotChecked = append(sec.NotChecked, clip(p, maxDetailBytes, true))
	}
	decl := map[string]*ChannelDeclReport{}
	for _, c := range reg.Channels {
		d := &ChannelDeclReport{Name: c.Name, Mode: c.Mode, Owner: c.Owner, Pos: c.Pos, Position: c.Pos.String()}
		sec.Declared = append(sec.Declared, d)
		decl[c.Name] = d
	}
	groups := map[string]*ChannelGroup{}
	for _, lc := range cr.Channels {
		if d := decl[lc.Channel]; lc.Channel != "" && d != nil {
			d.Live++
			d.Subscribers += lc.Subscribers
			d.Nodes = max(d.Nodes, lc.Nodes)
			continue
		}
		p := channelPrefix(lc.Name, reg.Separator)
		if groups[p] == nil && len(groups) >= maxChannelGroups {
			p = OtherChannels
		}
		g := groups[p]
		if g == nil {
			g = &ChannelGroup{Prefix: strings.Clone(p), Examples: []string{}}
			groups[p] = g
			sec.Unregistered = append(sec.Unregistered, g)
		}
		g.Channels++
		g.Subscribers += lc.Subscribers
		if len(g.Examples) < maxChannelExamples {
			g.Examples = append(g.Examples, shortKey(lc.Name))
		}
	}
	slices.SortFunc(sec.Unregistered, func(a, b *ChannelGroup) int {
		if a.Channels != b.Channels {
			return b.Channels - a.Channels
		}
		return strings.Compare(a.Prefix, b.Prefix)
	})
	for _, cf := range cr.Findings {
		ch := strings.Clone(cf.Channel) // a prefix group's is clipped already (channelPrefix)
		if cf.Rule != RuleChannelUnregistered {
			ch = shortPrefix(ch)
		}
		f := &Finding{Rule: cf.Rule, Severity: cf.Severity, Channel: ch, Count: int64(cf.Count), Message: cf.Message, Examples: []Example{}}
		if c, ok := reg.Channel(cf.Channel); ok && cf.Rule != RuleChannelUnregistered {
			f.Pos, f.Position = c.Pos, c.Pos.String()
			if ig, ok := c.Ignored(cf.Rule); ok {
				f.Suppressed, f.Reason = true, ig.Reason
			}
		} else {
			f.Pos, f.Position = reg.Pos, reg.Pos.String()
		}
		for _, e := range cf.Examples {
			f.Examples = append(f.Examples, Example{Key: shortKey(e)})
		}
		rep.Findings = append(rep.Findings, f)
	}
	rep.Channels = sec
	if len(cr.Skipped) > 0 {
		rep.Scan.Notes = append(rep.Scan.Notes, clip(fmt.Sprintf("channels: %d cluster %s that CLUSTER NODES flags as failing not read: %s; subscribers connected to them, if any, are not counted",
			len(cr.Skipped), diag.Plural(int64(len(cr.Skipped)), "node"), strings.Join(cr.Skipped, ", ")), maxDetailBytes, true))
	}
	if n := cr.UnreadReplicas; n > 0 {
		rep.Scan.Notes = append(rep.Scan.Notes, fmt.Sprintf("channels: %d %s of the primary not read: subscribers connected to a replica are not counted, so channel-no-subscribers and channel-unregistered see the primary's subscribers only", n, diag.Plural(int64(n), "replica")))
	}
	if len(sec.NotChecked) > 0 {
		rep.Partial = true
		reason := fmt.Sprintf("channel audit: %d of %d nodes not read (%s)", len(sec.NotChecked), sec.Nodes, sec.NotChecked[0])
		rep.PartialReason = clip(strings.TrimPrefix(rep.PartialReason+"; "+reason, "; "), maxDetailBytes, true)
	}
	settleFindings(rep)
}

// SetFanOut puts the fan-out estimate fr into rep's channel section, and
// says it on every channel-classic-on-cluster finding: the estimate is of
// the whole cluster's classic PUBLISH traffic, which Redis does not count
// per channel.
func SetFanOut(rep *Report, fr *FanOutReport) {
	if rep.Channels == nil || fr == nil {
		return
	}
	rep.Channels.FanOut = fr
	for _, f := range rep.Findings {
		if f.Rule == RuleChannelClassicOnCluster && f.Channel != "" {
			f.Message = clip(f.Message+fanOutMessage(fr), maxDetailBytes, true)
		}
	}
}
