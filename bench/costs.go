package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The costs case measures what each probe command costs the server: the
// pipe1 loop with a chosen command set per key, optionally paced to a rate.
// It answers the question the other cases cannot: how much Redis CPU per key
// a given probe needs, whoever sends it.
const (
	envProbe   = "KEYREG_BENCH_PROBE"    // commands per key, ";"-separated, e.g. "type;pttl;memory usage"
	envRate    = "KEYREG_BENCH_RATE"     // keys per second; 0 or unset: no pacing
	envMaxKeys = "KEYREG_BENCH_MAX_KEYS" // stop after this many keys; 0 or unset: all
)

// costSet is one probe measured by the costs case.
type costSet struct {
	probe string // "" is SCAN alone
	paced bool   // at -rate, for -rate-keys keys
}

var costSets = []costSet{
	{"", false},
	{"pttl", false},
	{"type;pttl", false},
	{"type;pttl;object idletime", false},
	{"type;pttl;memory usage", false},
	{"type;pttl", true},
	{"type;pttl;memory usage", true},
}

// costResult is the median of one costSet's runs.
type costResult struct {
	Probe       string  `json:"probe"` // "" is SCAN alone
	Rate        int     `json:"rate,omitempty"`
	Keys        int64   `json:"keys"`
	ServerUSKey float64 `json:"server_us_per_key"` // median
	CPUShare    float64 `json:"server_cpu_share"`  // median server CPU s / wall s
}

// runProbe is the child side: SCAN COUNT 1000 and, per batch, one pipelined
// round trip of the env's commands for every key, paced when asked. Error
// replies (WRONGTYPE, say) are part of what is measured; only a failed round
// trip fails the run. It returns the number of keys scanned.
func runProbe(ctx context.Context, addr string) (int64, error) {
	var cmds [][]any
	for c := range strings.SplitSeq(os.Getenv(envProbe), ";") {
		if c = strings.TrimSpace(c); c != "" {
			var args []any
			for _, w := range strings.Fields(c) {
				args = append(args, w)
			}
			cmds = append(cmds, args)
		}
	}
	rate, _ := strconv.Atoi(os.Getenv(envRate))
	maxKeys, _ := strconv.ParseInt(os.Getenv(envMaxKeys), 10, 64)
	cl := newClient(addr, 2)
	defer cl.Close()
	var n int64
	start := time.Now()
	errStop := errors.New("enough keys")
	err := scanLoop(ctx, cl, func(keys []string) error {
		if len(cmds) > 0 {
			pipe := cl.Pipeline()
			for _, k := range keys {
				for _, c := range cmds {
					pipe.Do(ctx, append(slices.Clip(c), k)...)
				}
			}
			res, _ := pipe.Exec(ctx)
			for _, r := range res {
				var rerr redis.Error
				if err := r.Err(); err != nil && err != redis.Nil && !errors.As(err, &rerr) {
					return err
				}
			}
		}
		n += int64(len(keys))
		if rate > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(float64(n) / float64(rate) * float64(time.Second)))))
		}
		if maxKeys > 0 && n >= maxKeys {
			return errStop
		}
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return n, err
}

// costs runs every costSet three times, round-robin, and keeps the medians.
func (e *env) costs(ctx context.Context) ([]costResult, error) {
	const runs = 3
	per := make([][]sample, len(costSets))
	for range runs {
		for i, cs := range costSets {
			extra := []string{envProbe + "=" + cs.probe}
			if cs.paced {
				extra = append(extra, envRate+"="+strconv.Itoa(e.cfg.rate), envMaxKeys+"="+strconv.Itoa(e.cfg.rateKeys))
			}
			s, err := e.baseline(ctx, "probe", extra...)
			if err != nil {
				return nil, fmt.Errorf("probe %q: %w", cs.probe, err)
			}
			e.logf("costs: %-28q paced %-5v %8d keys  redis %.2f µs/key", cs.probe, cs.paced, s.Keys, 1e6*s.ServerCPU/float64(s.Keys))
			per[i] = append(per[i], s)
		}
	}
	out := make([]costResult, len(costSets))
	for i, cs := range costSets {
		var us, share []float64
		for _, s := range per[i] {
			us = append(us, 1e6*s.ServerCPU/float64(s.Keys))
			share = append(share, s.ServerCPU/s.Wall.Seconds())
		}
		out[i] = costResult{Probe: cs.probe, Keys: per[i][0].Keys, ServerUSKey: median(us), CPUShare: median(share)}
		if cs.paced {
			out[i].Rate = e.cfg.rate
		}
	}
	return out, nil
}
