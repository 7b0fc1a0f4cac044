package audit

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// TestAddChannelsAndMerge puts a channel audit into a report, checks that
// its findings count like key findings (totals, diagnostics, baseline
// entries), that an unread node makes it partial, and that report merge
// sums it and keeps channel-no-subscribers only where no instance has a
// subscriber.
func TestAddChannelsAndMerge(t *testing.T) {
	reg := channelRegistry(t)
	nodes := []source.NodeChannels{{
		Node: "a:1", Primary: true,
		Classic: []source.ChannelCount{{Name: "chat:room:1", Subscribers: 2}, {Name: "tmp:x", Subscribers: 1}, {Name: "tmp:y", Subscribers: 4}},
	}}
	rep := &Report{Target: "redis://a:1", Findings: []*Finding{}}
	AddChannels(rep, reg, Channels(reg, nodes))
	c := rep.Channels
	if c == nil || c.Nodes != 1 || rep.Partial {
		t.Fatalf("channels %+v, partial %v", c, rep.Partial)
	}
	if len(c.Unregistered) != 1 || c.Unregistered[0].Prefix != "tmp:" || c.Unregistered[0].Channels != 2 || c.Unregistered[0].Subscribers != 5 {
		t.Errorf("unregistered %+v", c.Unregistered)
	}
	var unreg *Finding
	for _, f := range rep.Findings {
		if f.Rule == RuleChannelUnregistered {
			unreg = f
		}
	}
	if unreg == nil || unreg.Channel != "tmp:" || unreg.Count != 2 || unreg.Severity != diag.Error {
		t.Fatalf("findings %+v", rep.Findings)
	}
	if rep.Totals.Errors < 2 {
		t.Errorf("totals errors %d: the channel findings are not counted", rep.Totals.Errors)
	}
	found := false
	for _, d := range rep.Diagnostics() {
		if d.Rule == RuleChannelUnregistered && d.Severity == diag.Error && strings.Contains(d.Message, `"tmp:x"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no channel-unregistered diagnostic: %v", rep.Diagnostics())
	}
	entries := rep.Entries()
	fp := map[string]bool{}
	for _, e := range entries {
		if e.Channel != "" {
			fp[e.Rule+" "+e.Channel] = true
		}
	}
	if !fp[RuleChannelUnregistered+" tmp:"] {
		t.Errorf("baseline entries %+v lack the channel finding", entries)
	}
	// A baseline of this report hides its channel findings from a second run.
	cmp := Compare(rep, NewBaseline(rep))
	for _, f := range cmp.Filter(rep).Findings {
		if f.Channel != "" && f.Severity > diag.Off && !f.Suppressed {
			t.Errorf("finding %s %s survives its own baseline", f.Rule, f.Channel)
		}
	}

	// An unread node: partial, with the node named.
	bad := &Report{Findings: []*Finding{}}
	AddChannels(bad, reg, Channels(reg, []source.NodeChannels{nodes[0], {Node: "b:2", Err: errString("NOPERM")}}))
	if !bad.Partial || !strings.Contains(bad.PartialReason, "b:2") || len(bad.Channels.NotChecked) != 1 {
		t.Errorf("unread node: partial %v %q, not checked %v", bad.Partial, bad.PartialReason, bad.Channels.NotChecked)
	}

	// Merge: a second instance where the classic chat room is unused.
	other := &Report{Target: "redis://b:2", Findings: []*Finding{}}
	AddChannels(other, reg, Channels(reg, []source.NodeChannels{{Node: "b:2", Primary: true, Classic: []source.ChannelCount{{Name: "tmp:z", Subscribers: 1}}}}))
	m, err := Merge([]*Report{rep, other}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Channels == nil || m.Channels.Nodes != 2 || m.Channels.Unregistered[0].Channels != 3 || m.Channels.Unregistered[0].Subscribers != 6 {
		t.Fatalf("merged channels %+v", m.Channels)
	}
	for _, f := range m.Findings {
		if f.Rule == RuleChannelUnregistered && f.Count != 3 {
			t.Errorf("merged channel-unregistered count %d, want 3", f.Count)
		}
		if f.Rule == RuleChannelNoSubscribers && f.Channel == "chat" {
			t.Errorf("merged report says chat has no subscriber, but instance 1 has two")
		}
	}
}

func channelRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(`version: 1
families: []
channels:
  - name: chat
    pattern: "chat:room:{id:int}"
  - name: quiet
    pattern: "quiet"
`)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

type errString string

func (e errString) Error() string { return string(e) }
