package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

const fanOutKeysYAML = `version: 1
cluster: true
families:
  - name: user
    owner: identity
    pattern: "user:{id:int}"
    ttl: persistent
channels:
  - name: news
    owner: identity
    pattern: "news"
`

// fanOutJSON is the part of the json report the fan-out tests read.
type fanOutJSON struct {
	Findings []struct {
		Rule    string `json:"rule"`
		Channel string `json:"channel"`
		Message string `json:"message"`
	} `json:"findings"`
	Channels *struct {
		FanOut *struct {
			Status        string  `json:"status"`
			Reason        string  `json:"reason"`
			WindowSeconds float64 `json:"window_seconds"`
			WaitedSeconds float64 `json:"waited_seconds"`
			WindowStart   string  `json:"window_start"`
			WindowEnd     string  `json:"window_end"`
			Estimate      *struct {
				Nodes                int     `json:"nodes"`
				Published            int64   `json:"published"`
				PublishedPerSecond   float64 `json:"published_per_second"`
				BusMessages          int64   `json:"bus_messages"`
				BusMessagesPerSecond float64 `json:"bus_messages_per_second"`
				BusHeaderBytes       int     `json:"bus_header_bytes"`
				BusBytesPerSecondMin float64 `json:"bus_bytes_per_second_min"`
			} `json:"estimate"`
		} `json:"fan_out"`
	} `json:"channels"`
}

func auditFanOut(t *testing.T, args ...string) (int, fanOutJSON, string) {
	t.Helper()
	code, stdout, stderr := cli(t, append([]string{"audit", "--format", "json"}, args...)...)
	var doc fanOutJSON
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	if doc.Channels == nil || doc.Channels.FanOut == nil {
		t.Fatalf("exit %d: no channels.fan_out in the report\n%s\n%s", code, stdout, stderr)
	}
	return code, doc, stdout
}

// publisher publishes to channel on c as fast as every interval, until
// stopped, and records when each PUBLISH was answered.
type publisher struct {
	mu    sync.Mutex
	acked []time.Time
	err   error
	stop  chan struct{}
	done  chan struct{}
}

