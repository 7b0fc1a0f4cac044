package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"golang.org/x/crypto/bcrypt"

	"github.com/keyreg/keyreg/audit/auditjson"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/internal/testenv"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines and the
// test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// served is a keyreg serve running in this process.
type served struct {
	addr   string
	stderr *syncBuffer
	stop   context.CancelFunc
	code   chan int
}

var listenLog = regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)

// startServe runs keyreg serve in-process with args (after --listen on a
// free loopback port and json logs); audited, when set, is the audit's
// progress hook. It waits for the listener and stops the server at the
// end of the test.
func startServe(t *testing.T, audited func(int64), args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{stderr: &syncBuffer{}, stop: cancel, code: make(chan int, 1)}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: s.stderr, audited: audited}
	go func() {
		s.code <- a.run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}, args...))
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.code:
		case <-time.After(30 * time.Second):
			t.Error("keyreg serve did not stop within 30s of its context ending")
		}
	})
	waitFor(t, "the listener", func() bool {
		select {
		case c := <-s.code:
			t.Fatalf("keyreg serve exited %d:\n%s", c, s.stderr)
		default:
		}
		m := listenLog.FindStringSubmatch(s.stderr.String())
		if m != nil {
			s.addr = m[1]
		}
		return m != nil
	})
	return s
}

// waitFor polls cond every 20ms until it holds, failing the test after a
// minute.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func httpGet(t testing.TB, url, accept string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

const openMetrics = "application/openmetrics-text; version=1.0.0; charset=utf-8"

// scrape reads /metrics in the text format and parses it.
func (s *served) scrape(t testing.TB) map[string]*dto.MetricFamily {
	t.Helper()
	code, _, body := httpGet(t, "http://"+s.addr+"/metrics", "")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return fams
}

// value is the sample of family name whose labels include want, or -1.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(want); i += 2 {
			if got[want[i]] != want[i+1] {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Counter != nil:
			return m.Counter.GetValue()
		}
	}
	return -1
}

func (s *served) ready(t testing.TB) {
	t.Helper()
	waitFor(t, "/readyz", func() bool {
		code, _, _ := httpGet(t, "http://"+s.addr+"/readyz", "")
		return code == 200
	})
}

