package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// The hand-written Go baselines run as child processes of the bench binary
// itself (the bench re-executes os.Executable with these variables set), so
// their CPU time and peak RSS are measured exactly like keyreg's.
const (
	envChild = "KEYREG_BENCH_BASELINE" // scan, pipe1 or pipe4
	envAddr  = "KEYREG_BENCH_ADDR"     // host:port of the server
)

// baselineCount is the SCAN COUNT hint of every baseline, as scanner's
// DefaultCount.
const baselineCount = 1000

// childMain runs a baseline when the process was started as one; it reports
// whether it did.
func childMain(stdout io.Writer) (bool, error) {
	mode := os.Getenv(envChild)
	if mode == "" {
		return false, nil
	}
	n, err := runBaseline(context.Background(), mode, os.Getenv(envAddr))
	if err != nil {
		return true, err
	}
	_, err = fmt.Fprintf(stdout, "keys %d\n", n)
	return true, err
}

// runBaseline walks the keyspace of addr:
//   - scan: SCAN COUNT 1000 alone, the enumeration floor;
//   - pipe1: after each SCAN batch, one pipelined round trip of TYPE and
//     PTTL for its keys, then the next SCAN;
//   - pipe4: the same probes, with up to 4 pipelines in flight while SCAN
//     keeps going.
//
// It returns the number of keys seen (scan) or probed and still present.
func runBaseline(ctx context.Context, mode, addr string) (int64, error) {
	switch mode {
	case "scan":
		cl := newClient(addr, 1)
		defer cl.Close()
		var n int64
		err := scanLoop(ctx, cl, func(keys []string) error { n += int64(len(keys)); return nil })
		return n, err
	case "pipe1":
		cl := newClient(addr, 2)
		defer cl.Close()
		var n int64
		err := scanLoop(ctx, cl, func(keys []string) error {
			k, err := probe(ctx, cl, keys)
			n += k
			return err
		})
		return n, err
	case "pipe4":
		cl := newClient(addr, 6)
		defer cl.Close()
		const inFlight = 4
		var n atomic.Int64
		batches := make(chan []string, inFlight)
		errs := make(chan error, inFlight+1)
		var wg sync.WaitGroup
		for range inFlight {
			wg.Go(func() {
				for keys := range batches {
					k, err := probe(ctx, cl, keys)
					n.Add(k)
					if err != nil {
						errs <- err
						for range batches {
						}
						return
					}
				}
			})
		}
		err := scanLoop(ctx, cl, func(keys []string) error {
			select {
			case err := <-errs:
				return err
			case batches <- keys:
				return nil
			}
		})
		close(batches)
		wg.Wait()
		if err == nil {
			select {
			case err = <-errs:
			default:
			}
		}
		return n.Load(), err
	case "probe":
		return runProbe(ctx, addr)
	}
	return 0, fmt.Errorf("unknown baseline %q (want scan, pipe1, pipe4 or probe)", mode)
}

func scanLoop(ctx context.Context, cl *redis.Client, fn func([]string) error) error {
	var cursor uint64
	for {
		keys, next, err := cl.Scan(ctx, cursor, "", baselineCount).Result()
		if err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		if len(keys) > 0 {
			if err := fn(keys); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// probe sends TYPE and PTTL of every key in one pipelined round trip and
// returns how many keys still existed.
func probe(ctx context.Context, cl *redis.Client, keys []string) (int64, error) {
	types := make([]*redis.StatusCmd, len(keys))
	ttls := make([]*redis.DurationCmd, len(keys))
	_, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			types[i] = p.Type(ctx, k)
			ttls[i] = p.PTTL(ctx, k)
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return 0, fmt.Errorf("probe: %w", err)
	}
	var n int64
	for i := range keys {
		t, err := types[i].Result()
		if err != nil {
			return n, fmt.Errorf("type: %w", err)
		}
		if _, err := ttls[i].Result(); err != nil {
			return n, fmt.Errorf("pttl: %w", err)
		}
		if !strings.EqualFold(t, "none") {
			n++
		}
	}
	return n, nil
}
