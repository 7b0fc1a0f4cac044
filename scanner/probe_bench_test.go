package scanner

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/source"
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

// BenchmarkProbeLocks probes 1,000 keys of which a third are locks (EXISTS
// of their fence), a third fences (OBJECT ENCODING) and a third streams
// with two planned groups, one with consumers read (XINFO in a second
// round trip), to measure what the lock and stream facts add per batch:
// about 690 allocations, one per stream (its groups) and one per lock (the
// planner's fence key, as audit.Plan builds it), against 6 without.
func BenchmarkProbeLocks(b *testing.B) {
	s := redistest.Standalone(b)
	admin := s.Client(b)
	ctx := context.Background()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("bench:%d:%d", i%3, i)
		var err error
		switch i % 3 {
		case 0:
			err = admin.Set(ctx, keys[i], "token", 0).Err()
		case 1:
			err = admin.Incr(ctx, keys[i]).Err()
		case 2:
			if err = admin.XAdd(ctx, &redis.XAddArgs{Stream: keys[i], Values: []any{"f", "v"}}).Err(); err == nil {
				err = admin.XGroupCreate(ctx, keys[i], "push", "0").Err()
			}
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	groups := []source.GroupQuery{{Name: "push", Consumers: true}, {Name: "search"}}
	c, err := Connect(ctx, Options{URL: s.URL(), AllowTouch: true, Plan: func(key string) Plan {
		switch key[6] {
		case '0':
			return Plan{Fence: "bench:1:" + key[8:]}
		case '1':
			return Plan{Encoding: true}
		}
		return Plan{Groups: groups}
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	cl := c.client(c.base.Addr, 0, false)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		infos, vanished, notes, err := c.probe(ctx, cl, s.Addr, 0, keys)
		if err != nil || vanished != 0 || len(infos) != len(keys) || len(notes.text)+len(notes.refused) != 0 {
			b.Fatalf("%d infos, %d vanished, notes %+v, %v", len(infos), vanished, notes, err)
		}
	}
}
