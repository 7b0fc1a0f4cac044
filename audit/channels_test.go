package audit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/scanner"
	"github.com/keyreg/keyreg/source"
	"github.com/redis/go-redis/v9"
)

const channelsRegistry = `version: 1
cluster: true
families: []
channels:
  - name: room
    pattern: "v1:room:{{id:int}}"
    mode: sharded
  - name: presence
    pattern: "v1:presence:{id:int}"
    mode: pattern
    subscribe_glob: "v1:presence:*"
  - name: news
    pattern: "v1:news"
  - name: old
    pattern: "v1:old"
    deprecated: {since: 2026-01-01, replaced_by: room}
  - name: quiet
    pattern: "v1:quiet"
  - name: shardme
    pattern: "v1:shardme:{{id:int}}"
    mode: sharded
`

// subscribe holds one subscription open until the test ends, returning
// once the server confirmed it.
func subscribe(t *testing.T, ctx context.Context, kind string, open func() *redis.PubSub) {
	t.Helper()
	ps := open()
	t.Cleanup(func() { ps.Close() })
	msg, err := ps.Receive(ctx)
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	if _, ok := msg.(*redis.Subscription); !ok {
		t.Fatalf("%s: got %T, want a subscription confirmation", kind, msg)
	}
}

// seedChannels opens the subscribers: first and second are two clients
// that may be connected to different nodes, pub the client that routes.
func seedChannels(t *testing.T, ctx context.Context, first, second redis.UniversalClient) {
	for _, ch := range []string{"v1:room:{1}", "v1:room:{2}", "v1:room:{3}", "v1:news"} {
		subscribe(t, ctx, "SSUBSCRIBE "+ch, func() *redis.PubSub { return first.SSubscribe(ctx, ch) })
	}
	for _, ch := range []string{"v1:news", "v1:old", "legacy:a", "legacy:b", "tmp:x", "v1:shardme:{5}"} {
		subscribe(t, ctx, "SUBSCRIBE "+ch, func() *redis.PubSub { return first.Subscribe(ctx, ch) })
	}
	// A second classic subscriber of v1:news, on another node of a cluster.
	subscribe(t, ctx, "SUBSCRIBE v1:news (2)", func() *redis.PubSub { return second.Subscribe(ctx, "v1:news") })
	subscribe(t, ctx, "PSUBSCRIBE", func() *redis.PubSub { return first.PSubscribe(ctx, "v1:presence:*") })
}

func channelAudit(t *testing.T, ctx context.Context, url string) *ChannelReport {
	t.Helper()
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(channelsRegistry)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := scanner.Connect(ctx, scanner.Options{URL: url, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	nodes, err := conn.Channels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return Channels(reg, nodes)
}

func findingLines(rep *ChannelReport) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "%s %s %d %s\n", f.Rule, f.Channel, f.Count, strings.Join(f.Examples, ","))
	}
	return b.String()
}

func subscribers(rep *ChannelReport, name string, sharded bool) (int64, int) {
	for _, c := range rep.Channels {
		if c.Name == name && c.Sharded == sharded {
			return c.Subscribers, c.Nodes
		}
	}
	return -1, 0
}

func TestChannelsStandalone(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b := srv.Client(t), srv.Client(t)
	seedChannels(t, ctx, a, b)
	rep := channelAudit(t, ctx, srv.URL())
	want := `channel-deprecated-live old 1 v1:old
channel-mode-mismatch news 1 v1:news
channel-mode-mismatch shardme 1 v1:shardme:{5}
channel-no-subscribers quiet 1 v1:quiet
channel-unregistered legacy: 2 legacy:a,legacy:b
channel-unregistered tmp: 1 tmp:x
`
	if got := findingLines(rep); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}
	if n, nodes := subscribers(rep, "v1:news", false); n != 2 || nodes != 1 {
		t.Errorf("v1:news: %d subscribers on %d nodes, want 2 on 1", n, nodes)
	}
	if rep.NumPat != 1 || rep.Nodes != 1 || len(rep.Partial) != 0 {
		t.Errorf("numpat %d, nodes %d, partial %v", rep.NumPat, rep.Nodes, rep.Partial)
	}
}