// TestServeMatchesAudit serves a seeded keyspace and checks /metrics in
// both formats with promtool, its figures against keyreg audit --format
// json of the same keyspace, the reports, and that 50 scrapes within one
// interval send Redis nothing.
func TestServeMatchesAudit(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool is in Debian's prometheus package (scripts/test.sh installs it)", "promtool")
	srv := redistest.Standalone(t)
	seedAudit(t, srv.Addr, 200)
	c := srv.Client(t)
	if err := c.ConfigResetStat(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, nil, "--url", srv.URL(), "--registry", auditRegistry, "--interval", "1h", "--memory")
	s.ready(t)

	code, stdout, stderr := cli(t, "audit", "--url", srv.URL(), "--registry", auditRegistry, "--memory", "--format", "json")
	if code != 1 {
		t.Fatalf("audit exit %d, want 1 (findings):\n%s", code, stderr)
	}
	want := parseAudit(t, stdout)

	before := redistest.CommandStats(t, c)
	var fams map[string]*dto.MetricFamily
	for range 50 {
		fams = s.scrape(t)
	}
	after := redistest.CommandStats(t, c)
	for _, cmd := range []string{"scan", "type", "pttl", "memory|usage", "get"} {
		if after[cmd] != before[cmd] {
			t.Errorf("50 scrapes sent %d %s commands, want 0", after[cmd]-before[cmd], cmd)
		}
	}
	if after["scan"] == 0 {
		t.Fatal("no SCAN at all: the audit did not run against this server")
	}
	for cmd := range after {
		if writes[cmd] {
			t.Errorf("serve or audit sent %s, a write", cmd)
		}
	}

	for _, f := range want.Families {
		if got := value(fams, "keyreg_family_keys", "family", f.Name); got != float64(f.Keys) {
			t.Errorf("keyreg_family_keys{family=%q} = %v, audit says %d", f.Name, got, f.Keys)
		}
	}
	if len(want.Families) == 0 || len(fams["keyreg_family_keys"].GetMetric()) != len(want.Families) {
		t.Errorf("%d keyreg_family_keys series, audit has %d families", len(fams["keyreg_family_keys"].GetMetric()), len(want.Families))
	}
	for _, f := range want.Findings {
		if got := value(fams, "keyreg_findings", "family", f.Family, "rule", f.Rule); got != float64(f.Count) {
			t.Errorf("keyreg_findings{family=%q,rule=%q} = %v, audit says %d", f.Family, f.Rule, got, f.Count)
		}
	}
	if got := value(fams, "keyreg_audit_keys"); got != float64(want.Scan.Keys) {
		t.Errorf("keyreg_audit_keys = %v, audit says %d", got, want.Scan.Keys)
	}
	if got := value(fams, "keyreg_unregistered_keys", "group", "tmp:x:"); got != 10 {
		t.Errorf(`keyreg_unregistered_keys{group="tmp:x:"} = %v, want the 10 seeded`, got)
	}
	// The same report through json, with the fields the tests read.
	var full struct {
		Families []struct {
			Name    string `json:"name"`
			Memory  *int64 `json:"memory_bytes"`
			WithTTL int64  `json:"with_ttl"`
			Keys    int64  `json:"keys"`
		} `json:"families"`
	}
	if err := json.Unmarshal([]byte(stdout), &full); err != nil {
		t.Fatal(err)
	}
	for _, f := range full.Families {
		if got := value(fams, "keyreg_family_keys_without_ttl", "family", f.Name); got != float64(f.Keys-f.WithTTL) {
			t.Errorf("keyreg_family_keys_without_ttl{family=%q} = %v, audit says %d", f.Name, got, f.Keys-f.WithTTL)
		}
		if f.Memory != nil && f.Keys > 0 {
			if got := value(fams, "keyreg_family_bytes", "family", f.Name); got != float64(*f.Memory) {
				t.Errorf("keyreg_family_bytes{family=%q} = %v, audit says %d", f.Name, got, *f.Memory)
			}
		}
	}
	if value(fams, "keyreg_audit_success") != 1 || value(fams, "keyreg_audit_partial") != 0 {
		t.Errorf("success %v, partial %v, want 1 and 0", value(fams, "keyreg_audit_success"), value(fams, "keyreg_audit_partial"))
	}

	// promtool lints both expositions.
	for _, accept := range []string{"", openMetrics} {
		_, ctype, body := httpGet(t, "http://"+s.addr+"/metrics", accept)
		if accept != "" {
			if !strings.HasPrefix(ctype, "application/openmetrics-text") || !bytes.HasSuffix(body, []byte("# EOF\n")) {
				t.Fatalf("OpenMetrics asked, got %q ending %q", ctype, body[max(len(body)-20, 0):])
			}
			checkOpenMetricsFamilies(t, body)
		}
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(body)
		out, err := cmd.CombinedOutput()
		if err != nil && (accept == "" || !onlyCounterHelp(out, body)) {
			t.Errorf("promtool check metrics (%s): %v\n%s", ctype, err, out)
		}
	}

	// /report.json is what report merge reads, and says what the audit says.
	code, ctype, body := httpGet(t, "http://"+s.addr+"/report.json", "")
	if code != 200 || ctype != "application/json" {
		t.Fatalf("/report.json: %d %s", code, ctype)
	}
	rep, err := auditjson.Read(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("auditjson.Read(/report.json): %v", err)
	}
	if rep.Scan.Keys != want.Scan.Keys || len(rep.Families) != len(want.Families) {
		t.Errorf("/report.json: %d keys, %d families; audit: %d, %d", rep.Scan.Keys, len(rep.Families), want.Scan.Keys, len(want.Families))
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "served.json")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := cli(t, "report", "merge", file, file, "--format", "json"); code == 2 || code == 3 || !strings.Contains(out, `"families"`) {
		t.Errorf("report merge of /report.json: exit %d\n%s\n%s", code, out, errs)
	}
	code, ctype, body = httpGet(t, "http://"+s.addr+"/report", "")
	if code != 200 || !strings.HasPrefix(ctype, "text/html") || !bytes.Contains(body, []byte("session")) {
		t.Errorf("/report: %d %s, %d bytes", code, ctype, len(body))
	}
	if bytes.Contains(body, []byte(payloadMarker)) {
		t.Error("/report shows a payload value")
	}
	if code, _, _ := httpGet(t, "http://"+s.addr+"/healthz", ""); code != 200 {
		t.Errorf("/healthz: %d", code)
	}
}

