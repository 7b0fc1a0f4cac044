package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
)

// TestAuditInterrupted cancels a slow, rate-limited audit part-way, as
// Ctrl-C does: the partial report is printed, marked partial, and the exit
// code is 3, never a clean 0.
func TestAuditInterrupted(t *testing.T) {
	s := redistest.Standalone(t)
	seedMany(t, s.Client(t), 3000)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel)
	var out, errb bytes.Buffer
	code := run(ctx, []string{"audit", "--registry", auditRegistry, "--url", s.URL(), "--count", "100", "--rate", "1000", "--format", "json"}, &out, &errb)
	if code != exitRuntime {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitRuntime, errb.String())
	}
	if !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("stderr does not say the audit was interrupted:\n%s", errb.String())
	}
	rep := parseAudit(t, out.String())
	if !rep.Partial || !strings.Contains(rep.PartialReason, "interrupted") {
		t.Errorf("report partial=%v reason=%q, want a partial report that says it was interrupted", rep.Partial, rep.PartialReason)
	}
	if rep.Scan.Keys == 0 || rep.Scan.Keys >= 3000 {
		t.Errorf("audited %d keys, want some but not all of 3000", rep.Scan.Keys)
	}
}
