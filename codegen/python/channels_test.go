package python

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/internal/redistest"
)

const channelsRegistry = "codegen/python/testdata/channels.keys.yaml"

// TestChannelsRoundTrip runs testdata/channels.py (checked with mypy
// --strict against the module) on a real standalone server and on a real
// three-master cluster: classic, sharded and pattern channels published
// and received through the generated code, decoded and typed; refused
// payloads that send nothing (INFO commandstats: publish and spublish move
// by exactly the valid sends); raw messages that break the schema, the
// encoding or the pattern raise while the subscription goes on; on the
// cluster, a sharded channel whose slot is on another master than the
// seed, its SSUBSCRIBE registered on that master only; asyncio on
// standalone.
func TestChannelsRoundTrip(t *testing.T) {
	py := python(t)
	dir := generate(t, loadReq(t, channelsRegistry, codegen.Scope{}))
	script, err := os.ReadFile(filepath.Join(root(t), "codegen/python/testdata/channels.py"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "channels.py"), script, 0o644))
	mypyStrict(t, dir, "channels.py")
	for _, mode := range []string{"standalone", "cluster"} {
		t.Run(mode, func(t *testing.T) {
			var url string
			if mode == "cluster" {
				url = redistest.Cluster(t).URL()
			} else {
				url = redistest.Standalone(t).URL()
			}
			out := strings.TrimSpace(run(t, dir, py, "channels.py", dir, url, mode))
			n, err := strconv.Atoi(strings.TrimPrefix(out, "ok "))
			if err != nil || n < 30 {
				t.Fatalf("channels.py: %q", out)
			}
			t.Logf("%d checks passed", n)
		})
	}
}

// publishRE finds a way to send PUBLISH: the command's name (SPUBLISH
// aside) or redis-py's publish method.
var publishRE = regexp.MustCompile(`(^|[^S])PUBLISH|(?i)[^_s]publish\(|"publish"`)

// TestShardedNeverPublish: a module whose only channel is sharded holds no
// way to send PUBLISH at all, and its publishers send SPUBLISH.
func TestShardedNeverPublish(t *testing.T) {
	req := loadReq(t, channelsRegistry, codegen.Scope{Channels: []string{"room"}})
	files, err := Generator{}.Generate(req)
	must(t, err)
	src := string(files[0].Data)
	if m := publishRE.FindString(src); m != "" {
		t.Errorf("the sharded channel's module can send PUBLISH: %q", m)
	}
	for _, fn := range []string{"def publish_room(", "async def apublish_room(", "def _kr_spublish("} {
		i := strings.Index(src, "\n"+fn)
		if i < 0 {
			t.Fatalf("no %s", fn)
		}
		body := src[i+1:]
		if j := strings.Index(body, "\n\n\n"); j > 0 {
			body = body[:j]
		}
		if !strings.Contains(body, "SPUBLISH") {
			t.Errorf("%s does not send SPUBLISH:\n%s", fn, body)
		}
	}
	// The check itself finds a classic channel's PUBLISH.
	all, err := Generator{}.Generate(loadReq(t, channelsRegistry, codegen.Scope{Channels: []string{"headlines"}}))
	must(t, err)
	if publishRE.FindString(string(all[0].Data)) == "" {
		t.Error("the classic channel's module has no PUBLISH: the check is blind")
	}
}

// TestChannelFuncs: the ChannelDocumenter names each channel's builder,
// publisher and subscriber as the module declares them.
func TestChannelFuncs(t *testing.T) {
	var _ codegen.ChannelDocumenter = Generator{}
	req := loadReq(t, channelsRegistry, codegen.Scope{})
	m, err := Generator{}.ChannelFuncs(req)
	must(t, err)
	want := map[string]codegen.ChannelFuncs{
		"room": {
			Build:     "build_room_channel(room: str) -> str",
			Publish:   "publish_room(client: Client[Any] | ClusterClient[Any], room: str, message: RoomMessage) -> int",
			Subscribe: "subscribe_room(client: Client[Any] | ClusterClient[Any], room: str) -> RoomSubscription",
		},
		"relay": {
			Build:     "build_relay_channel(topic: str, seq: int) -> str",
			Publish:   "publish_relay(client: Client[Any] | ClusterClient[Any], topic: str, seq: int, message: RelayMessage) -> int",
			Subscribe: "subscribe_relay(client: Client[Any] | ClusterClient[Any]) -> RelaySubscription",
		},
	}
	for name, w := range want {
		if m[name] != w {
			t.Errorf("%s: %+v, want %+v", name, m[name], w)
		}
	}
	if len(m) != len(req.Channels) || len(m) != 7 {
		t.Errorf("%d channel entries for %d channels", len(m), len(req.Channels))
	}
	files, err := Generator{}.Generate(req)
	must(t, err)
	src := string(files[0].Data)
	for name, f := range m {
		for _, sig := range []string{f.Build, f.Publish, f.Subscribe} {
			if !strings.Contains(src, "\ndef "+strings.ReplaceAll(sig, "[Any]", "[_kr_t.Any]")+":\n") {
				t.Errorf("%s: the module does not declare %q", name, sig)
			}
		}
	}
	mod, err := Generator{Module: "keys"}.ChannelFuncs(req)
	must(t, err)
	if got := mod["room"].Publish; !strings.HasPrefix(got, "keys.publish_room(") {
		t.Errorf("with Module: %q", got)
	}
}

