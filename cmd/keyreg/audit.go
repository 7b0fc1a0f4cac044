package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/report"
	"github.com/keyreg/keyreg/snapshot"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

type auditOptions struct {
	registry    string
	scan        scanSourceFlags
	memory      bool
	sample      int
	maxValue    int64
	showValues  bool
	output      outputOptions
	paths       pathOptions
	top         int
	failOn      string
	baseline    baselineOptions
	channels    bool
	channelsSet bool // --channels given, true or false
	fanOut      time.Duration
	fanOutSet   bool // --fanout-window given
	fleetTarget string
}

// baselineOptions are the --baseline and --write-baseline flags.
type baselineOptions struct {
	compare string // --baseline: report only findings new since this file
	write   string // --write-baseline: record this audit's findings here
}

func (a *app) auditCmd() *cobra.Command {
	var o auditOptions
	var target targetOptions
	d := audit.Defaults()
	c := &cobra.Command{
		Use:   "audit",
		Short: "Check a live Redis against the registry (read-only, SCAN based)",
		Long: `Audit scans a live Redis (standalone, Cluster or Sentinel) with SCAN and checks
every key against the registry: unregistered keys, keys without a TTL or with
one too long, wrong types, placeholder values of the wrong type, stale keys,
oversized values, deprecated families past their sunset, and sampled payloads
that break their schema or encoding.

The audit is read-only: it sends SCAN, TYPE, PTTL, OBJECT IDLETIME, MEMORY
USAGE, length commands and bounded reads of sampled values (GET, HSCAN,
SSCAN, ZSCAN, LRANGE, XRANGE), never a write, KEYS, DEBUG or CONFIG. It never
prints payload values unless --show-values is given, and redacts passwords.
The minimal ACL it needs is in docs/audit.md.

Sampling memory is bounded whatever the values hold: no value over
--max-value-bytes is kept (an element that would take a collection's sample
over it is discarded as it arrives), and samples are read in waves of at most
16 MiB (or --max-value-bytes, if larger), each checked before the next is
read, two at most in flight.

The audit never changes the eviction state of a primary's keys. Redis before
7.2 (Debian's packaged 7.0 among them) has no CLIENT NO-TOUCH, so there every
value read and length command resets the key's LRU idle time and LFU counter.
On such a primary the audit therefore samples no payload and reads no max_len
length, and says so in a report note. --replica reads a replica instead (its
keys' state is its own), with idle times from the primary, where applications
read; --allow-touch reads the primary anyway, and the note then counts the
keys touched. TYPE, PTTL, OBJECT IDLETIME and MEMORY USAGE never touch a key.

A check the server refused (MEMORY USAGE or OBJECT under an ACL without them,
OBJECT IDLETIME under an LFU policy, an unreachable primary with --replica)
did not run: the report is partial in every format, and the audit exits 3.

The URL comes from --url, then $REDIS_URL, then redis://localhost:6379; a
password holding # / ? % or a space must be percent-encoded (# is %23).
Cluster mode is detected; every master is scanned concurrently, or at most
--parallel of them at a time. The --tls-* flags (private CA, client
certificate) need rediss://; the sentinels take their own credentials
(--sentinel-password or $REDIS_SENTINEL_PASSWORD). docs/audit.md lists
every connection flag and its environment variable.

With --baseline, only findings new since the baseline file are reported and
counted for the exit code; findings of the baseline that are gone are listed
as resolved. --write-baseline records the findings of this audit (rule,
family and, for unregistered keys, the inferred prefix; no key name or value).

When keys.yaml declares channels: (or with --channels), the audit also reads
the Pub/Sub state of every node (PUBSUB CHANNELS, NUMSUB, NUMPAT,
SHARDCHANNELS, SHARDNUMSUB) and checks it against them; its findings count like
key findings. A node whose PUBSUB cannot be read makes the audit partial (exit
3). Outside a cluster only the primary is read, and a note counts the replicas
it lists; a cluster node flagged as failing is noted, not read.
--channels=false skips it; a snapshot has no Pub/Sub state.

On a Redis Cluster the channel audit also estimates the fan-out of classic
Pub/Sub: it reads every node's publish counters (INFO commandstats, CLUSTER
INFO) when the audit starts and again at the channel phase, and reports the
PUBLISH messages/s, the cluster bus messages/s they cost, and a lower bound
of the bus bytes/s. A rate over a few milliseconds means nothing, so when
the audit took less than --fanout-window (default 1.5s) and a classic
channel is subscribed, it waits out the rest, and says so; with no classic
channel subscribed it never waits, and reports no estimate. --fanout-window
0 skips the estimate. Standalone and Sentinel have no cluster bus: there is
no estimate, and the report says why.

--match takes a Redis glob, as SCAN MATCH does: --match 'v1:*' audits the
keys starting with v1:. --output FORMAT=PATH (repeatable) writes the report
in several formats from one scan; each file is written to a temporary file
beside it and renamed into place.

--target-list picks one target of a fleet's target list (docs/fleet.md):
the line --target-index (or $JOB_COMPLETION_INDEX) names, whose flags are
parsed as if given here; its URL and TLS files are NAME.url, NAME.ca.pem,
NAME.cert.pem and NAME.key.pem of --secrets-dir, and {target} in an --output
path becomes NAME.

Exit codes: 0 clean, 1 findings at or above --fail-on (with --baseline: new
findings only), 2 usage or config error (including a baseline file that does
not parse, or an --output path that cannot be written, found before the
scan), 3 runtime error (Redis unreachable, a node failed, cluster slots
served by no healthy master, interrupted, a report that could not be
written after the scan).`,
		Example: `  keyreg audit --url redis://audit:secret@redis.internal:6379
  keyreg audit --cluster --url redis://10.0.0.5:7000 --format markdown >> "$GITHUB_STEP_SUMMARY"
  keyreg audit --rate 50000 --output prometheus=/var/lib/node_exporter/keyreg.prom
  keyreg audit --output json=audit.json --output sarif=audit.sarif --output junit=audit.xml
  keyreg audit --write-baseline keyreg-baseline.json
  keyreg audit --target-list targets.txt --target-index 3 --secrets-dir /etc/keyreg/secrets --output json=/reports/{target}.json
  keyreg audit --baseline keyreg-baseline.json --format markdown >> "$GITHUB_STEP_SUMMARY"`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := applyTarget(c, &target, &o); err != nil {
				return err
			}
			o.channelsSet = c.Flags().Changed("channels")
			o.fanOutSet = c.Flags().Changed("fanout-window")
			return a.runAudit(c.Context(), o)
		},
	}
	f := c.Flags()
	target.flags(f)
	registryFlag(f, &o.registry)
	o.scan.addFlags(f, scanFlagHelp{
		rdb:     "audit this RDB snapshot file instead of a live Redis (repeatable, one per shard; - reads standard input)",
		match:   "only audit keys matching this Redis glob, as SCAN MATCH takes it (such as 'v1:*')",
		maxKeys: "stop after this many keys; the report is marked partial (0: no limit)",
		timeout: "abort the whole audit after this long (0: no limit)",
	})
	f.BoolVar(&o.memory, "memory", false, "measure MEMORY USAGE of every key (always done for families with max_bytes)")
	f.IntVar(&o.sample, "sample", d.Sample, "payloads to read and check per family (0: none)")
	f.Int64Var(&o.maxValue, "max-value-bytes", d.MaxValueBytes, "skip and count payloads larger than this (above 0; for a collection, the part read)")
	f.BoolVar(&o.showValues, "show-values", false, "include payload values in finding details (off: reports never carry values)")
	f.IntVar(&o.top, "top", audit.DefaultTopN, fmt.Sprintf("largest keys to report per measure, bytes and elements (0: none; at most %d)", audit.MaxTopN))
	outputFlags(c, &o.output, "", report.DocAudit, report.FormatList(report.DocAudit)+" (default: table on a terminal, else text)")
	pathPrefixFlag(c, &o.paths)
	f.StringVar(&o.failOn, "fail-on", "error", "exit 1 on findings of this severity or above: error, warn, info or never")
	f.StringVar(&o.baseline.compare, "baseline", "", "report only findings new since this baseline file, and list resolved ones; exit 1 only on new findings")
	f.StringVar(&o.baseline.write, "write-baseline", "", "record this audit's findings by fingerprint in this file (docs/audit.md)")
	f.BoolVar(&o.channels, "channels", false, "also audit the Pub/Sub channels of every node against the registry's channels: (default: on when the registry declares channels; --channels=false skips)")
	f.DurationVar(&o.fanOut, "fanout-window", audit.DefaultFanOutWindow, fmt.Sprintf("on a cluster with classic channels subscribed, the shortest window the Pub/Sub fan-out is estimated over: a shorter audit waits out the rest (0: no estimate, never wait; at most %s)", audit.MaxFanOutWindow))
	return c
}

