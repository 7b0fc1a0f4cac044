package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/testenv"
	"github.com/keyreg/keyreg/registry"
)

// TestMain lets the test binary double as a Go baseline child: the harness
// re-executes os.Executable(), which is this binary under go test.
func TestMain(m *testing.M) {
	if handled, err := childMain(os.Stdout); handled {
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench baseline:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// needRedis skips without redis-server and redis-cli, except under CI=true,
// where a missing server fails the test.
func needRedis(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		testenv.LookPath(t, bin+" not found on PATH; install it (apt-get install redis-server redis-tools)", bin)
	}
}

// TestSmoke runs the whole harness on 10,000 keys for one round, the cluster
// cases included, and checks that the table is sane.
func TestSmoke(t *testing.T) {
	needRedis(t)
	if testing.Short() {
		t.Skip("starts redis-server and builds keyreg")
	}
	const n = 10000
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var md, log bytes.Buffer
	start := time.Now()
	res, err := run(ctx, []string{"-n", fmt.Sprint(n), "-rounds", "1", "-cluster", "-rate-keys", "0"}, &md, &log)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	t.Logf("harness took %s\n%s", time.Since(start).Round(time.Millisecond), md.String())

	if res.Seeded.Keys != n {
		t.Errorf("seeded %d keys, want %d", res.Seeded.Keys, n)
	}
	if res.Seeded.Broken == 0 || res.Seeded.ByKind["unregistered"] == 0 || res.Seeded.ByKind["chat-messages"] == 0 {
		t.Errorf("seeded mix lacks broken payloads, junk or streams: %+v", res.Seeded)
	}
	want := []string{"scan", "pipe1", "pipe4", "cli-scan", "cli-bigkeys", "audit", "audit-lean", "audit-idle", "audit-memory", "audit-validate", "check-rdb", "rdb", "init", "cluster-parallel", "cluster-sequential"}
	if len(res.Cases) != len(want) {
		t.Fatalf("got %d cases, want %d", len(res.Cases), len(want))
	}
	for i, c := range res.Cases {
		if c.Name != want[i] {
			t.Errorf("case %d is %q, want %q", i, c.Name, want[i])
		}
		if c.KeysPerSec <= 0 || c.WallMedian <= 0 || len(c.Samples) != 1 {
			t.Errorf("case %s: keys/s %v, wall %v, %d samples", c.Name, c.KeysPerSec, c.WallMedian, len(c.Samples))
		}
		// Without GNU time, RSS is polled and a 10 ms child may end
		// before the first poll.
		if (c.ClientMaxRSS <= 0 && findGNUTime() != "") || c.ClientCPU < 0 || c.ServerCPU < 0 {
			t.Errorf("case %s: rss %d, client cpu %v, server cpu %v", c.Name, c.ClientMaxRSS, c.ClientCPU, c.ServerCPU)
		}
		// Every case but the SCAN floor sees each key exactly once; SCAN
		// may return a key twice, never fewer.
		if c.Name == "scan" || c.Name == "cli-scan" {
			if c.Keys < n {
				t.Errorf("case %s saw %d keys, want at least %d", c.Name, c.Keys, n)
			}
		} else if c.Keys != n {
			t.Errorf("case %s saw %d keys, want %d", c.Name, c.Keys, n)
		}
	}
	if f := res.find("scan"); f.VsFloor != 1 {
		t.Errorf("floor ratio of scan = %v, want 1", f.VsFloor)
	}
	if res.Safety == nil || res.Safety.Keys != n || res.Safety.Pings == 0 || res.Safety.IdlePings == 0 {
		t.Errorf("safety case: %+v", res.Safety)
	}
	if len(res.Costs) != len(costSets) {
		t.Errorf("got %d cost rows, want %d", len(res.Costs), len(costSets))
	}
	for i, c := range res.Costs {
		if i >= len(costSets) || c.Probe != costSets[i].probe || (c.Rate > 0) != costSets[i].paced ||
			c.Keys < n || c.ServerUSKey <= 0 || c.CPUShare <= 0 {
			t.Errorf("cost row %d: %+v", i, c)
		}
	}
	if res.Cluster == nil || res.Cluster.Speedup <= 0 {
		t.Errorf("cluster summary: %+v", res.Cluster)
	}
	if len(res.Bars) != 14 {
		t.Errorf("got %d bars, want 14", len(res.Bars))
	}
	for _, b := range res.Bars {
		if b.Verdict != "holds" && b.Verdict != "misses" {
			t.Errorf("bar %q: verdict %q", b.Bar, b.Verdict)
		}
	}
	out := md.String()
	for _, s := range []string{"| case | keys | keys/s |", "| audit | 10000 |", "| bar | measured | verdict |", "Production safety"} {
		if !strings.Contains(out, s) {
			t.Errorf("markdown lacks %q", s)
		}
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, res); err != nil {
		t.Fatal(err)
	}
	var back result
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || len(back.Cases) != len(res.Cases) {
		t.Errorf("JSON round trip: %v, %d cases", err, len(back.Cases))
	}
}

// TestSeedDeterministic checks that the generated keyspace is a pure
// function of the seed, and that the mix is close to the documented one.
func TestSeedDeterministic(t *testing.T) {
	digest := func() (string, seedStats) {
		g := newGen(1)
		var all bytes.Buffer
		for i := range 20000 {
			g.next(i)
			all.Write(g.buf)
		}
		return fmt.Sprintf("%x", sha256.Sum256(all.Bytes())), g.stats
	}
	a, sa := digest()
	b, _ := digest()
	if a != b {
		t.Fatal("two generators with the same seed disagree")
	}
	for k, permille := range mix {
		got := float64(sa.ByKind[kindNames[k]]) / float64(sa.Keys) * 1000
		if d := got - float64(permille); d > 10 || d < -10 {
			t.Errorf("%s: %.1f‰, want about %d‰", kindNames[k], got, permille)
		}
	}
	if r := float64(sa.Broken) / float64(sa.JSON); r < 0.005 || r > 0.02 {
		t.Errorf("broken JSON share %.3f, want about 0.01", r)
	}
}

func TestKeySlot(t *testing.T) {
	// Values from the Redis Cluster specification and redis-cli CLUSTER KEYSLOT.
	for key, want := range map[string]uint16{"123456789": 12739, "foo": 12182, "{user1000}.following": 3443, "v1:cart:{42}:items": keySlot("42")} {
		if got := keySlot(key); got != want {
			t.Errorf("keySlot(%q) = %d, want %d", key, got, want)
		}
	}
}

// TestLeanRegistry checks that the audit-lean registry is bench/keys.yaml
// with every family kept and no per-key limit left.
func TestLeanRegistry(t *testing.T) {
	lean, err := leanRegistry("keys.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	full, err := registry.LoadFile("keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.LoadFile(lean)
	if err != nil {
		t.Fatalf("lean registry does not load: %v", err)
	}
	if len(reg.Families) != len(full.Families) {
		t.Fatalf("%d families, want %d", len(reg.Families), len(full.Families))
	}
	limited := 0
	for i, f := range reg.Families {
		g := full.Families[i]
		if g.MaxBytes > 0 || g.MaxLen > 0 || g.MaxIdle > 0 {
			limited++
		}
		if f.Name != g.Name || f.Pattern.String() != g.Pattern.String() || f.Type != g.Type || (f.Schema == nil) != (g.Schema == nil) {
			t.Errorf("family %d: %s %s differs from %s %s", i, f.Name, f.Type, g.Name, g.Type)
		}
		if f.MaxBytes != 0 || f.MaxLen != 0 || f.MaxIdle != 0 {
			t.Errorf("%s keeps a limit: max_bytes %d, max_len %d, max_idle %v", f.Name, f.MaxBytes, f.MaxLen, f.MaxIdle)
		}
	}
	if limited == 0 {
		t.Error("keys.yaml has no limits, so the test proves nothing")
	}
}
