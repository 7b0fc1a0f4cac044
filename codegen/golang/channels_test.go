package golang

import (
	"go/ast"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/codegen"
)

// chanYAML has a channel of every mode: classic with a JSON Schema,
// sharded with a hash tag, and pattern, whose glob matches more channel
// names than its pattern, with text messages.
const chanYAML = `version: 1
owners:
  chat: {contact: chat@example.com}
families:
  - {name: room, pattern: "v1:room:{room_id:int}", owner: chat, type: string, encoding: text, ttl: persistent}
channels:
  - name: room-events
    description: Events of a chat room.
    pattern: "v1:room-events:{room_id:int}"
    owner: chat
    mode: classic
    encoding: json
    schema:
      type: object
      required: [kind, text]
      properties:
        kind: {enum: [join, leave, say]}
        text: {type: string, maxLength: 20}
  - name: room-shard
    pattern: "v1:shard:{{room_id:int}}"
    owner: chat
    mode: sharded
    encoding: json
    schema: {type: object, required: [n], properties: {n: {type: integer, minimum: 0}}}
  - name: room-any
    pattern: "v1:any:{room_id:word}"
    owner: chat
    mode: pattern
    subscribe_glob: "v1:any:*"
    encoding: text
    schema: {type: string, maxLength: 10}
`

