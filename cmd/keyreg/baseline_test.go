package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/internal/redistest"
)

// baselineJSON is the part of the json report that the baseline tests read.
type baselineJSON struct {
	Findings []struct {
		Rule    string `json:"rule"`
		Family  string `json:"family"`
		Count   int64  `json:"count"`
		Message string `json:"message"`
		New     *bool  `json:"new"`
	} `json:"findings"`
	Unregistered struct {
		Groups []struct {
			Prefix string `json:"prefix"`
			New    *bool  `json:"new"`
		} `json:"groups"`
	} `json:"unregistered"`
	Baseline *struct {
		File      string   `json:"file"`
		New       []string `json:"new"`
		Resolved  []string `json:"resolved"`
		Unchanged int      `json:"unchanged"`
		Entries   []struct {
			State  string  `json:"state"`
			Rule   string  `json:"rule"`
			Family string  `json:"family"`
			Prefix *string `json:"prefix"`
		} `json:"entries"`
	} `json:"baseline"`
}

// entries returns "state rule family-or-prefix" for the entries that are
// not unchanged, sorted.
func (b *baselineJSON) changed() []string {
	var out []string
	for _, e := range b.Baseline.Entries {
		if e.State == "unchanged" {
			continue
		}
		what := e.Family
		if e.Prefix != nil {
			what = fmt.Sprintf("%q", *e.Prefix)
		}
		out = append(out, e.State+" "+e.Rule+" "+what)
	}
	slices.Sort(out)
	return out
}

// newFindings returns "rule family" of the findings marked new.
func (b *baselineJSON) newFindings(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range b.Findings {
		if f.New == nil {
			t.Fatalf("finding %s %s has no \"new\" field", f.Rule, f.Family)
		}
		if *f.New {
			out = append(out, strings.TrimSpace(f.Rule+" "+f.Family))
		}
	}
	slices.Sort(out)
	return out
}

