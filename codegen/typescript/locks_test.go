package typescript

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestLocks runs testdata/locks.ts, compiled with tsc --strict against
// the generated module of examples/locks for both clients, on a real
// standalone server and a real three-master Cluster: 8 workers × 100
// acquisitions of one fenced lock (never two holders, fences +1 each),
// an expired holder's release and extend, the lease bound, and the stream
// helpers. The stream is then checked from Go: trimmed to about max_len.
func TestLocks(t *testing.T) {
	tc := needToolchain(t)
	p := tc.project(t)
	for _, client := range []string{ClientRedis, ClientIORedis} {
		src, _ := generate(t, "examples/locks/keys.yaml", client)
		write(t, filepath.Join(p.dir, "locks_"+client+".ts"), string(src))
	}
	copyFile(t, filepath.Join("testdata", "locks.ts"), filepath.Join(p.dir, "locks.ts"))
	p.compile()
	standalone := redistest.Standalone(t)
	cluster := redistest.Cluster(t)
	for _, mode := range []string{"standalone", "cluster"} {
		for _, client := range []string{ClientRedis, ClientIORedis} {
			t.Run(mode+"/"+client, func(t *testing.T) {
				addr := standalone.Addr
				if mode == "cluster" {
					addr = cluster.Addrs[0]
				}
				out := p.node([]string{"KEYREG_CLIENT=" + client, "KEYREG_MODE=" + mode, "KEYREG_ADDR=" + addr}, filepath.Join(p.dir, "out", "locks.js"))
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
				var n int64
				var err error
				if mode == "cluster" {
					c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs})
					defer c.Close()
					n, err = c.XLen(context.Background(), res.Stream).Result()
				} else {
					n, err = standalone.Client(t).XLen(context.Background(), res.Stream).Result()
				}
				if err != nil || n < 1000 || n > 1300 {
					t.Errorf("stream length %d (%v), want about max_len 1000", n, err)
				}
			})
		}
	}
}
