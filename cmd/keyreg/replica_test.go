package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/internal/redistest"
)

// replicaRegistry has one family checked by stale-key and sampled.
const replicaRegistry = `version: 1
owners:
  web: {contact: "#web"}
families:
  - name: doc
    description: documents; stale-key after an hour unread
    pattern: "v1:doc:{id:int}"
    version: 1
    owner: web
    type: string
    encoding: json
    ttl: persistent
    max_idle: 1h
`

// TestAuditReplicaIdleFromPrimary: with --replica, idle times come from the
// primary, where applications read and OBJECT never touches; values come
// from the replica. A GET on the primary makes a key fresh, and the
// replica audit's own reads make none fresh. With the primary gone,
// stale-key is not checked, and the audit says so and exits 3.
func TestAuditReplicaIdleFromPrimary(t *testing.T) {
	m := redistest.Standalone(t)
	r := redistest.Standalone(t, "--replicaof", "127.0.0.1", fmt.Sprint(m.Port))
	reg := filepath.Join(t.TempDir(), "keys.yaml")
	if err := os.WriteFile(reg, []byte(replicaRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin := m.Client(t)
	for i := range 5 {
		k := fmt.Sprintf("v1:doc:%d", i)
		if err := admin.Set(ctx, k, `{"a":1}`, 0).Err(); err != nil {
			t.Fatal(err)
		}
		dump, err := admin.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		// Two hours idle, on the primary and (replicated) on the replica.
		if err := admin.Do(ctx, "RESTORE", k, 0, dump, "REPLACE", "IDLETIME", 7200).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := admin.Do(ctx, "WAIT", 1, 10000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}
	// An application reads one key on the primary.
	if err := admin.Get(ctx, "v1:doc:0").Err(); err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		code, out, errs := cli(t, "audit", "--registry", reg, "--url", m.URL(), "--replica", "--format", "json", "--fail-on", "warn")
		rep := parseAudit(t, out)
		if code != exitFindings || rep.finding("doc", "stale-key") != 4 || rep.Partial {
			t.Errorf("replica audit %d: exit %d, stale-key on %d keys (want 4), partial %v\n%s", run, code, rep.finding("doc", "stale-key"), rep.Partial, errs)
		}
		// The target is the replica read, not the primary given.
		if rep.Target != r.URL() {
			t.Errorf("replica audit %d: target %q, want the replica %q", run, rep.Target, r.URL())
		}
		if _, sampled := rep.family("doc"); sampled != 5 {
			t.Errorf("replica audit %d: %d keys sampled, want 5 (the replica's values)", run, sampled)
		}
	}
	// The primary is gone: the replica still serves, but idle times are
	// not measurable.
	m.Stop()
	code, out, errs := cli(t, "audit", "--registry", reg, "--url", r.URL(), "--replica", "--format", "json", "--command-timeout", "1s")
	rep := parseAudit(t, out)
	if code != exitRuntime || !rep.Partial || !strings.Contains(rep.PartialReason, "stale-key not checked on 5 keys") ||
		!strings.Contains(errs, "primary") || rep.finding("doc", "stale-key") > 0 {
		t.Errorf("primary down: exit %d (want 3), partial %v %q, stale-key %d\n%s", code, rep.Partial, rep.PartialReason, rep.finding("doc", "stale-key"), errs)
	}
}
