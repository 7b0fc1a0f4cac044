package serve

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
)

// BenchmarkScrape is one /metrics request in the text format against a
// published audit of families families with a finding each and 1,000
// unregistered groups (20 exported): the cost of a scrape depends on the
// registry, never on the keyspace.
//
//	go test ./serve -run '^$' -bench BenchmarkScrape -benchmem
func BenchmarkScrape(b *testing.B) {
	for _, families := range []int{10, 1000} {
		b.Run(fmt.Sprint(families, "-families"), func(b *testing.B) {
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
			if err := e.publishTo(e.targets[0], p, nil); err != nil {
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
