package typescript

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/redis/go-redis/v9"
)

const pubsubRegistry = "codegen/typescript/testdata/pubsub/keys.yaml"

// TestPubSub compiles testdata/pubsub.ts with the generated module of
// testdata/pubsub for node-redis (4, 5 and 6) and ioredis (tsc --strict)
// and runs it on
// a real standalone server and a real three-master Cluster: classic,
// sharded, pattern, bytes and deprecated channels round trip through the
// generated publisher and subscriber; a refused message sends nothing
// (the commandstats of every node move by exactly one PUBLISH or SPUBLISH
// for the refused and the valid message); raw messages that fail the
// schema, do not decode or arrive on a name that does not parse go to
// onError and the subscription continues. On the cluster the sharded
// channel's slot lives on a master other than the one the clients are
// given, and its SSUBSCRIBE is registered on that master.
func TestPubSub(t *testing.T) {
	tc := needToolchain(t)
	var runs []clientRun
	for i, nr := range nodeRedis {
		p := tc.projectWith(t, nr.pkg)
		for _, client := range []string{ClientRedis, ClientIORedis} {
			src, _ := generate(t, pubsubRegistry, client)
			write(t, filepath.Join(p.dir, "pubsub_"+client+".ts"), string(src))
		}
		copyFile(t, filepath.Join("testdata", "pubsub.ts"), filepath.Join(p.dir, "pubsub.ts"))
		p.compile()
		runs = append(runs, clientRun{nr.name, ClientRedis, p})
		if i == 0 {
			runs = append(runs, clientRun{ClientIORedis, ClientIORedis, p})
		}
	}
	standalone := redistest.Standalone(t)
	cluster := redistest.Cluster(t)
	ctx := context.Background()

	// A room whose slot a master other than Addrs[0] serves, by the
	// server's own CLUSTER KEYSLOT and CLUSTER SHARDS (CLUSTER SLOTS's
	// successor).
	seed := redis.NewClient(&redis.Options{Addr: cluster.Addrs[0]})
	defer seed.Close()
	shards, err := seed.ClusterShards(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	room, owner := -1, ""
	for r := 1; r < 1000 && room < 0; r++ {
		slot, err := seed.ClusterKeySlot(ctx, fmt.Sprintf("v1:chat:room:{%d}", r)).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range shards {
			for _, n := range sh.Nodes {
				addr := net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
				if n.Role != "master" || addr == cluster.Addrs[0] {
					continue
				}
				for _, sr := range sh.Slots {
					if sr.Start <= slot && slot <= sr.End {
						room, owner = r, addr
					}
				}
			}
		}
	}
	if room < 0 {
		t.Fatal("no room hashes to another master")
	}
	for _, mode := range []string{"standalone", "cluster"} {
		for _, r := range runs {
			t.Run(mode+"/"+r.name, func(t *testing.T) {
				nodes := []string{standalone.Addr}
				if mode == "cluster" {
					nodes = cluster.Addrs
				}
				out := r.p.node([]string{"KEYREG_CLIENT=" + r.client, "KEYREG_MODE=" + mode, "KEYREG_NODES=" + strings.Join(nodes, ","),
					fmt.Sprintf("KEYREG_ROOM=%d", room), "KEYREG_OWNER=" + owner}, filepath.Join(r.p.dir, "out", "pubsub.js"))
				var res map[string]json.RawMessage
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Fatalf("%v: %q", err, out)
				}
				want := map[string]string{
					"room-events": `{"deliveries":2,"errors":2,"receivers":1}`,
					"notices":     `{"deliveries":2,"errors":1,"receivers":1}`,
					"presence":    `{"deliveries":2,"errors":2,"receivers":1}`,
					"blobs":       `{"deliveries":2,"errors":0,"receivers":1}`,
					"old-alerts":  `{"deliveries":2,"errors":0,"receivers":1}`,
				}
				for name, w := range want {
					got := string(res[name])
					if mode == "cluster" && (name == "notices" || name == "presence" || name == "old-alerts") {
						// A classic PUBLISH reports the receivers of the node
						// it reached only.
						got = regexp.MustCompile(`"receivers":[0-9]+`).ReplaceAllString(got, `"receivers":1`)
					}
					if got != w {
						t.Errorf("%s: %s, want %s", name, got, w)
					}
				}
				if mode == "cluster" {
					var owned []string
					if err := json.Unmarshal(res["ownerShardChannels"], &owned); err != nil {
						t.Fatal(err)
					}
					if ch := fmt.Sprintf("v1:chat:room:{%d}", room); !slices.Contains(owned, ch) {
						t.Errorf("PUBSUB SHARDCHANNELS on %s (the slot's owner) = %q, want %q", owner, owned, ch)
					}
				}
			})
		}
	}
}