func TestChannelsCluster(t *testing.T) {
	cs := redistest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cs.Addrs})
	t.Cleanup(func() { cc.Close() })
	// The second subscriber of v1:news talks to a master the cluster
	// client did not pick for it (classic subscriptions are node-local).
	other := cs.Masters[0]
	seedChannels(t, ctx, cc, other.Client(t))
	third := cs.Masters[2].Client(t)
	subscribe(t, ctx, "SUBSCRIBE v1:news (3)", func() *redis.PubSub { return third.Subscribe(ctx, "v1:news") })
	rep := channelAudit(t, ctx, "redis://"+cs.Addrs[1])
	if rep.Nodes != 3 || len(rep.Partial) != 0 {
		t.Fatalf("nodes %d, partial %v", rep.Nodes, rep.Partial)
	}
	got := findingLines(rep)
	for _, w := range []string{
		"channel-classic-on-cluster news 1 v1:news\n",
		"channel-classic-on-cluster old 1 v1:old\n",
		"channel-deprecated-live old 1 v1:old\n",
		"channel-mode-mismatch news 1 v1:news\n",
		"channel-mode-mismatch shardme 1 v1:shardme:{5}\n",
		"channel-no-subscribers quiet 1 v1:quiet\n",
		"channel-unregistered legacy: 2 legacy:a,legacy:b\n",
		"channel-unregistered tmp: 1 tmp:x\n",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 8 {
		t.Errorf("%d findings, want 8:\n%s", n, got)
	}
	// Three classic subscribers of v1:news, summed over the nodes they
	// are on (at least two: masters 0 and 2 hold one each).
	if n, nodes := subscribers(rep, "v1:news", false); n != 3 || nodes < 2 {
		t.Errorf("v1:news: %d subscribers on %d nodes, want 3 on at least 2", n, nodes)
	}
	// Three sharded rooms, each on its slot's shard.
	for _, r := range []string{"v1:room:{1}", "v1:room:{2}", "v1:room:{3}"} {
		if n, nodes := subscribers(rep, r, true); n != 1 || nodes != 1 {
			t.Errorf("%s: %d subscribers on %d nodes, want 1 on 1", r, n, nodes)
		}
	}
	if rep.NumPat != 1 {
		t.Errorf("numpat %d, want 1", rep.NumPat)
	}
	// Each room's subscribers are on its slot's owner.
	if len(rep.Misplaced) != 0 {
		t.Errorf("misplaced: %v", rep.Misplaced)
	}
}

// A master that holds sharded subscribers of a slot it does not serve
// (as after a resharding) is named; one that serves it is not.
func TestChannelsMisplaced(t *testing.T) {
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(channelsRegistry)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nodes := []source.NodeChannels{
		{Node: "a", Primary: true, Slots: [][2]int{{0, 8191}}, Sharded: []source.ChannelCount{{Name: "v1:room:{1}", Subscribers: 2, Slot: 9842}}},
		{Node: "b", Primary: true, Slots: [][2]int{{8192, 16383}}, Sharded: []source.ChannelCount{{Name: "v1:room:{1}", Subscribers: 1, Slot: 9842}}},
	}
	rep := Channels(reg, nodes)
	if len(rep.Misplaced) != 1 || !strings.HasPrefix(rep.Misplaced[0], "a: 2 sharded subscribers") {
		t.Errorf("misplaced = %v", rep.Misplaced)
	}
	if n, nodes := subscribers(rep, "v1:room:{1}", true); n != 3 || nodes != 2 {
		t.Errorf("v1:room:{1}: %d subscribers on %d nodes, want 3 on 2", n, nodes)
	}
}

