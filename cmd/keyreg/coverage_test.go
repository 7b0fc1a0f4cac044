package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/keyreg/keyreg/internal/redistest"
)

// TestAuditUnservedSlots audits a cluster that serves only two thirds of its
// slots (one master down, cluster-require-full-coverage off): the audit must
// exit 3 with a partial report naming the unserved slots in every format,
// and --write-baseline must refuse without blaming --max-keys.
func TestAuditUnservedSlots(t *testing.T) {
	t.Parallel()
	cs := redistest.Cluster(t)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cs.Addrs, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
	t.Cleanup(func() { _ = cc.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 60 {
		if err := cc.Set(ctx, fmt.Sprintf("v1:session:%d", i+1), fmt.Sprintf(`{"user_id":%d}`, i+1), time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range cs.Masters {
		if err := m.Client(t).ConfigSet(ctx, "cluster-require-full-coverage", "no").Err(); err != nil {
			t.Fatal(err)
		}
	}
	dead := cs.Masters[2]
	dead.Stop()
	seed := cs.Masters[0].Client(t)
	for down := false; !down; {
		nodes, err := seed.ClusterNodes(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(nodes, "\n") {
			down = down || strings.Contains(line, dead.Addr) && (strings.Contains(line, "disconnected") || strings.Contains(line, "fail"))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("master %s never seen down", dead.Addr)
		case <-time.After(20 * time.Millisecond):
		}
	}

	base := filepath.Join(t.TempDir(), "b.json")
	code, out, errs := cli(t, "audit", "--registry", auditRegistry, "--url", cs.URL(), "--format", "json", "--write-baseline", base)
	if code != exitRuntime || !strings.Contains(errs, "slots 10923-16383") || strings.Contains(errs, "max-keys") ||
		!strings.Contains(errs, "baseline "+base+" was not written") {
		t.Errorf("unserved slots: exit %d (want 3)\nstderr: %s", code, errs)
	}
	r := parseAudit(t, out)
	if !r.Partial || !strings.Contains(r.PartialReason, "slots 10923-16383") || r.Scan.Nodes != 2 || r.Totals.Keys == 0 {
		t.Errorf("json report: partial %v (%q), nodes %d, keys %d", r.Partial, r.PartialReason, r.Scan.Nodes, r.Totals.Keys)
	}
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Errorf("a baseline was written from a partial audit: %v", err)
	}
	for _, f := range []string{"text", "markdown", "github", "prometheus", "sarif", "table"} {
		code, out, errs := cli(t, "audit", "--registry", auditRegistry, "--url", cs.URL(), "--format", f)
		if code != exitRuntime || !strings.Contains(strings.ToLower(out+errs), "partial") {
			t.Errorf("--format %s: exit %d (want 3), partial not said\n%s\n%s", f, code, out, errs)
		}
	}
}
