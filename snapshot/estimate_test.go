package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// maxEstimateError is the documented bound (docs/audit.md) of the snapshot's
// estimate of MEMORY USAGE, relative to it, on the keys of
// TestMemoryEstimate.
const maxEstimateError = 0.02

// TestMemoryEstimate seeds a real server with every encoding 7.0 writes,
// compressible and incompressible strings among them, saves it and
// compares each key's estimate with MEMORY USAGE of the same key (SAMPLES
// 0, every element, and the default of 5, which the live audit uses: the
// collections have elements of one size, so the two agree but for the
// skiplist's random levels): every estimate is within maxEstimateError,
// and a compressible string is estimated at its decoded size, not its
// compressed one.
func TestMemoryEstimate(t *testing.T) {
	s, c := startServer(t, "noeviction")
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(1, 2))
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
	must(c.Set(ctx, "str:int", 12345, 0).Err())
	must(c.Set(ctx, "str:embstr", strings.Repeat("e", 30), 0).Err())
	must(c.Set(ctx, "str:raw", random(100), 0).Err())
	must(c.Set(ctx, "str:mid", random(5000), 0).Err())
	must(c.Set(ctx, "str:compressible", strings.Repeat("page ", 60000), 0).Err())
	must(c.Set(ctx, "str:incompressible", random(300000), 0).Err())
	hash := func(key string, n int) {
		for i := range n {
			must(c.HSet(ctx, key, fmt.Sprintf("f%05d", i), fmt.Sprintf("value-%013d", i)).Err())
		}
	}
	hash("hash:listpack", 20)
	hash("hash:hashtable", 2000)
	for i := range 100 {
		must(c.SAdd(ctx, "set:intset", i*1000).Err())
	}
	for i := range 2000 {
		must(c.SAdd(ctx, "set:hashtable", fmt.Sprintf("member-%05d", i)).Err())
		must(c.ZAdd(ctx, "zset:skiplist", redis.Z{Score: float64(i), Member: fmt.Sprintf("member-%05d", i)}).Err())
	}
	for i := range 20 {
		must(c.ZAdd(ctx, "zset:listpack", redis.Z{Score: float64(i), Member: fmt.Sprintf("m%03d", i)}).Err())
		must(c.RPush(ctx, "list:small", fmt.Sprintf("item-%03d", i)).Err())
	}
	for i := range 20000 {
		must(c.RPush(ctx, "list:quicklist", fmt.Sprintf("item-%015d", i)).Err())
	}
	file := save(t, s, c)
	r, err := NewReader(bytes.NewReader(file), Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		key := string(e.Key)
		if err := e.Skip(); err != nil {
			t.Fatal(err)
		}
		all, err := c.Do(ctx, "MEMORY", "USAGE", key, "SAMPLES", "0").Int64()
		must(err)
		def, err := c.MemoryUsage(ctx, key).Result()
		must(err)
		rel := float64(e.Memory-all) / float64(all)
		t.Logf("%-20s %-10s estimate %7d, MEMORY USAGE %7d (samples 5: %7d), file %7d: %+.1f%%", key, e.Encoding, e.Memory, all, def, e.Size, 100*rel)
		if rel > maxEstimateError || rel < -maxEstimateError {
			t.Errorf("%s (%s): estimate %d, MEMORY USAGE %d: off by %+.1f%%, over the bound of %.0f%%", key, e.Encoding, e.Memory, all, 100*rel, 100*maxEstimateError)
		}
		// Live audits use MEMORY USAGE's default, which extrapolates from 5
		// sampled elements. A skiplist's nodes have random levels, so that
		// figure itself varies by several percent from run to run (5.2% seen
		// on one run): it is held to the exact figure above only.
		if d := float64(e.Memory-def) / float64(def); e.Encoding != "skiplist" && (d > maxEstimateError || d < -maxEstimateError) {
			t.Errorf("%s (%s): estimate %d, MEMORY USAGE %d with its default 5 samples: off by %+.1f%%", key, e.Encoding, e.Memory, def, 100*d)
		}
		if key == "str:compressible" && e.Size*10 > e.Memory {
			t.Errorf("the compressible string takes %d bytes in the file and is estimated at %d: want its decoded size", e.Size, e.Memory)
		}
		seen++
	}
	if seen != 14 {
		t.Fatalf("read %d keys, want 14", seen)
	}
}
