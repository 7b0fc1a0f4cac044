package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/scanner"
	"github.com/keyreg/keyreg/snapshot"
	"github.com/keyreg/keyreg/source"
	"github.com/spf13/pflag"
)

// Both sources yield the key facts an audit consumes.
var (
	_ audit.Source = (*scanner.Conn)(nil)
	_ audit.Source = (*snapshot.Source)(nil)
	_ audit.Prober = (*scanner.Conn)(nil)
	_ audit.Prober = (*snapshot.Found)(nil)
)

// scanSourceFlags are the flags that pick where a command's key facts come
// from, a live Redis (the connection flags) or RDB snapshots (--rdb), and
// that shape a live scan (--match, --count, --rate, --parallel,
// --max-keys, --timeout). Every command that reads keys (audit, init,
// suggest, explain) registers them with addFlags and opens its source with
// open, so that they agree on what the flags mean.
type scanSourceFlags struct {
	conn     connOptions
	rdb      []string // snapshot files to read instead of a live Redis
	match    string
	count    int
	rate     int
	parallel int
	maxKeys  int64
	timeout  time.Duration
}

// scanFlagHelp is the help of the flags whose wording differs between
// commands. A command that reads one key (explain) leaves match empty: it
// gets no flag that shapes a scan.
type scanFlagHelp struct {
	rdb, match, maxKeys, timeout string
}

// addFlags registers the connection flags, --rdb and, when h.match is set,
// the flags of a live scan.
func (s *scanSourceFlags) addFlags(f *pflag.FlagSet, h scanFlagHelp) {
	s.conn.flags(f)
	f.StringArrayVar(&s.rdb, "rdb", nil, h.rdb)
	if h.match == "" {
		return
	}
	f.StringVar(&s.match, "match", "", h.match)
	f.IntVar(&s.count, "count", scanner.DefaultCount, "SCAN COUNT hint per round trip")
	f.IntVar(&s.rate, "rate", 0, "cap the keys probed per second (0: no cap)")
	f.IntVar(&s.parallel, "parallel", 0, "cluster: scan at most this many shards at a time (0: all at once)")
	f.Int64Var(&s.maxKeys, "max-keys", 0, h.maxKeys)
	f.DurationVar(&s.timeout, "timeout", 0, h.timeout)
}

// snapshot says whether the source is RDB snapshots rather than a live
// Redis.
func (s *scanSourceFlags) snapshot() bool { return len(s.rdb) > 0 }

// withTimeout bounds ctx by --timeout, when it is set.
func (s *scanSourceFlags) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout > 0 {
		return context.WithTimeout(ctx, s.timeout)
	}
	return ctx, func() {}
}

// sourceOptions say how to read the keys: what a snapshot keeps of the
// values it may be asked to sample, and, for a live Redis, which facts
// every probe reads.
type sourceOptions struct {
	snapshot snapshot.SourceOptions // Stdin is set by openSource
	probe    scanner.Plan           // OBJECT IDLETIME, MEMORY USAGE of every key
	plan     source.Planner         // the live probe plan of a single key (explain), or nil
}

// scanSource is an opened source: what it reads, and the names the
// report gives it.
type scanSource struct {
	audit.Source
	target string        // such as redis://host:6379 or rdb:dump.rdb
	mode   string        // standalone, cluster, sentinel or snapshot
	live   *scanner.Conn // the live connection; nil for snapshots
	snap   *snapshot.Source
}

// openSource checks the flags and opens the source. The caller calls close
// when it is done with the source; it is never nil when err is nil.
func (a *app) openSource(ctx context.Context, s *scanSourceFlags, o sourceOptions) (src *scanSource, close func(), err error) {
	if s.snapshot() {
		if s.match != "" || s.maxKeys > 0 || s.rate > 0 {
			return nil, nil, usageError(errors.New("--match, --max-keys and --rate are for a live scan, not --rdb"), "")
		}
		if err := rdbInputs(s.rdb); err != nil {
			return nil, nil, err
		}
		so := o.snapshot
		so.Stdin = a.stdin
		snap := snapshot.NewSource(s.rdb, so)
		return &scanSource{Source: snap, target: "rdb:" + strings.Join(s.rdb, ","), mode: "snapshot", snap: snap}, func() {}, nil
	}
	if err := checkMatch(s.match); err != nil {
		return nil, nil, err
	}
	so, err := a.scannerOptions(&s.conn, o.probe)
	if err != nil {
		return nil, nil, err
	}
	so.Match, so.Count, so.Rate, so.MaxKeys, so.Parallel = s.match, s.count, s.rate, s.maxKeys, s.parallel
	so.Plan = o.plan
	conn, err := scanner.Connect(ctx, so)
	if err != nil {
		return nil, nil, connectError(err)
	}
	return &scanSource{Source: conn, target: conn.Target(), mode: conn.Mode(), live: conn}, func() { conn.Close() }, nil
}

// prober returns what reads the one key, with plan: a live connection
// probes it itself (with the plan it was opened with), a snapshot is read
// until the key is found.
func (s *scanSource) prober(ctx context.Context, key string, plan source.Planner) (audit.Prober, error) {
	if s.snap != nil {
		return snapshot.Find(ctx, s.snap, key, plan, true)
	}
	return s.live, nil
}

// rdbInputs refuses --rdb - given twice: standard input is read once, so
// the second would see nothing (a usage error, not a failed read).
func rdbInputs(paths []string) error {
	stdin := 0
	for _, p := range paths {
		if p == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return usageError(errors.New("--rdb - is given more than once: standard input can be read once"), "give one --rdb -, and the other snapshots as files")
	}
	return nil
}

// maxMatchBytes bounds --match: Redis matches the glob against every key
// scanned, and no key family needs a longer one.
const maxMatchBytes = 4096

// checkMatch refuses a --match glob longer than maxMatchBytes.
func checkMatch(glob string) error {
	if len(glob) > maxMatchBytes {
		return usageError(fmt.Errorf("--match is %d bytes, over the limit of %d", len(glob), maxMatchBytes), "")
	}
	return nil
}