// onlyCounterHelp says whether every problem promtool found is "no help
// text" on a counter's _total sample whose family has its HELP. Debian's
// promtool (2.42) lints with the text-format parser, which reads an
// OpenMetrics counter family (HELP on keyreg_audits, sample
// keyreg_audits_total) as a sample without help; it still fails on
// anything it cannot parse (exit 1, not the lint's 3).
func onlyCounterHelp(out, body []byte) bool {
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		name, ok := strings.CutSuffix(strings.TrimSpace(line), " no help text")
		base, total := strings.CutSuffix(name, "_total")
		if !ok || !total || !bytes.Contains(append([]byte("\n"), body...), []byte("\n# HELP "+base+" ")) {
			return false
		}
	}
	return true
}

// checkOpenMetricsFamilies fails when an OpenMetrics exposition names a
// metric family twice, which the text parser of promtool does not see.
func checkOpenMetricsFamilies(t *testing.T, body []byte) {
	t.Helper()
	seen := map[string]bool{}
	for line := range strings.SplitSeq(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, _, _ := strings.Cut(rest, " ")
			if seen[name] {
				t.Errorf("OpenMetrics: family %s declared twice", name)
			}
			seen[name] = true
		}
	}
}

// TestServeScrapeDuringAudit holds the second audit mid-run, at a known
// point, and scrapes: the scrape answers with the first audit's figures
// and says an audit is running. The latency is measured in
// BenchmarkServeScrapeDuringAudit.
func TestServeScrapeDuringAudit(t *testing.T) {
	srv := redistest.Standalone(t)
	seedMany(t, srv.Client(t), 5000)
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s := startServe(t, func(total int64) {
		if total > 5000 { // the second audit is under way
			once.Do(func() { close(held); <-release })
		}
	}, "--url", srv.URL(), "--registry", auditRegistry, "--interval", "1s", "--count", "100")
	released := false
	defer func() { // a failed test still lets the held audit go, so that serve stops
		if !released {
			close(release)
		}
	}()
	select {
	case <-held:
	case <-time.After(time.Minute):
		t.Fatal("the second audit did not start")
	}
	fams := s.scrape(t)
	if got := value(fams, "keyreg_family_keys", "family", "session"); got != 5000 {
		t.Errorf(`mid-audit keyreg_family_keys{family="session"} = %v, want the first audit's 5000`, got)
	}
	if value(fams, "keyreg_audit_running") != 1 {
		t.Error("keyreg_audit_running is not 1 while the audit is held")
	}
	close(release)
	released = true
}

