package registry

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestPresetChannels checks that presets expand their channels: names,
// modes, globs and the preset's provenance, with parameters substituted
// (escaped as a glob in subscribe_glob).
func TestPresetChannels(t *testing.T) {
	type want struct{ name, pattern, mode, glob string }
	cases := []struct {
		preset string
		with   map[string]string
		want   []want
	}{
		{"celery", nil, []want{
			{"celery-events", "/0.celeryev/{event:word}", ModePattern, "/0.celeryev/*"},
			{"celery-pidbox", "/0.celery.pidbox", ModePattern, "/0.celery.pidbox"},
		}},
		{"celery", map[string]string{"broker_db": "3", "global_keyprefix": "app*:"}, []want{
			{"celery-events", "app*:/3.celeryev/{event:word}", ModePattern, `app\*:/3.celeryev/*`},
			{"celery-pidbox", "app*:/3.celery.pidbox", ModePattern, `app\*:/3.celery.pidbox`},
		}},
		{"socket.io", nil, []want{
			{"socket-io-broadcast", "socket.io#/#", ModePattern, "socket.io#/#*"},
			{"socket-io-room", "socket.io#/#{room:any}#", ModePattern, "socket.io#/#*"},
			{"socket-io-request", "socket.io-request#/#", ModeClassic, ""},
			{"socket-io-response", "socket.io-response#/#", ModeClassic, ""},
			{"socket-io-specific-response", "socket.io-response#/#{uid:word}#", ModeClassic, ""},
		}},
	}
	for _, tc := range cases {
		reg, err := ExpandPreset(tc.preset, "team", tc.with)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.preset, tc.with, err)
		}
		var got []want
		for _, c := range reg.Channels {
			got = append(got, want{c.Name, c.Pattern.Source, c.Mode, c.SubscribeGlob})
			if c.Preset != tc.preset || c.Owner != "team" || c.ManagedBy == "" || c.Description == "" || c.Encoding == "" {
				t.Errorf("%s: channel %s: preset %q, owner %q, managed_by %q, description %q, encoding %q", tc.preset, c.Name, c.Preset, c.Owner, c.ManagedBy, c.Description, c.Encoding)
			}
			if c.Glob != nil {
				if ex, missed := c.Glob.Missing(c.Pattern, ':'); missed {
					t.Errorf("%s: glob %q misses %q", c.Name, c.SubscribeGlob, ex)
				}
			}
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%s %v: channels %v, want %v", tc.preset, tc.with, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s %v: channel %d = %v, want %v", tc.preset, tc.with, i, got[i], tc.want[i])
			}
		}
	}
}

// TestPresetChannelsPerValue checks that each: iterates channels as it
// does families: one channel per namespace, named after the value.
func TestPresetChannelsPerValue(t *testing.T) {
	reg, err := ExpandPreset("socket.io", "team", map[string]string{"namespaces": `["/", "/chat"]`})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range reg.Channels {
		names = append(names, c.Name+"="+c.Pattern.Source)
	}
	got := strings.Join(names, " ")
	for _, w := range []string{"socket-io-broadcast=socket.io#/#", "socket-io-broadcast-chat=socket.io#/chat#", "socket-io-room-chat=socket.io#/chat#{room:any}#"} {
		if !strings.Contains(got, w) {
			t.Errorf("channels %s lack %s", got, w)
		}
	}
}

// TestPresetChannelOverride checks that a preset entry's families:
// overrides reach its channels too, and that a hand-declared channel with
// an expanded channel's name is a duplicate.
func TestPresetChannelOverride(t *testing.T) {
	src := `version: 1
owners: {team: {contact: team}}
families: []
presets:
  - use: celery
    owner: team
    families:
      celery-pidbox: {description: "our remote control"}
`
	reg, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, c := range reg.Channels {
		if c.Name == "celery-pidbox" {
			found = c.Description == "our remote control"
		}
	}
	if !found {
		t.Error("the override of celery-pidbox did not reach the channel")
	}
	_, err = Parse(fstest.MapFS{}, "keys.yaml", []byte(src+"channels:\n  - name: celery-events\n    pattern: \"x\"\n"))
	if err == nil || !strings.Contains(err.Error(), "channel name \"celery-events\" is already used") {
		t.Errorf("a hand-declared celery-events: err = %v", err)
	}
}