// chanTest runs in the generated package against a real redis-server and
// a real 3-master cluster: round trips of every mode, refused payloads
// that send nothing, bad messages that leave the subscription usable, and
// a sharded channel whose slot is on another node than the client's seed.
const chanTest = `package keys

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// stats sums INFO commandstats calls of a command over nodes.
func stats(t *testing.T, nodes []*redis.Client, cmd string) int {
	t.Helper()
	n := 0
	for _, c := range nodes {
		n += redistest.CommandStats(t, c)[cmd]
	}
	return n
}

func receive[D any](t *testing.T, recv func(context.Context) (D, error)) (D, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return recv(ctx)
}

func roundTrip(t *testing.T, c redis.UniversalClient, nodes []*redis.Client, cluster bool) {
	ctx := context.Background()

	t.Run("classic", func(t *testing.T) {
		sub, err := SubscribeRoomEvents(ctx, c, 7)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		pub0, spub0 := stats(t, nodes, "publish"), stats(t, nodes, "spublish")
		bad := RoomEventsMessage{Kind: RoomEventsMessageKindSay, Text: "far more than twenty bytes"}
		if _, err := PublishRoomEvents(ctx, c, 7, bad); !errors.Is(err, ErrSchema) {
			t.Fatalf("publishing a text too long: %v, want ErrSchema", err)
		}
		if _, err := PublishRoomEvents(ctx, c, 7, RoomEventsMessage{Kind: RoomEventsMessageKindUnknown, Text: "x"}); !errors.Is(err, ErrInvalidValue) {
			t.Fatalf("publishing an unknown kind: %v, want ErrInvalidValue", err)
		}
		if _, err := PublishRoomEvents(ctx, c, -1, RoomEventsMessage{Kind: RoomEventsMessageKindSay, Text: "x"}); err != nil {
			t.Fatalf("publishing to room -1: %v", err) // -1 is an int
		}
		want := RoomEventsMessage{Kind: RoomEventsMessageKindJoin, Text: "hello"}
		n, err := PublishRoomEvents(ctx, c, 7, want)
		if err != nil {
			t.Fatal(err)
		}
		if !cluster && n != 1 {
			t.Errorf("PUBLISH reached %d subscribers, want 1", n)
		}
		d, err := receive(t, sub.Receive)
		if err != nil {
			t.Fatal(err)
		}
		if d.Channel != (RoomEventsChannel{RoomID: 7}) || d.Message != want {
			t.Errorf("received %+v, want %+v on room 7", d, want)
		}
		if got := stats(t, nodes, "publish") - pub0; got != 2 {
			t.Errorf("cmdstat_publish moved by %d, want 2 (room -1 and the valid one)", got)
		}
		if got := stats(t, nodes, "spublish") - spub0; got != 0 {
			t.Errorf("cmdstat_spublish moved by %d, want 0", got)
		}

		// Raw messages: one that breaks the schema, one that is not
		// JSON; the subscription goes on, and the next valid one arrives.
		// (Each is received before the next is sent: on a cluster, two
		// PUBLISHes may go through different nodes.)
		key := MustBuildRoomEventsChannel(7)
		for raw, want := range map[string]error{` + "`" + `{"kind":"say"}` + "`" + `: ErrSchema, "not json": ErrInvalidValue} {
			if err := c.Publish(ctx, key, raw).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := receive(t, sub.Receive); !errors.Is(err, want) {
				t.Errorf("the message %q: %v, want %v", raw, err, want)
			}
		}
		next := RoomEventsMessage{Kind: RoomEventsMessageKindLeave, Text: "bye"}
		if _, err := PublishRoomEvents(ctx, c, 7, next); err != nil {
			t.Fatal(err)
		}
		if d, err := receive(t, sub.Receive); err != nil || d.Message != next {
			t.Errorf("after bad messages: %+v, %v; want %+v", d, err, next)
		}
	})

	t.Run("sharded", func(t *testing.T) {
		sub, err := SubscribeRoomShard(ctx, c, 3)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		pub0, spub0 := stats(t, nodes, "publish"), stats(t, nodes, "spublish")
		if _, err := PublishRoomShard(ctx, c, 3, RoomShardMessage{N: -1}); !errors.Is(err, ErrSchema) {
			t.Fatalf("publishing n -1: %v, want ErrSchema", err)
		}
		n, err := PublishRoomShard(ctx, c, 3, RoomShardMessage{N: 5})
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("SPUBLISH reached %d subscribers, want 1", n)
		}
		d, err := receive(t, sub.Receive)
		if err != nil {
			t.Fatal(err)
		}
		if d.Channel != (RoomShardChannel{RoomID: 3}) || d.Message.N != 5 {
			t.Errorf("received %+v, want n 5 on room 3", d)
		}
		if got := stats(t, nodes, "spublish") - spub0; got != 1 {
			t.Errorf("cmdstat_spublish moved by %d, want 1", got)
		}
		if got := stats(t, nodes, "publish") - pub0; got != 0 {
			t.Errorf("cmdstat_publish moved by %d, want 0", got)
		}
		if err := c.SPublish(ctx, MustBuildRoomShardChannel(3), ` + "`" + `{"n":"five"}` + "`" + `).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := receive(t, sub.Receive); !errors.Is(err, ErrSchema) {
			t.Errorf("n a string: %v, want ErrSchema", err)
		}
		if _, err := PublishRoomShard(ctx, c, 3, RoomShardMessage{N: 6}); err != nil {
			t.Fatal(err)
		}
		if d, err := receive(t, sub.Receive); err != nil || d.Message.N != 6 {
			t.Errorf("after a bad message: %+v, %v; want n 6", d, err)
		}
	})

	t.Run("pattern", func(t *testing.T) {
		sub, err := SubscribeRoomAny(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		pub0 := stats(t, nodes, "publish")
		if _, err := PublishRoomAny(ctx, c, "lobby", "more than ten bytes"); !errors.Is(err, ErrSchema) {
			t.Fatalf("publishing a long text: %v, want ErrSchema", err)
		}
		if _, err := PublishRoomAny(ctx, c, "a:b", "hi"); !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("publishing to room a:b: %v, want ErrInvalidKey", err)
		}
		n, err := PublishRoomAny(ctx, c, "lobby", "hi")
		if err != nil {
			t.Fatal(err)
		}
		if !cluster && n != 1 {
			t.Errorf("PUBLISH reached %d subscribers, want 1", n)
		}
		d, err := receive(t, sub.Receive)
		if err != nil {
			t.Fatal(err)
		}
		if d.Channel != (RoomAnyChannel{RoomID: "lobby"}) || d.Message != "hi" {
			t.Errorf("received %+v, want hi on lobby", d)
		}
		if got := stats(t, nodes, "publish") - pub0; got != 1 {
			t.Errorf("cmdstat_publish moved by %d, want 1", got)
		}
		// The glob matches v1:any:a:b, the pattern does not.
		if err := c.Publish(ctx, "v1:any:a:b", "hi").Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := receive(t, sub.Receive); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("a message on v1:any:a:b: %v, want ErrInvalidKey", err)
		}
		// A 100 KB name the glob matches: the error quotes a bounded part.
		long := "v1:any:a:" + strings.Repeat("x", 100<<10)
		if err := c.Publish(ctx, long, "hi").Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := receive(t, sub.Receive); !errors.Is(err, ErrInvalidKey) || len(err.Error()) > 512 {
			t.Errorf("a message on a 100 KB channel name: want ErrInvalidKey of at most 512 bytes, got %d bytes: %.200v", len(err.Error()), err)
		}
		if _, err := PublishRoomAny(ctx, c, "hall", "ok"); err != nil {
			t.Fatal(err)
		}
		if d, err := receive(t, sub.Receive); err != nil || d.Channel.RoomID != "hall" || d.Message != "ok" {
			t.Errorf("after a bad channel: %+v, %v; want ok on hall", d, err)
		}
	})
}

func TestStandalone(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	roundTrip(t, c, []*redis.Client{c}, false)

	// Subscribe returns only once the server confirmed: against a server
	// that answers nothing it fails when ctx ends, rather than returning
	// a subscription that may miss the next message.
	t.Run("subscribe waits for the confirmation", func(t *testing.T) {
		srv.Pause(t)
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		sub, err := SubscribeRoomEvents(ctx, c, 9)
		srv.Resume(t)
		if err == nil {
			sub.Close()
			t.Fatal("SubscribeRoomEvents returned a subscription the paused server never confirmed")
		}
		sub, err = SubscribeRoomEvents(context.Background(), c, 9)
		if err != nil {
			t.Fatalf("after Resume: %v", err)
		}
		sub.Close()
	})
}

func TestCluster(t *testing.T) {
	cs := redistest.Cluster(t)
	var nodes []*redis.Client
	for _, m := range cs.Masters {
		nodes = append(nodes, m.Client(t))
	}
	// The client knows only the first node: every other slot's owner it
	// learns from the cluster.
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cs.Addrs[:1]})
	t.Cleanup(func() { c.Close() })
	roundTrip(t, c, nodes, true)

	t.Run("sharded on another node", func(t *testing.T) {
		ctx := context.Background()
		seed := nodes[0]
		slots, err := seed.ClusterSlots(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		owner := func(slot int64) string {
			for _, s := range slots {
				if int64(s.Start) <= slot && slot <= int64(s.End) {
					return s.Nodes[0].Addr
				}
			}
			t.Fatalf("slot %d has no owner in CLUSTER SLOTS", slot)
			return ""
		}
		room, addr := int64(-1), ""
		for i := int64(0); i < 1000 && room < 0; i++ {
			slot, err := seed.ClusterKeySlot(ctx, MustBuildRoomShardChannel(i)).Result()
			if err != nil {
				t.Fatal(err)
			}
			if a := owner(slot); a != cs.Addrs[0] {
				room, addr = i, a
			}
		}
		if room < 0 {
			t.Fatal("no room's slot is on another node than the seed")
		}
		i := slices.Index(cs.Addrs, addr)
		if i < 0 || i >= len(nodes) {
			t.Fatalf("owner %s is not a master", addr)
		}
		key := MustBuildRoomShardChannel(room)
		sub, err := SubscribeRoomShard(ctx, c, room)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		for j, n := range nodes {
			chans, err := n.PubSubShardChannels(ctx, "*").Result()
			if err != nil {
				t.Fatal(err)
			}
			if has := slices.Contains(chans, key); has != (j == i) {
				t.Errorf("node %s: PUBSUB SHARDCHANNELS %q; the channel %s belongs on %s only", cs.Addrs[j], chans, key, addr)
			}
		}
		spub0 := redistest.CommandStats(t, nodes[i])["spublish"]
		n, err := PublishRoomShard(ctx, c, room, RoomShardMessage{N: room})
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("SPUBLISH to room %d reached %d subscribers, want 1", room, n)
		}
		d, err := receive(t, sub.Receive)
		if err != nil {
			t.Fatal(err)
		}
		if d.Channel.RoomID != room || d.Message.N != room {
			t.Errorf("received %+v, want n %d on room %d", d, room, room)
		}
		if got := redistest.CommandStats(t, nodes[i])["spublish"] - spub0; got != 1 {
			t.Errorf("cmdstat_spublish on the slot's owner moved by %d, want 1", got)
		}
	})
}
`