// TestServeFaults kills the Redis between audits and during one, and
// edits the registry into an invalid file and into another valid one.
func TestServeFaults(t *testing.T) {
	srv := redistest.Standalone(t)
	seedMany(t, srv.Client(t), 3000)
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	copyFile(t, auditRegistry, reg)
	if err := os.CopyFS(filepath.Join(dir, "schemas"), os.DirFS("../../audit/testdata/schemas")); err != nil {
		t.Fatal(err)
	}
	var hold sync.Mutex // held by the test: an audit's next batch waits for it
	s := startServe(t, func(int64) {
		hold.Lock()
		defer hold.Unlock()
	}, "--url", srv.URL(), "--registry", reg, "--interval", "1s", "--count", "50")
	s.ready(t)
	counter := func(name string, l ...string) float64 { return value(s.scrape(t), name, l...) }
	waitMetric := func(what string, cond func(map[string]*dto.MetricFamily) bool) {
		t.Helper()
		waitFor(t, what, func() bool { return cond(s.scrape(t)) })
	}

	t.Run("redis killed between audits", func(t *testing.T) {
		errs := counter("keyreg_audits_total", "result", "error")
		srv.Stop()
		waitMetric("a failed audit", func(f map[string]*dto.MetricFamily) bool {
			return value(f, "keyreg_audits_total", "result", "error") > errs && value(f, "keyreg_audit_success") == 0
		})
		if got := counter("keyreg_family_keys", "family", "session"); got != 3000 {
			t.Errorf("after a failed audit keyreg_family_keys{family=session} = %v, want the last complete audit's 3000", got)
		}
		srv.Restart(t)
		seedMany(t, srv.Client(t), 1200)
		waitMetric("a complete audit after the restart", func(f map[string]*dto.MetricFamily) bool {
			return value(f, "keyreg_audit_success") == 1 && value(f, "keyreg_family_keys", "family", "session") == 1200
		})
	})

	t.Run("redis killed during an audit", func(t *testing.T) {
		hold.Lock()
		running := func(f map[string]*dto.MetricFamily) bool { return value(f, "keyreg_audit_running") == 1 }
		waitMetric("an audit held at its first batch", running)
		srv.Stop()
		hold.Unlock()
		waitMetric("the held audit to fail", func(f map[string]*dto.MetricFamily) bool {
			return value(f, "keyreg_audit_success") == 0 && value(f, "keyreg_audit_running") == 0
		})
		if got := counter("keyreg_family_keys", "family", "session"); got != 1200 {
			t.Errorf("after an audit cut short keyreg_family_keys{family=session} = %v, want the last complete audit's 1200", got)
		}
		srv.Restart(t)
		seedMany(t, srv.Client(t), 3000)
		waitMetric("a complete audit after the restart", func(f map[string]*dto.MetricFamily) bool {
			return value(f, "keyreg_audit_success") == 1 && value(f, "keyreg_family_keys", "family", "session") == 3000
		})
	})

	t.Run("registry edited invalid and back", func(t *testing.T) {
		families := func() int { return len(s.scrape(t)["keyreg_family_keys"].GetMetric()) }
		before := families()
		copyFile(t, badRegistry, reg)
		waitMetric("a registry load error", func(f map[string]*dto.MetricFamily) bool {
			return value(f, "keyreg_registry_load_errors_total") == 1
		})
		if !strings.Contains(s.stderr.String(), "keys.yaml:") {
			t.Errorf("the load error is not logged with its position:\n%s", s.stderr)
		}
		ok := counter("keyreg_audits_total", "result", "success")
		waitMetric("an audit with the old registry", func(f map[string]*dto.MetricFamily) bool {
			return value(f, "keyreg_audits_total", "result", "success") > ok
		})
		if got := families(); got != before {
			t.Errorf("with an invalid registry file: %d families, want the old registry's %d", got, before)
		}
		copyFile(t, cleanRegistry, reg)
		waitMetric("the clean registry's single family", func(f map[string]*dto.MetricFamily) bool {
			return len(f["keyreg_family_keys"].GetMetric()) == 1
		})
		if got := counter("keyreg_registry_load_errors_total"); got != 1 {
			t.Errorf("keyreg_registry_load_errors_total = %v after a valid edit, want still 1", got)
		}
	})
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	// Through a temporary file and a rename, as editors and ConfigMaps do.
	tmp := to + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, to); err != nil {
		t.Fatal(err)
	}
}