// TestChannelNames: a channel named as a family takes the Channel suffix
// and collides with nothing; its names do not depend on the scope; a
// deprecated channel says so in its docstrings; a module without channels
// in scope has no channel runtime.
func TestChannelNames(t *testing.T) {
	full := generateSrc(t, codegen.Scope{})
	for _, want := range []string{"\ndef build_room(id_: int) -> str:", "\ndef build_room_channel(room: str) -> str:",
		"\nclass RoomKey:", "\nclass RoomChannel:", "\nROOM_CHANNEL_PATTERN: _kr_t.Final = \"v1:room-events:{{room:word}}\"",
		"\nRELAY_CHANNEL_SUBSCRIBE_GLOB: _kr_t.Final = \"v1:relay:*\"", "\nROOM_CHANNEL_MODE: _kr_t.Final = \"sharded\"",
		"\nRoomMessage = _kr_t.TypedDict(", "\nHeadlinesMessage = _kr_t.TypedDict(", "\nRelayMessage: _kr_t.TypeAlias = \"str\"",
		"\nBlobsMessage: _kr_t.TypeAlias = \"bytes\"", "\ndef check_room_message(message: object) -> None:",
		"\ndef parse_room_channel(name: str | bytes) -> RoomChannel:",
		"\nPresenceMessageObject = _kr_t.TypedDict(", "\nPresenceMessage: _kr_t.TypeAlias = \"PresenceMessageObject | None\"", "\ndef parse_room(key: str | bytes) -> RoomKey:"} {
		if !strings.Contains(full, want) {
			t.Errorf("the module has no %q", want)
		}
	}
	// msgpack: bytes through, unchecked, but the check is there for readers.
	frames := full[strings.Index(full, "\n# Channel frames"):strings.Index(full, "\n# Channel headlines")]
	if !strings.Contains(frames, "\ndef check_frames_message(message: object) -> None:") || !strings.Contains(frames, "FramesMessage: _kr_t.TypeAlias = \"bytes\"") {
		t.Error("the msgpack channel has no check or its message is not bytes")
	}
	if pub := frames[strings.Index(frames, "\ndef publish_frames("):strings.Index(frames, "\nasync def apublish_frames(")]; strings.Contains(pub, "_kr_check") {
		t.Errorf("the msgpack channel's publisher checks its bytes:\n%s", pub)
	}
	if strings.Contains(full, "HEADLINES_CHANNEL_SUBSCRIBE_GLOB") {
		t.Error("a classic channel has a subscribe glob")
	}
	old := full[strings.Index(full, "\n# Channel old-news"):strings.Index(full, "\n# Channel relay")]
	if n := strings.Count(old, "Deprecated: replaced by headlines."); n != 4 {
		t.Errorf("the deprecated channel's publishers and subscribers say so %d times, want 4:\n%s", n, old)
	}
	only := generateSrc(t, codegen.Scope{Channels: []string{"room"}})
	if !strings.Contains(only, "\ndef build_room_channel(room: str) -> str:") || strings.Contains(only, "\ndef build_room(") {
		t.Error("with the channel alone in scope, its names changed or the family came along")
	}
	none := generateSrc(t, codegen.Scope{Families: []string{"room"}})
	if strings.Contains(none, "_KrSubscription") || strings.Contains(none, "redis.cluster") {
		t.Error("a module without channels has the channel runtime")
	}
	famFull := full[strings.Index(full, "\n# Family room."):strings.Index(full, "\n# Channel ")]
	if famNone := none[strings.Index(none, "\n# Family room."):]; strings.TrimRight(famNone, "\n") != strings.TrimRight(famFull, "\n") {
		t.Errorf("the family's code depends on the channels in scope:\n%s\n---\n%s", famFull, famNone)
	}
}

func generateSrc(t *testing.T, scope codegen.Scope) string {
	t.Helper()
	files, err := Generator{}.Generate(loadReq(t, channelsRegistry, scope))
	must(t, err)
	return string(files[0].Data)
}
