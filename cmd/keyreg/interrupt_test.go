package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
)

// faultRun is a CLI run in the background whose audit stops at its progress
// hook once it has audited at least n keys, until the test has injected its
// fault on the test goroutine and called finish: faults come at a known
// point of the audit, however loaded the machine, never from a timer.
type faultRun struct {
	out, errb bytes.Buffer
	reached   chan int64 // the keys audited when the audit stopped
	resume    chan struct{}
	once      sync.Once
	done      chan int // the exit code
}

// startFault starts the CLI with args. The run is bounded by a minute, so
// a hung audit fails the test instead of stalling it, and is let go on and
// waited for when the test ends, even when it fails before finish.
func startFault(t *testing.T, ctx context.Context, n int64, args ...string) *faultRun {
	t.Helper()
	r := &faultRun{reached: make(chan int64, 1), resume: make(chan struct{}), done: make(chan int, 1)}
	var stop sync.Once
	a := &app{stdout: &r.out, stderr: &r.errb, audited: func(total int64) {
		if total >= n {
			stop.Do(func() { r.reached <- total; <-r.resume })
		}
	}}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer cancel()
		r.done <- a.run(ctx, args)
	}()
	t.Cleanup(func() { r.release(); <-finished })
	return r
}

// at waits until the audit stopped at its hook and returns the keys it had
// audited then; it fails the test when the audit ends first.
func (r *faultRun) at(t *testing.T) int64 {
	t.Helper()
	select {
	case n := <-r.reached:
		return n
	case code := <-r.done:
		t.Fatalf("the audit ended (exit %d) before its fault\n%s", code, r.errb.String())
		return 0
	}
}

func (r *faultRun) release() { r.once.Do(func() { close(r.resume) }) }

// finish lets the stopped audit go on and returns its exit code, stdout
// and stderr once the run ended.
func (r *faultRun) finish() (code int, stdout, stderr string) {
	r.release()
	code = <-r.done
	return code, r.out.String(), r.errb.String()
}

// TestAuditInterrupted cancels a rate-limited audit part-way (once it has
// audited 100 of its 3000 keys), as Ctrl-C does: the partial report is
// printed, marked partial, and the exit code is 3, never a clean 0.
func TestAuditInterrupted(t *testing.T) {
	s := redistest.Standalone(t)
	seedMany(t, s.Client(t), 3000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := startFault(t, ctx, 100, "audit", "--registry", auditRegistry, "--url", s.URL(), "--count", "100", "--rate", "1000", "--format", "json")
	at := r.at(t)
	cancel()
	code, out, errs := r.finish()
	if code != exitRuntime {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitRuntime, errs)
	}
	if !strings.Contains(errs, "interrupted") {
		t.Errorf("stderr does not say the audit was interrupted:\n%s", errs)
	}
	rep := parseAudit(t, out)
	if !rep.Partial || !strings.Contains(rep.PartialReason, "interrupted") {
		t.Errorf("report partial=%v reason=%q, want a partial report that says it was interrupted", rep.Partial, rep.PartialReason)
	}
	if rep.Totals.Keys < at || rep.Scan.Keys >= 3000 {
		t.Errorf("audited %d keys (%d scanned), cancelled after %d: want at least those, and not all of 3000", rep.Totals.Keys, rep.Scan.Keys, at)
	}
	t.Logf("cancelled after %d keys; the report counts %d", at, rep.Totals.Keys)
}

// TestAuditInterruptedToFile: cancelled with the report going to a file
// (--output) and nothing to standard output, the error names the file and
// never says "the report above", since there is none above.
func TestAuditInterruptedToFile(t *testing.T) {
	s := redistest.Standalone(t)
	seedMany(t, s.Client(t), 3000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	file := filepath.Join(t.TempDir(), "audit.json")
	r := startFault(t, ctx, 100, "audit", "--registry", auditRegistry, "--url", s.URL(), "--count", "100", "--rate", "1000", "--output", "json="+file)
	r.at(t)
	cancel()
	code, out, errs := r.finish()
	if code != exitRuntime {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitRuntime, errs)
	}
	if out != "" {
		t.Errorf("stdout got %q, want nothing", out)
	}
	if strings.Contains(errs, "above") || !strings.Contains(errs, "audit interrupted; the report in "+file+" is partial") {
		t.Errorf("stderr does not name the file the partial report is in:\n%s", errs)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if rep := parseAudit(t, string(b)); !rep.Partial {
		t.Errorf("the report in %s is not marked partial", file)
	}
}
