package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

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
	ctx := context.Background()
	for k := range idleTimes(t, admin) {
		dump, err := admin.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		pttl, err := admin.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.Do(ctx, "RESTORE", k, max(pttl.Milliseconds(), 0), dump, "REPLACE", "IDLETIME", 7200).Err(); err != nil {
			t.Fatal(err)
		}
	}
	before := idleTimes(t, admin)
	type report struct {
		Scan struct {
			Sampled int64    `json:"sampled"`
			Notes   []string `json:"notes"`
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

	r = audit("--allow-touch")
	touched := idleTimes(t, admin)
	reset := 0
	for k, b := range before {
		if touched[k] < b {
			reset++
		}
	}
	want := fmt.Sprintf("%d keys had their LRU/LFU state touched", reset)
	if r.Scan.Sampled == 0 || reset != int(r.Scan.Sampled) || len(r.Scan.Notes) != 1 || !strings.HasPrefix(r.Scan.Notes[0], want) {
		t.Errorf("--allow-touch: sampled %d, %d idle times reset, notes %q (want %q)", r.Scan.Sampled, reset, r.Scan.Notes, want)
	}
	t.Logf("--allow-touch: %d of %d keys reset; note %q", reset, len(touched), r.Scan.Notes)
}
