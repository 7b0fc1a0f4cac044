package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/internal/testenv"
	"github.com/keyreg/keyreg/scanner"
)

// channelSeries is the samples of a family as "label=value,..." → value.
func channelSeries(fams map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range fams[name].GetMetric() {
		var ls []string
		for _, l := range m.GetLabel() {
			ls = append(ls, l.GetName()+"="+l.GetValue())
		}
		v := m.GetGauge().GetValue()
		if m.Counter != nil {
			v = m.GetCounter().GetValue()
		}
		out[strings.Join(ls, ",")] = v
	}
	return out
}

// channelFindingsOf is keyreg_channel_findings as "severity rule channel
// count" lines, sorted.
func channelFindingsOf(fams map[string]*dto.MetricFamily) []string {
	var out []string
	for _, m := range fams["keyreg_channel_findings"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		out = append(out, l["severity"]+" "+l["rule"]+" "+l["channel"]+" "+formatCount(m.GetGauge().GetValue()))
	}
	sort.Strings(out)
	return out
}

func formatCount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func writeChannelsRegistry(t *testing.T) string {
	t.Helper()
	reg := filepath.Join(t.TempDir(), "keys.yaml")
	if err := os.WriteFile(reg, []byte(channelsKeysYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestServeChannels serves a real server with classic, sharded and
// pattern subscribers held open: the channel metrics scraped over HTTP are
// the seeded subscribers and findings (those of keyreg audit --format
// json of the same server), the publish counter is the server's, promtool
// accepts the exposition, 50 scrapes send Redis no command, and
// --channels=false serves no channel series.
func TestServeChannels(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool is in Debian's prometheus package (scripts/test.sh installs it)", "promtool")
	s := redistest.Standalone(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := s.Client(t)
	if err := c.Set(ctx, "user:1", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	holdSubscription(t, ctx, s.Client(t).Subscribe(ctx, "news"))
	holdSubscription(t, ctx, s.Client(t).Subscribe(ctx, "news"))
	holdSubscription(t, ctx, s.Client(t).Subscribe(ctx, "news"))
	holdSubscription(t, ctx, s.Client(t).Subscribe(ctx, "orders:{7}"))     // sharded, subscribed classic
	holdSubscription(t, ctx, s.Client(t).Subscribe(ctx, "old"))            // deprecated, live
	holdSubscription(t, ctx, s.Client(t).Subscribe(ctx, "tmp:a", "tmp:b")) // unregistered
	holdSubscription(t, ctx, s.Client(t).SSubscribe(ctx, "orders:{8}"))    // sharded, as declared
	holdSubscription(t, ctx, s.Client(t).PSubscribe(ctx, "news*"))         // a pattern: NUMPAT 1
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for range 7 {
		if err := c.Publish(ctx, "news", "hello").Err(); err != nil {
			t.Fatal(err)
		}
	}
	reg := writeChannelsRegistry(t)

	srv := startServe(t, nil, "--url", s.URL(), "--registry", reg, "--interval", "1h")
	srv.ready(t)
	before := redistest.CommandStats(t, c)
	var fams map[string]*dto.MetricFamily
	for range 50 {
		fams = srv.scrape(t)
	}
	after := redistest.CommandStats(t, c)
	for cmd, n := range after {
		if strings.HasPrefix(cmd, "pubsub") && n != before[cmd] {
			t.Errorf("50 scrapes sent %d %s, want 0", n-before[cmd], cmd)
		}
		if writes[cmd] || cmd == "publish" && n != 7 || cmd == "spublish" {
			t.Errorf("serve sent %s (%d calls)", cmd, n)
		}
	}
	if after["pubsub|channels"] == 0 || after["pubsub|shardnumsub"] == 0 {
		t.Fatalf("no PUBSUB CHANNELS or SHARDNUMSUB at all: the channels were not read (%v)", after)
	}

	wantSubs := map[string]float64{
		"channel=news,mode=classic,owner=identity": 3,
		"channel=old,mode=classic,owner=":          1,
		"channel=orders,mode=sharded,owner=shop":   2,
		"channel=quiet,mode=classic,owner=":        0,
	}
	if got := channelSeries(fams, "keyreg_channel_subscribers"); !equalSeries(got, wantSubs) {
		t.Errorf("keyreg_channel_subscribers %v, want %v", got, wantSubs)
	}
	if got := channelSeries(fams, "keyreg_channel_live"); got["channel=orders,mode=sharded,owner=shop"] != 2 || got["channel=news,mode=classic,owner=identity"] != 1 || got["channel=quiet,mode=classic,owner="] != 0 {
		t.Errorf("keyreg_channel_live %v", got)
	}
	wantFindings := []string{
		"error channel-mode-mismatch orders 1",
		"error channel-unregistered tmp: 2",
		"info channel-no-subscribers quiet 1",
		"warn channel-deprecated-live old 1",
	}
	if got := channelFindingsOf(fams); strings.Join(got, "\n") != strings.Join(wantFindings, "\n") {
		t.Errorf("keyreg_channel_findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantFindings, "\n"))
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"keyreg_unregistered_channels", []string{"prefix", "tmp:"}, 2},
		{"keyreg_unregistered_channel_subscribers", []string{"prefix", "tmp:"}, 2},
		{"keyreg_channel_pattern_subscriptions", nil, 1},
		{"keyreg_channel_nodes", nil, 1},
		{"keyreg_channel_audit_success", nil, 1},
		{"keyreg_channel_audit_partial", nil, 0},
		{"keyreg_channel_nodes_not_checked", nil, 0},
		{"keyreg_channel_publish_calls_total", []string{"node", s.Addr}, 7},
		{"keyreg_audit_success", nil, 1},
	} {
		if got := value(fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if fams["keyreg_channel_bus_publish_sent_total"] != nil {
		t.Error("a standalone server has no cluster bus, yet keyreg_channel_bus_publish_sent_total is served")
	}
	// The key findings do not carry the channel ones.
	for _, m := range fams["keyreg_findings"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "rule" && strings.HasPrefix(l.GetValue(), "channel-") {
				t.Errorf("keyreg_findings carries %s", l.GetValue())
			}
		}
	}

	// The same findings as keyreg audit's of the same server.
	_, stdout, _ := cli(t, "audit", "--registry", reg, "--url", s.URL(), "--format", "json")
	var doc struct {
		Findings []struct {
			Rule, Channel, Severity string
			Count                   int64
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	var audited []string
	for _, f := range doc.Findings {
		if f.Channel != "" {
			audited = append(audited, f.Severity+" "+f.Rule+" "+f.Channel+" "+formatCount(float64(f.Count)))
		}
	}
	sort.Strings(audited)
	if strings.Join(audited, "\n") != strings.Join(wantFindings, "\n") {
		t.Errorf("keyreg audit's channel findings:\n%s\nserve's:\n%s", strings.Join(audited, "\n"), strings.Join(wantFindings, "\n"))
	}
	if code, _, body := httpGet(t, "http://"+srv.addr+"/report.json", ""); code != 200 || !bytes.Contains(body, []byte(`"channels": {`)) || !bytes.Contains(body, []byte("channel-mode-mismatch")) {
		t.Errorf("/report.json (%d) lacks the channel section:\n%.2000s", code, body)
	}

	promtoolBoth(t, promtool, srv.addr)

	off := startServe(t, nil, "--url", s.URL(), "--registry", reg, "--interval", "1h", "--channels=false")
	off.ready(t)
	_, _, body := httpGet(t, "http://"+off.addr+"/metrics", "")
	if bytes.Contains(body, []byte("keyreg_channel_")) || bytes.Contains(body, []byte("keyreg_unregistered_channel")) {
		t.Errorf("--channels=false serves channel series:\n%s", body)
	}
	if !bytes.Contains(body, []byte("\nkeyreg_audit_success 1\n")) {
		t.Error("--channels=false: no complete audit")
	}
}

// promtoolBoth lints the exposition of the serve at addr in the text
// format and in OpenMetrics, as TestServeMatchesAudit does.
func promtoolBoth(t *testing.T, promtool, addr string) {
	t.Helper()
	for _, accept := range []string{"", openMetrics} {
		_, ctype, body := httpGet(t, "http://"+addr+"/metrics", accept)
		if accept != "" {
			checkOpenMetricsFamilies(t, body)
		}
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(body)
		out, err := cmd.CombinedOutput()
		if err != nil && (accept == "" || !onlyCounterHelp(out, body)) {
			t.Errorf("promtool check metrics (%s): %v\n%s", ctype, err, out)
		}
	}
}

func equalSeries(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestServeChannelsACL: a user without +pubsub makes every channel read
// partial, and the metrics say so while the key figures stay fresh: from
// the start (no channel figures at all), and after a complete read (its
// figures stay, with their age, never as a fresh read).
func TestServeChannelsACL(t *testing.T) {
	s := redistest.Standalone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	holdSubscription(t, ctx, s.Client(t).Subscribe(ctx, "news"))
	reg := writeChannelsRegistry(t)
	redistest.ACLUser(t, s, "watch", "pw", strings.Fields(scanner.MinimalACL)...)
	redistest.ACLUser(t, s, "nopubsub", "pw", strings.Fields(strings.ReplaceAll(scanner.MinimalACL, " +pubsub", ""))...)

	// Without +pubsub from the start.
	denied := startServe(t, nil, "--url", "redis://nopubsub:pw@"+s.Addr, "--registry", reg, "--interval", "1h")
	denied.ready(t)
	fams := denied.scrape(t)
	for _, c := range []struct {
		name string
		want float64
	}{
		{"keyreg_channel_audit_partial", 1}, {"keyreg_channel_audit_success", 0},
		{"keyreg_channel_nodes_not_checked", 1}, {"keyreg_audit_success", 1},
	} {
		if got := value(fams, c.name); got != c.want {
			t.Errorf("without +pubsub: %s = %v, want %v", c.name, got, c.want)
		}
	}
	for _, name := range []string{"keyreg_channel_subscribers", "keyreg_channel_findings", "keyreg_channel_audit_last_success_timestamp_seconds", "keyreg_channel_publish_calls_total"} {
		if fams[name] != nil {
			t.Errorf("without +pubsub, %s is served", name)
		}
	}
	_, _, rep := httpGet(t, "http://"+denied.addr+"/report.json", "")
	if !bytes.Contains(rep, []byte("channels not in this report")) || !bytes.Contains(rep, []byte("+pubsub")) {
		t.Errorf("the report does not say why its channels are missing:\n%.3000s", rep)
	}
	if strings.Contains(denied.stderr.String(), "pw@") {
		t.Error("the log shows the password")
	}

	// +pubsub taken away after a complete read.
	w := startServe(t, nil, "--url", "redis://watch:pw@"+s.Addr, "--registry", reg, "--interval", "1s")
	var first float64
	waitFor(t, "a complete channel read", func() bool {
		fams = w.scrape(t)
		first = value(fams, "keyreg_channel_audit_last_success_timestamp_seconds")
		return value(fams, "keyreg_channel_audit_success") == 1 && first > 0
	})
	if got := value(fams, "keyreg_channel_subscribers", "channel", "news"); got != 1 {
		t.Fatalf("keyreg_channel_subscribers{news} = %v, want 1", got)
	}
	if err := s.Client(t).Do(ctx, "ACL", "SETUSER", "watch", "-pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	keysBefore := value(fams, "keyreg_audit_last_success_timestamp_seconds")
	waitFor(t, "a partial channel read", func() bool {
		fams = w.scrape(t)
		return value(fams, "keyreg_channel_audit_partial") == 1
	})
	waitFor(t, "a later complete key audit", func() bool {
		fams = w.scrape(t)
		return value(fams, "keyreg_audit_last_success_timestamp_seconds") > keysBefore
	})
	for _, c := range []struct {
		name string
		want float64
	}{
		{"keyreg_channel_audit_success", 0}, {"keyreg_channel_nodes_not_checked", 1},
		{"keyreg_channel_audit_last_success_timestamp_seconds", first}, // the figures' age: that of the complete read
		{"keyreg_audit_success", 1},
	} {
		if got := value(fams, c.name); got != c.want {
			t.Errorf("after -pubsub: %s = %v, want %v", c.name, got, c.want)
		}
	}
	if got := value(fams, "keyreg_channel_subscribers", "channel", "news"); got != 1 {
		t.Errorf("after -pubsub, keyreg_channel_subscribers{news} = %v, want the last complete read's 1", got)
	}
}

// TestServeChannelsCluster serves a real 3-master cluster with classic
// subscribers spread over the nodes and sharded ones on their slots'
// owners: the subscribers are summed across nodes, the findings per rule
// are the seeded ones, and the per-node publish counters are the servers'
// own, whose bus/publish ratio is nodes − 1, as docs/serve.md's PromQL
// says.
func TestServeChannelsCluster(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool is in Debian's prometheus package (scripts/test.sh installs it)", "promtool")
	cs := redistest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := cs.Masters
	holdSubscription(t, ctx, m[0].Client(t).Subscribe(ctx, "news"))
	holdSubscription(t, ctx, m[0].Client(t).Subscribe(ctx, "news"))
	holdSubscription(t, ctx, m[1].Client(t).Subscribe(ctx, "news"))
	holdSubscription(t, ctx, m[2].Client(t).Subscribe(ctx, "old"))
	holdSubscription(t, ctx, m[1].Client(t).Subscribe(ctx, "tmp:a"))
	holdSubscription(t, ctx, m[2].Client(t).Subscribe(ctx, "tmp:b"))
	holdSubscription(t, ctx, m[0].Client(t).Subscribe(ctx, "orders:{9}")) // sharded, subscribed classic
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cs.Addrs, DisableIdentity: true})
	t.Cleanup(func() { cc.Close() })
	holdSubscription(t, ctx, cc.SSubscribe(ctx, "orders:{7}"))
	holdSubscription(t, ctx, cc.SSubscribe(ctx, "orders:{8}"))
	holdSubscription(t, ctx, cc.SSubscribe(ctx, "orders:{8}"))

	counters := func(n *redistest.Server) (calls, sent int64) {
		c := n.Client(t)
		calls = int64(redistest.CommandStats(t, c)["publish"])
		info, err := c.ClusterInfo(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "cluster_stats_messages_publish_sent:"); ok {
				if err := json.Unmarshal([]byte(v), &sent); err != nil {
					t.Fatal(err)
				}
			}
		}
		return calls, sent
	}
	var callsBefore, sentBefore int64
	for _, n := range m {
		c, s := counters(n)
		callsBefore, sentBefore = callsBefore+c, sentBefore+s
	}
	const published = 40
	for i := range published {
		if err := m[i%3].Client(t).Publish(ctx, "news", "hello").Err(); err != nil {
			t.Fatal(err)
		}
	}
	reg := writeChannelsRegistry(t)
	srv := startServe(t, nil, "--url", cs.URL(), "--cluster", "--registry", reg, "--interval", "1h")
	srv.ready(t)
	fams := srv.scrape(t)

	wantSubs := map[string]float64{
		"channel=news,mode=classic,owner=identity": 3,
		"channel=old,mode=classic,owner=":          1,
		"channel=orders,mode=sharded,owner=shop":   4,
		"channel=quiet,mode=classic,owner=":        0,
	}
	if got := channelSeries(fams, "keyreg_channel_subscribers"); !equalSeries(got, wantSubs) {
		t.Errorf("keyreg_channel_subscribers %v, want %v (summed over the nodes)", got, wantSubs)
	}
	wantFindings := []string{
		"error channel-mode-mismatch orders 1",
		"error channel-unregistered tmp: 2",
		"info channel-no-subscribers quiet 1",
		"warn channel-classic-on-cluster news 1",
		"warn channel-classic-on-cluster old 1",
		"warn channel-deprecated-live old 1",
	}
	if got := channelFindingsOf(fams); strings.Join(got, "\n") != strings.Join(wantFindings, "\n") {
		t.Errorf("keyreg_channel_findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantFindings, "\n"))
	}
	if got := value(fams, "keyreg_channel_nodes"); got != 3 {
		t.Errorf("keyreg_channel_nodes = %v, want 3", got)
	}
	if got := value(fams, "keyreg_channel_audit_success"); got != 1 {
		t.Errorf("keyreg_channel_audit_success = %v, want 1", got)
	}
	promtoolBoth(t, promtool, srv.addr)

	// The counters are each node's own: equal to what the node says now
	// (nothing publishes any more), and their ratio is nodes − 1.
	calls, sent := channelSeries(fams, "keyreg_channel_publish_calls_total"), channelSeries(fams, "keyreg_channel_bus_publish_sent_total")
	if len(calls) != 3 || len(sent) != 3 {
		t.Fatalf("publish counters of %d and %d nodes, want 3: %v %v", len(calls), len(sent), calls, sent)
	}
	var callsNow, sentNow float64
	for _, n := range m {
		c, s := counters(n)
		if calls["node="+n.Addr] != float64(c) || sent["node="+n.Addr] != float64(s) {
			t.Errorf("node %s: served publish %v, bus sent %v; the node says %d, %d", n.Addr, calls["node="+n.Addr], sent["node="+n.Addr], c, s)
		}
		callsNow, sentNow = callsNow+calls["node="+n.Addr], sentNow+sent["node="+n.Addr]
	}
	dCalls, dSent := callsNow-float64(callsBefore), sentNow-float64(sentBefore)
	if dCalls != published || dSent != published*2 {
		t.Errorf("over %d PUBLISH: served counters rose by %v publishes and %v bus messages, want %d and %d (nodes − 1 = 2 per publish)", published, dCalls, dSent, published, published*2)
	}
}

// TestServeChannelsPrometheus: a real Prometheus scraping serve on a real
// 3-master cluster while a publisher loop runs computes docs/serve.md's
// fan-out, bus messages/s ÷ publishes/s, as nodes − 1 (within 20%), and
// reads the subscribers summed across nodes.
func TestServeChannelsPrometheus(t *testing.T) {
	prom := testenv.LookPath(t, "prometheus is Debian's prometheus package (scripts/test.sh installs it)", "prometheus")
	cs := redistest.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	holdSubscription(t, ctx, cs.Masters[0].Client(t).Subscribe(ctx, "news"))
	holdSubscription(t, ctx, cs.Masters[2].Client(t).Subscribe(ctx, "news"))
	reg := writeChannelsRegistry(t)
	srv := startServe(t, nil, "--url", cs.URL(), "--cluster", "--registry", reg, "--interval", "1s")
	srv.ready(t)

	// The publisher: classic PUBLISH round-robin on the three masters,
	// every 10ms, until the test ends.
	pubCtx, stopPub := context.WithCancel(ctx)
	pubDone := make(chan struct{})
	clients := []*redis.Client{cs.Masters[0].Client(t), cs.Masters[1].Client(t), cs.Masters[2].Client(t)}
	go func() {
		defer close(pubDone)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-pubCtx.Done():
				return
			case <-tick.C:
			}
			_ = clients[i%3].Publish(pubCtx, "news", "m").Err()
		}
	}()
	defer func() { stopPub(); <-pubDone }()

	_, query := startPrometheus(t, prom, srv.addr, "")
	var subs string
	waitFor(t, "Prometheus to scrape keyreg_channel_subscribers", func() bool {
		v, ok := query(`sum(keyreg_channel_subscribers{channel="news",job="keyreg"})`)
		subs = v
		return ok
	})
	if subs != "2" {
		t.Errorf(`Prometheus has sum(keyreg_channel_subscribers{channel="news"}) = %s, want 2 (one per node)`, subs)
	}
	const fanout = `sum(rate(keyreg_channel_bus_publish_sent_total{job="keyreg"}[20s])) / sum(rate(keyreg_channel_publish_calls_total{job="keyreg"}[20s]))`
	var ratio float64
	// Several audits (1s apart) must have moved the counters: wait for
	// 5 publishes/s at least, then for the ratio.
	waitFor(t, "publishes/s in Prometheus", func() bool {
		v, ok := query(`sum(rate(keyreg_channel_publish_calls_total{job="keyreg"}[20s]))`)
		f, err := strconv.ParseFloat(v, 64)
		return ok && err == nil && f > 5
	})
	waitFor(t, "the fan-out in Prometheus", func() bool {
		v, ok := query(fanout)
		f, err := strconv.ParseFloat(v, 64)
		ratio = f
		return ok && err == nil && f > 0
	})
	if ratio < 2*0.8 || ratio > 2*1.2 {
		t.Errorf("%s = %v, want nodes − 1 = 2 within 20%%", fanout, ratio)
	}
	t.Logf("fan-out %v", ratio)
}

// TestServeChannelsCardinality: 10,000 live unregistered channels, each
// under a prefix of its own, and hostile names (invalid UTF-8, quotes, a
// newline, 2,000 bytes) give at most --max-groups + 1 prefix series that
// sum to every one of them, and an exposition promtool accepts.
func TestServeChannelsCardinality(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool is in Debian's prometheus package (scripts/test.sh installs it)", "promtool")
	s := redistest.Standalone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ps := s.Client(t).Subscribe(ctx)
	t.Cleanup(func() { ps.Close() })
	names := []string{"\xff\xfe:bad", `q"uote\:x`, "new\nline:x", strings.Repeat("L", 2000), "other"}
	for i := range 10_000 {
		names = append(names, "p"+strconv.Itoa(i)+":x")
	}
	for i := 0; i < len(names); i += 1000 {
		if err := ps.Subscribe(ctx, names[i:min(i+1000, len(names))]...); err != nil {
			t.Fatal(err)
		}
	}
	c := s.Client(t)
	waitFor(t, "the subscriptions", func() bool {
		live, err := c.PubSubChannels(ctx, "*").Result()
		return err == nil && len(live) == len(names)
	})
	reg := writeChannelsRegistry(t)
	srv := startServe(t, nil, "--url", s.URL(), "--registry", reg, "--interval", "1h", "--max-groups", "20")
	srv.ready(t)
	fams := srv.scrape(t)
	unreg := channelSeries(fams, "keyreg_unregistered_channels")
	var sum float64
	for _, v := range unreg {
		sum += v
	}
	if len(unreg) > 21 || sum != float64(len(names)) {
		t.Errorf("%d keyreg_unregistered_channels series summing to %v, want at most 21 summing to %d", len(unreg), sum, len(names))
	}
	var unregFindings float64
	n := 0
	for _, m := range fams["keyreg_channel_findings"].GetMetric() {
		n++
		for _, l := range m.GetLabel() {
			if l.GetName() == "rule" && l.GetValue() == "channel-unregistered" {
				unregFindings += m.GetGauge().GetValue()
			}
		}
	}
	if unregFindings != float64(len(names)) || n > 21+4 {
		t.Errorf("channel-unregistered findings sum to %v in %d series, want %d in at most 25", unregFindings, n, len(names))
	}
	promtoolBoth(t, promtool, srv.addr)
}