func (a *app) runAudit(ctx context.Context, o auditOptions) error {
	outs, threshold, err := a.auditOutput(&o.output, o.failOn)
	if err != nil {
		return err
	}
	defer outs.discard()
	if o.sample < 0 {
		return usageError(fmt.Errorf("--sample %d is negative", o.sample), "--sample 0 reads no payload")
	}
	if o.maxValue <= 0 {
		return usageError(fmt.Errorf("--max-value-bytes %d is not above 0", o.maxValue), "every sampled value is bounded; the default is 1048576")
	}
	if o.fanOut < 0 || o.fanOut > audit.MaxFanOutWindow {
		return usageError(fmt.Errorf("--fanout-window %s is not between 0 and %s", o.fanOut, audit.MaxFanOutWindow), "--fanout-window 0 skips the fan-out estimate")
	}
	top, err := topFlag(o.top)
	if err != nil {
		return err
	}
	reg, err := loadRegistryAs(o.registry, o.paths)
	if err != nil {
		return err
	}
	// A bad baseline is a config error, found before Redis is touched.
	var base *audit.Baseline
	if o.baseline.compare != "" {
		if base, err = audit.LoadBaseline(o.baseline.compare); err != nil {
			return usageError(err, "write one with keyreg audit --write-baseline "+o.baseline.compare)
		}
	}
	ctx, cancel := o.scan.withTimeout(ctx)
	defer cancel()
	ao := audit.Defaults()
	src, closeSrc, err := a.openSource(ctx, &o.scan, sourceOptions{
		snapshot: snapshot.SourceOptions{Sample: o.sample, SampleLen: ao.SampleLen, MaxValueBytes: o.maxValue},
	})
	if err != nil {
		return err
	}
	defer closeSrc()
	if o.scan.snapshot() {
		defer snapshotGC()()
	}
	ao.Registry, ao.Target, ao.Mode = reg.File, src.target, src.mode
	ao.FleetTarget = o.fleetTarget
	ao.Sample, ao.MaxValueBytes, ao.ShowValues = o.sample, o.maxValue, o.showValues
	ao.Filtered, ao.Memory, ao.Top = o.scan.match != "", o.memory, top
	if o.channels || (!o.channelsSet && len(reg.Channels) > 0) {
		if src.live == nil {
			if o.channelsSet {
				return usageError(errors.New("--channels needs a live Redis: a snapshot holds no Pub/Sub state"), "drop --channels, or audit the live server")
			}
			ao.ChannelsNote = "channels not audited: a snapshot holds no Pub/Sub state (audit the live server for them)"
		} else {
			ao.Channels = src.live.Channels
			if src.mode == "cluster" {
				// Only a cluster has a bus to estimate; elsewhere no counter is read.
				ao.ChannelCounters, ao.FanOutWindow = src.live.ChannelCounters, o.fanOut
				if isTerminal(a.stderr) {
					ao.FanOutWaiting = func(d time.Duration) {
						fmt.Fprintf(a.stderr, "\r\033[Kkeyreg: waiting %s for the Pub/Sub fan-out estimate (--fanout-window %s; 0 skips it)\n", d.Round(time.Millisecond), o.fanOut)
					}
				}
			}
		}
	}
	if o.fanOutSet && ao.Channels == nil {
		return usageError(errors.New("--fanout-window needs the channel audit of a live Redis"), "drop --fanout-window, or give --channels")
	}
	return a.auditBaseline(ctx, src.Source, reg, ao, outs, threshold, base, o.baseline.write, o.scan.match)
}

