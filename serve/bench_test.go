package serve

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// BenchmarkScrape is one /metrics request in the text format against a
// published audit of families families with a finding each and 1,000
// unregistered groups (20 exported): the cost of a scrape depends on the
// registry, never on the keyspace. The +channels cases add a complete
// channel read of 100 declared channels and 100,000 live unregistered
// ones in 1,000 prefixes on 3 nodes: their series are bounded the same way.
//
//	go test ./serve -run '^$' -bench BenchmarkScrape -benchmem
func BenchmarkScrape(b *testing.B) {
	for _, c := range []struct {
		families int
		channels bool
	}{{10, false}, {1000, false}, {10, true}, {1000, true}} {
		families := c.families
		name := fmt.Sprint(families, "-families")
		if c.channels {
			name += "+channels"
		}
		b.Run(name, func(b *testing.B) {
			rep := &audit.Report{}
			for i := range families {
				name := fmt.Sprintf("family-%d", i)
				rep.Families = append(rep.Families, &audit.FamilyReport{Name: name, Owner: "team", Keys: 1e6, WithTTL: 9e5, Memory: 1e8, MemoryKeys: 1e6})
				rep.Findings = append(rep.Findings, &audit.Finding{Rule: "ttl-missing", Family: name, Severity: diag.Error, Count: 1e5})
			}
			for i := range 1000 {
				rep.Unregistered.Groups = append(rep.Unregistered.Groups, &audit.Group{Prefix: fmt.Sprintf("g%d:", i), Keys: 10})
				rep.Unregistered.Keys += 10
			}
			e := &Exporter{o: Options{Interval: DefaultInterval, MaxGroups: DefaultMaxGroups}, targets: []*target{{}}, log: slog.New(slog.DiscardHandler)}
			e.targets[0].st.audits = map[string]int64{}
			p, err := e.publish(rep, nil)
			if err != nil {
				b.Fatal(err)
			}
			var ch *snapshot
			if c.channels {
				reg, nodes := benchChannels(b)
				ch = newChannelSnapshot(reg, audit.Channels(reg, nodes), nodes, DefaultMaxGroups)
			}
			if err := e.publishTo(e.targets[0], p, ch); err != nil {
				b.Fatal(err)
			}
			h := e.Handler()
			req := httptest.NewRequest("GET", "/metrics", nil)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
		})
	}
}

// benchChannels is a registry of 100 channels and a read of 3 cluster
// nodes holding them and 100,000 unregistered channels in 1,000 prefixes.
func benchChannels(b *testing.B) (*registry.Registry, []source.NodeChannels) {
	var y strings.Builder
	y.WriteString("version: 1\nfamilies: []\nchannels:\n")
	for i := range 100 {
		fmt.Fprintf(&y, "  - name: ch%d\n    owner: team\n    pattern: \"ch%d:{id:int}\"\n", i, i)
	}
	reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte(y.String()))
	if err != nil {
		b.Fatal(err)
	}
	nodes := make([]source.NodeChannels, 3)
	for n := range nodes {
		nodes[n] = source.NodeChannels{Node: fmt.Sprintf("10.0.0.%d:6379", n+1), Primary: true, Slots: [][2]int{{n * 5461, n*5461 + 5460}},
			PublishCalls: 1e6, BusPublishSent: 2e6, BusPublishReceived: 2e6}
		for i := range 100 {
			nodes[n].Classic = append(nodes[n].Classic, source.ChannelCount{Name: fmt.Sprintf("ch%d:%d", i, n), Subscribers: 3})
		}
	}
	for i := range 100_000 {
		n := &nodes[i%3]
		n.Classic = append(n.Classic, source.ChannelCount{Name: fmt.Sprintf("tmp%d:%d", i%1000, i), Subscribers: 1})
	}
	return reg, nodes
}

// BenchmarkChannelSnapshot is the per-audit cost of turning that read
// into metrics (audit.Channels and the snapshot), paid once per audit on
// the scheduler's goroutine, never by a scrape.
//
//	go test ./serve -run '^$' -bench BenchmarkChannelSnapshot -benchmem
func BenchmarkChannelSnapshot(b *testing.B) {
	reg, nodes := benchChannels(b)
	b.ReportAllocs()
	for range b.N {
		s := newChannelSnapshot(reg, audit.Channels(reg, nodes), nodes, DefaultMaxGroups)
		if len(s.metrics) == 0 {
			b.Fatal("no metrics")
		}
	}
}
