package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
	dto "github.com/prometheus/client_model/go"
)

const channelsYAML = `version: 1
families: []
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

func channelsRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte(channelsYAML))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// series is the samples of family name, by their labels (name=value,...).
func series(mfs map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range mfs[name].GetMetric() {
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

// TestChannelSnapshot: the channel metrics of a two-node read are the
// declarations' subscribers summed over the nodes, the findings per rule,
// and the unregistered channels in at most maxGroups prefixes and other,
// whatever names the live channels have (invalid UTF-8, 1,000 bytes, a
// channel called other, 5,000 prefixes); the per-node publish counters
// are the raw server counters, absent where a node does not report them.
func TestChannelSnapshot(t *testing.T) {
	reg := channelsRegistry(t)
	long := strings.Repeat("x", 1000)
	a := source.NodeChannels{Node: "10.0.0.1:6379", Primary: true, Slots: [][2]int{{0, 8191}},
		Classic: []source.ChannelCount{{Name: "news", Subscribers: 2}, {Name: "orders:{7}", Subscribers: 1}, {Name: "old", Subscribers: 1},
			{Name: "bad\xff:1", Subscribers: 1}, {Name: long + "a", Subscribers: 1}, {Name: long + "b", Subscribers: 1}, {Name: "other", Subscribers: 4}, {Name: "q\"\n\\:x", Subscribers: 1}},
		NumPat: 2, PublishCalls: 10, BusPublishSent: 20, BusPublishReceived: 3}
	b := source.NodeChannels{Node: "10.0.0.2:6379", Primary: true, Slots: [][2]int{{8192, 16383}},
		Classic: []source.ChannelCount{{Name: "news", Subscribers: 1}},
		Sharded: []source.ChannelCount{{Name: "orders:{8}", Subscribers: 3}},
		NumPat:  1, PublishCalls: 5, BusPublishSent: -1, BusPublishReceived: -1}
	for i := range 5000 {
		b.Classic = append(b.Classic, source.ChannelCount{Name: fmt.Sprintf("u%d", i), Subscribers: 1})
	}
	nodes := []source.NodeChannels{a, b}
	cr := audit.Channels(reg, nodes)
	s := newChannelSnapshot(reg, cr, nodes, 20)
	mfs := gather(t, s) // a pedantic registry: no series twice, valid UTF-8

	subs := series(mfs, "keyreg_channel_subscribers")
	want := map[string]float64{
		"channel=news,mode=classic,owner=identity": 3,
		"channel=old,mode=classic,owner=":          1,
		"channel=orders,mode=sharded,owner=shop":   4,
		"channel=quiet,mode=classic,owner=":        0,
	}
	if fmt.Sprint(subs) != fmt.Sprint(want) {
		t.Errorf("keyreg_channel_subscribers %v, want %v", subs, want)
	}
	if live := series(mfs, "keyreg_channel_live"); live["channel=orders,mode=sharded,owner=shop"] != 2 || live["channel=news,mode=classic,owner=identity"] != 1 {
		t.Errorf("keyreg_channel_live %v", live)
	}
	f := series(mfs, "keyreg_channel_findings")
	for k, v := range map[string]float64{
		"channel=news,owner=identity,rule=channel-classic-on-cluster,severity=warn": 1,
		"channel=old,owner=,rule=channel-classic-on-cluster,severity=warn":          1,
		"channel=old,owner=,rule=channel-deprecated-live,severity=warn":             1,
		"channel=orders,owner=shop,rule=channel-mode-mismatch,severity=error":       1,
		"channel=quiet,owner=,rule=channel-no-subscribers,severity=info":            1,
	} {
		if f[k] != v {
			t.Errorf("keyreg_channel_findings{%s} = %v, want %v", k, f[k], v)
		}
	}
	// 5,005 unregistered channels: 20 prefixes and other, summing to all.
	unreg, unregF := series(mfs, "keyreg_unregistered_channels"), 0.0
	var total float64
	for k, v := range unreg {
		total += v
		if len(k) > len("prefix=")+maxLabelBytes+len("…") {
			t.Errorf("prefix label of %d bytes", len(k))
		}
	}
	nUnreg := 0
	for _, lc := range cr.Channels {
		if lc.Channel == "" {
			nUnreg++
		}
	}
	if len(unreg) != 21 || total != float64(nUnreg) || nUnreg != 5005 {
		t.Errorf("%d keyreg_unregistered_channels series summing to %v, want 21 summing to %d (5005)", len(unreg), total, nUnreg)
	}
	for k, v := range f {
		if strings.Contains(k, "rule=channel-unregistered") {
			unregF += v
		}
	}
	if n := len(mfs["keyreg_channel_findings"].GetMetric()); unregF != 5005 || n > 5+21 {
		t.Errorf("channel-unregistered findings sum to %v over a total of %d series, want 5005 in at most 21 series", unregF, n)
	}
	if subsU := series(mfs, "keyreg_unregistered_channel_subscribers"); subsU["prefix=other"] < 4980 {
		t.Errorf("unregistered subscribers of other: %v", subsU["prefix=other"])
	}
	if v := series(mfs, "keyreg_channel_pattern_subscriptions")[""]; v != 3 {
		t.Errorf("keyreg_channel_pattern_subscriptions %v, want 3", v)
	}
	calls, sent := series(mfs, "keyreg_channel_publish_calls_total"), series(mfs, "keyreg_channel_bus_publish_sent_total")
	if calls["node=10.0.0.1:6379"] != 10 || calls["node=10.0.0.2:6379"] != 5 || len(sent) != 1 || sent["node=10.0.0.1:6379"] != 20 {
		t.Errorf("publish counters %v, bus %v", calls, sent)
	}
	if mfs["keyreg_channel_publish_calls_total"].GetType() != dto.MetricType_COUNTER {
		t.Error("keyreg_channel_publish_calls_total is not a counter")
	}
	if v, r := series(mfs, "keyreg_channel_nodes_skipped")[""], series(mfs, "keyreg_channel_replicas_unread")[""]; v != 0 || r != 0 {
		t.Errorf("nothing skipped: keyreg_channel_nodes_skipped %v, keyreg_channel_replicas_unread %v", v, r)
	}

	// What the read left out is a gauge of its own, not only a report note.
	skipped := source.NodeChannels{Node: "10.0.0.9:6379", Skipped: "fail"}
	with := append(slices.Clone(nodes), skipped)
	cr = audit.Channels(reg, with)
	cr.UnreadReplicas = 2
	mfs = gather(t, newChannelSnapshot(reg, cr, with, 20))
	if v, r := series(mfs, "keyreg_channel_nodes_skipped")[""], series(mfs, "keyreg_channel_replicas_unread")[""]; v != 1 || r != 2 {
		t.Errorf("keyreg_channel_nodes_skipped %v, want 1; keyreg_channel_replicas_unread %v, want 2", v, r)
	}
}

// TestChannelsWanted: --channels mirrors keyreg audit's: on, off, or by
// default when the registry in use declares channels.
func TestChannelsWanted(t *testing.T) {
	with, without := channelsRegistry(t), &registry.Registry{}
	for _, c := range []struct {
		mode      ChannelsMode
		reg       *registry.Registry
		wantValue bool
	}{
		{ChannelsAuto, with, true}, {ChannelsAuto, without, false},
		{ChannelsOn, without, true}, {ChannelsOff, with, false},
	} {
		e := &Exporter{o: Options{Channels: c.mode}}
		if got := e.channelsWanted(c.reg); got != c.wantValue {
			t.Errorf("mode %d, %d channels: %v, want %v", c.mode, len(c.reg.Channels), got, c.wantValue)
		}
	}
}

// TestReadChannelsPartial: a node that refused PUBSUB makes the read
// incomplete, with the node counted; a read that failed as a whole counts
// one node at least; a source with no Pub/Sub state is no read.
func TestReadChannelsPartial(t *testing.T) {
	reg := channelsRegistry(t)
	ctx := context.Background()
	refused := errors.New("NOPERM this user has no permissions to run the 'pubsub|channels' command")
	rd := readChannels(ctx, &Source{Channels: func(context.Context) ([]source.NodeChannels, error) {
		return []source.NodeChannels{{Node: "a:1", Primary: true, Err: refused}, {Node: "b:1", Primary: true}}, nil
	}}, reg)
	if rd.err == nil || rd.notChecked() != 1 || !strings.Contains(rd.err.Error(), "1 of 2 nodes not read") || !strings.Contains(rd.err.Error(), "NOPERM") {
		t.Errorf("one node refused: err %v, not checked %d", rd.err, rd.notChecked())
	}
	rd = readChannels(ctx, &Source{Channels: func(context.Context) ([]source.NodeChannels, error) {
		return nil, errors.New("cluster nodes: connection refused")
	}}, reg)
	if rd.err == nil || rd.cr != nil || rd.notChecked() != 1 {
		t.Errorf("failed read: err %v, not checked %d", rd.err, rd.notChecked())
	}
	if rd = readChannels(ctx, &Source{}, reg); rd.err == nil {
		t.Error("a source without Pub/Sub state read as complete")
	}
	rd = readChannels(ctx, &Source{Channels: func(context.Context) ([]source.NodeChannels, error) {
		return []source.NodeChannels{{Node: "a:1", Primary: true}}, nil
	}}, reg)
	if rd.err != nil || rd.notChecked() != 0 || rd.cr.Nodes != 1 {
		t.Errorf("complete read: err %v, not checked %d", rd.err, rd.notChecked())
	}
}

// TestServeDocsListMetrics: docs/serve.md's metric table names every
// metric the exporter serves, and no other keyreg_ metric.
func TestServeDocsListMetrics(t *testing.T) {
	b, err := os.ReadFile("../docs/serve.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## Metrics\n")
	if !ok {
		t.Fatal("docs/serve.md has no ## Metrics section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	documented := map[string]bool{}
	for line := range strings.SplitSeq(table, "\n") {
		if !strings.HasPrefix(line, "| `keyreg_") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		for _, m := range metricName.FindAllString(first, -1) {
			documented[m] = true
		}
	}
	var served []string
	for _, d := range allDescs {
		served = append(served, regexp.MustCompile(`fqName: "([^"]+)"`).FindStringSubmatch(d.String())[1])
	}
	for _, name := range served {
		if !documented[name] {
			t.Errorf("docs/serve.md's metric table lacks %s", name)
		}
	}
	for name := range documented {
		if !slices.Contains(served, name) {
			t.Errorf("docs/serve.md documents %s, which keyreg serve does not serve", name)
		}
	}
}

