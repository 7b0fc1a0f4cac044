package typescript

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/scanner"
	"github.com/redis/go-redis/v9"
)

// TestLocks runs testdata/locks.ts, compiled with tsc --strict against
// the generated module of examples/locks for both clients (node-redis 4,
// 5 and 6, ioredis), on a real
// standalone server and a real three-master Cluster: 8 workers × 100
// acquisitions of one fenced lock (never two holders, fences +1 each),
// an expired holder's release and extend, the lease bound, and the stream
// helpers. The cluster's stream is then checked from Go: trimmed to about
// max_len; the standalone server is audited by keyreg: zero findings.
func TestLocks(t *testing.T) {
	tc := needToolchain(t)
	var runs []clientRun
	for i, nr := range nodeRedis {
		p := tc.projectWith(t, nr.pkg)
		for _, client := range []string{ClientRedis, ClientIORedis} {
			src, _ := generate(t, "examples/locks/keys.yaml", client)
			write(t, filepath.Join(p.dir, "locks_"+client+".ts"), string(src))
		}
		copyFile(t, filepath.Join("testdata", "locks.ts"), filepath.Join(p.dir, "locks.ts"))
		p.compile()
		runs = append(runs, clientRun{nr.name, ClientRedis, p})
		if i == 0 {
			runs = append(runs, clientRun{ClientIORedis, ClientIORedis, p})
		}
	}
	standalone := redistest.Standalone(t)
	cluster := redistest.Cluster(t)
	for _, mode := range []string{"standalone", "cluster"} {
		for _, r := range runs {
			t.Run(mode+"/"+r.name, func(t *testing.T) {
				addr := standalone.Addr
				if mode == "cluster" {
					addr = cluster.Addrs[0]
				}
				out := r.p.node([]string{"KEYREG_CLIENT=" + r.client, "KEYREG_RUN=" + r.name, "KEYREG_MODE=" + mode, "KEYREG_ADDR=" + addr}, filepath.Join(r.p.dir, "out", "locks.js"))
				var res struct {
					Acquisitions, First, Last int
					Stream                    string
				}
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Fatalf("%v: %q", err, out)
				}
				if res.Acquisitions != 800 || res.Last-res.First != 799 {
					t.Errorf("got %+v", res)
				}
				if mode != "cluster" {
					return
				}
				c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs})
				defer c.Close()
				n, err := c.XLen(context.Background(), res.Stream).Result()
				if err != nil || n < 1000 || n > 1300 {
					t.Errorf("stream length %d (%v), want about max_len 1000", n, err)
				}
			})
		}
	}
	t.Run("audit", func(t *testing.T) { auditServer(t, standalone, "examples/locks/keys.yaml") })
}

// clientRun is one client a real-server test runs its script with: name
// (the subtest's: redis4, redis5, redis6 or ioredis), the generator's
// client and the project compiled against that node-redis.
type clientRun struct {
	name, client string
	p            *project
}

// auditServer runs keyreg's own audit of the registry at path on srv,
// which holds only what generated code wrote: zero findings, every key
// registered.
func auditServer(t *testing.T, srv *redistest.Server, path string) {
	ctx := context.Background()
	reg, err := registry.Load(os.DirFS(filepath.Join("..", "..", filepath.Dir(path))), filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	n, err := srv.Client(t).DBSize(ctx).Result()
	if err != nil || n == 0 {
		t.Fatalf("the server holds %d keys (%v)", n, err)
	}
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
	if rep.Totals.Registered != n || rep.Totals.Unregistered != 0 {
		t.Errorf("audit saw %d registered and %d unregistered keys, want %d and 0", rep.Totals.Registered, rep.Totals.Unregistered, n)
	}
}

// TestAccessorsAudit runs testdata/audit.ts with the module of the
// repository's keys.yaml for both clients (node-redis 4, 5 and 6,
// ioredis), each on its own real server:
// a key of every live family written through the generated accessors,
// each TTL within its policy, refusals that send nothing; then keyreg's
// own audit of each server finds nothing.
func TestAccessorsAudit(t *testing.T) {
	tc := needToolchain(t)
	reg, err := registry.Load(os.DirFS("../.."), "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req, err := codegen.NewRequest(reg, codegen.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	var runs []clientRun
	for i, nr := range nodeRedis {
		p := tc.projectWith(t, nr.pkg)
		for _, client := range []string{ClientRedis, ClientIORedis} {
			files, err := Generator{Client: client}.Generate(req)
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(p.dir, "root_"+client+".ts"), string(files[0].Data))
		}
		copyFile(t, filepath.Join("testdata", "audit.ts"), filepath.Join(p.dir, "audit.ts"))
		p.compile()
		runs = append(runs, clientRun{nr.name, ClientRedis, p})
		if i == 0 {
			runs = append(runs, clientRun{ClientIORedis, ClientIORedis, p})
		}
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			srv := redistest.Standalone(t)
			out := r.p.node([]string{"KEYREG_CLIENT=" + r.client, "KEYREG_ADDR=" + srv.Addr}, filepath.Join(r.p.dir, "out", "audit.js"))
			if !strings.Contains(out, `"written":`) {
				t.Fatalf("audit.ts printed %q", out)
			}
			auditServer(t, srv, "keys.yaml")
		})
	}
}
