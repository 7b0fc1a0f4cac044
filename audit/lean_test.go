package audit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/scanner"
)

// TestSendsOnlyWhatTheRegistryRequires is the performance decision of
// docs/benchmarks.md as a test: the audit's probe is SCAN, TYPE and PTTL,
// plus MEMORY USAGE for exactly the keys of families with max_bytes and
// OBJECT IDLETIME for exactly those with max_idle. The server's own
// statistics count every command.
func TestSendsOnlyWhatTheRegistryRequires(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const yml = `version: 1
owners:
  web: {contact: "#web"}
families:
  - {name: plain, description: d, pattern: "v1:plain:{id:int}", version: 1, owner: web, type: string, encoding: text, ttl: optional}
  - {name: sized, description: d, pattern: "v1:sized:{id:int}", version: 1, owner: web, type: string, encoding: text, ttl: optional, max_bytes: 4096}
  - {name: idle, description: d, pattern: "v1:idle:{id:int}", version: 1, owner: web, type: string, encoding: text, ttl: optional, max_idle: 30d}
`
	if err := os.WriteFile(filepath.Join(dir, "keys.yaml"), []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Load(os.DirFS(dir), "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	counts := map[string]int{"plain": 300, "sized": 70, "idle": 40}
	for fam, n := range counts {
		for i := range n {
			if err := admin.Set(ctx, fmt.Sprintf("v1:%s:%d", fam, i), "x", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := admin.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	conn := dial(t, reg, scanner.Options{URL: s.URL()})
	o := audit.Defaults()
	o.Sample = 0
	rep, err := audit.Run(bounded(t), conn, reg, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Partial || rep.Scan.Keys != 410 {
		t.Fatalf("partial %v, %d keys; want a whole audit of 410", rep.Partial, rep.Scan.Keys)
	}
	stats := redistest.CommandStats(t, admin)
	stats["config|resetstat"]--
	want := map[string]int{"type": 410, "pttl": 410, "memory|usage": counts["sized"], "object|idletime": counts["idle"]}
	for cmd, n := range want {
		if stats[cmd] != n {
			t.Errorf("%s ran %d times, want %d (the registry's requirement)", cmd, stats[cmd], n)
		}
	}
	// Connection set-up and SCAN itself; nothing else.
	setup := map[string]bool{"scan": true, "info": true, "ping": true, "select": true, "auth": true, "hello": true, "client|no-touch": true}
	for cmd, n := range stats {
		if n > 0 && want[cmd] == 0 && !setup[cmd] {
			t.Errorf("the audit sent %s (%d calls), which the registry does not require", cmd, n)
		}
	}
	if stats["scan"] == 0 {
		t.Errorf("no SCAN in %v", stats)
	}
}
