package codegen_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

// channelScopeYAML has hand-declared channels of two owners, one owner
// with channels only, and the socket.io preset's channels.
const channelScopeYAML = `version: 1
owners:
  chat: {contact: c@example.com}
  news: {contact: n@example.com}
  relay: {contact: r@example.com}
families:
  - {name: room, pattern: "v1:room:{id:int}", owner: chat, type: string, encoding: text, ttl: {max: 1h}}
channels:
  - {name: room-events, pattern: "v1:room-events:{{room:int}}", owner: chat, mode: sharded, encoding: json}
  - {name: headlines, pattern: "v1:headlines", owner: news, encoding: json}
  - {name: relay-all, pattern: "v1:relay:{topic:word}", owner: relay, mode: pattern, subscribe_glob: "v1:relay:*", encoding: text}
presets:
  - use: socket.io
    owner: chat
`

func TestChannelScope(t *testing.T) {
	reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte(channelScopeYAML))
	if err != nil {
		t.Fatal(err)
	}
	var preset []string
	for _, c := range reg.Channels {
		if c.Preset != "" {
			preset = append(preset, c.Name)
		}
	}
	if len(preset) == 0 {
		t.Fatal("the socket.io preset declares no channel")
	}
	hand := []string{"headlines", "relay-all", "room-events"}
	sorted := func(s ...string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	for _, c := range []struct {
		name     string
		scope    codegen.Scope
		channels []string
		families []string
	}{
		{"default: declared by hand", codegen.Scope{}, hand, []string{"room"}},
		{"include presets", codegen.Scope{IncludePresets: true}, sorted(append(hand, preset...)...), nil},
		{"a channel by name", codegen.Scope{Channels: []string{"headlines"}}, []string{"headlines"}, []string{}},
		{"a preset channel by name", codegen.Scope{Channels: []string{preset[0]}}, []string{preset[0]}, []string{}},
		{"naming a family leaves channels out", codegen.Scope{Families: []string{"room"}}, []string{}, []string{"room"}},
		{"an owner", codegen.Scope{Owners: []string{"chat"}}, []string{"room-events"}, []string{"room"}},
		{"an owner with presets", codegen.Scope{Owners: []string{"chat"}, IncludePresets: true}, sorted(append([]string{"room-events"}, preset...)...), nil},
		{"an owner of channels only", codegen.Scope{Owners: []string{"relay"}}, []string{"relay-all"}, []string{}},
		{"names add up", codegen.Scope{Families: []string{"room"}, Channels: []string{"headlines"}}, []string{"headlines"}, []string{"room"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := codegen.NewRequest(reg, c.scope)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, ch := range req.Channels {
				if ch.InScope {
					got = append(got, ch.Name)
				}
				if (ch.Preset != "") != slices.Contains(preset, ch.Name) {
					t.Errorf("channel %q: preset %q", ch.Name, ch.Preset)
				}
			}
			if !slices.Equal(got, c.channels) {
				t.Errorf("channels in scope %v, want %v", got, c.channels)
			}
			if c.families != nil {
				fams := []string{}
				for _, f := range req.Families {
					if f.InScope {
						fams = append(fams, f.Name)
					}
				}
				if !slices.Equal(fams, c.families) {
					t.Errorf("families in scope %v, want %v", fams, c.families)
				}
			}
		})
	}
	if _, err := codegen.NewRequest(reg, codegen.Scope{Channels: []string{"headline"}}); err == nil || !strings.Contains(err.Error(), `channel "headline" is not in the registry (did you mean "headlines"?)`) {
		t.Errorf("an unknown channel: %v", err)
	}

	// The digest covers the channels in scope: a channel's mode changes
	// the code generated for it, and so the digest; a channel out of
	// scope does not.
	digest := func(src string, scope codegen.Scope) string {
		t.Helper()
		reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		req, err := codegen.NewRequest(reg, scope)
		if err != nil {
			t.Fatal(err)
		}
		return req.Digest
	}
	classic := strings.Replace(channelScopeYAML, "mode: sharded, ", "", 1)
	if digest(channelScopeYAML, codegen.Scope{}) == digest(classic, codegen.Scope{}) {
		t.Error("the digest does not change with a channel's mode")
	}
	only := codegen.Scope{Channels: []string{"headlines"}}
	if digest(channelScopeYAML, only) != digest(classic, only) {
		t.Error("the digest changes with a channel out of scope")
	}
	noChannels := channelScopeYAML[:strings.Index(channelScopeYAML, "channels:")] + "presets: []\n"
	roomOnly := codegen.Scope{Families: []string{"room"}}
	if digest(channelScopeYAML, roomOnly) != digest(noChannels, roomOnly) {
		t.Error("the digest of families alone changes when the registry has channels out of scope")
	}
}
