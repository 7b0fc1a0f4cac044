package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

const channelsKeysYAML = `version: 1
families:
  - name: user
    owner: identity
    pattern: "user:{id:int}"
    ttl: persistent
channels:
  - name: news
    owner: identity
    pattern: "news"
  - name: orders
    owner: shop
    pattern: "orders:{{id:int}}"
    mode: sharded
  - name: quiet
    pattern: "quiet"
  - name: old
    pattern: "old"
    deprecated: {since: 2026-01-01, replaced_by: news}
`

// holdSubscription opens a subscription until the test ends, returning
// once the server confirmed it.
func holdSubscription(t *testing.T, ctx context.Context, ps *redis.PubSub) {
	t.Helper()
	t.Cleanup(func() { ps.Close() })
	msg, err := ps.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := msg.(*redis.Subscription); !ok {
		t.Fatalf("got %T, want a subscription confirmation", msg)
	}
}

// TestAuditChannels audits a real server with subscribers held open: the
// channel findings come out in text and json, count for the exit code,
// are skipped by --channels=false, and a user without +pubsub makes the
// run partial (exit 3), never clean.
func TestAuditChannels(t *testing.T) {
	s := redistest.Standalone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := s.Client(t)
	if err := c.Set(ctx, "user:1", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	sub := s.Client(t)
	holdSubscription(t, ctx, sub.Subscribe(ctx, "news"))
	holdSubscription(t, ctx, sub.Subscribe(ctx, "news"))                   // go-redis opens a connection per PubSub: a second subscriber
	holdSubscription(t, ctx, s.Client(t).Subscribe(ctx, "news"))           // a second one
	holdSubscription(t, ctx, s.Client(t).Subscribe(ctx, "orders:{7}"))     // sharded, subscribed classic
	holdSubscription(t, ctx, s.Client(t).Subscribe(ctx, "old"))            // deprecated, live
	holdSubscription(t, ctx, s.Client(t).Subscribe(ctx, "tmp:a", "tmp:b")) // unregistered
	holdSubscription(t, ctx, s.Client(t).SSubscribe(ctx, "orders:{8}"))    // sharded, as declared

	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(channelsKeysYAML), 0o644); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := cli(t, "audit", "--registry", reg, "--url", s.URL(), "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (channel errors)\n%s\n%s", code, stdout, stderr)
	}
	var doc struct {
		Partial  bool `json:"partial"`
		Findings []struct {
			Rule     string `json:"rule"`
			Channel  string `json:"channel"`
			Severity string `json:"severity"`
			Count    int64  `json:"count"`
		} `json:"findings"`
		Channels *struct {
			Nodes    int `json:"nodes"`
			Declared []struct {
				Name        string `json:"name"`
				Live        int    `json:"live"`
				Subscribers int64  `json:"subscribers"`
			} `json:"declared"`
			Unregistered []struct {
				Prefix      string `json:"prefix"`
				Channels    int    `json:"channels"`
				Subscribers int64  `json:"subscribers"`
			} `json:"unregistered"`
			FanOut *struct {
				Status   string          `json:"status"`
				Reason   string          `json:"reason"`
				Estimate json.RawMessage `json:"estimate"`
			} `json:"fan_out"`
		} `json:"channels"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if doc.Partial || doc.Channels == nil || doc.Channels.Nodes != 1 {
		t.Fatalf("partial %v, channels %+v", doc.Partial, doc.Channels)
	}
	var got []string
	for _, f := range doc.Findings {
		if f.Channel != "" {
			got = append(got, f.Severity+" "+f.Rule+" "+f.Channel)
		}
	}
	sort.Strings(got)
	want := []string{
		"error channel-mode-mismatch orders",
		"error channel-unregistered tmp:",
		"info channel-no-subscribers quiet",
		"warn channel-deprecated-live old",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("channel findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	subs := map[string]int64{}
	for _, d := range doc.Channels.Declared {
		subs[d.Name] = d.Subscribers
	}
	if subs["news"] != 3 || subs["orders"] != 2 || subs["old"] != 1 || subs["quiet"] != 0 {
		t.Errorf("subscribers per declaration %v, want news 3, orders 2, old 1, quiet 0", subs)
	}
	// Standalone: no cluster bus, so no fan-out estimate, and it says why.
	if fo := doc.Channels.FanOut; fo == nil || fo.Status != "no-bus" || fo.Estimate != nil || !strings.Contains(fo.Reason, "no cluster bus") {
		t.Errorf("standalone fan_out %+v, want no-bus without an estimate", fo)
	}
	if u := doc.Channels.Unregistered; len(u) != 1 || u[0].Prefix != "tmp:" || u[0].Channels != 2 || u[0].Subscribers != 2 {
		t.Errorf("unregistered channels %+v", u)
	}

	code, stdout, _ = cli(t, "audit", "--registry", reg, "--url", s.URL(), "--format", "text")
	if code != 1 {
		t.Errorf("text: exit %d, want 1", code)
	}
	for _, w := range []string{
		"channels: 1 node read",
		`error: 2 live channels under "tmp:" match no channel in the registry`,
		"(channel-mode-mismatch)",
		"(channel-deprecated-live)",
		"keys.yaml:11:5: error: channel \"orders\" is declared sharded",
		"classic Pub/Sub fan-out: not a Redis Cluster",
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("text report lacks %q:\n%s", w, stdout)
		}
	}

	// --channels=false: the same run without the channel audit is clean.
	code, stdout, stderr = cli(t, "audit", "--registry", reg, "--url", s.URL(), "--format", "json", "--channels=false")
	if code != 0 || strings.Contains(stdout, `"channels"`) || strings.Contains(stdout, "channel-") {
		t.Errorf("--channels=false: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// Without +pubsub: partial, exit 3, the node named in every format.
	acl := strings.ReplaceAll(scanner.MinimalACL, " +pubsub", "")
	redistest.ACLUser(t, s, "nopubsub", "pw", strings.Fields(acl)...)
	url := "redis://nopubsub:pw@" + s.Addr
	code, stdout, stderr = cli(t, "audit", "--registry", reg, "--url", url, "--format", "json")
	if code != 3 {
		t.Fatalf("without +pubsub: exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, `"partial": true`) || !strings.Contains(stdout, "+pubsub") || !strings.Contains(stdout, `"not_checked"`) {
		t.Errorf("without +pubsub the json does not say partial / not checked:\n%s", stdout)
	}
	code, stdout, _ = cli(t, "audit", "--registry", reg, "--url", url, "--format", "text")
	if code != 3 || !strings.Contains(stdout, "PARTIAL AUDIT: channel audit") || !strings.Contains(stdout, "NOT CHECKED") {
		t.Errorf("without +pubsub, text: exit %d\n%s", code, stdout)
	}
}

// TestAuditChannelsSnapshot: a snapshot has no Pub/Sub state, so a
// registry with channels audits its keys and says the channels were not
// audited; --channels on a snapshot is a usage error.
func TestAuditChannelsSnapshot(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(channelsKeysYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	rdb := "../../snapshot/testdata/servers/redis-7.4.1.rdb"
	_, stdout, stderr := cli(t, "audit", "--registry", reg, "--rdb", rdb, "--format", "json")
	if !strings.Contains(stdout, "channels not audited: a snapshot holds no Pub/Sub state") || strings.Contains(stdout, `"channels": {`) {
		t.Errorf("snapshot audit does not say the channels were not audited:\n%s\n%s", stdout, stderr)
	}
	if code, _, stderr := cli(t, "audit", "--registry", reg, "--rdb", rdb, "--channels"); code != 2 || !strings.Contains(stderr, "--channels needs a live Redis") {
		t.Errorf("--channels on a snapshot: exit %d, want 2\n%s", code, stderr)
	}
}