// snapshotGC sets the garbage collector for reading a snapshot, and returns
// what puts it back. The reader allocates per key at full speed and keeps
// little, so a target of 300% saves about a sixth of its CPU; the memory
// limit keeps the peak RSS well within 64 MiB even when the kept samples
// are at their bound.
func snapshotGC() (restore func()) {
	pct := debug.SetGCPercent(300)
	limit := debug.SetMemoryLimit(48 << 20)
	return func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	}
}

// audit runs the audit, prints the report and maps the outcome to an exit
// code. An interrupted or failed scan still prints the partial report.
func (a *app) audit(ctx context.Context, src audit.Source, reg *registry.Registry, ao audit.Options, outs outputs, threshold diag.Severity) error {
	return a.auditBaseline(ctx, src, reg, ao, outs, threshold, nil, "", "")
}

// noMatch is the note of an audit whose --match glob matched no key: it is
// easy to mistype, or to pass a prefix without its *, and an audit of
// nothing is otherwise clean.
func noMatch(glob string) (note, hint string) {
	note = fmt.Sprintf("--match %q matched no key", glob)
	if !strings.ContainsAny(glob, `*?[\`) {
		hint = fmt.Sprintf("--match is a Redis glob, as SCAN MATCH takes it: for the keys starting with %q pass --match %q", glob, glob+"*")
	}
	return note, hint
}

// auditBaseline is audit, compared with base when it is not nil (only new
// findings then count for the exit code), and recording the findings in
// the file writeTo when it is set and the audit is complete. match is the
// --match glob, if any: when it matched no key, the report says so.
func (a *app) auditBaseline(ctx context.Context, src audit.Source, reg *registry.Registry, ao audit.Options, outs outputs, threshold diag.Severity, base *audit.Baseline, writeTo, match string) error {
	var progress atomic.Int64
	ao.Progress = func(keys int) {
		total := progress.Add(int64(keys))
		if a.audited != nil {
			a.audited(total)
		}
	}
	stop := a.progress(ctx, src, ao.Filtered, &progress)
	rep, runErr := audit.Run(ctx, src, reg, ao)
	stop()
	if match != "" && runErr == nil && rep.Scan.Keys == 0 {
		note, hint := noMatch(match)
		rep.Scan.Notes = append(rep.Scan.Notes, note)
		fmt.Fprintf(a.stderr, "keyreg: %s\n", note)
		if hint != "" {
			fmt.Fprintf(a.stderr, "hint: %s\n", hint)
		}
	}
	var comp *audit.Comparison
	if base != nil {
		comp = audit.Compare(rep, base)
	}
	if err := a.writeAudit(outs, rep, comp); err != nil {
		return runtimeError(err, "")
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			return runtimeError(errors.New("audit interrupted; "+outs.partialNote("report")), "")
		}
		if errors.Is(runErr, context.DeadlineExceeded) {
			return runtimeError(errors.New("audit timed out; "+outs.partialNote("report")), "raise --timeout or narrow the audit with --match")
		}
		hint := ""
		if writeTo != "" {
			hint = "baseline " + writeTo + " was not written: a baseline needs a complete audit"
		}
		return runtimeError(fmt.Errorf("audit failed; %s: %w", outs.partialNote("report"), runErr), hint)
	}
	if writeTo != "" {
		if rep.Partial {
			return runtimeError(fmt.Errorf("not writing baseline %s: the audit is partial (%s)", writeTo, rep.PartialReason), "a baseline needs a complete audit")
		}
		if err := audit.WriteBaseline(writeTo, audit.NewBaseline(rep)); err != nil {
			return runtimeError(err, "")
		}
	}
	counted := rep
	if comp != nil {
		counted = comp.Filter(rep)
	}
	if failed(counted.Diagnostics(), threshold) {
		return errFindings
	}
	return nil
}

// writeAudit writes the report to every output: the same report, rendered
// once per format, from the one scan.
func (a *app) writeAudit(outs outputs, rep *audit.Report, comp *audit.Comparison) error {
	return a.render(outs, "keyreg/audit/", func(w io.Writer, format report.Format, o report.Options, first bool) error {
		if first && format == report.Text {
			o.Summary = a.stderr
		}
		return report.AuditBaseline(w, format, rep, comp, o)
	})
}

// auditOutput opens the outputs and parses --fail-on of an audit report.
// The caller defers outs.discard.
func (a *app) auditOutput(o *outputOptions, fail string) (outputs, diag.Severity, error) {
	threshold, err := failOn(fail)
	if err != nil {
		return nil, 0, err
	}
	outs, err := o.open(a.defaultAuditFormat)
	return outs, threshold, err
}

// defaultAuditFormat is table on a terminal, text otherwise.
func (a *app) defaultAuditFormat() report.Format {
	if isTerminal(a.stdout) {
		return report.Table
	}
	return report.Text
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress shows the keys audited so far on stderr, only when stderr is a
// terminal, with the total the source expects (summed over its nodes and
// databases), a percentage and an ETA when src can tell and the scan is
// not filtered (--match walks part of that total). The returned func stops
// it and clears the line.
func (a *app) progress(ctx context.Context, src audit.Source, filtered bool, n *atomic.Int64) func() {
	if !isTerminal(a.stderr) {
		return func() {}
	}
	var total int64
	if kc, ok := src.(interface {
		KeyCount(context.Context) (int64, error)
	}); ok && !filtered {
		total, _ = kc.KeyCount(ctx) // without a total, the line shows counts only
	}
	return a.progressTotal(n, total, "audited")
}

// progressOf is progress with another verb, such as "init: scanned", and
// no total.
func (a *app) progressOf(n *atomic.Int64, verb string) func() {
	if !isTerminal(a.stderr) {
		return func() {}
	}
	return a.progressTotal(n, 0, verb)
}

// progressTotal redraws the progress line every 200ms until stopped.
func (a *app) progressTotal(n *atomic.Int64, total int64, verb string) func() {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(a.stderr, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprint(a.stderr, "\r\033[K"+progressLine(verb, n.Load(), total, time.Since(start)))
			}
		}
	}()
	return func() { close(done); <-finished }
}

// progressLine is one state of the progress line: "keyreg: audited 1200 of
// 5000 keys (24%, 3000 keys/s, ETA 1s)", or without a total "keyreg:
// audited 1200 keys (3000 keys/s)". Keys written during the scan can take
// the count past the total: the share then stops at 99%.
func progressLine(verb string, keys, total int64, elapsed time.Duration) string {
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(keys) / s
	}
	if total <= 0 {
		return fmt.Sprintf("keyreg: %s %d keys (%.0f keys/s)", verb, keys, rate)
	}
	pct := min(100*float64(keys)/float64(total), 99)
	eta := "?"
	if rate > 0 {
		eta = time.Duration(float64(max(total-keys, 0)) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("keyreg: %s %d of %d keys (%.0f%%, %.0f keys/s, ETA %s)", verb, keys, total, pct, rate, eta)
}
