package scanner

import (
	"context"
	"fmt"
	"testing"

	"github.com/keyreg/keyreg/internal/redistest"
)

// BenchmarkProbe probes one SCAN-sized batch of 1,000 keys (strings and
// hashes) with every probe command: OBJECT IDLETIME, HLEN in place of TYPE
// for the hashes, PTTL and MEMORY USAGE. It reports the allocations of the
// probe's hot path per batch.
func BenchmarkProbe(b *testing.B) {
	s := redistest.Standalone(b)
	admin := s.Client(b)
	ctx := context.Background()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("bench:%d", i)
		var err error
		if i%2 == 0 {
			err = admin.Set(ctx, keys[i], "value", 0).Err()
		} else {
			err = admin.HSet(ctx, keys[i], "f", "v").Err()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	c, err := Connect(ctx, Options{URL: s.URL(), AllowTouch: true, Plan: func(key string) Plan {
		p := Plan{Idle: true, Memory: true}
		if key[len(key)-1]%2 == 1 {
			p.Len = "hash"
		}
		return p
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	cl := c.client(c.base.Addr, 0, false)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		infos, vanished, _, err := c.probe(ctx, cl, s.Addr, 0, keys)
		if err != nil || vanished != 0 || len(infos) != len(keys) {
			b.Fatalf("%d infos, %d vanished, %v", len(infos), vanished, err)
		}
	}
}
