package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/diag"
)

const channelsYAML = `version: 1
cluster: true
defaults:
  ttl: 24h
owners:
  chat: {contact: chat@example.com}
families:
  - name: room
    pattern: "v1:chat:room:{{room_id:int}}"
    ttl: 1h
channels:
  - name: room-events
    description: Messages of one chat room
    pattern: "v1:chat:room:{{room_id:int}}"
    owner: chat
    mode: sharded
    encoding: json
    schema: {type: object}
    with: [room-typing]
  - name: room-typing
    pattern: "v1:chat:typing:{{room_id:int}}"
    mode: sharded
  - name: presence
    pattern: "v1:presence:{user_id:int}"
    mode: pattern
    subscribe_glob: "v1:presence:*"
  - name: broadcast
    pattern: "v1:broadcast"
    deprecated: {since: 2026-01-01, replaced_by: room-events, reason: "fan-out on the cluster bus"}
    ignore: [{rule: channel-classic-cluster, reason: "being migrated"}]
`

func TestLoadChannels(t *testing.T) {
	r, err := load(t, channelsYAML)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Cluster {
		t.Error("cluster: true not read")
	}
	if len(r.Channels) != 4 || len(r.Families) != 1 {
		t.Fatalf("%d channels, %d families; want 4 and 1", len(r.Channels), len(r.Families))
	}
	ev, ok := r.Channel("room-events")
	if !ok || ev.Mode != ModeSharded || ev.Owner != "chat" || ev.Encoding != "json" || ev.Schema == nil || ev.Schema.Compiled == nil {
		t.Fatalf("room-events = %+v", ev)
	}
	if len(ev.With) != 1 || ev.With[0].Name != "room-typing" || ev.With[0].Pos.Line != 19 {
		t.Errorf("with = %+v", ev.With)
	}
	if ev.TTL.Kind != TTLUnset {
		t.Errorf("a channel took the default TTL: %v", ev.TTL)
	}
	p, _ := r.Channel("presence")
	if p.Glob == nil || !p.Glob.Match("v1:presence:42") || p.Glob.Match("v1:chat:room:{1}") {
		t.Errorf("presence glob = %+v", p.Glob)
	}
	b, _ := r.Channel("broadcast")
	if b.Mode != ModeClassic || b.Deprecated == nil || b.Deprecated.ReplacedBy != "room-events" {
		t.Errorf("broadcast = %+v", b)
	}
	if _, ok := b.Ignored("channel-classic-cluster"); !ok {
		t.Error("ignore not read")
	}
	if f := r.ChannelMatcher().Match("v1:chat:typing:{9}"); f == nil || f.Name != "room-typing" || f.Index != 1 {
		t.Errorf("ChannelMatcher matched %v", f)
	}
	if f := r.ChannelMatcher().Match("v1:chat:nothing"); f != nil {
		t.Errorf("ChannelMatcher matched %v", f.Name)
	}
	if _, ok := r.Family("room-events"); ok {
		t.Error("a channel is listed as a family")
	}
}

func TestLoadChannelErrors(t *testing.T) {
	src := `version: 1
families: []
channels:
  - name: a
    pattern: "c:{x"
  - name: a
    pattern: "c:y"
    mode: pattern
  - name: b
    pattern: "c:z"
    subscribe_glob: "c:*"
    with: [a]
  - name: c
    pattern: "c:w"
    mode: pattern
    subscribe_glob: "c:[w"
  - name: d
    pattern: "c:v"
    mode: broadcast
    colour: red
`
	_, err := load(t, src)
	var le *diag.ListError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want diagnostics", err)
	}
	var got []string
	for _, d := range le.List {
		got = append(got, d.Pos.String()+" "+d.Rule+" "+d.Message)
	}
	want := []string{
		`keys.yaml:5:17 pattern-invalid`,
		`keys.yaml:6:11 duplicate-name channel name "a" is already used at line 4`,
		`keys.yaml:8:11 schema-invalid channels: channel "a" has mode: pattern but no subscribe_glob`,
		`keys.yaml:11:21 schema-invalid channels: subscribe_glob applies to mode: pattern only`,
		`keys.yaml:12:11 schema-invalid channels: with: applies to mode: sharded only`,
		`keys.yaml:16:21 schema-invalid channels: subscribe_glob "c:[w": column 3: "[" has no closing "]"`,
		`keys.yaml:19:11 schema-invalid channels[4].mode`,
		`keys.yaml:20:5 schema-invalid channels[4]: unknown field "colour"`,
	}
	all := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("missing %q in:\n%s", w, all)
		}
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		glob string
		yes  []string
		no   []string
	}{
		{"a*", []string{"a", "abc"}, []string{"b", ""}},
		{"a?c", []string{"abc", "a:c"}, []string{"ac", "abbc"}},
		{"[a-c]x", []string{"ax", "cx"}, []string{"dx", "x"}},
		{"[^a]x", []string{"bx"}, []string{"ax"}},
		{`a\*`, []string{"a*"}, []string{"ab"}},
		{"*:*:end", []string{"a:b:end", "::end", "a:b:c:end"}, []string{"a:end"}},
	} {
		g, err := ParseGlob(tc.glob)
		if err != nil {
			t.Fatalf("%q: %v", tc.glob, err)
		}
		for _, s := range tc.yes {
			if !g.Match(s) {
				t.Errorf("%q does not match %q", tc.glob, s)
			}
		}
		for _, s := range tc.no {
			if g.Match(s) {
				t.Errorf("%q matches %q", tc.glob, s)
			}
		}
	}
	for _, bad := range []string{"", "a\\", "[ab", strings.Repeat("x", MaxGlobLen+1)} {
		if _, err := ParseGlob(bad); err == nil {
			t.Errorf("ParseGlob(%q) accepted", bad)
		}
	}
	// Many stars and classes: bounded, refused or compiled, never slow.
	if g, err := ParseGlob(strings.Repeat("*[ab]", 200)); err == nil && len(g.accept) > MaxGlobStates {
		t.Errorf("%d states", len(g.accept))
	}
}

func TestGlobMissingCatches(t *testing.T) {
	p, err := ParsePattern("v1:presence:{id:int}", ':')
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		glob    string
		missing string // "" when the glob covers the pattern
	}{
		{"v1:presence:*", ""},
		{"v1:*", ""},
		{"v1:presence:[0-9]*", "v1:presence:-1"},
		{"v1:presence:?", "v1:presence:10"},
		{"v2:*", "v1:presence:0"},
	} {
		g, err := ParseGlob(tc.glob)
		if err != nil {
			t.Fatal(err)
		}
		ex, ok := g.Missing(p, ':')
		if tc.missing == "" && ok {
			t.Errorf("%q misses %q", tc.glob, ex)
		}
		if tc.missing != "" && (!ok || p.Glob() == "" || len(ex) != len(tc.missing) || g.Match(ex)) {
			t.Errorf("%q: missing = %q, %v; want one like %q", tc.glob, ex, ok, tc.missing)
		}
	}
	g, _ := ParseGlob("v1:*")
	other, _ := ParsePattern("v1:chat:{room}", ':')
	if ex, ok := g.Catches(other, ':'); !ok || !strings.HasPrefix(ex, "v1:chat:") {
		t.Errorf("Catches = %q, %v", ex, ok)
	}
	g2, _ := ParseGlob("v1:presence:*")
	if ex, ok := g2.Catches(other, ':'); ok {
		t.Errorf("v1:presence:* catches %q", ex)
	}
}
