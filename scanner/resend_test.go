package scanner_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

// TestSampleResendBounded samples lists whose one big element MEMORY
// USAGE's estimate dilutes a thousandfold, so waves are planned too full and
// keys come back as not fitting. A key sent back must be planned at its
// worst size, or every following wave sends it again: the server's output
// (INFO total_net_output_bytes) must stay under three times the values'
// size (it was 5.5 times).
func TestSampleResendBounded(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	const lists = 40
	big := strings.Repeat("x", 1_000_000)
	var keys []scanner.KeyInfo
	for i := range lists {
		k := fmt.Sprintf("v1:l:%d", i)
		p := admin.Pipeline()
		p.RPush(ctx, k, big)
		for j := 0; j < 10000; j += 1000 {
			vals := make([]any, 1000)
			for x := range vals {
				vals[x] = "abc"
			}
			p.RPush(ctx, k, vals...)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, scanner.KeyInfo{Key: k, Node: s.Addr, Type: "list"})
	}
	c, err := scanner.Connect(ctx, scanner.Options{URL: s.URL(), AllowTouch: true, SampleBudget: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := func() int64 {
		info, _ := admin.Info(ctx, "stats").Result()
		for _, l := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "total_net_output_bytes:"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		return 0
	}
	before := out()
	_, errs := c.SampleBatch(ctx, keys, 10, 1<<20)
	ok := 0
	for _, e := range errs {
		if e == nil {
			ok++
		}
	}
	sent := out() - before
	if ok != lists || sent > 3*lists*int64(len(big)) {
		t.Errorf("sampled %d of %d; the server sent %d MiB for %d MiB of values", ok, lists, sent>>20, lists*len(big)>>20)
	}
	t.Logf("sampled %d of %d, server sent %d MiB", ok, len(keys), sent>>20)
}
