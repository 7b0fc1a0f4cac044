package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/redis/go-redis/v9"
)

const maxBytesRegistry = "testdata/maxbytes/keys.yaml"

// TestMaxBytesLiveAndRDB checks max_bytes (100000) live and on a SAVEd
// snapshot of the same server, on values of every encoding, under and over
// the limit: a 300,000-byte compressible string (a few KiB in the file) is
// value-too-large in both, and both audits flag the same keys. explain
// --rdb gives the compressible string the verdict the live explain gives.
func TestMaxBytesLiveAndRDB(t *testing.T) {
	s := redistest.Standalone(t)
	ctx := context.Background()
	c := s.Client(t)
	rnd := rand.New(rand.NewPCG(3, 4))
	random := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		return string(b)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Set(ctx, "v1:page:1", strings.Repeat("<p>page</p>", 27273), 0).Err()) // 300,003 bytes, compressible
	must(c.Set(ctx, "v1:page:2", random(300000), 0).Err())                       // incompressible, over
	must(c.Set(ctx, "v1:page:3", random(50000), 0).Err())                        // under
	must(c.Set(ctx, "v1:page:4", strings.Repeat("a", 90000), 0).Err())           // compressible, under
	for i := range 20 {
		must(c.HSet(ctx, "v1:profile:1", fmt.Sprintf("f%d", i), "v").Err()) // listpack, under
	}
	for i := range 3000 {
		must(c.HSet(ctx, "v1:profile:2", fmt.Sprintf("field-%05d", i), strings.Repeat("x", 30)).Err()) // hashtable, over
		must(c.SAdd(ctx, "v1:members:2", fmt.Sprintf("member-%05d", i)).Err())                         // hashtable, over
		must(c.ZAdd(ctx, "v1:board:2", redis.Z{Score: float64(i), Member: fmt.Sprintf("member-%05d", i)}).Err())
	}
	for i := range 50 {
		must(c.SAdd(ctx, "v1:members:1", i).Err()) // intset, under
		must(c.ZAdd(ctx, "v1:board:1", redis.Z{Score: float64(i), Member: fmt.Sprintf("m%d", i)}).Err())
		must(c.RPush(ctx, "v1:feed:1", fmt.Sprintf("item-%d", i)).Err())
	}
	for range 20000 {
		must(c.RPush(ctx, "v1:feed:2", "item-"+strings.Repeat("0", 10)).Err()) // compressible quicklist, over
	}
	must(c.Save(ctx).Err())
	dir, _ := c.ConfigGet(ctx, "dir").Result()
	file, _ := c.ConfigGet(ctx, "dbfilename").Result()
	dump := filepath.Join(dir["dir"], file["dbfilename"])

	tooLarge := func(args ...string) []string {
		t.Helper()
		code, out, errb := cli(t, append([]string{"audit", "--registry", maxBytesRegistry, "--format", "json", "--fail-on", "warn"}, args...)...)
		if code != 1 {
			t.Fatalf("audit %v: exit %d, want 1 (findings)\n%s", args, code, errb)
		}
		var r struct {
			Findings []struct {
				Rule     string `json:"rule"`
				Examples []struct {
					Key string `json:"key"`
				} `json:"examples"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, f := range r.Findings {
			if f.Rule == "value-too-large" {
				for _, e := range f.Examples {
					keys = append(keys, e.Key)
				}
			}
		}
		slices.Sort(keys)
		return keys
	}
	want := []string{"v1:board:2", "v1:feed:2", "v1:members:2", "v1:page:1", "v1:page:2", "v1:profile:2"}
	live := tooLarge("--url", s.URL())
	snap := tooLarge("--rdb", dump)
	if !slices.Equal(live, want) || !slices.Equal(snap, want) {
		t.Errorf("value-too-large live %q, --rdb %q; want %q in both", live, snap, want)
	}

	verdicts := func(args ...string) []string {
		t.Helper()
		_, out, errb := cli(t, append([]string{"explain", "--registry", maxBytesRegistry, "--format", "json"}, args...)...)
		var r struct {
			Live struct {
				Verdicts []string `json:"verdicts"`
			} `json:"live"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v\n%s%s", err, out, errb)
		}
		return r.Live.Verdicts
	}
	// The text says the figure is an estimate.
	if _, out, _ := cli(t, "explain", "--registry", maxBytesRegistry, "--rdb", dump, "v1:page:1"); !strings.Contains(out, "an estimate of MEMORY USAGE") {
		t.Errorf("explain --rdb does not label its memory figure an estimate:\n%s", out)
	}
	for _, key := range []string{"v1:page:1", "v1:page:4"} {
		l := verdicts("--live", "--url", s.URL(), key)
		r := verdicts("--rdb", dump, key)
		big := func(vs []string) bool {
			return slices.ContainsFunc(vs, func(v string) bool { return strings.Contains(v, "value-too-large") })
		}
		if big(l) != (key == "v1:page:1") || big(r) != big(l) {
			t.Errorf("%s: explain --live %q, --rdb %q; want value-too-large in both for the 300,000-byte page only", key, l, r)
		}
	}
}
