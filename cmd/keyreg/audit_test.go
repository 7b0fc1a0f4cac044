package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/report"
	"github.com/keyreg/keyreg/scanner"
)

// The registries of the audit tests live with the audit package's.
const (
	auditRegistry = "../../audit/testdata/keys.yaml"
	cleanRegistry = "../../audit/testdata/clean.yaml"
	badRegistry   = "../../audit/testdata/invalid.yaml"
)

// Markers that must never reach any output: a URL password and a payload
// value that breaks its schema.
const (
	passwordMarker = "pw-SECRET-xyz"
	payloadMarker  = "hunter2-PAYLOAD-SECRET"
)

// cli runs keyreg in-process and returns its exit code and output.
func cli(t testing.TB, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	// A hung audit fails the test instead of stalling the run.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code = run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// auditJSON is the part of the json audit report the tests read.
type auditJSON struct {
	Target        string `json:"target"`
	Mode          string `json:"mode"`
	Partial       bool   `json:"partial"`
	PartialReason string `json:"partial_reason"`
	Scan          struct {
		Nodes    int   `json:"nodes"`
		Keys     int64 `json:"keys"`
		Sampled  int64 `json:"sampled"`
		Skipped  int64 `json:"skipped"`
		Vanished int64 `json:"vanished"`
	} `json:"scan"`
	Totals struct {
		Keys   int64 `json:"keys"`
		Errors int64 `json:"errors"`
	} `json:"totals"`
	Families []struct {
		Name    string `json:"name"`
		Keys    int64  `json:"keys"`
		Sampled int64  `json:"sampled"`
	} `json:"families"`
	Findings []struct {
		Rule   string `json:"rule"`
		Family string `json:"family"`
		Count  int64  `json:"count"`
	} `json:"findings"`
}

func parseAudit(t testing.TB, stdout string) *auditJSON {
	t.Helper()
	var r auditJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("parsing the json report: %v\n%s", err, stdout)
	}
	return &r
}

func (r *auditJSON) family(name string) (keys, sampled int64) {
	for _, f := range r.Families {
		if f.Name == name {
			return f.Keys, f.Sampled
		}
	}
	return -1, -1
}

func (r *auditJSON) finding(family, rule string) int64 {
	for _, f := range r.Findings {
		if f.Family == family && f.Rule == rule {
			return f.Count
		}
	}
	return -1
}

// seeded counts what seedAudit wrote.
type seeded struct {
	sessions, secrets, bigBlobs, smallBlobs, unregistered int64
	db3, db7                                              int64
}