// TestChannelsGenerated generates the channels of chanYAML and runs
// chanTest in the generated package against real servers.
func TestChannelsGenerated(t *testing.T) {
	out, err := Generate(parseRegistry(t, chanYAML), Options{Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	dir := mkTempPackageDir(t)
	for name, data := range map[string]string{goldenOut: string(out), "chan_test.go": chanTest} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go not on PATH: the generated publishers must run")
	}
	cmd := exec.Command(gobin, "test", "-count=1", "./"+filepath.ToSlash(dir))
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	if got, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test of the generated publishers: %v\n%s", err, got)
	}
}

// selectorCalls returns the method names called as x.Name(...) in fn.
func selectorCalls(fn ast.Node) []string {
	var out []string
	ast.Inspect(fn, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				out = append(out, sel.Sel.Name)
			}
		}
		return true
	})
	return out
}

// TestShardedNeverPublish checks on the source that a sharded channel's
// publisher sends SPUBLISH, and that a file whose only channel is sharded
// has no call of Publish at all: nothing in it can send PUBLISH.
func TestShardedNeverPublish(t *testing.T) {
	funcs := func(src []byte) map[string][]string {
		out := map[string][]string{}
		for _, d := range parseGenerated(t, src).Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				out[fd.Name.Name] = append(out[fd.Name.Name], selectorCalls(fd)...)
			}
		}
		return out
	}
	all, err := Generate(parseRegistry(t, chanYAML), Options{Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	fs := funcs(all)
	for name, want := range map[string]string{"PublishRoomShard": "SPublish", "PublishRoomEvents": "Publish", "PublishRoomAny": "Publish"} {
		calls := fs[name]
		if !slices.Contains(calls, want) {
			t.Errorf("%s calls %q, want %s", name, calls, want)
		}
		for _, other := range []string{"Publish", "SPublish"} {
			if other != want && slices.Contains(calls, other) {
				t.Errorf("%s calls %s", name, other)
			}
		}
	}
	i := strings.Index(chanYAML, "  - name: room-shard")
	j := strings.Index(chanYAML, "  - name: room-any")
	only := chanYAML[:strings.Index(chanYAML, "  - name: room-events")] + chanYAML[i:j]
	src, err := Generate(parseRegistry(t, only), Options{Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "func PublishRoomShard(") {
		t.Fatal("no PublishRoomShard")
	}
	for name, calls := range funcs(src) {
		if slices.Contains(calls, "Publish") {
			t.Errorf("%s calls Publish in a file whose only channel is sharded", name)
		}
	}
}

// chanProbeYAML has a channel of every mode with placeholder names no
// template uses, and a family named like a channel, whose names the
// channel must not take.
const chanProbeYAML = `version: 1
owners:
  o: {contact: o@example.com}
families:
  - {name: probe-channel, pattern: "v1:pc:{zq_a:int}", owner: o, type: string, encoding: text, ttl: persistent}
  - {name: probe, pattern: "v1:p:{zq_a:int}", owner: o, type: string, encoding: json, ttl: persistent, schema: {type: object, properties: {a: {type: string}}}}
channels:
  - {name: probe, pattern: "c1:p:{zq_a:word}:{zq_b:int}", owner: o, mode: classic, encoding: json, schema: {type: object, properties: {n: {type: integer}}}}
  - {name: probe-shard, pattern: "c1:s:{{zq_a:word}}:{zq_c:int}", owner: o, mode: sharded, encoding: int}
  - {name: probe-any, pattern: "c1:a:{zq_a:word}-{zq_b:word}", owner: o, mode: pattern, subscribe_glob: "c1:a:*", encoding: float}
`

// TestChannelScopeNames derives from the generated code the names the
// channel functions with placeholder arguments use besides those
// arguments, and checks that no channel argument takes one of them.
func TestChannelScopeNames(t *testing.T) {
	out, err := Generate(parseRegistry(t, chanProbeYAML), Options{Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	scopes := 0
	for _, names := range funcNames(parseGenerated(t, out)) {
		if !slices.ContainsFunc(names, func(n string) bool { return probeArgs[n] }) {
			continue
		}
		scopes++
		for _, n := range names {
			if probeArgs[n] || n == "_" {
				continue
			}
			if ph := snake(n); localName(ph, channelArgScope()) == n {
				t.Errorf("a generated channel function uses %q, but a placeholder {%s} gets that argument name: add it to channelScopeNames", n, ph)
			}
		}
	}
	// Build, MustBuild of 2 families and 3 channels, Parse of the 2 int
	// families and the 2 channels with int values, Publish of 3 channels
	// and Subscribe of the 2 that take values.
	if want := 2*5 + 4 + 3 + 2; scopes != want {
		t.Errorf("%d functions with placeholder arguments, want %d: the probe no longer covers them", scopes, want)
	}
}

// TestChannelNames checks that a channel's identifiers never take a
// family's, that they do not depend on the scope, and that ChannelFuncs
// names what Generate writes.
func TestChannelNames(t *testing.T) {
	reg := parseRegistry(t, chanProbeYAML)
	all, err := Generate(reg, Options{Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	src := string(all)
	for _, decl := range []string{
		"func BuildProbe2Channel(", // the family probe-channel has BuildProbeChannel
		"func BuildProbeChannel(zqA int64)",
		"func PublishProbe2(ctx context.Context, c redis.Cmdable, zqA string, zqB int64, msg Probe2Message)",
		"func SubscribeProbeShard(ctx context.Context, c redis.UniversalClient, zqA string, zqC int64) (*ProbeShardSubscription, error)",
		"func SubscribeProbeAny(ctx context.Context, c redis.UniversalClient) (*ProbeAnySubscription, error)",
		"type ProbeShardMessage = int64",
		"type ProbeAnyMessage = float64",
		"type Probe2Message struct",
		"ProbeAnyChannelSubscribeGlob = \"c1:a:*\"",
		"ProbeShardChannelMode = \"sharded\"",
	} {
		if !strings.Contains(src, decl) {
			t.Errorf("the output has no %q", decl)
		}
	}
	// One channel alone gets the same names.
	out, err := Generate(reg, Options{Package: "keys", Scope: codegen.Scope{Channels: []string{"probe-shard"}}})
	if err != nil {
		t.Fatal(err)
	}
	only := string(out)
	if !strings.Contains(only, "func SubscribeProbeShard(ctx context.Context, c redis.UniversalClient, zqA string, zqC int64)") || strings.Contains(only, "PublishProbe2") {
		t.Error("the scope changed the channel's names or kept another channel")
	}
	req, err := codegen.NewRequest(reg, codegen.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := Generator{Package: "keys"}.ChannelFuncs(req)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]codegen.ChannelFuncs{
		"probe": {
			Build:     "keys.BuildProbe2Channel(zqA string, zqB int64) (string, error)",
			Publish:   "keys.PublishProbe2(ctx context.Context, c redis.Cmdable, zqA string, zqB int64, msg keys.Probe2Message) (int64, error)",
			Subscribe: "keys.SubscribeProbe2(ctx context.Context, c redis.UniversalClient, zqA string, zqB int64) (*keys.Probe2Subscription, error)",
		},
		"probe-any": {
			Build:     "keys.BuildProbeAnyChannel(zqA string, zqB string) (string, error)",
			Publish:   "keys.PublishProbeAny(ctx context.Context, c redis.Cmdable, zqA string, zqB string, msg keys.ProbeAnyMessage) (int64, error)",
			Subscribe: "keys.SubscribeProbeAny(ctx context.Context, c redis.UniversalClient) (*keys.ProbeAnySubscription, error)",
		},
	}
	for name, w := range want {
		if got := fs[name]; got != w {
			t.Errorf("ChannelFuncs[%q] = %+v\nwant %+v", name, got, w)
		}
		for _, sig := range []string{w.Build, w.Publish, w.Subscribe} {
			decl := "func " + strings.ReplaceAll(strings.TrimPrefix(sig, "keys."), "keys.", "")
			if !strings.Contains(src, decl) {
				t.Errorf("the output has no %q", decl)
			}
		}
	}
	if len(fs) != 3 {
		t.Errorf("ChannelFuncs has %d channels, want 3", len(fs))
	}
}

// TestChannelScopeCompiles generates scoped files of channels and
// families and vets them: one channel alone, a pattern channel alone, a
// family without its channels (no Pub/Sub runtime), and a deprecated
// channel whose replacement is out of scope, which its doc must not name
// by a Go type the file lacks.
func TestChannelScopeCompiles(t *testing.T) {
	reg := parseRegistry(t, chanProbeYAML+`  - {name: probe-old, pattern: "c1:old:{zq_a:word}", owner: o, encoding: text, deprecated: {replaced_by: probe-shard}}
`)
	dir := mkTempPackageDir(t)
	for i, scope := range []codegen.Scope{
		{Channels: []string{"probe-shard"}},
		{Channels: []string{"probe-any"}},
		{Families: []string{"probe"}},
		{Channels: []string{"probe-old"}},
		{Channels: []string{"probe-old", "probe-shard"}},
	} {
		for _, client := range []string{ClientGoRedis, ClientNone} {
			out, err := Generate(reg, Options{Package: "keys", Scope: scope, Client: client})
			if err != nil {
				t.Fatal(err)
			}
			src := string(out)
			if has := strings.Contains(src, "func keyregSubscribed("); has != (client == ClientGoRedis && len(scope.Channels) > 0) {
				t.Errorf("%+v, %s: Pub/Sub runtime %v", scope, client, has)
			}
			if slices.Contains(scope.Channels, "probe-old") {
				named := strings.Contains(src, "Use ProbeShardChannel (channel probe-shard).")
				if in := slices.Contains(scope.Channels, "probe-shard"); named != in {
					t.Errorf("%+v: the deprecation names ProbeShardChannel: %v, want %v", scope, named, in)
				}
				if !named && !strings.Contains(src, "Replaced by probe-shard.") {
					t.Errorf("%+v: the deprecation does not name probe-shard", scope)
				}
			}
			pkg := filepath.Join(dir, client+strconv.Itoa(i))
			if err := os.Mkdir(pkg, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pkg, goldenOut), out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	goVet(t, "./"+filepath.ToSlash(dir)+"/...")
}