func startPublisher(ctx context.Context, c *redis.Client, channel string, interval time.Duration) *publisher {
	p := &publisher{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
			sent := time.Now()
			if err := c.Publish(ctx, channel, "payload").Err(); err != nil {
				p.mu.Lock()
				p.err = err
				p.mu.Unlock()
				return
			}
			p.mu.Lock()
			// The server ran it between sent and now: keep the middle.
			p.acked = append(p.acked, sent.Add(time.Since(sent)/2))
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *publisher) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// between counts the messages published between from and to, and the
// messages whose time is within margin of either end (which the test
// cannot place on one side for sure).
func (p *publisher) between(from, to time.Time, margin time.Duration) (in, unsure int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, at := range p.acked {
		near := at.Sub(from).Abs() < margin || at.Sub(to).Abs() < margin
		switch {
		case near:
			unsure++
		case at.After(from) && at.Before(to):
			in++
		}
	}
	return in, unsure
}

func (p *publisher) halt(t *testing.T) {
	t.Helper()
	close(p.stop)
	<-p.done
	if p.err != nil {
		t.Fatalf("publisher: %v", p.err)
	}
}

// TestAuditFanOut runs keyreg audit on a real 3-master cluster: with no
// classic channel subscribed it does not wait and reports no estimate;
// a user whose ACL lacks +cluster|info gets an unknown estimate that
// says why, never 0; and with a classic subscriber held open and a
// publisher running, the bus messages the report estimates are within 20%
// of the messages published in its window × (nodes − 1).
func TestAuditFanOut(t *testing.T) {
	cl := redistest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(fanOutKeysYAML), 0o644); err != nil {
		t.Fatal(err)
	}

	// No classic channel subscribed: a window far longer than the audit is
	// not waited out (a wait would give an estimate).
	_, doc, out := auditFanOut(t, "--registry", reg, "--url", cl.URL(), "--fanout-window", "4m")
	fo := doc.Channels.FanOut
	if fo.Status != "skipped" || fo.Estimate != nil || fo.WaitedSeconds != 0 || !strings.Contains(fo.Reason, "no classic channel is subscribed") {
		t.Errorf("no classic subscriber: fan_out %+v, want skipped without a wait\n%s", fo, out)
	}

	// A classic subscriber on the second master, held open.
	sub := redis.NewClient(&redis.Options{Addr: cl.Masters[1].Addr})
	t.Cleanup(func() { sub.Close() })
	holdSubscription(t, ctx, sub.Subscribe(ctx, "news"))

	// --fanout-window 0: no estimate, and it says so.
	_, doc, out = auditFanOut(t, "--registry", reg, "--url", cl.URL(), "--fanout-window", "0")
	if fo := doc.Channels.FanOut; fo.Status != "skipped" || fo.Estimate != nil || !strings.Contains(fo.Reason, "window is 0") {
		t.Errorf("--fanout-window 0: fan_out %+v\n%s", fo, out)
	}

	// Without +cluster|info: unknown, with the missing permission named.
	acl := strings.ReplaceAll(scanner.MinimalACL, " +cluster|info", "")
	for _, n := range cl.Nodes {
		redistest.ACLUser(t, n, "noclusterinfo", "pw", strings.Fields(acl)...)
	}
	url := "redis://noclusterinfo:pw@" + cl.Masters[0].Addr
	_, doc, out = auditFanOut(t, "--registry", reg, "--url", url)
	fo = doc.Channels.FanOut
	if fo.Status != "unknown" || fo.Estimate != nil || !strings.Contains(fo.Reason, "+cluster|info") || fo.WaitedSeconds != 0 {
		t.Errorf("without +cluster|info: fan_out %+v, want unknown naming +cluster|info\n%s", fo, out)
	}
	if strings.Contains(out, `"bus_messages_per_second": 0`) {
		t.Errorf("without +cluster|info the report shows a zero rate:\n%s", out)
	}
	for _, f := range doc.Findings {
		if f.Rule == "channel-classic-on-cluster" && !strings.Contains(f.Message, "fan-out unknown") {
			t.Errorf("classic-on-cluster finding does not say the fan-out is unknown: %s", f.Message)
		}
	}

	// A publisher on the first master, about 200 messages/s.
	pc := redis.NewClient(&redis.Options{Addr: cl.Masters[0].Addr})
	t.Cleanup(func() { pc.Close() })
	pub := startPublisher(ctx, pc, "news", 5*time.Millisecond)
	for deadline := time.Now().Add(10 * time.Second); pub.count() < 20; {
		if time.Now().After(deadline) {
			pub.halt(t)
			t.Fatal("the publisher did not get going")
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, with a deadline
	}
	_, doc, out = auditFanOut(t, "--registry", reg, "--url", cl.URL(), "--fanout-window", "2s")
	pub.halt(t)
	fo = doc.Channels.FanOut
	if fo.Status != "estimated" || fo.Estimate == nil {
		t.Fatalf("fan_out %+v, want an estimate\n%s", fo, out)
	}
	if fo.WindowSeconds < 2 || fo.WaitedSeconds <= 0 {
		t.Errorf("window %vs, waited %vs: want at least the 2s minimum, waited out", fo.WindowSeconds, fo.WaitedSeconds)
	}
	from, err1 := time.Parse(time.RFC3339Nano, fo.WindowStart)
	to, err2 := time.Parse(time.RFC3339Nano, fo.WindowEnd)
	if err1 != nil || err2 != nil {
		t.Fatalf("window %q to %q: %v %v", fo.WindowStart, fo.WindowEnd, err1, err2)
	}
	in, unsure := pub.between(from, to, 20*time.Millisecond)
	if in < 100 {
		t.Fatalf("only %d messages published in the window: the publisher stalled", in)
	}
	e := fo.Estimate
	t.Logf("window %.3fs (waited %.3fs): %d messages published in it (%d near an end); estimate %+v", fo.WindowSeconds, fo.WaitedSeconds, in, unsure, *e)
	if e.Nodes != 3 {
		t.Errorf("estimate over %d nodes, want 3", e.Nodes)
	}
	lo, hi := float64(in), float64(in+unsure)
	if p := float64(e.Published); p < 0.8*lo || p > 1.2*hi {
		t.Errorf("published %d, want %d to %d messages within 20%%", e.Published, in, in+unsure)
	}
	if b := float64(e.BusMessages); b < 0.8*lo*2 || b > 1.2*hi*2 {
		t.Errorf("bus messages %d, want (%d to %d) × (3 − 1) within 20%%", e.BusMessages, in, in+unsure)
	}
	if r := e.BusMessagesPerSecond * fo.WindowSeconds; r < 0.8*lo*2 || r > 1.2*hi*2 {
		t.Errorf("bus messages/s %v over %vs, want (%d to %d) × 2 messages within 20%%", e.BusMessagesPerSecond, fo.WindowSeconds, in, in+unsure)
	}
	// Redis 7.0 sends the full header: at least 2264 bytes a message.
	if e.BusHeaderBytes != 2256 || e.BusBytesPerSecondMin < e.BusMessagesPerSecond*2264*0.999 {
		t.Errorf("bus header %d bytes, bytes/s %v for %v messages/s", e.BusHeaderBytes, e.BusBytesPerSecondMin, e.BusMessagesPerSecond)
	}
	var msg string
	for _, f := range doc.Findings {
		if f.Rule == "channel-classic-on-cluster" && f.Channel == "news" {
			msg = f.Message
		}
	}
	for _, w := range []string{"messages/s published", "bus messages/s across 3 nodes", "at least", "(estimate)"} {
		if !strings.Contains(msg, w) {
			t.Errorf("classic-on-cluster finding lacks %q: %q", w, msg)
		}
	}
}

// --fanout-window is checked before Redis is touched: a negative or too
// long window, or one given where no channel audit runs, is a usage error.
func TestAuditFanOutUsage(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(fanOutKeysYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	rdb := "../../snapshot/testdata/servers/redis-7.4.1.rdb"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--fanout-window", "-1s", "--rdb", rdb}, "--fanout-window -1s is not between 0 and 5m0s"},
		{[]string{"--fanout-window", "6m", "--rdb", rdb}, "is not between 0 and 5m0s"},
		{[]string{"--fanout-window", "1s", "--rdb", rdb}, "--fanout-window needs the channel audit of a live Redis"},
	} {
		code, _, stderr := cli(t, append([]string{"audit", "--registry", reg}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 with %q\n%s", c.args, code, c.want, stderr)
		}
	}
}
