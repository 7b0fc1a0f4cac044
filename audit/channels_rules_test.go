package audit

import (
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
	"github.com/keyreg/keyreg/source"
)

// TestChannelRulesFire fires every channel audit rule of the rules
// package, at its default severity, on one cluster's Pub/Sub state, and
// shows that keys.yaml rules: overrides a channel rule's severity.
func TestChannelRulesFire(t *testing.T) {
	const yaml = `version: 1
cluster: true
families: []
channels:
  - name: room
    pattern: "room:{{id:int}}"
    mode: sharded
  - name: news
    pattern: "news"
  - name: quiet
    pattern: "quiet"
  - name: old
    pattern: "old"
    deprecated: {since: 2026-01-01, replaced_by: news}
`
	load := func(extra string) *registry.Registry {
		reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(yaml + extra)}}, "keys.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return reg
	}
	nodes := []source.NodeChannels{
		{Node: "a:1", Primary: true, Slots: [][2]int{{0, 8000}},
			Classic: []source.ChannelCount{{Name: "room:{1}", Subscribers: 1}, {Name: "news", Subscribers: 2}, {Name: "old", Subscribers: 1}, {Name: "tmp:x", Subscribers: 1}}},
		{Node: "b:2", Primary: true, Slots: [][2]int{{8001, 16383}}},
	}
	rep := Channels(load(""), nodes)
	got := map[string]diag.Severity{}
	for _, f := range rep.Findings {
		got[f.Rule] = f.Severity
	}
	rs := rules.ChannelAuditRules()
	if len(rs) != 5 {
		t.Fatalf("%d channel audit rules, want 5", len(rs))
	}
	for _, r := range rs {
		sev, ok := got[r.ID]
		if !ok {
			t.Errorf("%s did not fire: %+v", r.ID, rep.Findings)
			continue
		}
		if sev != r.Severity {
			t.Errorf("%s at %v, want its default %v", r.ID, sev, r.Severity)
		}
		if r.Phase != rules.PhaseChannels || r.Unit != rules.UnitChannels || !r.Channel {
			t.Errorf("%s: phase %q unit %q channel %v", r.ID, r.Phase, r.Unit, r.Channel)
		}
	}
	for id := range got {
		if _, ok := rules.Lookup(id); !ok {
			t.Errorf("finding of %s, which the rules package does not list", id)
		}
	}

	over := Channels(load("rules: {channel-no-subscribers: error, channel-deprecated-live: off}\n"), nodes)
	for _, f := range over.Findings {
		switch f.Rule {
		case RuleChannelNoSubscribers:
			if f.Severity != diag.Error {
				t.Errorf("channel-no-subscribers overridden to error, got %v", f.Severity)
			}
		case RuleChannelDeprecatedLive:
			if f.Severity != diag.Off {
				t.Errorf("channel-deprecated-live overridden to off, got %v", f.Severity)
			}
		}
	}
}