// fakeKeys is an audit source of no key whose scan fails when fail is set.
type fakeKeys struct{ fail *bool }

func (f fakeKeys) ScanKeys(ctx context.Context, _ source.Planner, _ func([]source.KeyInfo) error) (source.Stats, error) {
	if *f.fail {
		return source.Stats{Partial: true}, errors.New("node 10.0.0.1:6379: connection reset")
	}
	return source.Stats{Nodes: 1}, nil
}

func (fakeKeys) SampleEach(context.Context, []source.KeyInfo, int, int64, func([]int, []payload.Sample, []error)) {
}

func (fakeKeys) Touch() source.TouchState { return source.TouchState{} }

// TestChannelsPublishedOnTheirOwn drives the cycles one by one: a failed
// key audit still publishes a complete channel read; an incomplete read
// keeps the last complete one's figures (with its age) while the key
// figures are fresh; a registry that no longer declares channels drops
// the channel series.
func TestChannelsPublishedOnTheirOwn(t *testing.T) {
	reg := channelsRegistry(t)
	cur := reg
	keysFail := true
	var nodesErr error
	subs := int64(2)
	e, err := New(Options{
		Load: func() (*registry.Registry, error) { return cur, nil },
		Targets: []Target{{Open: func(context.Context) (*Source, error) {
			return &Source{Source: fakeKeys{&keysFail}, Target: "fake", Mode: "standalone", Channels: func(context.Context) ([]source.NodeChannels, error) {
				return []source.NodeChannels{{Node: "10.0.0.1:6379", Primary: true, Err: nodesErr,
					Classic: []source.ChannelCount{{Name: "news", Subscribers: subs}}, PublishCalls: 3, BusPublishSent: -1, BusPublishReceived: -1}}, nil
			}}, nil
		}}},
		Interval: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler()
	scrape := func() string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		return w.Body.String()
	}
	has := func(body string, lines ...string) {
		t.Helper()
		for _, l := range lines {
			if !strings.Contains(body, "\n"+l+"\n") {
				t.Errorf("/metrics lacks %q:\n%s", l, body)
			}
		}
	}
	tg := e.targets[0]
	ctx := context.Background()

	e.auditOnce(ctx, tg) // keys fail, channels complete
	body := scrape()
	has(body, "keyreg_audit_success 0", "keyreg_channel_audit_success 1", "keyreg_channel_audit_partial 0",
		`keyreg_channel_subscribers{channel="news",mode="classic",owner="identity"} 2`, `keyreg_channel_publish_calls_total{node="10.0.0.1:6379"} 3`)
	if strings.Contains(body, "keyreg_family_keys") || tg.last.Load() != nil {
		t.Error("a failed key audit was published")
	}

	keysFail, nodesErr, subs = false, errors.New("NOPERM no permissions to run the 'pubsub|channels' command"), 5
	tg.st.mu.Lock()
	okAt := tg.st.ch.lastSuccess
	tg.st.mu.Unlock()
	e.auditOnce(ctx, tg) // keys complete, channels refused
	body = scrape()
	has(body, "keyreg_audit_success 1", "keyreg_channel_audit_success 0", "keyreg_channel_audit_partial 1", "keyreg_channel_nodes_not_checked 1",
		`keyreg_channel_subscribers{channel="news",mode="classic",owner="identity"} 2`, // the complete read's, not 5 nor gone
		fmt.Sprintf("keyreg_channel_audit_last_success_timestamp_seconds %s", strconv.FormatFloat(unixSeconds(okAt), 'g', -1, 64)))
	if p := tg.last.Load(); p == nil || !slices.ContainsFunc(p.report.Scan.Notes, func(n string) bool {
		return strings.Contains(n, "channels not in this report") && strings.Contains(n, "NOPERM")
	}) {
		t.Error("the published report does not say its channels are missing")
	} else if p.report.Channels != nil {
		t.Error("the report of an incomplete channel read has a channel section")
	}

	nodesErr = nil
	e.auditOnce(ctx, tg) // both complete: the report has the channel section
	if p := tg.last.Load(); p == nil || p.report.Channels == nil || !bytes.Contains(p.json, []byte(`"channels": {`)) {
		t.Error("the report of a complete channel read lacks the channel section")
	}
	has(scrape(), `keyreg_channel_subscribers{channel="news",mode="classic",owner="identity"} 5`, "keyreg_channel_audit_success 1")

	cur = &registry.Registry{File: "keys.yaml"} // the channels removed from keys.yaml
	e.reg.Store(cur)
	e.auditOnce(ctx, tg)
	if body := scrape(); strings.Contains(body, "keyreg_channel_") || !strings.Contains(body, "\nkeyreg_audit_success 1\n") {
		t.Errorf("with no channel declared, channel series are still served:\n%s", body)
	}
}

// TestScrapeDuringChannelRead: a scrape while a channel read is held
// mid-way answers at once, with the previous figures and the audit
// running, and never calls the source.
func TestScrapeDuringChannelRead(t *testing.T) {
	reg := channelsRegistry(t)
	fail := false
	entered, release := make(chan struct{}), make(chan struct{})
	calls := 0
	e, err := New(Options{
		Load: func() (*registry.Registry, error) { return reg, nil },
		Targets: []Target{{Open: func(context.Context) (*Source, error) {
			return &Source{Source: fakeKeys{&fail}, Channels: func(ctx context.Context) ([]source.NodeChannels, error) {
				calls++
				if calls == 2 {
					close(entered)
					<-release
				}
				return []source.NodeChannels{{Node: "n:1", Primary: true, Classic: []source.ChannelCount{{Name: "news", Subscribers: int64(calls)}}}}, nil
			}}, nil
		}}},
		Interval: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler()
	scrape := func() string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		return w.Body.String()
	}
	ctx := context.Background()
	e.auditOnce(ctx, e.targets[0])
	done := make(chan struct{})
	go func() { e.auditOnce(ctx, e.targets[0]); close(done) }()
	<-entered
	body := scrape()
	for _, l := range []string{"keyreg_audit_running 1", `keyreg_channel_subscribers{channel="news",mode="classic",owner="identity"} 1`, "keyreg_channel_audit_success 1"} {
		if !strings.Contains(body, "\n"+l+"\n") {
			t.Errorf("scrape during the channel read lacks %q", l)
		}
	}
	close(release)
	<-done
	if body := scrape(); !strings.Contains(body, `keyreg_channel_subscribers{channel="news",mode="classic",owner="identity"} 2`) || calls != 2 {
		t.Errorf("after the read: %d calls,\n%s", calls, body)
	}
}

// TestChannelsTwoTargets: two targets' key and channel snapshots encode
// together, each series under its target label, and one target's channel
// read leaves the other's figures alone.
func TestChannelsTwoTargets(t *testing.T) {
	reg := channelsRegistry(t)
	e := &Exporter{o: Options{Interval: DefaultInterval, MaxGroups: DefaultMaxGroups}, log: slog.New(slog.DiscardHandler)}
	e.expo.Store(&exposition{})
	for _, name := range []string{"a", "b"} {
		tg := &target{Target: Target{Name: name}}
		tg.st.audits = map[string]int64{}
		e.targets = append(e.targets, tg)
	}
	read := func(subs int64) *snapshot {
		nodes := []source.NodeChannels{{Node: "n:1", Primary: true, Classic: []source.ChannelCount{{Name: "news", Subscribers: subs}}, PublishCalls: subs}}
		return newChannelSnapshot(reg, audit.Channels(reg, nodes), nodes, DefaultMaxGroups)
	}
	rep := &audit.Report{Families: []*audit.FamilyReport{{Name: "session", Owner: "web", Keys: 3}}}
	for i, tg := range e.targets {
		if err := e.publishTo(tg, &published{metrics: newSnapshot(rep, 20)}, read(int64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.publishTo(e.targets[0], nil, read(9)); err != nil { // a's next read only
		t.Fatal(err)
	}
	text := string(e.expo.Load().text)
	for _, l := range []string{
		`keyreg_channel_subscribers{channel="news",mode="classic",owner="identity",target="a"} 9`,
		`keyreg_channel_subscribers{channel="news",mode="classic",owner="identity",target="b"} 2`,
		`keyreg_channel_publish_calls_total{node="n:1",target="b"} 2`,
		`keyreg_family_keys{family="session",owner="web",target="a"} 3`,
	} {
		if !strings.Contains(text, l+"\n") {
			t.Errorf("exposition lacks %s:\n%s", l, text)
		}
	}
}
