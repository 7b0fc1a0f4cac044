package python

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/scanner"
)

// TestAccessorsAudit runs testdata/accessors.py (itself checked with
// mypy --strict against the module) on a real redis-server: a key of every
// live family of the repository's keys.yaml through the sync and asyncio
// accessors, TTL and schema refusals that write nothing, read-backs. Then
// keyreg's own audit of the server finds nothing.
func TestAccessorsAudit(t *testing.T) {
	py := python(t)
	req := loadReq(t, "keys.yaml", codegen.Scope{})
	dir := generate(t, req)
	script, err := os.ReadFile(filepath.Join(root(t), "codegen/python/testdata/accessors.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "accessors.py"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	mypyStrict(t, dir, "accessors.py")
	srv := redistest.Standalone(t)
	out := run(t, dir, py, "accessors.py", dir, srv.URL())
	n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(out), "wrote "))
	if err != nil || n < 15 {
		t.Fatalf("accessors.py: %q", out)
	}

	reg, err := registry.LoadFile(filepath.Join(root(t), "keys.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := scanner.Connect(ctx, scanner.Options{URL: srv.URL(), Plan: audit.Plan(reg, true), AllowTouch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	o := audit.Defaults()
	o.Filtered = true // families without keys here are not unused
	rep, err := audit.Run(ctx, conn, reg, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Errorf("audit finding: %s %s %s: %s (examples %v)", f.Severity, f.Rule, f.Family, f.Message, f.Examples)
	}
	if rep.Totals.Registered != int64(n) || rep.Totals.Unregistered != 0 {
		t.Errorf("audit saw %d registered and %d unregistered keys, want %d and 0", rep.Totals.Registered, rep.Totals.Unregistered, n)
	}
	if rep.Scan.Sampled == 0 {
		t.Error("the audit sampled no payloads")
	}
}

// TestLockContention: 8 processes × 100 acquisitions of one generated
// lock (a redis.lock.Lock subclass), on a standalone server and on a real
// three-master cluster. Never two holders inside, and the 800 fences are
// exactly 1..800: one more per acquire, no gaps, no repeats. Then an
// expired holder's release leaves the new holder's key alone.
func TestLockContention(t *testing.T) {
	py := python(t)
	req := loadReq(t, "examples/locks/keys.yaml", codegen.Scope{IncludePresets: true})
	dir := generate(t, req)
	script := filepath.Join(root(t), "codegen/python/testdata/locks.py")
	for _, mode := range []string{"standalone", "cluster"} {
		t.Run(mode, func(t *testing.T) {
			var url string
			if mode == "cluster" {
				url = redistest.Cluster(t).URL()
			} else {
				url = redistest.Standalone(t).URL()
			}
			const procs, each = 8, 100
			outs := make([]string, procs)
			errs := make([]error, procs)
			var wg sync.WaitGroup
			for i := range procs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmd := exec.Command(py, script, dir, url, mode, "worker", strconv.Itoa(each))
					cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
					// stderr apart: redis-py's cluster client logs the NOSCRIPT
					// a node answers before the EVAL fallback.
					var stderr strings.Builder
					cmd.Stderr = &stderr
					b, err := cmd.Output()
					outs[i], errs[i] = string(b), err
					if err != nil {
						errs[i] = fmt.Errorf("%w: %s", err, stderr.String())
					}
				}()
			}
			wg.Wait()
			var fences []int
			for i := range procs {
				if errs[i] != nil {
					t.Fatalf("worker %d: %v\n%s", i, errs[i], outs[i])
				}
				for line := range strings.SplitSeq(strings.TrimSpace(outs[i]), "\n") {
					f, err := strconv.Atoi(strings.TrimPrefix(line, "fence "))
					if err != nil {
						t.Fatalf("worker %d: %q", i, line)
					}
					fences = append(fences, f)
				}
			}
			slices.Sort(fences)
			if len(fences) != procs*each {
				t.Fatalf("%d acquisitions, want %d", len(fences), procs*each)
			}
			for i, f := range fences {
				if f != i+1 {
					t.Fatalf("fences are not 1..%d: %d at %d (%v…)", procs*each, f, i, fences[max(0, i-3):i+1])
				}
			}
			cmd := exec.Command(py, script, dir, url, mode, "expired")
			b, err := cmd.Output()
			if err != nil || strings.TrimSpace(string(b)) != "ok" {
				t.Fatalf("expired holder: %v\n%s", err, b)
			}
		})
	}
}
