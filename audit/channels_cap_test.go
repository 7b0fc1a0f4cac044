package audit

import (
	"strconv"
	"testing"

	"github.com/keyreg/keyreg/source"
)

// TestUnregisteredChannelGroupsCapped: names without a separator are a
// prefix group each, so 1,500 of them would be 1,500 findings. Past
// maxChannelGroups they are one group, OtherChannels, in the findings, the
// report and a merge, and every channel is still counted.
func TestUnregisteredChannelGroupsCapped(t *testing.T) {
	const n = maxChannelGroups + 500
	node := source.NodeChannels{Node: "n", Primary: true, PublishCalls: -1, BusPublishSent: -1, BusPublishReceived: -1}
	for i := range n {
		node.Classic = append(node.Classic, source.ChannelCount{Name: "ch" + strconv.Itoa(i), Subscribers: 2})
	}
	reg := parseCaptureRegistry(t, "version: 1\nowners: {team: {contact: team}}\nfamilies: []\n")
	cr := Channels(reg, []source.NodeChannels{node})
	groups, channels, other := 0, 0, 0
	for _, f := range cr.Findings {
		if f.Rule != RuleChannelUnregistered {
			continue
		}
		groups++
		channels += f.Count
		if f.Channel == OtherChannels {
			other = f.Count
		}
	}
	if groups != maxChannelGroups+1 || channels != n || other != n-maxChannelGroups {
		t.Errorf("findings: %d groups, %d channels, %d in %q; want %d, %d, %d", groups, channels, other, OtherChannels, maxChannelGroups+1, n, n-maxChannelGroups)
	}

	check := func(what string, rep *Report, want int) {
		t.Helper()
		total, subs := 0, int64(0)
		for _, g := range rep.Channels.Unregistered {
			total += g.Channels
			subs += g.Subscribers
		}
		// The cap is on the named groups; OtherChannels comes on top, or
		// is one of them when it sorts among the largest.
		if g := len(rep.Channels.Unregistered); g < maxChannelGroups || g > maxChannelGroups+1 || total != want || subs != 2*int64(want) {
			t.Errorf("%s: %d groups, %d channels, %d subscribers; want %d or %d, %d, %d", what, g, total, subs, maxChannelGroups, maxChannelGroups+1, want, 2*want)
		}
	}
	rep := &Report{Version: ReportVersion}
	AddChannels(rep, reg, cr)
	check("report", rep, n)

	// Two targets' reports merge without dropping a channel.
	m := NewMerger(MergeOptions{MaxGroups: maxChannelGroups})
	for _, target := range []string{"redis://a", "redis://b"} {
		r := &Report{Version: ReportVersion, Target: target}
		AddChannels(r, reg, Channels(reg, []source.NodeChannels{node}))
		if err := m.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := m.Report()
	if err != nil {
		t.Fatal(err)
	}
	check("merge", merged, 2*n)
}