// TestBaselineRoundTrip records a baseline from a real server, then
// changes the keyspace and checks that --baseline reports only what is
// new, lists what was resolved, and sets the exit code from new findings
// alone.
func TestBaselineRoundTrip(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	defer c.Close()
	do := func(cmds ...func(p redis.Pipeliner)) {
		t.Helper()
		p := c.Pipeline()
		for _, cmd := range cmds {
			cmd(p)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The starting keyspace: valid sessions, one session whose TTL is over
	// its family's max (ttl-exceeds-max), one cart, unregistered keys
	// under "tmp:x:". Most families have no keys (family-unused, info).
	do(func(p redis.Pipeliner) {
		for i := range 20 {
			p.Set(ctx, fmt.Sprintf("v1:session:%d", i+1), fmt.Sprintf(`{"user_id":%d}`, i+1), 30*time.Minute)
		}
		p.Set(ctx, "v1:session:100", `{"user_id":100}`, 2*time.Hour)
		p.RPush(ctx, "v1:cart:{7}:items", "a", "b")
		for i := range 5 {
			p.Set(ctx, fmt.Sprintf("tmp:x:%d", i), "v", 0)
		}
	})
	dir := t.TempDir()
	base := filepath.Join(dir, "baseline.json")
	url := s.URL()
	auditCLI := func(args ...string) (int, string, string) {
		t.Helper()
		return cli(t, append([]string{"audit", "--registry", auditRegistry, "--url", url}, args...)...)
	}
	parse := func(out string) *baselineJSON {
		t.Helper()
		var b baselineJSON
		if err := json.Unmarshal([]byte(out), &b); err != nil {
			t.Fatalf("parsing the json report: %v\n%s", err, out)
		}
		return &b
	}

	// 1. Record the baseline. The keyspace has errors, so the exit is 1.
	code, out, errs := auditCLI("--write-baseline", base, "--format", "json")
	if code != exitFindings {
		t.Fatalf("--write-baseline: exit %d, want 1\n%s", code, errs)
	}
	if b := parse(out); b.Baseline != nil || b.Findings[0].New != nil {
		t.Errorf("without --baseline the report has baseline fields")
	}
	data, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"v1:session:100", "tmp:x:1", "v1:cart", "user_id", "127.0.0.1"} {
		if strings.Contains(string(data), leak) {
			t.Errorf("baseline file holds %q:\n%s", leak, data)
		}
	}
	recorded, err := audit.LoadBaseline(base)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, e := range recorded.Findings {
		if e.Rule != "family-unused" {
			labels = append(labels, e.Label())
		}
	}
	if want := []string{`ttl-exceeds-max session`, `unregistered-key "tmp:x:"`}; !slices.Equal(labels, want) {
		t.Errorf("baseline entries (besides family-unused) = %q, want %q", labels, want)
	}
	// A clean keyspace writes a baseline too, and exits 0.
	clean := filepath.Join(dir, "clean.json")
	if code, _, errs := cli(t, "audit", "--registry", cleanRegistry, "--url", url+"/5", "--write-baseline", clean); code != exitClean {
		t.Errorf("--write-baseline on an empty database: exit %d, want 0\n%s", code, errs)
	} else if b, err := audit.LoadBaseline(clean); err != nil || len(b.Findings) != 1 || b.Findings[0].Rule != "family-unused" {
		t.Errorf("clean baseline: %v %+v", err, b)
	}

	// 2. The same keyspace against the baseline: nothing new, exit 0, in
	// every format.
	code, out, errs = auditCLI("--baseline", base, "--format", "json")
	if code != exitClean {
		t.Fatalf("unchanged keyspace with --baseline: exit %d, want 0\n%s", code, errs)
	}
	b := parse(out)
	if b.Baseline == nil || len(b.Baseline.New) != 0 || len(b.Baseline.Resolved) != 0 || b.Baseline.Unchanged != len(recorded.Findings) || b.Baseline.File != base {
		t.Errorf("unchanged keyspace: baseline %+v", b.Baseline)
	}
	if nf := b.newFindings(t); len(nf) != 0 {
		t.Errorf("unchanged keyspace: new findings %v", nf)
	}
	for _, f := range []string{"text", "table", "markdown", "github", "sarif", "prometheus"} {
		if code, out, errs := auditCLI("--baseline", base, "--format", f); code != exitClean {
			t.Errorf("unchanged keyspace, %s: exit %d, want 0\n%s%s", f, code, out, errs)
		}
	}

	// 3. One new violation: a session without a TTL (its family has a max
	// TTL). More keys under an old prefix are no new finding.
	do(func(p redis.Pipeliner) {
		p.Set(ctx, "v1:session:200", `{"user_id":200}`, 0)
		p.Set(ctx, "tmp:x:99", "v", 0)
	})
	code, out, errs = auditCLI("--baseline", base, "--format", "json")
	if code != exitFindings {
		t.Fatalf("a new violation: exit %d, want 1\n%s", code, errs)
	}
	b = parse(out)
	if got, want := b.newFindings(t), []string{"ttl-missing session"}; !slices.Equal(got, want) {
		t.Errorf("new findings = %v, want %v", got, want)
	}
	if got, want := b.changed(), []string{"new ttl-missing session"}; !slices.Equal(got, want) || len(b.Baseline.New) != 1 {
		t.Errorf("baseline entries = %v (new %v), want %v", got, b.Baseline.New, want)
	}
	// Text: only the new finding is printed gcc-style, and the summary
	// counts it alone.
	code, out, errs = auditCLI("--baseline", base, "--format", "text")
	if code != exitFindings || !strings.Contains(out, "(ttl-missing)") || strings.Contains(out, "(ttl-exceeds-max)") ||
		strings.Contains(out, "(unregistered-key)") || !strings.Contains(out, "new since baseline: 1\n") ||
		!strings.Contains(out, "resolved since baseline: 0\n") || !strings.HasPrefix(errs, "1 error") {
		t.Errorf("text with one new finding: exit %d\n%s---\n%s", code, out, errs)
	}
	// GitHub: one annotation, for the new finding.
	code, out, _ = auditCLI("--baseline", base, "--format", "github")
	if code != exitFindings || strings.Count(out, "::error ") != 1 || !strings.Contains(out, "title=ttl-missing::") ||
		!strings.Contains(out, "1 new, 0 resolved") {
		t.Errorf("github with one new finding: exit %d\n%s", code, out)
	}
	// SARIF: every result, marked new or unchanged.
	code, out, _ = auditCLI("--baseline", base, "--format", "sarif")
	var sarif struct {
		Runs []struct {
			Results []struct {
				RuleID        string `json:"ruleId"`
				BaselineState string `json:"baselineState"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &sarif); err != nil || code != exitFindings {
		t.Fatalf("sarif: exit %d, %v\n%s", code, err, out)
	}
	states := map[string]string{}
	for _, r := range sarif.Runs[0].Results {
		if r.RuleID != "family-unused" {
			states[r.RuleID] = r.BaselineState
		}
	}
	if want := map[string]string{"ttl-missing": "new", "ttl-exceeds-max": "unchanged", "unregistered-key": "unchanged"}; !maps.Equal(states, want) {
		t.Errorf("sarif baseline states = %v, want %v", states, want)
	}
	code, out, _ = auditCLI("--baseline", base, "--format", "prometheus")
	if code != exitFindings || !strings.Contains(out, "\nkeyreg_baseline_new_findings 1\n") || !strings.Contains(out, "\nkeyreg_baseline_resolved_findings 0\n") {
		t.Errorf("prometheus: exit %d\n%s", code, out)
	}

	// 4. A new unregistered prefix is new, though unregistered-key fired
	// before: the finding is narrowed to the new prefix.
	do(func(p redis.Pipeliner) {
		p.Set(ctx, "jobs:queue:1", "v", 0)
		p.Set(ctx, "jobs:queue:2", "v", 0)
	})
	code, out, errs = auditCLI("--baseline", base, "--format", "json")
	b = parse(out)
	if code != exitFindings {
		t.Fatalf("a new prefix: exit %d, want 1\n%s", code, errs)
	}
	if got, want := b.changed(), []string{`new ttl-missing session`, `new unregistered-key "jobs:queue:"`}; !slices.Equal(got, want) {
		t.Errorf("baseline entries = %v, want %v", got, want)
	}
	for _, g := range b.Unregistered.Groups {
		if g.New == nil || *g.New != (g.Prefix == "jobs:queue:") {
			t.Errorf("group %q: new = %v", g.Prefix, g.New)
		}
	}
	code, out, _ = auditCLI("--baseline", base, "--format", "text")
	if code != exitFindings || !strings.Contains(out, `: 2 of 31 under new prefixes: "jobs:queue:" (2)`) || strings.Contains(out, `"tmp:x:" (6)`) {
		t.Errorf("text with a new prefix: exit %d\n%s", code, out)
	}

	// 5. Remove the old violation: it is listed as resolved.
	if err := c.Del(ctx, "v1:session:100").Err(); err != nil {
		t.Fatal(err)
	}
	code, out, _ = auditCLI("--baseline", base, "--format", "json")
	b = parse(out)
	if code != exitFindings || len(b.Baseline.Resolved) != 1 {
		t.Errorf("resolved: exit %d, baseline %+v", code, b.Baseline)
	}
	if got, want := b.changed(), []string{`new ttl-missing session`, `new unregistered-key "jobs:queue:"`, `resolved ttl-exceeds-max session`}; !slices.Equal(got, want) {
		t.Errorf("baseline entries = %v, want %v", got, want)
	}
	for _, f := range []string{"text", "table", "markdown"} {
		_, out, _ := auditCLI("--baseline", base, "--format", f)
		if !regexp.MustCompile(`(?is)resolved since baseline.*ttl-exceeds-max`).MatchString(out) ||
			!regexp.MustCompile(`(?is)new since baseline.*ttl-missing`).MatchString(out) {
			t.Errorf("%s does not list new and resolved entries:\n%s", f, out)
		}
	}

	// 6. Re-record and compare in one run, then a new info finding (the
	// cart family loses its only key) does not reach --fail-on error.
	next := filepath.Join(dir, "next.json")
	if code, _, errs := auditCLI("--baseline", base, "--write-baseline", next); code != exitFindings {
		t.Errorf("--baseline with --write-baseline: exit %d, want 1\n%s", code, errs)
	}
	if code, _, errs := auditCLI("--baseline", next); code != exitClean {
		t.Errorf("against the new baseline: exit %d, want 0\n%s", code, errs)
	}
	if err := c.Del(ctx, "v1:cart:{7}:items").Err(); err != nil {
		t.Fatal(err)
	}
	code, out, _ = auditCLI("--baseline", next, "--format", "json")
	if b := parse(out); code != exitClean || !slices.Equal(b.newFindings(t), []string{"family-unused cart"}) {
		t.Errorf("a new info finding: exit %d, want 0; new %v", code, b.newFindings(t))
	}
	if code, _, _ := auditCLI("--baseline", next, "--fail-on", "info"); code != exitFindings {
		t.Errorf("a new info finding with --fail-on info: exit %d, want 1", code)
	}
}

// TestBaselineErrors checks that a baseline that cannot be used is a
// config error (exit 2), reported before Redis is contacted.
func TestBaselineErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Nothing listens here: the baseline must fail first.
	const url = "redis://127.0.0.1:1"
	for _, tc := range []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "none.json"), "reading baseline: open "},
		{"garbage", write("garbage.json", "not json"), "parsing: invalid character"},
		{"version", write("v2.json", `{"version":"2","findings":[]}`), `unsupported baseline version "2"`},
		{"tampered", write("t.json", `{"version":"1","findings":[{"rule":"ttl-missing","family":"x","fingerprint":"sha256:`+strings.Repeat("0", 64)+`"}]}`), "does not match"},
	} {
		code, out, errs := cli(t, "audit", "--registry", auditRegistry, "--url", url, "--baseline", tc.path)
		if code != exitUsage || !strings.HasPrefix(errs, "keyreg: error: ") || !strings.Contains(errs, tc.want) ||
			!strings.Contains(errs, "hint: write one with keyreg audit --write-baseline") || out != "" {
			t.Errorf("%s: exit %d, want 2\nstdout: %s\nstderr: %s", tc.name, code, out, errs)
		}
	}
}

// TestBaselinePartial checks that a partial audit writes no baseline.
func TestBaselinePartial(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	seedAudit(t, s.Addr, 20)
	p := filepath.Join(t.TempDir(), "b.json")
	code, _, errs := cli(t, "audit", "--registry", auditRegistry, "--url", s.URL(), "--max-keys", "5", "--count", "2", "--write-baseline", p)
	if code != exitRuntime || !strings.Contains(errs, "the audit is partial") {
		t.Errorf("partial --write-baseline: exit %d, want 3\n%s", code, errs)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("a partial audit wrote a baseline: %v", err)
	}
}
