package scanner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestProbeVanished drives the probe stage directly with a key list as SCAN
// could have returned it just before keys were deleted or expired.
func TestProbeVanished(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	if err := admin.Set(ctx, "live", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Set(ctx, "short", "v", time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	waitExpired(t, admin, "short")
	for _, opts := range []Options{{URL: s.URL()}, {URL: s.URL(), Idle: true, Memory: true}} {
		c, err := Connect(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		infos, vanished, notes, err := c.probe(ctx, c.client(c.base.Addr, 0, false), s.Addr, 0, []string{"gone", "live", "short", "also-gone"})
		if err != nil {
			t.Fatalf("probe: %v", err)
		}
		if vanished != 3 || len(infos) != 1 || infos[0].Key != "live" || infos[0].Type != "string" || len(notes.text)+len(notes.refused) != 0 {
			t.Errorf("opts %+v: infos %+v, vanished %d, notes %v", opts, infos, vanished, notes)
		}
	}
}

// waitExpired returns once key has expired by the server's own clock,
// which is what decides expiry, rather than after a guessed sleep.
func waitExpired(t *testing.T, c *redis.Client, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	at, err := c.PExpireTime(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if at < 0 {
		return // already expired (and deleted), or never had a TTL: -2, -1
	}
	for {
		now, err := c.Time(ctx).Result()
		if err != nil {
			t.Fatalf("waiting for %q to expire: %v", key, err)
		}
		if now.UnixMilli() > at.Milliseconds() { // redis: expired when now > when
			return
		}
	}
}

func TestDedupe(t *testing.T) {
	prev, cur := map[string]struct{}{}, map[string]struct{}{}
	uniq, dups := dedupe([]string{"a", "b", "a", "c"}, prev, cur)
	if len(uniq) != 3 || dups != 1 || len(cur) != 3 {
		t.Fatalf("first reply: %q %d", uniq, dups)
	}
	prev, cur = cur, prev
	uniq, dups = dedupe([]string{"c", "d", "d", "b"}, prev, cur)
	if len(uniq) != 1 || uniq[0] != "d" || dups != 3 {
		t.Fatalf("second reply: %q %d", uniq, dups)
	}
	// The window is two replies: "a" (two replies back) passes again.
	prev, cur = cur, prev
	uniq, dups = dedupe([]string{"a", "d"}, prev, cur)
	if len(uniq) != 1 || uniq[0] != "a" || dups != 1 {
		t.Fatalf("third reply: %q %d", uniq, dups)
	}
}

func TestKeySlot(t *testing.T) {
	// Values from CLUSTER KEYSLOT on Redis 7.0.
	for key, want := range map[string]uint16{
		"foo": 12182, "bar": 5061, "{user1000}.following": 3443, "{user1000}.followers": 3443,
		"foo{}{bar}": 8363, "foo{{bar}}zap": 4015, "foo{bar}{zap}": 5061, "": 0,
	} {
		if got := keySlot(key); got != want {
			t.Errorf("keySlot(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestParseClusterNodes(t *testing.T) {
	out := "07c3 127.0.0.1:30004@31004 slave e7d1 0 1426238317239 4 connected\n" +
		"e7d1 :30001@31001,host1 myself,master - 0 0 1 connected 0-5460 [5461->-abc]\n" +
		"292f 127.0.0.1:30002@31002 master,fail - 0 1426238316232 2 disconnected 5461-10922\n" +
		"6ec2 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383\n"
	nodes, err := parseClusterNodes(out, "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 4 || nodes[1].addr != "10.0.0.1:30001" || len(nodes[1].slots) != 1 || nodes[0].masterID != "e7d1" || nodes[2].healthy {
		t.Fatalf("nodes %+v", nodes)
	}
	topo, err := buildTopology(nodes, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.shards) != 2 || topo.covered != 16384-5462 {
		t.Errorf("topology %+v", topo)
	}
	if _, err := buildTopology(nodes, true); err == nil {
		t.Error("replica mode accepted a master without replica")
	}
	if _, err := parseClusterNodes("garbage line", ""); err == nil {
		t.Error("garbage accepted")
	}
}

// TestLimiterRate checks the token bucket's long-run rate: it starts empty,
// so 20 batches of 100 keys at 10,000 keys/s take 0.2 s, not 0.1 s.
func TestLimiterRate(t *testing.T) {
	l := newLimiter(10000)
	start := time.Now()
	for range 20 {
		if err := l.wait(context.Background(), 100); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 180*time.Millisecond || d > time.Second {
		t.Errorf("2000 keys at 10000/s took %v, want about 200ms", d)
	}
}

// TestReadReply parses every reply kind the probe meets, and refuses what
// it cannot parse instead of guessing.
func TestReadReply(t *testing.T) {
	long := strings.Repeat("x", maxKeptBulk+1)
	in := "+string\r\n+ReJSON-RL\r\n:-2\r\n:86400000\r\n$-1\r\n$3\r\nabc\r\n-WRONGTYPE Operation against a key\r\n" +
		"$6\r\nembstr\r\n$" + fmt.Sprint(len(long)) + "\r\n" + long + "\r\n"
	rc := &rawConn{r: bufio.NewReader(strings.NewReader(in))}
	want := []reply{
		{kind: '+', s: "string"}, {kind: '+', s: "ReJSON-RL"}, {kind: ':', n: -2}, {kind: ':', n: 86400000},
		{kind: '$', n: -1}, {kind: '$', n: 3, s: "abc"}, {kind: '-', s: "WRONGTYPE Operation against a key"},
		{kind: '$', n: 6, s: "embstr"}, {kind: '$', n: int64(len(long))}, // a short bulk is kept (OBJECT ENCODING), a long one not
	}
	for i, w := range want {
		r, err := rc.read()
		if err != nil || r != w {
			t.Fatalf("reply %d: %+v, %v; want %+v", i, r, err, w)
		}
	}
	if !want[4].isNil() || want[5].isNil() {
		t.Error("isNil")
	}
	var rerr redis.Error
	if err := want[6].err(); !errors.As(err, &rerr) || !redis.HasErrorPrefix(err, "WRONGTYPE") || want[0].err() != nil {
		t.Errorf("error reply: %v", err)
	}
	for _, bad := range []string{"*2\r\n", ":12a\r\n", "+ok\n", ":\r\n", "?x\r\n", ":1234567890123456789012\r\n"} {
		rc := &rawConn{r: bufio.NewReader(strings.NewReader(bad))}
		if r, err := rc.read(); !errors.Is(err, errProtocol) {
			t.Errorf("%q: %+v, %v; want errProtocol", bad, r, err)
		}
	}
	rc = &rawConn{r: bufio.NewReader(strings.NewReader(":1"))}
	if _, err := rc.read(); !errors.Is(err, io.EOF) {
		t.Errorf("truncated reply: %v, want EOF", err)
	}
}

// TestProbePasswordOnly checks the probe connection's handshake against a
// server with requirepass (AUTH with a password and no user) and a database
// other than 0.
func TestProbePasswordOnly(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	ctx := context.Background()
	if err := s.Client(t).ConfigSet(ctx, "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(&redis.Options{Addr: s.Addr, Password: "s3cret", DB: 3})
	defer admin.Close()
	if err := admin.Set(ctx, "pw:k", "v", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	c, err := Connect(ctx, Options{URL: "redis://:s3cret@" + s.Addr + "/3", Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ki, err := c.Probe(ctx, "pw:k")
	if err != nil || ki.Vanished || ki.Type != "string" || ki.PTTL <= 0 || !ki.HasMemory {
		t.Fatalf("probe: %+v, %v", ki, err)
	}
	bad, err := Connect(ctx, Options{URL: "redis://:wrong@" + s.Addr})
	if err == nil {
		defer bad.Close()
		if _, err := bad.Probe(ctx, "pw:k"); err == nil {
			t.Error("probe with a wrong password succeeded")
		}
	}
}

// TestProbeAfterIdle is a regression test: a probe connection that sat in
// the pool longer than the timeout must still take a pipeline larger than
// its write buffer (queueing flushes before the round trip's reads; those
// writes once ran under the previous round trip's expired deadline).
func TestProbeAfterIdle(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	keys := make([]string, 2000)
	pipe := admin.Pipeline()
	for i := range keys {
		keys[i] = fmt.Sprintf("idle:%s:%06d", strings.Repeat("k", 60), i)
		pipe.Set(ctx, keys[i], "v", 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	const timeout = 300 * time.Millisecond
	c, err := Connect(ctx, Options{URL: s.URL(), Timeout: timeout, Idle: true, Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl := c.client(s.Addr, 0, false)
	for round := range 2 {
		infos, vanished, _, err := c.probe(ctx, cl, s.Addr, 0, keys)
		if err != nil || len(infos) != len(keys) || vanished != 0 {
			t.Fatalf("round %d: %d infos, %d vanished, %v", round, len(infos), vanished, err)
		}
		// The condition under test is time itself: the pooled connection
		// must sit idle past its deadline. Sleep guarantees at least that
		// long; nothing runs concurrently, so nothing is timed against it.
		time.Sleep(2 * timeout)
	}
}

// TestTopologyUnserved checks that unserved slots are found by slot, not by
// summing ranges: two masters claiming the same range must not hide a gap.
func TestTopologyUnserved(t *testing.T) {
	nodes := []clusterNode{
		{id: "a", addr: "h:1", master: true, healthy: true, slots: [][2]int{{0, 5000}}},
		{id: "b", addr: "h:2", master: true, healthy: true, slots: [][2]int{{0, 5000}, {5002, 16000}}},
		{id: "c", addr: "h:3", master: true, healthy: false, slots: [][2]int{{5001, 5001}, {16001, 16383}}},
	}
	topo, err := buildTopology(nodes, false)
	if err != nil {
		t.Fatal(err)
	}
	if topo.covered != 16384-1-383 || fmt.Sprint(topo.unserved) != "[[5001 5001] [16001 16383]]" {
		t.Fatalf("covered %d, unserved %v", topo.covered, topo.unserved)
	}
	e := &SlotsError{Served: topo.covered, Unserved: topo.unserved}
	if want := "384 of 16384 cluster slots are served by no healthy master, so their keys were not scanned: slots 5001, 16001-16383"; e.Error() != want {
		t.Errorf("error %q\nwant  %q", e.Error(), want)
	}
	many := &SlotsError{}
	for i := range 20 {
		many.Unserved = append(many.Unserved, [2]int{2 * i, 2 * i})
	}
	if msg := many.Error(); !strings.HasSuffix(msg, "slots 0, 2, 4, 6, 8, 10, 12, 14 and 12 more ranges") {
		t.Errorf("error %q", msg)
	}
	for _, bad := range []string{"16384", "5-3", "-1"} {
		if _, err := parseClusterNodes("x h:1@2 master - 0 0 1 connected "+bad, ""); err == nil {
			t.Errorf("slot %q accepted", bad)
		}
	}
}

// TestParseIntRange: the RESP reader takes every int64 Redis can send (a
// PTTL of PEXPIREAT 1500000000000000000 has 19 digits) and nothing beyond.
func TestParseIntRange(t *testing.T) {
	for _, in := range []string{"0", "-1", "-2", "1499998234567890123", "9223372036854775807", "-9223372036854775808", "-0", "007"} {
		want, _ := strconv.ParseInt(in, 10, 64)
		if got, ok := parseInt([]byte(in)); !ok || got != want {
			t.Errorf("parseInt(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"9223372036854775808", "-9223372036854775809", "99999999999999999999", "", "-", "+1", "1 ", "1e3"} {
		if got, ok := parseInt([]byte(in)); ok {
			t.Errorf("parseInt(%q) = %d, want a failure", in, got)
		}
	}
	if d := millis(math.MaxInt64); d != math.MaxInt64 {
		t.Errorf("millis(MaxInt64) = %v, want the longest duration", d)
	}
}

// FuzzParseInt: parseInt agrees with strconv.ParseInt wherever it answers,
// and answers for every int64 of at most 19 digits without a '+'.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-9223372036854775808", "9223372036854775807", "9223372036854775808", "12a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseInt([]byte(s))
		want, err := strconv.ParseInt(s, 10, 64)
		digits := strings.TrimPrefix(s, "-")
		switch {
		case ok && (err != nil || got != want):
			t.Fatalf("parseInt(%q) = %d, strconv: %d, %v", s, got, want, err)
		case !ok && err == nil && !strings.HasPrefix(s, "+") && len(digits) <= 19:
			t.Fatalf("parseInt(%q) failed, strconv: %d", s, want)
		}
	})
}

// TestScanHugePTTL: one key expiring in the year 47 million (a 19-digit
// PTTL) is read like any other, on a real server; it used to fail the
// whole scan as "not RESP2".
func TestScanHugePTTL(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	ctx := context.Background()
	cl := s.Client(t)
	if err := cl.Set(ctx, "far", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cl.Do(ctx, "PEXPIREAT", "far", "1500000000000000000").Err(); err != nil {
		t.Fatal(err)
	}
	if err := cl.Set(ctx, "near", "v", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	c, err := Connect(ctx, Options{URL: s.URL(), Idle: true, Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := map[string]KeyInfo{}
	if _, err := c.Scan(ctx, func(b []KeyInfo) error {
		for _, k := range b {
			got[k.Key] = k
		}
		return nil
	}); err != nil {
		t.Fatalf("scan: %v", err)
	}
	if k := got["far"]; k.PTTL != math.MaxInt64 {
		t.Errorf("far: PTTL %v, want the longest duration", k.PTTL)
	}
	if k := got["near"]; k.PTTL <= 0 || k.PTTL > time.Hour {
		t.Errorf("near: PTTL %v", k.PTTL)
	}
	if ki, err := c.Probe(ctx, "far"); err != nil || ki.PTTL != math.MaxInt64 {
		t.Errorf("probe far: %+v, %v", ki, err)
	}
}

// TestRespBound: the bound follows a stream fed in pieces of any size, sums
// the elements and bytes of nested values over one reply, and starts
// afresh with the next reply.
func TestRespBound(t *testing.T) {
	ok := "+OK\r\n:-9223372036854775808\r\n$-1\r\n*-1\r\n_\r\n*2\r\n$3\r\nabc\r\n%1\r\n+k\r\n*0\r\n" +
		"|1\r\n+a\r\n+b\r\n$0\r\n\r\n>2\r\n+x\r\n,1.5\r\n=8\r\ntxt:abcd\r\n-ERR x\r\n"
	for _, step := range []int{1, 2, 3, 7, len(ok)} {
		var b respBound
		for i := 0; i < len(ok); i += step {
			if err := b.feed([]byte(ok[i:min(i+step, len(ok))])); err != nil {
				t.Fatalf("step %d, at %d: %v", step, i, err)
			}
		}
		if b.pending != 0 || b.elems != 0 || b.bytes != 0 || b.skip != 0 || b.lineLen != 0 {
			t.Errorf("step %d: state left %+v", step, b)
		}
	}
	// Two nested arrays of 600,000 elements exceed the reply's 1,048,576;
	// the same two as separate replies do not.
	half := "*600000\r\n" + strings.Repeat(":1\r\n", 600000)
	var b respBound
	if err := b.feed([]byte(half + half)); err != nil {
		t.Fatalf("two replies: %v", err)
	}
	if err := b.feed([]byte("*2\r\n" + half + half)); !errors.Is(err, ErrReplyTooLarge) {
		t.Errorf("one reply of two nested arrays: %v, want ErrReplyTooLarge", err)
	}
	big := "$" + strconv.Itoa(maxReplyBytes/2) + "\r\n"
	b = respBound{}
	if err := b.feed([]byte("*2\r\n" + big)); err != nil {
		t.Fatal(err)
	}
	b.skip = 0 // as if the payload had passed
	b.done()
	if err := b.feed([]byte(big)); !errors.Is(err, ErrReplyTooLarge) {
		t.Errorf("two bulks of half the bound in one reply: %v", err)
	}
	for _, bad := range []string{"*x\r\n", "$-2\r\n", "?1\r\n", "*1\n", "$?\r\n", "*" + strings.Repeat("1", 30) + "\r\n"} {
		var b respBound
		if err := b.feed([]byte(bad)); !errors.Is(err, errProtocol) {
			t.Errorf("%q: %v, want errProtocol", bad, err)
		}
	}
}

// FuzzRespBound: whatever the stream, the bound never panics and never
// lets a reply go over its bounds.
func FuzzRespBound(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nabc\r\n%1\r\n+k\r\n:1\r\n"), 3)
	f.Add([]byte("*2000000000\r\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, step int) {
		step = max(1, step%64)
		var b respBound
		for i := 0; i < len(in); i += step {
			if err := b.feed(in[i:min(i+step, len(in))]); err != nil {
				return
			}
			if b.elems > maxReplyElems || b.bytes > maxReplyBytes || b.pending < 0 {
				t.Fatalf("state %+v", b)
			}
		}
	})
}

// TestChannelsTotalBound: a read keeps at most maxChannelsTotal channels
// over all the nodes, and marks the node past the bound Truncated (the
// audit is then partial), whatever the number of nodes.
func TestChannelsTotalBound(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sub := srv.Client(t)
	ps := sub.Subscribe(ctx, "a", "b", "c")
	t.Cleanup(func() { ps.Close() })
	ss := sub.SSubscribe(ctx, "s1", "s2")
	t.Cleanup(func() { ss.Close() })
	probe := srv.Client(t)
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err1 := probe.PubSubChannels(ctx, "*").Result()
		s, err2 := probe.PubSubShardChannels(ctx, "*").Result()
		if err1 == nil && err2 == nil && len(c) == 3 && len(s) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("subscriptions not seen: %v %v %v %v", c, s, err1, err2)
		}
		time.Sleep(10 * time.Millisecond)
	}
	conn, err := Connect(ctx, Options{URL: srv.URL(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, tc := range []struct {
		bound, classic, sharded int
		truncated               bool
	}{{10, 3, 2, false}, {4, 3, 1, true}, {2, 2, 0, true}} {
		old := maxChannelsTotal
		maxChannelsTotal = tc.bound
		nodes, err := conn.Channels(ctx)
		maxChannelsTotal = old
		if err != nil || len(nodes) != 1 {
			t.Fatalf("bound %d: %v, %d nodes", tc.bound, err, len(nodes))
		}
		n := nodes[0]
		if n.Err != nil || len(n.Classic) != tc.classic || len(n.Sharded) != tc.sharded || n.Truncated != tc.truncated {
			t.Errorf("bound %d: err %v, %d classic, %d sharded, truncated %v; want %d, %d, %v", tc.bound, n.Err, len(n.Classic), len(n.Sharded), n.Truncated, tc.classic, tc.sharded, tc.truncated)
		}
	}
}