// seedAudit writes a keyspace for the audit registry: valid sessions,
// payloads carrying payloadMarker that break their schema or encoding (as
// a string, a hash field, a stream entry and an int counter), small and
// big blobs, unregistered keys; and a few keys in databases 3 and 7.
func seedAudit(t testing.TB, addr string, n int) seeded {
	t.Helper()
	ctx := context.Background()
	var s seeded
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	defer c.Close()
	p := c.Pipeline()
	for i := range n {
		p.Set(ctx, fmt.Sprintf("v1:session:%d", i+1), fmt.Sprintf(`{"user_id":%d}`, i+1), 30*time.Minute)
		s.sessions++
	}
	bad := fmt.Sprintf(`{"user_id":%q,"role":%q,"token":%q,"note":%q}`, payloadMarker, payloadMarker, payloadMarker, payloadMarker)
	for i := range 4 {
		p.Set(ctx, fmt.Sprintf("v1:session:%d", 900000+i), bad, 30*time.Minute)
		s.sessions++
		s.secrets++
	}
	for i := range 3 {
		p.HSet(ctx, fmt.Sprintf("v1:profile:%d", i+1), "name", `"x"`, "age", fmt.Sprintf("%q", payloadMarker))
		p.XAdd(ctx, &redis.XAddArgs{Stream: fmt.Sprintf("v1:events:t%d", i), Values: []any{"id", fmt.Sprintf("%q", payloadMarker)}})
		p.Set(ctx, fmt.Sprintf("v1:counter:c%d", i), payloadMarker, 0)
	}
	for i := range 30 {
		size := 100
		if i%3 != 0 {
			size = 20000
			s.bigBlobs++
		} else {
			s.smallBlobs++
		}
		p.Set(ctx, fmt.Sprintf("v1:blob:%04x", i), strings.Repeat("\xfe", size), 0)
	}
	for i := range 10 {
		p.Set(ctx, fmt.Sprintf("tmp:x:%d", i), "v", 0)
		s.unregistered++
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatalf("seeding: %v", err)
	}
	for db, keys := range map[int]*int64{3: &s.db3, 7: &s.db7} {
		cd := redis.NewClient(&redis.Options{Addr: addr, DB: db, DisableIdentity: true})
		for i := range 5 + db {
			if err := cd.Set(ctx, fmt.Sprintf("v1:session:%d", 5000+i), `{"user_id":1}`, time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
			*keys++
		}
		_ = cd.Close()
	}
	return s
}

// TestAuditExitCodes checks every exit code of keyreg audit against a real
// server: 0 clean, 1 findings, 2 usage and config errors, 3 unreachable.
func TestAuditExitCodes(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	seedAudit(t, s.Addr, 50)
	// Database 4 holds a keyspace that matches clean.yaml exactly.
	c4 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 4, DisableIdentity: true})
	defer c4.Close()
	for i := range 40 {
		if err := c4.Set(context.Background(), fmt.Sprintf("v1:session:%d", i+1), fmt.Sprintf(`{"user_id":%d,"role":"user"}`, i+1), 10*time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	url := s.URL()

	code, out, errs := cli(t, "audit", "--registry", cleanRegistry, "--url", url+"/4", "--format", "json", "--count", "7")
	if code != exitClean {
		t.Fatalf("clean keyspace: exit %d\n%s%s", code, out, errs)
	}
	if r := parseAudit(t, out); r.Totals.Keys != 40 || r.Totals.Errors != 0 || len(r.Findings) != 0 || r.Partial {
		t.Errorf("clean keyspace report: %+v", r)
	}
	code, out, errs = cli(t, "audit", "--registry", cleanRegistry, "--url", url+"/4")
	if code != exitClean || strings.Contains(out+errs, "error:") {
		t.Errorf("clean keyspace, text: exit %d\n%s%s", code, out, errs)
	}

	code, out, errs = cli(t, "audit", "--allow-touch", "--registry", auditRegistry, "--url", url, "--count", "7")
	if code != exitFindings || !strings.Contains(out, "(payload-invalid)") {
		t.Errorf("findings: exit %d, want 1\n%s%s", code, out, errs)
	}
	if code, _, errs = cli(t, "audit", "--registry", auditRegistry, "--url", url, "--fail-on", "never"); code != exitClean {
		t.Errorf("--fail-on never: exit %d, want 0\n%s", code, errs)
	}
	// The clean keyspace still has findings at info severity or above?
	// No: --fail-on info fails only when there are any.
	if code, _, errs = cli(t, "audit", "--registry", cleanRegistry, "--url", url+"/4", "--fail-on", "info"); code != exitClean {
		t.Errorf("clean keyspace, --fail-on info: exit %d, want 0\n%s", code, errs)
	}

	usage := []struct {
		args []string
		want string
	}{
		{[]string{"--sample", "abc"}, "invalid argument"},
		{[]string{"--format", "xml"}, `"xml"`},
		{[]string{"--fail-on", "bogus"}, `bad --fail-on "bogus"`},
		{[]string{"--no-such-flag"}, "unknown flag"},
		{[]string{"extra-arg"}, "unknown command"},
		{[]string{"--registry", badRegistry}, "invalid.yaml:4:"},
		{[]string{"--registry", "no-such-keys.yaml"}, `registry "no-such-keys.yaml" not found`},
		{[]string{"--url", "http://u:" + passwordMarker + "@127.0.0.1:1/0"}, `scheme "http" is not redis`},
		{[]string{"--url", "redis://u:" + passwordMarker + "@127.0.0.1:notaport/0"}, "not host:port"},
		{[]string{"--count", "-1"}, "negative"},
		{[]string{"--parallel", "-1"}, "parallel"},
		{[]string{"--sample", "-1"}, "--sample -1 is negative"},
		{[]string{"--max-value-bytes", "0"}, "--max-value-bytes 0 is not above 0"},
		{[]string{"--max-value-bytes", "-5"}, "--max-value-bytes -5 is not above 0"},
	}
	for _, u := range usage {
		args := append([]string{"audit", "--registry", auditRegistry, "--url", url}, u.args...)
		code, out, errs := cli(t, args...)
		if code != exitUsage || !strings.Contains(errs, u.want) || strings.Contains(out+errs, passwordMarker) {
			t.Errorf("%q: exit %d (want 2), stderr %q (want %q)", u.args, code, errs, u.want)
		}
	}

	dead := redistest.Standalone(t)
	dead.Stop()
	start := time.Now()
	code, out, errs = cli(t, "audit", "--registry", auditRegistry, "--url", "redis://audit:"+passwordMarker+"@"+dead.Addr, "--command-timeout", "1s")
	if code != exitRuntime || !strings.Contains(errs, "keyreg: error: connecting to redis://audit:xxxxx@"+dead.Addr) ||
		strings.Contains(out+errs, passwordMarker) {
		t.Errorf("unreachable: exit %d (want 3)\nstdout %q\nstderr %q", code, out, errs)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("failing to connect took %v", d)
	}
}

// TestAuditNeverLeaks runs the audit in every format as an ACL user whose
// URL carries a password, over payloads that carry a marker and break
// their schema or encoding: neither the password nor the marker may
// appear on stdout, stderr or in the GitHub step summary. --show-values
// does show the marker, which proves the check can fail.
func TestAuditNeverLeaks(t *testing.T) {
	summary := filepath.Join(t.TempDir(), "step-summary.md")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	s := redistest.Standalone(t)
	seedAudit(t, s.Addr, 30)
	redistest.ACLUser(t, s, "audit", passwordMarker, strings.Fields(scanner.MinimalACL)...)
	url := fmt.Sprintf("redis://audit:%s@127.0.0.1:%d", passwordMarker, s.Port)
	redacted := fmt.Sprintf("redis://audit:xxxxx@127.0.0.1:%d", s.Port)

	leaks := func(what, text string) {
		t.Helper()
		for _, m := range []string{passwordMarker, payloadMarker} {
			if strings.Contains(text, m) {
				t.Errorf("%s leaks %q:\n%s", what, m, text)
			}
		}
	}
	for _, f := range report.AuditFormats {
		code, out, errs := cli(t, "audit", "--allow-touch", "--registry", auditRegistry, "--url", url, "--format", string(f), "--count", "9")
		if code != exitFindings {
			t.Errorf("format %s: exit %d, want 1\n%s", f, code, errs)
		}
		leaks("format "+string(f)+" stdout", out)
		leaks("format "+string(f)+" stderr", errs)
		// Every format names the payload findings (so the payloads were
		// read) and says which server it audited; prometheus carries only
		// counts.
		if f != report.Prometheus && !strings.Contains(out, "payload-invalid") {
			t.Errorf("format %s does not report payload-invalid:\n%s", f, out)
		}
		if f == report.JSON {
			r := parseAudit(t, out)
			if r.Target != redacted || r.finding("session", "payload-invalid") != 4 ||
				r.finding("profile", "payload-invalid") != 3 || r.finding("events", "payload-invalid") != 3 ||
				r.finding("counter", "encoding-mismatch") != 3 {
				t.Errorf("json report: target %q, findings %+v", r.Target, r.Findings)
			}
		}
	}
	b, err := os.ReadFile(summary)
	if err != nil || len(b) == 0 {
		t.Errorf("github format wrote no step summary: %v", err)
	}
	leaks("the github step summary", string(b))

	// --show-values lets values into the details: the marker shows up, the
	// password still does not.
	for _, f := range []string{"json", "text"} {
		code, out, errs := cli(t, "audit", "--allow-touch", "--registry", auditRegistry, "--url", url, "--format", f, "--show-values")
		if code != exitFindings || !strings.Contains(out, payloadMarker) {
			t.Errorf("--show-values --format %s: exit %d, marker shown %v\n%s", f, code, strings.Contains(out, payloadMarker), out)
		}
		if strings.Contains(out+errs, passwordMarker) {
			t.Errorf("--show-values --format %s leaks the password", f)
		}
	}

	// The error path: an unreachable server at a URL with the password.
	s.Stop()
	code, out, errs := cli(t, "audit", "--registry", auditRegistry, "--url", url, "--command-timeout", "1s", "--format", "json")
	if code != exitRuntime || !strings.Contains(errs, redacted) {
		t.Errorf("unreachable: exit %d (want 3), stderr %q", code, errs)
	}
	leaks("unreachable stdout", out)
	leaks("unreachable stderr", errs)
}

// TestAuditFlags checks the flags that shape an audit against a real
// server: --sample, --max-value-bytes, --match, --max-keys and the
// database selection.
func TestAuditFlags(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	sd := seedAudit(t, s.Addr, 300)
	url := s.URL()
	audit := func(args ...string) (int, *auditJSON) {
		t.Helper()
		// Sampling on redis 7.0 touches the keys read: opt in (TestAuditTouch
		// checks the default).
		args = append([]string{"audit", "--allow-touch", "--registry", auditRegistry, "--url", url, "--format", "json", "--count", "20"}, args...)
		code, out, errs := cli(t, args...)
		if code != exitClean && code != exitFindings {
			t.Fatalf("%q: exit %d\n%s", args, code, errs)
		}
		return code, parseAudit(t, out)
	}
	all := sd.sessions + 3*3 + sd.bigBlobs + sd.smallBlobs + sd.unregistered

	t.Run("sample", func(t *testing.T) {
		_, r := audit("--sample", "2", "--db", "0")
		var sum int64
		for _, f := range r.Families {
			if f.Sampled > 2 {
				t.Errorf("family %s: %d sampled, over --sample 2", f.Name, f.Sampled)
			}
			sum += f.Sampled
		}
		if keys, sampled := r.family("session"); keys != sd.sessions || sampled != 2 {
			t.Errorf("session: %d keys, %d sampled; want %d, 2", keys, sampled, sd.sessions)
		}
		if r.Scan.Sampled != sum || r.Scan.Sampled > 2*int64(len(r.Families)) {
			t.Errorf("scan sampled %d, families %d", r.Scan.Sampled, sum)
		}
		_, r = audit("--sample", "0", "--db", "0")
		if r.Scan.Sampled != 0 || r.finding("session", "payload-invalid") != -1 {
			t.Errorf("--sample 0: sampled %d", r.Scan.Sampled)
		}
	})
	t.Run("max-value-bytes", func(t *testing.T) {
		// Under the big blobs (20 kB), over everything else: MEMORY USAGE
		// of a small stream is about 5 kB.
		_, r := audit("--max-value-bytes", "10000", "--db", "0")
		if _, sampled := r.family("blob"); r.Scan.Skipped != sd.bigBlobs || sampled != sd.smallBlobs {
			t.Errorf("skipped %d, blob sampled %d; want %d big blobs skipped, %d small sampled", r.Scan.Skipped, sampled, sd.bigBlobs, sd.smallBlobs)
		}
		_, r = audit("--db", "0")
		if _, sampled := r.family("blob"); r.Scan.Skipped != 0 || sampled != sd.bigBlobs+sd.smallBlobs {
			t.Errorf("default limit: skipped %d, blob sampled %d", r.Scan.Skipped, sampled)
		}
	})
	t.Run("match", func(t *testing.T) {
		_, r := audit("--match", "v1:session:*", "--db", "0")
		if keys, _ := r.family("session"); r.Totals.Keys != sd.sessions || keys != sd.sessions {
			t.Errorf("--match: %d keys, session %d; want %d", r.Totals.Keys, keys, sd.sessions)
		}
		for _, f := range r.Findings {
			if f.Rule == "family-unused" {
				t.Errorf("--match reports family-unused on %s", f.Family)
			}
		}
		_, r = audit("--db", "0")
		if r.finding("ghost", "family-unused") != 0 {
			t.Errorf("a full audit does not report the ghost family unused: %+v", r.Findings)
		}
	})
	t.Run("max-keys", func(t *testing.T) {
		_, r := audit("--max-keys", "25", "--db", "0")
		if !r.Partial || r.PartialReason == "" || r.Totals.Keys != 25 || r.finding("ghost", "family-unused") != -1 {
			t.Errorf("--max-keys 25: partial %v (%q), %d keys, findings %+v", r.Partial, r.PartialReason, r.Totals.Keys, r.Findings)
		}
		for _, f := range []string{"table", "text", "markdown"} {
			_, out, _ := cli(t, "audit", "--registry", auditRegistry, "--url", url, "--format", f, "--max-keys", "25")
			if !strings.Contains(strings.ToLower(out), "partial") {
				t.Errorf("--max-keys 25 --format %s does not say the report is partial:\n%s", f, out)
			}
		}
	})
	t.Run("databases", func(t *testing.T) {
		_, r := audit()
		if r.Totals.Keys != all+sd.db3+sd.db7 {
			t.Errorf("every database: %d keys, want %d", r.Totals.Keys, all+sd.db3+sd.db7)
		}
		if _, r = audit("--db", "3"); r.Totals.Keys != sd.db3 {
			t.Errorf("--db 3: %d keys, want %d", r.Totals.Keys, sd.db3)
		}
		code, out, errs := cli(t, "audit", "--registry", auditRegistry, "--url", url+"/7", "--format", "json")
		if r := parseAudit(t, out); code != exitClean || r.Totals.Keys != sd.db7 {
			t.Errorf("url /7: exit %d, %d keys, want %d\n%s", code, r.Totals.Keys, sd.db7, errs)
		}
		// --db wins over the URL's database, 0 included.
		code, out, errs = cli(t, "audit", "--registry", auditRegistry, "--url", url+"/7", "--db", "0", "--format", "json")
		if r := parseAudit(t, out); code == exitUsage || code == exitRuntime || r.Totals.Keys != all {
			t.Errorf("url /7 --db 0: exit %d, %d keys, want db 0's %d\n%s", code, r.Totals.Keys, all, errs)
		}
	})
}

// TestAuditNodeFailure breaks the server under an audit run through the
// CLI, once it has audited 20 of its 3000 keys: it must exit 3 and say what
// failed, or print a report marked partial; never a complete-looking report.
func TestAuditNodeFailure(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, code int, out, errs, node string, at int64) {
		t.Helper()
		var r auditJSON
		jsonErr := json.Unmarshal([]byte(out), &r)
		switch {
		case code == exitRuntime:
			if !strings.Contains(errs, "keyreg: error: ") || !strings.Contains(errs, node) {
				t.Errorf("exit 3, but stderr does not say what failed on %s: %q", node, errs)
			}
			if jsonErr != nil || !r.Partial {
				t.Errorf("exit 3 without a partial report: %v\n%s", jsonErr, out)
			}
		case jsonErr == nil && r.Partial:
		default:
			t.Errorf("exit %d and a report that is not partial (%d keys): a silent, incomplete audit\n%s", code, r.Totals.Keys, errs)
		}
		if jsonErr == nil && (r.Totals.Keys < at || r.Totals.Keys >= 3000) {
			t.Errorf("the report counts %d keys, the fault came after %d: want at least those, and not all of 3000", r.Totals.Keys, at)
		}
		t.Logf("fault after %d keys, %d in the report; exit %d: %s", at, r.Totals.Keys, code, strings.TrimSpace(errs))
	}
	args := func(url string) []string {
		return []string{"audit", "--registry", auditRegistry, "--url", url, "--format", "json", "--count", "20", "--command-timeout", "1s"}
	}
	t.Run("cluster master killed", func(t *testing.T) {
		t.Parallel()
		cs := redistest.Cluster(t)
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cs.Addrs, DisableIdentity: true,
			MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
		defer cc.Close()
		seedMany(t, cc, 3000)
		dead := cs.Masters[1]
		r := startFault(t, context.Background(), 20, args(cs.URL())...)
		at := r.at(t)
		dead.Stop()
		code, out, errs := r.finish()
		check(t, code, out, errs, dead.Addr, at)
	})
	t.Run("standalone restarted", func(t *testing.T) {
		t.Parallel()
		s := redistest.Standalone(t)
		seedMany(t, s.Client(t), 3000)
		r := startFault(t, context.Background(), 20, args(s.URL())...)
		at := r.at(t)
		s.Restart(t)
		code, out, errs := r.finish()
		check(t, code, out, errs, s.Addr, at)
	})
}

// seedMany writes n valid session keys.
func seedMany(t testing.TB, c redis.Cmdable, n int) {
	t.Helper()
	ctx := context.Background()
	p := c.Pipeline()
	for i := range n {
		p.Set(ctx, fmt.Sprintf("v1:session:%d", i+1), fmt.Sprintf(`{"user_id":%d}`, i+1), time.Hour)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatalf("seeding: %v", err)
	}
}