// A publisher loop of known size on one node: the bus messages the nodes
// report are within 20% of the messages times (nodes - 1).
func TestChannelsFanOut(t *testing.T) {
	cs := redistest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sub := cs.Masters[1].Client(t)
	subscribe(t, ctx, "SUBSCRIBE", func() *redis.PubSub { return sub.Subscribe(ctx, "v1:news") })
	conn, err := scanner.Connect(ctx, scanner.Options{URL: "redis://" + cs.Addrs[0], Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	before, err := conn.Channels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pub := cs.Masters[0].Client(t)
	const n = 500
	start := time.Now()
	for i := range n {
		if err := pub.Publish(ctx, "v1:news", i).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// The bus copies are asynchronous: poll until the receivers count them.
	var fo FanOut
	for deadline := time.Now().Add(20 * time.Second); ; {
		after, err := conn.Channels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fo = EstimateFanOut(before, after, time.Since(start).Seconds())
		recv := int64(0)
		for i, a := range after {
			recv += a.BusPublishReceived - before[i].BusPublishReceived
		}
		if recv >= n*int64(len(after)-1) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !fo.Known || fo.Nodes != 3 {
		t.Fatalf("fan-out %+v: counters not read", fo)
	}
	// The audit's own reads publish nothing; the loop is the only publisher.
	if fo.Published != n {
		t.Errorf("published %d, want %d", fo.Published, n)
	}
	want := float64(n * (fo.Nodes - 1))
	if d := float64(fo.BusSent) - want; d > 0.2*want || d < -0.2*want {
		t.Errorf("bus messages sent %d, want %v within 20%%", fo.BusSent, want)
	}
	if fo.BusSentPerSecond <= 0 || fo.PublishedPerSecond <= 0 {
		t.Errorf("rates %+v", fo)
	}
}

// The minimal ACL reads channels; a user without +pubsub gets a note that
// names it, and no-subscribers is not decided on a partial reading.
func TestChannelsACL(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	redistest.ACLUser(t, srv, "audit", "pw", strings.Fields(scanner.MinimalACL)...)
	var noPubsub []string
	for _, r := range strings.Fields(scanner.MinimalACL) {
		if r != "+pubsub" {
			noPubsub = append(noPubsub, r)
		}
	}
	redistest.ACLUser(t, srv, "nopubsub", "pw", noPubsub...)
	a := srv.Client(t)
	subscribe(t, ctx, "SUBSCRIBE", func() *redis.PubSub { return a.Subscribe(ctx, "v1:news") })
	rep := channelAudit(t, ctx, "redis://audit:pw@"+srv.Addr)
	if len(rep.Partial) != 0 {
		t.Fatalf("minimal ACL: partial %v", rep.Partial)
	}
	if n, _ := subscribers(rep, "v1:news", false); n != 1 {
		t.Errorf("minimal ACL: v1:news has %d subscribers, want 1", n)
	}
	rep = channelAudit(t, ctx, "redis://nopubsub:pw@"+srv.Addr)
	if len(rep.Partial) != 1 || !strings.Contains(rep.Partial[0], "needs +pubsub") || strings.Contains(rep.Partial[0], "pw@") {
		t.Errorf("without +pubsub: partial %v", rep.Partial)
	}
	for _, f := range rep.Findings {
		if f.Rule == RuleChannelNoSubscribers {
			t.Errorf("no-subscribers decided on a partial reading: %+v", f)
		}
	}
}

// A standalone primary's replica has subscribers of its own, which the
// channel audit does not read: the report says so, rather than reporting
// the primary's channels as the whole deployment's.
func TestChannelsUnreadReplica(t *testing.T) {
	srv := redistest.Standalone(t)
	host, port, _ := strings.Cut(srv.Addr, ":")
	replica := redistest.Standalone(t, "--replicaof", host, port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	primary := srv.Client(t)
	for deadline := time.Now().Add(20 * time.Second); ; {
		info, err := primary.Info(ctx, "replication").Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, "connected_slaves:1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not connect:\n%s", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := replica.Client(t)
	subscribe(t, ctx, "SUBSCRIBE on the replica", func() *redis.PubSub { return r.Subscribe(ctx, "v1:quiet") })
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(channelsRegistry)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := scanner.Connect(ctx, scanner.Options{URL: srv.URL(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	nodes, err := conn.Channels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cr := Channels(reg, nodes)
	if cr.UnreadReplicas != 1 {
		t.Errorf("unread replicas %d, want 1", cr.UnreadReplicas)
	}
	rep := &Report{Version: ReportVersion}
	AddChannels(rep, reg, cr)
	if !strings.Contains(strings.Join(rep.Scan.Notes, "\n"), "channels: 1 replica of the primary not read") {
		t.Errorf("notes %q lack the unread replica", rep.Scan.Notes)
	}
}

// A cluster node that CLUSTER NODES flags as failing is not read: the
// channel audit counts it as no node, says so in a note, and the fan-out
// estimate of the nodes read stays known. On a real cluster, a master
// whose process is gone is flagged (its link disconnected) and comes out
// skipped, with its state.
func TestChannelsSkippedNode(t *testing.T) {
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(channelsRegistry)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	node := func(addr string, calls, sent int64) source.NodeChannels {
		return source.NodeChannels{Node: addr, Primary: true, Slots: [][2]int{{0, 1}}, PublishCalls: calls, BusPublishSent: sent, BusPublishReceived: 0, Server: "redis", Version: "7.2.0"}
	}
	gone := source.NodeChannels{Node: "c", Skipped: "master,fail disconnected", PublishCalls: -1, BusPublishSent: -1, BusPublishReceived: -1}
	before := []source.NodeChannels{node("a", 0, 0), node("b", 0, 0), gone}
	after := []source.NodeChannels{node("a", 10, 10), node("b", 0, 10), gone}
	cr := Channels(reg, after)
	if cr.Nodes != 2 || len(cr.Partial) != 0 || len(cr.Skipped) != 1 || cr.Skipped[0] != "c (master,fail disconnected)" {
		t.Errorf("nodes %d, partial %v, skipped %v; want 2 nodes, c skipped", cr.Nodes, cr.Partial, cr.Skipped)
	}
	rep := &Report{Version: ReportVersion}
	AddChannels(rep, reg, cr)
	if !strings.Contains(strings.Join(rep.Scan.Notes, "\n"), "1 cluster node that CLUSTER NODES flags as failing not read: c (master,fail disconnected)") {
		t.Errorf("notes %q", rep.Scan.Notes)
	}
	if fo := EstimateFanOut(before, after, 1); !fo.Known || fo.Nodes != 2 || fo.Published != 10 || fo.BusSent != 20 {
		t.Errorf("fan-out %+v: want known over 2 nodes, 10 published, 20 sent", fo)
	}

	cs := redistest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dead := cs.Masters[2].Addr
	cs.Masters[2].Stop()
	seed := cs.Masters[0].Client(t)
	for deadline := time.Now().Add(30 * time.Second); ; {
		out, err := seed.ClusterNodes(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		flagged := false
		for line := range strings.SplitSeq(out, "\n") {
			if strings.Contains(line, dead) && (strings.Contains(line, "disconnected") || strings.Contains(line, "fail")) {
				flagged = true
			}
		}
		if flagged {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is not flagged:\n%s", dead, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	conn, err := scanner.Connect(ctx, scanner.Options{URL: "redis://" + cs.Masters[0].Addr, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	nodes, err := conn.Channels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, n := range nodes {
		if n.Skipped != "" {
			skipped = append(skipped, n.Node)
		}
	}
	if len(skipped) != 1 || skipped[0] != dead {
		t.Errorf("skipped %v, want [%s]", skipped, dead)
	}
	if cr := Channels(reg, nodes); cr.Nodes != 2 || len(cr.Skipped) != 1 {
		t.Errorf("nodes %d, skipped %v: want 2 read, 1 skipped", cr.Nodes, cr.Skipped)
	}
}
