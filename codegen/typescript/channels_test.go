package typescript

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

func loadPubSub(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(os.DirFS(filepath.Join("testdata", "pubsub")), "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func genScope(t *testing.T, reg *registry.Registry, scope codegen.Scope, client string) string {
	t.Helper()
	req, err := codegen.NewRequest(reg, scope)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generator{Client: client}.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	return string(files[0].Data)
}

// function returns the text of the exported function name in src.
func function(t *testing.T, src, name string) string {
	t.Helper()
	i := strings.Index(src, "export async function "+name+"(")
	if i < 0 {
		t.Fatalf("no function %s", name)
	}
	end := strings.Index(src[i:], "\n}\n")
	return src[i : i+end]
}

// TestShardedNeverPublish: a sharded channel's publisher sends SPUBLISH
// only, and a module whose channels are all sharded has no way to send
// PUBLISH at all (the round trip on the server is in TestPubSub).
func TestShardedNeverPublish(t *testing.T) {
	reg := loadPubSub(t)
	for _, client := range []string{ClientRedis, ClientIORedis} {
		all := genScope(t, reg, codegen.Scope{}, client)
		for _, fn := range []string{"publishRoomEvents", "publishBlobs"} {
			body := function(t, all, fn)
			if !strings.Contains(body, "keyregSPublish(") || strings.Contains(body, "keyregPublish(") {
				t.Errorf("%s (%s):\n%s", fn, client, body)
			}
		}
		if body := function(t, all, "publishNotices"); !strings.Contains(body, "keyregPublish(") {
			t.Errorf("publishNotices (%s):\n%s", client, body)
		}
		sharded := genScope(t, reg, codegen.Scope{Channels: []string{"room-events", "blobs"}}, client)
		if !strings.Contains(sharded, `"SPUBLISH"`) {
			t.Fatalf("%s: no SPUBLISH in the sharded module", client)
		}
		if m := regexp.MustCompile(`(?i)["'\x60]publish["'\x60]|\.publish\(|keyregPublish\b`).FindString(sharded); m != "" {
			t.Errorf("%s: the module of sharded channels only can send PUBLISH: %q", client, m)
		}
		if !strings.Contains(all, `"PUBLISH"`) {
			t.Errorf("%s: the module with classic channels has no PUBLISH", client)
		}
	}
}

// TestChannelNames: a channel's names take the Channel suffix where a
// family's take Key, never collide with a family's (a family that would
// take them pushes the channel to a numeric suffix), and do not depend on
// the scope; ChannelFuncs names what Generate writes.
func TestChannelNames(t *testing.T) {
	reg := loadPubSub(t)
	all := genScope(t, reg, codegen.Scope{}, ClientRedis)
	for _, want := range []string{
		"export const ROOM_EVENTS_CHANNEL_PATTERN = ", "export const ROOM_EVENTS_CHANNEL_OWNER = ", "export const ROOM_EVENTS_CHANNEL_MODE = \"sharded\"",
		"export const ROOM_EVENTS_CHANNEL_ENCODING = ", "export const PRESENCE_CHANNEL_SUBSCRIBE_GLOB = \"v1:presence:*\"",
		"export function buildRoomEventsChannel(roomId: number | bigint): string", "export function parseRoomEventsChannel(key: string): RoomEventsChannel",
		"export type RoomEventsMessage = ", "export function checkRoomEventsMessage(", "export interface RoomEventsDelivery",
		"export function buildRoomEvents(id: number | bigint): string", // the family of the same name
		"export type BlobsMessage = Uint8Array;", "export type PresenceMessage = string;",
		"export async function subscribePresence(subscriber: KeyregSubscriber, onMessage",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q", want)
		}
	}
	if !strings.Contains(all, " * @deprecated Replaced by room-events. Since 2026-01-01. classic on a cluster") {
		t.Errorf("the deprecated channel's doc comment does not say so")
	}
	one := genScope(t, reg, codegen.Scope{Channels: []string{"presence"}}, ClientRedis)
	if !strings.Contains(one, "export function buildPresenceChannel(userId: number | bigint): string") || strings.Contains(one, "RoomEventsChannel") {
		t.Errorf("a scope of one channel:\n%s", one[strings.Index(one, "// ---- channel"):])
	}

	// A family whose names a channel would take.
	fam := *reg.Families[0]
	fam.Name = "room-events-channel"
	reg.Families = append(reg.Families, &fam)
	clash := genScope(t, reg, codegen.Scope{}, ClientRedis)
	for _, want := range []string{"export function buildRoomEventsChannel(id: number | bigint)", "export function buildRoomEvents2Channel(roomId: number | bigint)", "export async function publishRoomEvents2("} {
		if !strings.Contains(clash, want) {
			t.Errorf("with a family room-events-channel: no %q", want)
		}
	}
	req, err := codegen.NewRequest(reg, codegen.Scope{Channels: []string{"presence"}})
	if err != nil {
		t.Fatal(err)
	}
	var g codegen.ChannelDocumenter = Generator{Namespace: "keys"}
	funcs, err := g.ChannelFuncs(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(funcs) != len(reg.Channels) {
		t.Errorf("ChannelFuncs named %d channels, want all %d", len(funcs), len(reg.Channels))
	}
	want := codegen.ChannelFuncs{
		Build:     "keys.buildRoomEvents2Channel(roomId: number | bigint): string",
		Publish:   "keys.publishRoomEvents2(client: KeyregClient, roomId: number | bigint, message: RoomEvents2Message): Promise<number>",
		Subscribe: "keys.subscribeRoomEvents2(subscriber: KeyregSubscriber, roomId: number | bigint, onMessage: (d: RoomEvents2Delivery) => void, onError?: (e: Error) => void): Promise<() => Promise<void>>",
	}
	if funcs["room-events"] != want {
		t.Errorf("ChannelFuncs[room-events] = %+v, want %+v", funcs["room-events"], want)
	}
	for name, f := range funcs {
		for _, sig := range []string{f.Build, f.Publish, f.Subscribe} {
			fn := strings.TrimPrefix(sig[:strings.Index(sig, "(")], "keys.")
			if !strings.Contains(clash, "function "+fn+"(") {
				t.Errorf("%s: ChannelFuncs names %s, which the file does not declare", name, fn)
			}
		}
	}
	none, err := Generator{Client: ClientNone}.ChannelFuncs(req)
	if err != nil || none["presence"].Publish != "" || none["presence"].Build == "" {
		t.Errorf("ChannelFuncs with client none: %+v, %v", none["presence"], err)
	}
}

// TestHostileChannelsGenerated: the hostile registry's channels are in
// the modules TestHostileStrings inspects.
func TestHostileChannelsGenerated(t *testing.T) {
	for _, s := range hostileStrings {
		reg := hostileRegistry(s)
		src := genScope(t, reg, codegen.Scope{IncludePresets: true}, ClientRedis)
		if n := strings.Count(src, "export async function subscribe"); n != len(reg.Channels) {
			t.Errorf("%q: %d subscribers, want %d", s, n, len(reg.Channels))
		}
	}
}