// TestServeBinarySIGTERM runs keyreg serve as a process, with an audit
// slowed by --rate, and sends SIGTERM once the audit is scanning: the
// audit is cancelled and the process exits 0.
func TestServeBinarySIGTERM(t *testing.T) {
	srv := redistest.Standalone(t)
	seedMany(t, srv.Client(t), 20000)
	cmd := exec.Command(os.Args[0], "serve", "--listen", "127.0.0.1:0", "--log-format", "json",
		"--url", srv.URL(), "--registry", auditRegistry, "--rate", "500", "--count", "50")
	cmd.Env = append(os.Environ(), "KEYREG_TEST_MAIN=1")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
	}()
	s := &served{stderr: stderr}
	waitFor(t, "the listener", func() bool {
		m := listenLog.FindStringSubmatch(stderr.String())
		if m != nil {
			s.addr = m[1]
		}
		return m != nil
	})
	c := srv.Client(t)
	waitFor(t, "the audit to scan", func() bool {
		return redistest.CommandStats(t, c)["scan"] > 2 && value(s.scrape(t), "keyreg_audit_running") == 1
	})
	if code, _, _ := httpGet(t, "http://"+s.addr+"/readyz", ""); code != 503 {
		t.Errorf("/readyz during the first audit: %d, want 503", code)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Logf("exited %v after SIGTERM", time.Since(sent))
		if err != nil {
			t.Errorf("keyreg serve after SIGTERM: %v\n%s", err, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("keyreg serve still running 10s after SIGTERM:\n%s", stderr)
	}
	if !strings.Contains(stderr.String(), "audit cancelled by shutdown") {
		t.Errorf("no cancelled audit in the log:\n%s", stderr)
	}
	scans := redistest.CommandStats(t, c)["scan"]
	if scans >= 20000/50 {
		t.Errorf("%d SCAN calls: the audit ran to its end instead of being cancelled", scans)
	}
}

// TestServeCardinality seeds 100,000 distinct unregistered prefixes: the
// exporter shows --max-groups of them and "other", which holds the rest.
func TestServeCardinality(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx := context.Background()
	const n = 100000
	p := c.Pipeline()
	for i := range n {
		p.Set(ctx, letters(i)+":k", "v", 0)
		if i%10000 == 9999 {
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := startServe(t, nil, "--url", srv.URL(), "--registry", cleanRegistry, "--interval", "1h", "--max-groups", "20", "--sample", "0")
	s.ready(t)
	fams := s.scrape(t)
	series := fams["keyreg_unregistered_keys"].GetMetric()
	if len(series) > 21 {
		t.Errorf("%d keyreg_unregistered_keys series, want at most 21", len(series))
	}
	var sum float64
	for _, m := range series {
		sum += m.GetGauge().GetValue()
	}
	if sum != n || value(fams, "keyreg_unregistered_keys", "group", "other") < n-20 {
		t.Errorf("the groups sum to %v (other %v), want %d", sum, value(fams, "keyreg_unregistered_keys", "group", "other"), n)
	}
	var total int
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "keyreg_") {
			total += len(f.GetMetric())
		}
	}
	t.Logf("%d keyreg_ series for %d unregistered prefixes", total, n)
	if total > 200 {
		t.Errorf("%d keyreg_ series: not bounded by the registry and --max-groups", total)
	}
}

// letters spells i in base 26 with a-z, so that no prefix looks like an
// ID and each is a group of its own.
func letters(i int) string {
	var b []byte
	for {
		b = append(b, byte('a'+i%26))
		i /= 26
		if i == 0 {
			break
		}
	}
	return "u" + string(b)
}

// TestServePrometheus starts a real Prometheus server on loopback that
// scrapes the exporter (OpenMetrics, as Prometheus asks first) with the
// alert rules of prometheus/keyreg.rules.yml loaded, and reads
// keyreg_family_keys back through its HTTP API.
func TestServePrometheus(t *testing.T) {
	prom := testenv.LookPath(t, "prometheus is Debian's prometheus package (scripts/test.sh installs it)", "prometheus")
	srv := redistest.Standalone(t)
	seedMany(t, srv.Client(t), 321)
	s := startServe(t, nil, "--url", srv.URL(), "--registry", auditRegistry, "--interval", "1h")
	s.ready(t)

	rules, err := filepath.Abs("../../prometheus/keyreg.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	api, query := startPrometheus(t, prom, s.addr, rules)
	var got string
	waitFor(t, "Prometheus to scrape keyreg_family_keys", func() bool {
		v, ok := query(`keyreg_family_keys{family="session",job="keyreg"}`)
		got = v
		return ok
	})
	if got != "321" {
		t.Errorf(`Prometheus has keyreg_family_keys{family="session"} = %s, want 321`, got)
	}
	if v, ok := query(`up{job="keyreg"}`); !ok || v != "1" {
		t.Errorf("up{job=keyreg} = %q", v)
	}
	// The alert rules loaded and evaluate (no rule group in error).
	waitFor(t, "the keyreg rule groups", func() bool {
		resp, err := http.Get("http://" + api + "/api/v1/rules")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if bytes.Contains(b, []byte(`"health":"err"`)) {
			t.Fatalf("a rule failed to evaluate: %s", b)
		}
		return bytes.Contains(b, []byte(`"name":"keyreg"`)) && bytes.Contains(b, []byte(`"health":"ok"`))
	})
}

// startPrometheus starts a real Prometheus server on loopback that scrapes
// target every second, with the rule file rules loaded when it is not "",
// and returns its address and an instant query that answers a single
// sample's value (false while there is none, or not one).
func startPrometheus(t *testing.T, prom, target, rules string) (string, func(q string) (string, bool)) {
	t.Helper()
	dir := t.TempDir()
	ruleFiles := ""
	if rules != "" {
		ruleFiles = "rule_files: [" + strconv.Quote(rules) + "]\n"
	}
	conf := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(conf, []byte(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
`+ruleFiles+`scrape_configs:
  - job_name: keyreg
    static_configs:
      - targets: [`+strconv.Quote(target)+`]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := redistest.FreePort(false)
	if err != nil {
		t.Fatal(err)
	}
	api := fmt.Sprintf("127.0.0.1:%d", port)
	var logs syncBuffer
	cmd := exec.Command(prom, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+api, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	query := func(q string) (string, bool) {
		select {
		case <-exited:
			t.Fatalf("prometheus exited:\n%s", logs.String())
		default:
		}
		resp, err := http.Get("http://" + api + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return "", false // not listening yet
		}
		defer resp.Body.Close()
		var r struct {
			Status string `json:"status"`
			Data   struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" || len(r.Data.Result) != 1 {
			return "", false
		}
		v, _ := r.Data.Result[0].Value[1].(string)
		return v, true
	}
	return api, query
}

// TestServeDeployFiles parses the keyreg serve command lines of the
// systemd unit and the Kubernetes Deployment with serve's own flags, so
// that neither names a flag serve does not have.
func TestServeDeployFiles(t *testing.T) {
	unit, err := os.ReadFile("../../deploy/systemd/keyreg-serve.service")
	if err != nil {
		t.Fatal(err)
	}
	_, cmdline, ok := strings.Cut(strings.ReplaceAll(string(unit), "\\\n", " "), "\nExecStart=")
	if !ok {
		t.Fatal("no ExecStart in the unit")
	}
	cmdline, _, _ = strings.Cut(cmdline, "\n")
	unitArgs := strings.Fields(cmdline)[1:] // after the binary
	k8s, err := os.ReadFile("../../deploy/k8s/serve.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k8sArgs []string
	in := false
	for line := range strings.SplitSeq(string(k8s), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "args:":
			in = true
		case in && strings.HasPrefix(trimmed, "- "):
			k8sArgs = append(k8sArgs, strings.TrimPrefix(trimmed, "- "))
		case in && strings.HasPrefix(trimmed, "#"):
		case in:
			in = false
		}
	}
	for name, args := range map[string][]string{"systemd": unitArgs, "k8s": k8sArgs} {
		if len(args) < 3 || args[0] != "serve" {
			t.Fatalf("%s: not a keyreg serve command line: %q", name, args)
		}
		// --help after the flags: cobra parses every flag, then prints help.
		if code, _, errs := cli(t, append(args, "--help")...); code != 0 {
			t.Errorf("%s: keyreg %s: exit %d\n%s", name, strings.Join(args, " "), code, errs)
		}
	}
}

// writes are the write commands a read-only exporter must never send.
var writes = map[string]bool{
	"set": true, "setex": true, "del": true, "unlink": true, "expire": true, "pexpire": true, "persist": true,
	"hset": true, "hdel": true, "lpush": true, "rpush": true, "sadd": true, "zadd": true, "xadd": true,
	"rename": true, "flushdb": true, "flushall": true, "restore": true, "config|set": true,
}

// TestServeUsage: the flags serve refuses, and an invalid registry at
// start, are usage errors before anything listens.
func TestServeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--log-format", "xml"},
		{"--interval", "10ms"},
		{"--max-groups", "0"},
		{"--max-groups", "1001"},
		{"--max-keys", "10"},
		{"--rdb", "-"},
		{"--rdb", "../../snapshot/testdata/servers/redis-7.4.1.rdb", "--channels"}, // a snapshot has no Pub/Sub state
		{"--sample", "-1"},
		{"--web-config-file", "/nonexistent/web.yml"},
		{"--registry", badRegistry},
	} {
		reg := []string{"--registry", auditRegistry}
		if args[0] == "--registry" {
			reg = nil
		}
		code, _, errs := cli(t, append(append([]string{"serve", "--listen", "127.0.0.1:0"}, reg...), args...)...)
		if code != 2 {
			t.Errorf("serve %v: exit %d, want 2\n%s", args, code, errs)
		}
	}
}

// TestServeWebConfig serves over TLS with basic auth from an
// exporter-toolkit web configuration file.
func TestServeWebConfig(t *testing.T) {
	srv := redistest.Standalone(t)
	seedMany(t, srv.Client(t), 10)
	certs := redistest.NewCerts(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("scrape-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(web, []byte(fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  prom: %s\n",
		strconv.Quote(certs.ServerCert), strconv.Quote(certs.ServerKey), strconv.Quote(string(hash)))), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, nil, "--url", srv.URL(), "--registry", auditRegistry, "--interval", "1h", "--web-config-file", web)
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}}
	get := func(scheme, user, pass string) int {
		req, _ := http.NewRequest("GET", scheme+"://"+s.addr+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor(t, "the TLS listener", func() bool { return get("https", "prom", "scrape-pw") == 200 })
	if c := get("https", "", ""); c != 401 {
		t.Errorf("no credentials: %d, want 401", c)
	}
	if c := get("https", "prom", "wrong"); c != 401 {
		t.Errorf("wrong password: %d, want 401", c)
	}
	if c := get("http", "prom", "scrape-pw"); c == 200 {
		t.Error("plain HTTP answered on a TLS listener")
	}
}

// TestServeTargets audits two servers on their own schedules: each one's
// series carry its target label, and /report.json takes ?target=.
func TestServeTargets(t *testing.T) {
	one, two := redistest.Standalone(t), redistest.Standalone(t)
	seedMany(t, one.Client(t), 11)
	seedMany(t, two.Client(t), 22)
	s := startServe(t, nil, "--target", one.URL(), "--target", two.URL(), "--registry", auditRegistry, "--interval", "1h")
	s.ready(t)
	fams := s.scrape(t)
	for srv, want := range map[*redistest.Server]float64{one: 11, two: 22} {
		if got := value(fams, "keyreg_family_keys", "target", srv.URL(), "family", "session"); got != want {
			t.Errorf(`keyreg_family_keys{target=%q,family="session"} = %v, want %v`, srv.URL(), got, want)
		}
		if got := value(fams, "keyreg_audit_success", "target", srv.URL()); got != 1 {
			t.Errorf("keyreg_audit_success{target=%q} = %v", srv.URL(), got)
		}
		code, _, body := httpGet(t, "http://"+s.addr+"/report.json?target="+url.QueryEscape(srv.URL()), "")
		rep, err := auditjson.Read(bytes.NewReader(body))
		if code != 200 || err != nil || rep.Scan.Keys != int64(want) {
			t.Errorf("/report.json?target=%s: %d %v", srv.URL(), code, err)
		}
	}
	if value(fams, "keyreg_registry_load_errors_total") != 0 || len(fams["keyreg_registry_load_errors_total"].GetMetric()) != 1 {
		t.Error("the registry's series is not one for the exporter")
	}
	if code, _, _ := httpGet(t, "http://"+s.addr+"/report.json", ""); code != 400 {
		t.Errorf("/report.json without ?target= of two targets: %d, want 400", code)
	}
	if code, _, errs := cli(t, "serve", "--registry", auditRegistry, "--target", one.URL(), "--url", two.URL()); code != 2 {
		t.Errorf("--target with --url: exit %d, want 2\n%s", code, errs)
	}
}

// TestServeHungRedis pauses the Redis (SIGSTOP) while an audit is held at
// its first batch, then lets the audit go on into the stopped server:
// scrapes answer all along with the last complete audit's figures, and
// --timeout ends the hung audit as a failure.
func TestServeHungRedis(t *testing.T) {
	srv := redistest.Standalone(t)
	seedMany(t, srv.Client(t), 2000)
	var hold sync.Mutex
	s := startServe(t, func(int64) {
		hold.Lock()
		defer hold.Unlock()
	}, "--url", srv.URL(), "--registry", auditRegistry, "--interval", "1s", "--count", "20", "--timeout", "3s")
	s.ready(t)
	hold.Lock()
	waitFor(t, "an audit held at its first batch", func() bool { return value(s.scrape(t), "keyreg_audit_running") == 1 })
	failed := value(s.scrape(t), "keyreg_audits_total", "result", "error") + value(s.scrape(t), "keyreg_audits_total", "result", "partial")
	srv.Pause(t)
	defer srv.Resume(t)
	hold.Unlock()
	client := &http.Client{Timeout: 5 * time.Second} // a scrape that waited on Redis would time out here
	waitFor(t, "the hung audit to time out", func() bool {
		resp, err := client.Get("http://" + s.addr + "/metrics")
		if err != nil {
			t.Fatalf("a scrape while Redis is stopped: %v", err)
		}
		resp.Body.Close()
		f := s.scrape(t)
		if got := value(f, "keyreg_family_keys", "family", "session"); got != 2000 {
			t.Fatalf("keyreg_family_keys{family=session} = %v while Redis is stopped, want the last audit's 2000", got)
		}
		return value(f, "keyreg_audits_total", "result", "error")+value(f, "keyreg_audits_total", "result", "partial") > failed &&
			value(f, "keyreg_audit_success") == 0
	})
}
