package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/explain"
	"github.com/keyreg/keyreg/internal/redistest"
)

// idleTimes returns OBJECT IDLETIME in seconds of every key of db 0; SCAN
// and OBJECT do not touch keys.
func idleTimes(t *testing.T, c *redis.Client) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	m := map[string]int64{}
	iter := c.Scan(ctx, 0, "", 100).Iterator()
	for iter.Next(ctx) {
		d, err := c.ObjectIdleTime(ctx, iter.Val()).Result()
		if err != nil {
			t.Fatal(err)
		}
		m[iter.Val()] = int64(d.Seconds())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// ageKeys makes every key of db 0 look idle for secs seconds: RESTORE
// with IDLETIME sets the LRU clock, so that a read that touches a key is
// seen as a drop of its idle time, without waiting.
func ageKeys(t *testing.T, c *redis.Client, secs int) {
	t.Helper()
	ctx := context.Background()
	for k := range idleTimes(t, c) {
		dump, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		pttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Do(ctx, "RESTORE", k, max(pttl.Milliseconds(), 0), dump, "REPLACE", "IDLETIME", secs).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// resetSince returns the keys whose idle time dropped below before's.
func resetSince(before, after map[string]int64) []string {
	var out []string
	for k, b := range before {
		if after[k] < b {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestAuditTouch audits a redis 7.0 primary (no CLIENT NO-TOUCH) whose keys
// all look idle for two hours, and reads OBJECT IDLETIME of every key
// before and after: the default audit leaves every idle time alone and says
// in a note what it did not check; --allow-touch samples, resets the idle
// time of exactly the keys it read, and counts them in its note.
func TestAuditTouch(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	seedAudit(t, s.Addr, 100)
	admin := s.Client(t)
	ageKeys(t, admin, 7200)
	before := idleTimes(t, admin)
	type report struct {
		Scan struct {
			Sampled    int64    `json:"sampled"`
			Notes      []string `json:"notes"`
			NotChecked []string `json:"not_checked"`
		} `json:"scan"`
	}
	audit := func(args ...string) report {
		t.Helper()
		args = append([]string{"audit", "--registry", auditRegistry, "--url", s.URL() + "/0", "--format", "json"}, args...)
		code, out, errs := cli(t, args...)
		if code != exitFindings {
			t.Fatalf("%q: exit %d, want 1 (unregistered keys)\n%s", args, code, errs)
		}
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}

	r := audit()
	after := idleTimes(t, admin)
	for k, b := range before {
		if after[k] < b {
			t.Errorf("%q: idle %ds before, %ds after the default audit", k, b, after[k])
		}
	}
	notes := strings.Join(r.Scan.Notes, "\n")
	if r.Scan.Sampled != 0 || !strings.Contains(notes, "no payload was sampled") ||
		!strings.Contains(notes, "redis 7.0") || !strings.Contains(notes, "--replica") || !strings.Contains(notes, "--allow-touch") {
		t.Errorf("default audit: sampled %d, notes %q", r.Scan.Sampled, r.Scan.Notes)
	}
	t.Logf("default: %d keys, all idle >= 7200s before and after; note %q", len(after), notes)
	// What was not checked is a field, and the summary line says it: the
	// finding counts do not cover those rules.
	if !slices.Equal(r.Scan.NotChecked, []string{"payload-invalid", "encoding-mismatch"}) {
		t.Errorf("default audit: not_checked %q", r.Scan.NotChecked)
	}
	_, _, errs := cli(t, "audit", "--registry", auditRegistry, "--url", s.URL()+"/0", "--format", "text")
	if !regexp.MustCompile(`(?m)^\d+ errors?, .*; not checked: payload-invalid, encoding-mismatch \(see the notes\)$`).MatchString(errs) {
		t.Errorf("default audit: the summary line does not say what was not checked:\n%s", errs)
	}

	r = audit("--allow-touch")
	touched := idleTimes(t, admin)
	reset := 0
	for k, b := range before {
		if touched[k] < b {
			reset++
		}
	}
	want := fmt.Sprintf("%d keys had their LRU/LFU state touched", reset)
	if r.Scan.Sampled == 0 || reset != int(r.Scan.Sampled) || len(r.Scan.Notes) != 1 || r.Scan.NotChecked != nil || !strings.HasPrefix(r.Scan.Notes[0], want) {
		t.Errorf("--allow-touch: sampled %d, %d idle times reset, notes %q (want %q)", r.Scan.Sampled, reset, r.Scan.Notes, want)
	}
	t.Logf("--allow-touch: %d of %d keys reset; note %q", reset, len(touched), r.Scan.Notes)
}

// TestExplainTouch explains keys of a redis 7.0 primary (no CLIENT
// NO-TOUCH) whose keys all look idle for two hours. By default explain
// --live reads the value and the length, resets the idle time of exactly
// the key explained and says so (touched_keys 1); the other keys keep
// theirs. With --no-touch nothing is reset, and the verdict is
// "incomplete", never "ok": the encoding, the schema and max_len were not
// checked, listed under not_checked with their reason (exit 3).
func TestExplainTouch(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	reg := filepath.Join(t.TempDir(), "keys.yaml")
	if err := os.WriteFile(reg, []byte(explainRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	admin := s.Client(t)
	ctx := context.Background()
	for i := range 5 {
		admin.HSet(ctx, fmt.Sprintf("v1:profile:%d", i), "a", "1")
		admin.Set(ctx, fmt.Sprintf("v1:session:%d", i), `{"user_id":1}`, time.Hour)
	}
	ageKeys(t, admin, 7200)
	type live struct {
		Verdict    string               `json:"verdict"`
		Verdicts   []string             `json:"verdicts"`
		NotChecked []explain.NotChecked `json:"not_checked"`
		Touched    *int64               `json:"touched_keys"`
		Encoding   string               `json:"detected_encoding"`
	}
	explainKey := func(wantCode int, args ...string) live {
		t.Helper()
		args = append([]string{"explain", "--registry", reg, "--url", s.URL(), "--live", "--format", "json"}, args...)
		code, out, errs := cli(t, args...)
		if code != wantCode {
			t.Fatalf("%q: exit %d, want %d\n%s%s", args, code, wantCode, out, errs)
		}
		var e struct {
			Live live `json:"live"`
		}
		if err := json.Unmarshal([]byte(out), &e); err != nil {
			t.Fatal(err)
		}
		return e.Live
	}
	for _, key := range []string{"v1:session:1", "v1:profile:1"} {
		before := idleTimes(t, admin)
		l := explainKey(exitClean, key)
		reset := resetSince(before, idleTimes(t, admin))
		if l.Verdict != explain.VerdictOK || len(l.Verdicts) != 0 || len(l.NotChecked) != 0 || l.Touched == nil ||
			*l.Touched != int64(len(reset)) || !slices.Equal(reset, []string{key}) || l.Encoding != "json" {
			t.Errorf("explain %s: %+v; idle times reset: %q", key, l, reset)
		}
	}

	before := idleTimes(t, admin)
	l := explainKey(exitRuntime, "--no-touch", "v1:session:2")
	var rules []string
	for _, n := range l.NotChecked {
		if n.Reason != explain.ReasonTouch || !strings.Contains(n.Detail, "redis 7.0") {
			t.Errorf("not checked %+v: reason not the touch", n)
		}
		rules = append(rules, n.Rules...)
	}
	if l.Verdict != explain.VerdictIncomplete || !slices.Equal(rules, []string{"encoding-mismatch", "payload-invalid"}) || l.Encoding != "" || *l.Touched != 0 {
		t.Errorf("--no-touch session: %+v", l)
	}
	l = explainKey(exitRuntime, "--no-touch", "v1:profile:2")
	if l.Verdict != explain.VerdictIncomplete || len(l.NotChecked) != 2 || l.NotChecked[0].Fact != "value" || l.NotChecked[1].Fact != "length" ||
		!slices.Equal(l.NotChecked[1].Rules, []string{"collection-too-long"}) {
		t.Errorf("--no-touch profile: %+v", l)
	}
	if reset := resetSince(before, idleTimes(t, admin)); len(reset) != 0 {
		t.Errorf("--no-touch reset the idle time of %q", reset)
	}
	code, out, errs := cli(t, "explain", "--registry", reg, "--url", s.URL(), "--live", "--no-touch", "v1:profile:2")
	if code != exitRuntime || regexp.MustCompile(`(?m)^verdict +ok`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^verdict +incomplete: no rule fired, but 2 checks were not run`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^not checked +collection-too-long: not read: it would reset`).MatchString(out) ||
		!strings.Contains(errs, "collection-too-long not checked") {
		t.Errorf("--no-touch text: exit %d\n%s%s", code, out, errs)
	}
}

// TestInitTouch runs init on a redis 7.0 primary whose keys all look idle
// for two hours. By default it samples at most --sample keys per family,
// resets the idle time of exactly those, and prints their count; the keys
// not sampled keep their idle time, and the families get their encodings.
// With --no-touch no idle time changes, and init says that it read no
// value.
func TestInitTouch(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	for i := range 40 {
		admin.Set(ctx, fmt.Sprintf("v1:user:%d", i), fmt.Sprintf(`{"id":%d}`, i), time.Hour)
		admin.HSet(ctx, fmt.Sprintf("v1:cart:%d", i), "sku", "1")
	}
	ageKeys(t, admin, 7200)
	dir := t.TempDir()
	touched := regexp.MustCompile(`keyreg init: touched (\d+) keys`)

	before := idleTimes(t, admin)
	out := filepath.Join(dir, "keys.yaml")
	code, _, errs := cli(t, "init", "--url", s.URL(), "--out", out, "--sample", "5")
	if code != exitClean {
		t.Fatalf("init: exit %d\n%s", code, errs)
	}
	reset := resetSince(before, idleTimes(t, admin))
	m := touched.FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("init does not say how many keys it touched:\n%s", errs)
	}
	n, _ := strconv.Atoi(m[1])
	if n != len(reset) || n == 0 || n > 10 {
		t.Errorf("init says it touched %d keys; %d idle times were reset (%q), want at most 5 per family", n, len(reset), reset)
	}
	t.Logf("init: touched %d of %d keys, as it says: %s", len(reset), len(before), m[0])
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "encoding: json") {
		t.Errorf("init read values but inferred no encoding:\n%s", b)
	}

	before = idleTimes(t, admin)
	out = filepath.Join(dir, "no-touch.yaml")
	code, _, errs = cli(t, "init", "--url", s.URL(), "--out", out, "--sample", "5", "--no-touch")
	if code != exitClean || !strings.Contains(errs, "keyreg init: read no value (--no-touch: redis 7.0") || touched.MatchString(errs) {
		t.Errorf("init --no-touch: exit %d\n%s", code, errs)
	}
	if reset := resetSince(before, idleTimes(t, admin)); len(reset) != 0 {
		t.Errorf("init --no-touch reset the idle time of %q", reset)
	}
}
