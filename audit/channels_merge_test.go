package audit

import (
	"strings"
	"testing"

	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// TestMergeChannelMessagesRecounted: a merged channel finding counts the
// live channels of every input, and its message says that count, not the
// first input's (the messages carry no ": N of M" for the key findings'
// rebuild to find).
func TestMergeChannelMessagesRecounted(t *testing.T) {
	reg := parseCaptureRegistry(t, `version: 1
families: []
channels:
  - name: room
    pattern: "v1:room:{id:int}"
    mode: sharded
  - name: old
    pattern: "v1:old:{id:int}"
    deprecated: {since: 2026-01-01}
  - name: quiet
    pattern: "v1:quiet"
`)
	node := func(n int) source.NodeChannels {
		nc := source.NodeChannels{Node: "a", Primary: true, PublishCalls: -1, BusPublishSent: -1, BusPublishReceived: -1}
		for i := range n {
			id := string(rune('0' + i))
			nc.Classic = append(nc.Classic,
				source.ChannelCount{Name: "legacy:" + id, Subscribers: 1},
				source.ChannelCount{Name: "v1:room:" + id, Subscribers: 1},
				source.ChannelCount{Name: "v1:old:" + id, Subscribers: 1})
		}
		return nc
	}
	var reps []*Report
	for i, n := range []int{2, 3} {
		r := &Report{Version: ReportVersion, Target: "redis://" + string(rune('a'+i))}
		AddChannels(r, reg, Channels(reg, []source.NodeChannels{node(n)}))
		reps = append(reps, r)
	}
	m, err := Merge(reps, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		RuleChannelUnregistered:   `5 live channels under "legacy:"`,
		RuleChannelModeMismatch:   "but 5 of its channels are subscribed in classic",
		RuleChannelDeprecatedLive: "but 5 of its channels still have subscribers",
		RuleChannelNoSubscribers:  "on any of the 2 nodes",
	}
	seen := map[string]bool{}
	for _, f := range m.Findings {
		w, ok := want[f.Rule]
		if !ok {
			continue
		}
		seen[f.Rule] = true
		if f.Rule != RuleChannelNoSubscribers && f.Count != 5 {
			t.Errorf("%s: count %d, want 5", f.Rule, f.Count)
		}
		if !strings.Contains(f.Message, w) {
			t.Errorf("%s: message %q, want it to say %q", f.Rule, f.Message, w)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("rules merged: %v, want %d", seen, len(want))
	}
}

// TestMergeRefusesOtherChannels: reports of registries that declare other
// channels do not merge, as reports of other families do not: a channel
// one registry declares would add its live channels to a declaration in
// one input and to the unregistered groups in the other.
func TestMergeRefusesOtherChannels(t *testing.T) {
	one := parseCaptureRegistry(t, "version: 1\nfamilies: []\nchannels:\n  - name: news\n    pattern: v1:news\n")
	two := parseCaptureRegistry(t, "version: 1\nfamilies: []\nchannels:\n  - name: news\n    pattern: v1:news\n  - name: room\n    pattern: \"v1:room:{id:int}\"\n")
	rep := func(reg *registry.Registry, target string) *Report {
		r := &Report{Version: ReportVersion, Target: target}
		AddChannels(r, reg, Channels(reg, []source.NodeChannels{{Node: "a", Primary: true, PublishCalls: -1, BusPublishSent: -1, BusPublishReceived: -1}}))
		return r
	}
	if _, err := Merge([]*Report{rep(one, "redis://a"), rep(two, "redis://b")}, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "other channels") {
		t.Errorf("merge of two channel sets: err %v", err)
	}
	noChannels := &Report{Version: ReportVersion, Target: "redis://c"}
	if _, err := Merge([]*Report{noChannels, rep(one, "redis://a"), rep(one, "redis://b")}, MergeOptions{}); err != nil {
		t.Errorf("the same channels, and a report without a channel audit: %v", err)
	}
}
