package scanner_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/scanner"
)

// allocated returns the bytes the process allocated while fn ran.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestSampleNeverHoldsBigElements puts an 8 MiB element among the first
// elements of short collections (a list, a stream, a hash) and as a
// string. Probed honestly, the size check finds each over the 1 MiB limit
// and nothing is read; with a size that under-reports (as MEMORY USAGE's
// estimate does for a big element among many small ones), the read is sent
// but the element is discarded as it arrives: ErrTooLarge, and the process
// never allocates it. It is not parallel, so that TotalAlloc counts this
// test alone.
func TestSampleNeverHoldsBigElements(t *testing.T) {
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	const size = 8 << 20
	big := strings.Repeat("B", size)
	p := admin.Pipeline()
	p.RPush(ctx, "b:list", "a", big, "c")
	p.XAdd(ctx, &redis.XAddArgs{Stream: "b:stream", Values: []any{"f", "a"}})
	p.XAdd(ctx, &redis.XAddArgs{Stream: "b:stream", Values: []any{"f", big}})
	p.HSet(ctx, "b:hash", "f", big)
	p.Set(ctx, "b:string", big, 0)
	p.RPush(ctx, "b:small", "x", "y")
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	big = ""
	conn := connect(t, scanner.Options{URL: s.URL(), AllowTouch: true}) // redis 7.0: sampling touches
	types := map[string]string{"b:list": "list", "b:stream": "stream", "b:hash": "hash", "b:string": "string"}
	reads := []string{"lrange", "xrange", "hscan", "get"}
	for key, typ := range types {
		honest := scanner.KeyInfo{Key: key, Node: s.Addr, Type: typ}
		before := redistest.CommandStats(t, admin)
		var err error
		n := allocated(func() { _, err = conn.Sample(ctx, honest, 10, 1<<20) })
		after := redistest.CommandStats(t, admin)
		if !errors.Is(err, scanner.ErrTooLarge) || n > 1<<20 {
			t.Errorf("%s: error %v, %d bytes allocated; want ErrTooLarge and under 1 MiB", key, err, n)
		}
		// Short collections: the estimate covers them whole.
		for _, r := range reads {
			if d := after[r] - before[r]; d != 0 {
				t.Errorf("%s: %d %s calls: the size check did not stop the read", key, d, r)
			}
		}

		lie := honest
		lie.Memory, lie.HasMemory, lie.Len, lie.HasLen = 100, true, 1, true
		before = redistest.CommandStats(t, admin)
		n = allocated(func() { _, err = conn.Sample(ctx, lie, 5, 1<<20) })
		after = redistest.CommandStats(t, admin)
		sent := 0
		for _, r := range reads {
			sent += after[r] - before[r]
		}
		if !errors.Is(err, scanner.ErrTooLarge) || n > 1<<20 || sent != 1 {
			t.Errorf("%s, size under-reported: error %v, %d bytes allocated, %d reads; want ErrTooLarge, under 1 MiB, 1 read", key, err, n, sent)
		}
		t.Logf("%s: %d bytes allocated reading past an %d byte element", key, n, size)
	}
	// The connection that discarded the replies is still in step.
	smp, err := conn.Sample(ctx, scanner.KeyInfo{Key: "b:small", Node: s.Addr, Type: "list"}, 10, 1<<20)
	if err != nil || fmt.Sprintf("%s", smp.Members) != "[x y]" {
		t.Errorf("sample after the discarded replies: %q, %v", smp.Members, err)
	}
}

// TestSampleEachBudget reads 12 values of 1 MB with a 4 MiB budget. With
// sizes known from STRLEN, the waves are planned to fit: every fn call
// holds at most 4 MiB and each value is read once. With sizes
// under-reported, everything goes out in one pipeline, and the values that
// do not fit any more are discarded and read again in the next wave: still
// at most 4 MiB per call, every value read, some twice.
func TestSampleEachBudget(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	const budget, value, count = 4 << 20, 1000000, 12
	v := strings.Repeat("v", value)
	var keys []scanner.KeyInfo
	for i := range count {
		k := fmt.Sprint("w:", i)
		if err := admin.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, scanner.KeyInfo{Key: k, Node: s.Addr, Type: "string"})
	}
	conn := connect(t, scanner.Options{URL: s.URL(), AllowTouch: true, SampleBudget: budget})
	run := func(keys []scanner.KeyInfo) (calls, gets int) {
		t.Helper()
		before := redistest.CommandStats(t, admin)["get"]
		seen := map[int]bool{}
		conn.SampleEach(ctx, keys, 10, 1<<20, func(idx []int, ss []payload.Sample, errs []error) {
			calls++
			held := 0
			for j, i := range idx {
				if seen[i] {
					t.Errorf("key %d settled twice", i)
				}
				seen[i] = true
				if errs[j] != nil || string(ss[j].String) != v {
					t.Errorf("key %d: %d bytes, %v", i, len(ss[j].String), errs[j])
				}
				held += len(ss[j].String)
			}
			if held > budget {
				t.Errorf("one wave held %d bytes, over the %d budget", held, budget)
			}
		})
		if len(seen) != count {
			t.Errorf("%d of %d keys settled", len(seen), count)
		}
		return calls, redistest.CommandStats(t, admin)["get"] - before
	}
	if calls, gets := run(keys); calls < count*value/budget || gets != count {
		t.Errorf("sizes known: %d waves, %d GETs; want at least %d waves and one GET per key", calls, gets, count*value/budget)
	}
	lie := make([]scanner.KeyInfo, len(keys))
	for i, k := range keys {
		k.Memory, k.HasMemory = 10, true
		lie[i] = k
	}
	if calls, gets := run(lie); calls < count*value/budget || gets <= count {
		t.Errorf("sizes under-reported: %d waves, %d GETs; want at least %d waves and values read again", calls, gets, count*value/budget)
	}
}

// TestSampleEachNodeDies stops the server after the first wave: the next
// wave's read fails, and every key left fails with it at once, instead of
// one wave (one dial, one timeout) after another.
func TestSampleEachNodeDies(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	const count = 12
	v := strings.Repeat("v", 1000000)
	var keys []scanner.KeyInfo
	for i := range count {
		k := fmt.Sprint("d:", i)
		if err := admin.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, scanner.KeyInfo{Key: k, Node: s.Addr, Type: "string"})
	}
	conn := connect(t, scanner.Options{URL: s.URL(), AllowTouch: true, SampleBudget: 2 << 20})
	calls, failed := 0, 0
	conn.SampleEach(ctx, keys, 10, 1<<20, func(idx []int, ss []payload.Sample, errs []error) {
		calls++
		for _, err := range errs {
			if err != nil {
				failed++
			}
		}
		if calls == 1 {
			if failed != 0 || len(idx) != 2 {
				t.Errorf("first wave: %d keys, %d failed; want 2 read", len(idx), failed)
			}
			s.Stop()
		}
	})
	if calls != 2 || failed != count-2 {
		t.Errorf("%d calls, %d keys failed; want 2 calls, the %d keys after the first wave failed together", calls, failed, count-2)
	}
}
