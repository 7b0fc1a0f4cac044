package serve

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
)

// TestMetricsFormats: the pre-encoded audit figures and the per-scrape
// status come out as one valid exposition in every negotiated format,
// gzipped when asked, with two targets' series under one family each, and
// a new audit replaces the figures.
func TestMetricsFormats(t *testing.T) {
	rep := func(keys int64) *audit.Report {
		return &audit.Report{
			Families: []*audit.FamilyReport{{Name: "session", Owner: "web", Keys: keys, WithTTL: 1}},
			Findings: []*audit.Finding{{Rule: "ttl-missing", Family: "session", Severity: diag.Error, Count: 2}},
		}
	}
	e := &Exporter{o: Options{Interval: DefaultInterval, MaxGroups: DefaultMaxGroups}, log: slog.New(slog.DiscardHandler)}
	e.expo.Store(&exposition{})
	for _, name := range []string{"a", "b"} {
		tg := &target{Target: Target{Name: name}}
		tg.st.audits = map[string]int64{}
		e.targets = append(e.targets, tg)
	}
	h := e.Handler()
	scrape := func(accept, encoding string) (string, []byte) {
		t.Helper()
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Accept", accept)
		req.Header.Set("Accept-Encoding", encoding)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("%s: %d", accept, w.Code)
		}
		body := w.Body.Bytes()
		if w.Header().Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		} else if strings.Contains(encoding, "gzip") {
			t.Errorf("Accept-Encoding %q: not gzipped", encoding)
		}
		return w.Header().Get("Content-Type"), body
	}
	// Before any audit: the status only.
	if _, body := scrape("", ""); bytes.Contains(body, []byte("keyreg_family_keys")) || !bytes.Contains(body, []byte(`keyreg_audit_success{target="a"} 0`)) {
		t.Fatalf("before an audit:\n%s", body)
	}
	for _, keys := range []int64{5, 7} {
		for _, tg := range e.targets {
			if err := e.publishTo(tg, &published{metrics: newSnapshot(rep(keys), 20)}, nil); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string]float64{`keyreg_family_keys{family="session",owner="web",target="a"}`: float64(keys),
			`keyreg_family_keys{family="session",owner="web",target="b"}`: float64(keys),
			`keyreg_audit_success{target="b"}`:                            0,
		}
		check := func(format string, mfs []*dto.MetricFamily) {
			t.Helper()
			seen := map[string]bool{}
			got := map[string]float64{}
			for _, mf := range mfs {
				if seen[mf.GetName()] {
					t.Errorf("%s: family %s twice", format, mf.GetName())
				}
				seen[mf.GetName()] = true
				for _, m := range mf.GetMetric() {
					var l []string
					for _, lp := range m.GetLabel() {
						l = append(l, lp.GetName()+`="`+lp.GetValue()+`"`)
					}
					got[mf.GetName()+"{"+strings.Join(l, ",")+"}"] = m.GetGauge().GetValue()
				}
			}
			for k, v := range want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("%s: %s = %v (present %v), want %v", format, k, g, ok, v)
				}
			}
			if !seen["go_goroutines"] || !seen["keyreg_findings"] {
				t.Errorf("%s: runtime or findings families missing", format)
			}
		}
		for _, enc := range []string{"", "gzip", "br;q=1, gzip;q=0.5"} {
			ctype, body := scrape("text/plain;version=0.0.4", enc)
			if !strings.HasPrefix(ctype, "text/plain; version=0.0.4") {
				t.Errorf("text: Content-Type %q", ctype)
			}
			var p expfmt.TextParser
			fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("text: %v\n%s", err, body)
			}
			var mfs []*dto.MetricFamily
			for _, mf := range fams {
				mfs = append(mfs, mf)
			}
			check("text", mfs)
		}
		ctype, body := scrape("application/openmetrics-text;version=1.0.0", "gzip")
		if !strings.HasPrefix(ctype, "application/openmetrics-text; version=1.0.0") {
			t.Errorf("OpenMetrics: Content-Type %q", ctype)
		}
		if !bytes.HasSuffix(body, []byte("\n# EOF\n")) || bytes.Count(body, []byte("# EOF")) != 1 {
			t.Errorf("OpenMetrics: not ended by one # EOF:\n%s", body)
		}
		for _, fam := range []string{"keyreg_family_keys", "keyreg_audit_success"} {
			if n := bytes.Count(body, []byte("# TYPE "+fam+" ")); n != 1 {
				t.Errorf("OpenMetrics: %s declared %d times", fam, n)
			}
		}
		ctype, body = scrape("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", "")
		if !strings.Contains(ctype, "encoding=delimited") {
			t.Errorf("protobuf: Content-Type %q", ctype)
		}
		var mfs []*dto.MetricFamily
		dec := expfmt.NewDecoder(bytes.NewReader(body), expfmt.NewFormat(expfmt.TypeProtoDelim))
		for {
			mf := &dto.MetricFamily{}
			if err := dec.Decode(mf); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("protobuf: %v", err)
			}
			mfs = append(mfs, mf)
		}
		check("protobuf", mfs)
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"": false, "gzip": true, "deflate, gzip;q=1.0, *;q=0.5": true, "gzip;q=0": false,
		"br": false, "*": true, "identity, gzip ; q=0.001": true, "gzip;q=x": false,
	} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
}
