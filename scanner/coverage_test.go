package scanner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

// StopMasterUncovered stops the third master of cs after turning
// cluster-require-full-coverage off on the others, so the cluster goes on
// serving two thirds of the slots, and waits until the first master sees
// the stopped one as down. It returns the number of keys seeded on the
// surviving masters' slots by seed.
func stopMasterUncovered(t *testing.T, cs *redistest.ClusterSrv) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, m := range cs.Masters {
		if err := m.Client(t).ConfigSet(ctx, "cluster-require-full-coverage", "no").Err(); err != nil {
			t.Fatal(err)
		}
	}
	dead := cs.Masters[2]
	dead.Stop()
	c := cs.Masters[0].Client(t)
	for {
		nodes, err := c.ClusterNodes(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(nodes, "\n") {
			if strings.Contains(line, dead.Addr) && (strings.Contains(line, "disconnected") || strings.Contains(line, "fail")) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("master %s never seen down:\n%s", dead.Addr, nodes)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestClusterUnservedSlots stops one master of a cluster that does not
// require full coverage: the scan must cover the two served thirds, then
// fail with a *SlotsError naming the third it could not scan, never end as
// a complete scan.
func TestClusterUnservedSlots(t *testing.T) {
	t.Parallel()
	cs := redistest.Cluster(t)
	w := seed(t, clusterClient(t, cs), "cov:", 300)
	stopMasterUncovered(t, cs)
	conn := connect(t, scanner.Options{URL: cs.URL(), Count: 50, Timeout: time.Second})
	got, st, err := collect(t, conn)
	var se *scanner.SlotsError
	if !errors.As(err, &se) {
		t.Fatalf("scan of a cluster with unserved slots: err %v, stats %+v", err, st)
	}
	if !st.Partial || st.Nodes != 2 {
		t.Errorf("partial %v, nodes %d, want partial on 2 nodes", st.Partial, st.Nodes)
	}
	if se.Served != 10923 || len(se.Unserved) != 1 || se.Unserved[0] != [2]int{10923, 16383} {
		t.Errorf("slots error %+v", se)
	}
	if msg := err.Error(); !strings.Contains(msg, "slots 10923-16383") || !strings.Contains(msg, "5461 of 16384") {
		t.Errorf("error %q does not name the unserved slots", msg)
	}
	// Every key of the served slots was scanned anyway.
	if len(got) == 0 || len(got) >= len(w) {
		t.Errorf("%d of %d keys delivered, want the served two thirds", len(got), len(w))
	}
}
