package jsongen_test

import (
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

// The request carries the registry's channels, and matches the schema.
func TestRequestChannels(t *testing.T) {
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(`version: 1
families:
  - name: room
    pattern: "v1:room:{{id:int}}"
    owner: chat
    ttl: 1h
channels:
  - name: room-events
    pattern: "v1:room:{{id:int}}"
    owner: chat
    mode: sharded
    encoding: json
    schema: {type: object, required: [text], properties: {text: {type: string}}}
    with: [room-typing]
  - name: room-typing
    pattern: "v1:typing:{{id:int}}"
    mode: sharded
  - name: presence
    pattern: "v1:presence:{id:int}"
    mode: pattern
    subscribe_glob: "v1:presence:*"
    deprecated: {since: 2026-01-01, replaced_by: room-events}
`)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := generate(t, reg, codegen.Scope{})
	validate(t, requestSchema(t), "channels", out)
	var doc codegen.Request
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Channels) != 3 {
		t.Fatalf("%d channels, want 3", len(doc.Channels))
	}
	p, ev := doc.Channels[0], doc.Channels[1] // name order: presence, room-events, room-typing
	if p.Name != "presence" || p.Mode != "pattern" || p.SubscribeGlob != "v1:presence:*" || p.Deprecated == nil || p.Deprecated.ReplacedBy != "room-events" {
		t.Errorf("presence = %+v", p)
	}
	if ev.Name != "room-events" || ev.Mode != "sharded" || len(ev.With) != 1 || ev.With[0] != "room-typing" || len(ev.Schema) == 0 {
		t.Errorf("room-events = %+v", ev)
	}
	if len(ev.Pattern.Parts) != 3 || !ev.Pattern.Parts[1].HashTag || ev.Pattern.Parts[1].Type != "int" {
		t.Errorf("room-events pattern = %+v", ev.Pattern)
	}
	// A registry without channels writes no channels key.
	reg2, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte("version: 1\nfamilies: []\n")}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(generate(t, reg2, codegen.Scope{}), &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["channels"]; ok {
		t.Error("channels written for a registry without any")
	}
}
