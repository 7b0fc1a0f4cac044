package catalogue

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/render/rendertest"
	"github.com/keyreg/keyreg/registry"
)

// channelYAML has a family and a channel of the same name, a sharded
// channel replacing a deprecated classic one, a pattern channel, a hostile
// description, and a channel of an owner that has no family.
const channelYAML = `version: 1
owners:
  chat: {contact: chat@example.com}
  relay: {contact: relay@example.com}
families:
  - {name: room, pattern: "v1:room:{id:int}", owner: chat, type: string, encoding: text, ttl: {max: 1h}}
channels:
  - name: room
    description: "<script>alert(1)</script> room events"
    pattern: "v1:room:{{room:int}}"
    owner: chat
    mode: sharded
    encoding: json
    schema: {type: object, properties: {text: {type: string, description: "<b>the text</b>"}}}
  - name: room-v0
    pattern: "v0:room:{room:int}"
    owner: chat
    encoding: json
    deprecated: {since: 2026-01-01, sunset: 2026-06-01, replaced_by: room, reason: moved to sharded}
  - {name: relay, pattern: "v1:relay:{topic:word}", owner: relay, mode: pattern, subscribe_glob: "v1:relay:*", encoding: text}
`

func TestCatalogueChannels(t *testing.T) {
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(channelYAML)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	langs := []Language{{Name: "go", Channels: map[string]codegen.ChannelFuncs{
		"room": {Build: "keys.BuildRoomChannel(room int64) (string, error)", Publish: "keys.PublishRoom(<script>)", Subscribe: "keys.SubscribeRoom(ctx, c, room int64)"},
	}}}
	rep := &audit.Report{Version: audit.ReportVersion, Target: "redis://x", Channels: &audit.ChannelsReport{Nodes: 3,
		Declared: []*audit.ChannelDeclReport{{Name: "room", Mode: "sharded", Owner: "chat", Live: 2, Subscribers: 7, Nodes: 1},
			{Name: "room-v0", Mode: "classic", Owner: "chat", Live: 1, Subscribers: 1, Nodes: 3}, {Name: "relay", Mode: "pattern", Owner: "relay"}}}}
	rep.Findings = []*audit.Finding{
		{Rule: audit.RuleChannelDeprecatedLive, Severity: diag.Warn, Channel: "room-v0", Count: 1, Message: "channel \"room-v0\" is deprecated"},
		{Rule: audit.RuleChannelNoSubscribers, Severity: diag.Info, Channel: "relay", Count: 1, Message: "channel \"relay\" has no subscriber"},
	}
	page := catalogueHTML(t, reg, Options{Languages: langs, Audit: rep})
	rendertest.CheckPage(t, page, "")
	rendertest.CheckInert(t, "catalogue", page)
	rendertest.CheckCells(t, "catalogue", page)
	for _, want := range []string{
		`<a href="#channels">Channels</a>`,
		`<section id="channel-room" class="family"`,
		`<section id="family-room" class="family"`, // the family of the same name keeps its own section
		`<dt>mode</dt><dd>sharded: publish with <code>SPUBLISH</code>, subscribe with <code>SSUBSCRIBE</code></dd>`,
		`subscribe with <code>PSUBSCRIBE v1:<wbr>relay:<wbr>*</code>`,
		`<dt>go publisher</dt><dd><code>keys.PublishRoom(&lt;script&gt;)</code></dd>`,
		`<dt>live</dt><dd>2 live channels, 7 subscribers, on up to 1 nodes</dd>`,
		`replaced by <a href="#channel-room">room</a>`,
		`<a href="#channel-room-v0">room-v0</a> <small class="muted">channel</small>`,
		`<td><a href="#channel-relay">relay</a></td>`,
		`<h4>Message schema`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("catalogue lacks %s", want)
		}
	}
	// Each channel's findings are in its section, linked to it.
	relay := page[strings.Index(page, `<section id="channel-relay"`):]
	relay = relay[:strings.Index(relay, "</section>")]
	if !strings.Contains(relay, "channel-no-subscribers") || strings.Contains(relay, "channel-deprecated-live") {
		t.Errorf("the relay channel's section has the wrong findings:\n%s", relay)
	}
	if n := strings.Count(page, "<dt>go builder</dt>"); n != 1 {
		t.Errorf("%d go builder rows, want 1 (the channel the language names)", n)
	}

	files, err := Catalogue(reg, Options{Format: Markdown, Languages: langs, Audit: rep})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	for _, f := range files {
		byName[f.Name] = string(f.Data)
	}
	idx := byName["index.md"]
	for _, want := range []string{
		"## Channels\n\n| channel | owner | pattern | mode | encoding | live channels | subscribers | findings |\n",
		"| [room](owner-chat.md#channel-room) | chat | `v1:room:{{room:int}}` | sharded | json | 2 | 7 | 0 |\n",
		"| [relay](owner-relay.md#channel-relay) | relay | `v1:relay:{topic:word}` | pattern | text | 0 | 0 | 1 |\n",
		"| [room-v0](owner-chat.md#channel-room-v0) (channel) | 2026-01-01 | 2026-06-01 | room | moved to sharded |\n",
	} {
		if !strings.Contains(idx, want) {
			t.Errorf("index.md lacks %q:\n%s", want, idx)
		}
	}
	chat := byName["owner-chat.md"]
	for _, want := range []string{
		"## channel room\n",
		"| mode | sharded: publish with `SPUBLISH`, subscribe with `SSUBSCRIBE` |\n",
		"| go publisher | `keys.PublishRoom(<script>)` |\n",
		"| deprecated | since 2026-01-01, sunset 2026-06-01; replaced by [room](#channel-room); moved to sharded |\n",
		"Message schema (inline):",
	} {
		if !strings.Contains(chat, want) {
			t.Errorf("owner-chat.md lacks %q:\n%s", want, chat)
		}
	}
	if _, ok := byName["owner-relay.md"]; !ok {
		t.Errorf("no file for the owner of channels only: %v", names(files))
	}
	if s := rendertest.StripCode(chat); strings.Contains(s, "<script") {
		t.Error("markdown: a description's <script> survived")
	}
}
