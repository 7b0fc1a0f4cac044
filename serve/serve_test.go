package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/testenv"
	"github.com/keyreg/keyreg/registry"
)

// gather collects a snapshot the way a scrape does, failing on any error
// the registry finds (a duplicate series, an invalid label).
func gather(t testing.TB, s *snapshot) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(snapCollector{s})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

type snapCollector struct{ s *snapshot }

func (c snapCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

func (c snapCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.s.metrics {
		ch <- m
	}
}

func groupsOf(mfs map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, m := range mfs["keyreg_unregistered_keys"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "group" {
				out[l.GetValue()] += m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// TestUnregisteredGroups: at most maxGroups series and other, whatever the
// prefixes hold (a group named other, invalid UTF-8, long prefixes that
// are one label once clipped), and the series sum to every unregistered key.
func TestUnregisteredGroups(t *testing.T) {
	long := strings.Repeat("x", 1000)
	u := audit.UnregisteredReport{Other: 7}
	for i, p := range []string{long + "a:", long + "b:", "other", "bad\xff:", "tmp:", "a\nb:", `q"uote\:`} {
		g := &audit.Group{Prefix: p, Keys: int64(100 - i), WithTTL: 1, Memory: 10, MemoryKeys: 1}
		u.Groups = append(u.Groups, g)
	}
	for i := range 5000 {
		u.Groups = append(u.Groups, &audit.Group{Prefix: fmt.Sprintf("g%d:", i), Keys: 1})
	}
	for _, g := range u.Groups {
		u.Keys += g.Keys
		u.WithTTL += g.WithTTL
		u.Memory += g.Memory
		u.MemoryKeys += g.MemoryKeys
	}
	u.Keys += u.Other
	rep := &audit.Report{Unregistered: u}
	for _, max := range []int{1, 3, 20} {
		mfs := gather(t, newSnapshot(rep, max))
		groups := groupsOf(mfs)
		if len(groups) > max+1 {
			t.Errorf("max %d: %d groups", max, len(groups))
		}
		var sum float64
		for _, v := range groups {
			sum += v
		}
		if sum != float64(u.Keys) {
			t.Errorf("max %d: the groups sum to %v, want %d", max, sum, u.Keys)
		}
		if _, ok := groups[OtherGroup]; !ok {
			t.Errorf("max %d: no other group: %v", max, groups)
		}
	}
	groups := groupsOf(gather(t, newSnapshot(rep, 20)))
	clipped := label(long + "a:")
	if groups[clipped] != 100+99 {
		t.Errorf("the two prefixes that clip alike: %v, want one series of 199", groups[clipped])
	}
	if len(clipped) > maxLabelBytes+len("…") {
		t.Errorf("a label of %d bytes", len(clipped))
	}
	if groups[OtherGroup] < 97+7 {
		t.Errorf("the group named other was not folded into other: %v", groups[OtherGroup])
	}
	if _, ok := groups["bad\uFFFD:"]; !ok {
		t.Errorf("invalid UTF-8 not replaced: %v", groups)
	}
}

// FuzzUnregisteredGroups: no prefix makes a scrape fail or the series
// outgrow the cap.
func FuzzUnregisteredGroups(f *testing.F) {
	f.Add("tmp:", "other", "\xff\xfe", 2)
	f.Add(strings.Repeat("é", 300), strings.Repeat("é", 301), "", 1)
	f.Fuzz(func(t *testing.T, a, b, c string, max int) {
		max = 1 + (max%50+50)%50
		u := audit.UnregisteredReport{}
		for i, p := range []string{a, b, c, a + b, b + c} {
			u.Groups = append(u.Groups, &audit.Group{Prefix: p, Keys: int64(10 - i)})
			u.Keys += int64(10 - i)
		}
		groups := groupsOf(gather(t, newSnapshot(&audit.Report{Unregistered: u}, max)))
		if len(groups) > max+1 {
			t.Errorf("%d groups over a cap of %d", len(groups), max)
		}
	})
}

// TestFamilyMetrics checks a family's series, its TTL histogram and the
// findings' labels, and that suppressed findings are left out.
func TestFamilyMetrics(t *testing.T) {
	f := &audit.FamilyReport{Name: "session", Owner: "web", Keys: 10, WithTTL: 7, Memory: 500, MemoryKeys: 10, Findings: 3}
	f.TTL = audit.TTLHistogram{3, 1, 2, 4, 0, 0, 0}
	rep := &audit.Report{
		Families: []*audit.FamilyReport{f, {Name: "cart", Owner: "shop", Keys: 2}},
		Findings: []*audit.Finding{
			{Rule: "ttl-missing", Family: "session", Severity: diag.Error, Count: 3},
			{Rule: "stale-key", Family: "session", Severity: diag.Warn, Count: 9, Suppressed: true},
		},
	}
	mfs := gather(t, newSnapshot(rep, 20))
	if n := len(mfs["keyreg_family_bytes"].GetMetric()); n != 1 {
		t.Errorf("%d keyreg_family_bytes series, want 1 (cart was not measured)", n)
	}
	h := mfs["keyreg_family_ttl_seconds"].GetMetric()[1].GetHistogram() // sorted: cart, session
	if h.GetSampleCount() != 7 || h.GetBucket()[0].GetCumulativeCount() != 1 || h.GetBucket()[2].GetCumulativeCount() != 7 {
		t.Errorf("session's TTL histogram: %v", h)
	}
	fs := mfs["keyreg_findings"].GetMetric()
	if len(fs) != 1 {
		t.Fatalf("%d findings series, want 1 (the suppressed one left out)", len(fs))
	}
	want := map[string]string{"family": "session", "owner": "web", "rule": "ttl-missing", "severity": "error"}
	for _, l := range fs[0].GetLabel() {
		if want[l.GetName()] != l.GetValue() {
			t.Errorf("finding label %s=%q, want %q", l.GetName(), l.GetValue(), want[l.GetName()])
		}
	}
}

// TestFailedAuditKeepsServing: an exporter whose every audit fails serves
// its status at once, is not ready, and has no report.
func TestFailedAuditKeepsServing(t *testing.T) {
	opened := make(chan struct{}, 10)
	e, err := New(Options{
		Load: func() (*registry.Registry, error) { return &registry.Registry{File: "keys.yaml"}, nil },
		Targets: []Target{{Open: func(ctx context.Context) (*Source, error) {
			opened <- struct{}{}
			return nil, errors.New("dial tcp: connection refused")
		}}},
		Interval: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	<-opened
	h := e.Handler()
	get := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		return w
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(get("/metrics").Body.String(), `keyreg_audits_total{result="error"} 1`) {
		if time.Now().After(deadline) {
			t.Fatalf("no failed audit counted:\n%s", get("/metrics").Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	body := get("/metrics").Body.String()
	for _, want := range []string{"keyreg_audit_success 0", "keyreg_audit_partial 0"} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "keyreg_family_keys") || strings.Contains(body, "keyreg_audit_last_success_timestamp_seconds ") {
		t.Error("figures served without a complete audit")
	}
	for _, p := range []string{"/readyz", "/report", "/report.json"} {
		if c := get(p).Code; c != http.StatusServiceUnavailable {
			t.Errorf("%s: %d, want 503", p, c)
		}
	}
	if c := get("/healthz").Code; c != 200 {
		t.Errorf("/healthz: %d", c)
	}
}

// TestAlertRules lints prometheus/keyreg.rules.yml and runs its unit tests.
func TestAlertRules(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool is in Debian's prometheus package (scripts/test.sh installs it)", "promtool")
	for _, args := range [][]string{{"check", "rules", "keyreg.rules.yml"}, {"test", "rules", "keyreg.rules.test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "../prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

var metricName = regexp.MustCompile(`\b(keyreg_[a-z_]+)`)

// TestDashboard: the Grafana dashboard has a panel for every metric family
// the exporter serves, and queries no keyreg metric it does not serve.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile("../deploy/grafana/keyreg.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, desc := range allDescs {
		name := regexp.MustCompile(`fqName: "([^"]+)"`).FindStringSubmatch(desc.String())[1]
		served[name] = true
	}
	used := map[string]bool{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, m := range metricName.FindAllString(tg.Expr, -1) {
				base := strings.TrimSuffix(m, "_bucket")
				if !served[base] {
					t.Errorf("panel %q queries %s, which keyreg serve does not serve", p.Title, m)
				}
				used[base] = true
			}
		}
	}
	for name := range served {
		if !used[name] {
			t.Errorf("no panel shows %s", name)
		}
	}
}
