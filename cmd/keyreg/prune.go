package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/remedy"
	"github.com/keyreg/keyreg/scanner"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// remedyOptions are the flags of prune and expire: the plan step's
// selection and source, and the apply step's pacing and limits.
type remedyOptions struct {
	kind     string
	registry string
	scan     scanSourceFlags
	plan     string // --plan FILE: write a plan
	apply    string // --apply FILE: carry one out
	backup   string
	format   string

	sel         remedy.Selection
	idleOver    string
	ttl         string
	maxLatency  time.Duration
	maxPause    time.Duration
	maxKeyBytes int64
	maxPlanAge  time.Duration
}

func (o *remedyOptions) flags(f *pflag.FlagSet) {
	registryFlag(f, &o.registry)
	o.scan.addFlags(f, scanFlagHelp{
		rdb:     "plan from this RDB snapshot instead of a live Redis (repeatable; - for stdin); apply re-checks every key live",
		match:   "plan: scan only keys matching this Redis glob (live only)",
		maxKeys: "plan: stop after this many keys (the plan is then partial, exit 3)",
		timeout: "give up after this long (0: no limit)",
	})
	if r := f.Lookup("rate"); r != nil {
		r.Usage = fmt.Sprintf("plan: cap the keys probed per second (0: no cap); apply: the keys handled per second (0: %d)", remedy.DefaultRate)
	}
	f.StringVar(&o.plan, "plan", "", "write the plan of the selected keys to this file (reads only)")
	f.StringVar(&o.apply, "apply", "", "carry out this plan")
	f.StringVar(&o.format, "format", "text", "format of the plan's summary and of the apply's outcome: "+strings.Join(remedy.Formats, ", "))
	f.StringSliceVar(&o.sel.Families, "family", nil, "limit to these families (repeatable)")
	f.DurationVar(&o.maxLatency, "max-latency", remedy.DefaultMaxLatency, "apply: pause when a round trip takes longer")
	f.DurationVar(&o.maxPause, "max-pause", remedy.DefaultMaxPause, "apply: abort (exit 3) when the latency stays high this long")
	f.DurationVar(&o.maxPlanAge, "max-plan-age", remedy.DefaultMaxPlanAge, "apply: refuse older plans (exit 2)")
	if o.kind == remedy.KindPrune {
		f.BoolVar(&o.sel.Unregistered, "unregistered", false, "plan: select keys of no family")
		f.StringVar(&o.sel.Group, "group", "", "plan: with --unregistered, only this prefix group of the audit (such as tmp:junk:)")
		f.BoolVar(&o.sel.Deprecated, "deprecated", false, "plan: select keys of families past their sunset")
		f.BoolVar(&o.sel.Stale, "stale", false, "plan: select keys idle over their family's max_idle, or over --idle-over for keys of no family")
		f.StringVar(&o.idleOver, "idle-over", "", "plan: with --stale, the idle time over which a key of no family is stale (such as 30d)")
		f.BoolVar(&o.sel.IncludeLive, "include-live", false, "plan: also select keys of the live families named with --family")
		f.StringVar(&o.backup, "backup", "", "apply: the RDB file the keys are saved to before they are deleted (resumes when it and its journal exist)")
		f.Int64Var(&o.maxKeyBytes, "max-key-bytes", remedy.DefaultMaxKeyBytes, "apply: skip and list keys larger than this")
	} else {
		f.StringVar(&o.ttl, "ttl", "", "plan: the TTL to set when shorter than the family's max (such as 12h)")
		f.IntVar(&o.sel.SpreadPct, "spread", 10, "plan: jitter, in percent of the TTL, so that keys do not expire together")
	}
}

func (a *app) pruneCmd() *cobra.Command  { return a.remedyCmd(remedy.KindPrune) }
func (a *app) expireCmd() *cobra.Command { return a.remedyCmd(remedy.KindExpire) }

func (a *app) remedyCmd(kind string) *cobra.Command {
	o := &remedyOptions{kind: kind}
	c := &cobra.Command{
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return a.runRemedy(c.Context(), o) },
	}
	if kind == remedy.KindPrune {
		c.Use = "prune (--plan FILE | --apply FILE --backup FILE)"
		c.Short = "Delete unregistered, deprecated or stale keys: a plan, a backup, a check before every delete"
		c.Long = `prune deletes keys in two steps.

  keyreg prune --plan plan.json --unregistered [--group P] [--deprecated] [--stale]
reads only: it selects keys by reason and writes the plan (key, reason, type,
size, TTL, idle time, database; the server and a digest) and a summary.
Keys of live families are never selected unless named with --family and
--include-live is given.

  keyreg prune --apply plan.json --backup backup.rdb
saves each key (DUMP, expiry, idle time) into backup.rdb, an RDB file made
durable before anything is deleted, then deletes each key with a script that
UNLINKs it only if it is byte-identical to its backup, still idle and with the
same TTL; other keys are skipped and listed with why. It keeps to --rate,
pauses and then aborts (exit 3) when round trips exceed --max-latency, and
refuses a replica, a read-only user or a stale plan (exit 2). Killed, it
resumes when run again with the same plan and backup. keyreg restore puts the
keys back. See docs/remediation.md.`
	} else {
		c.Use = "expire (--plan FILE | --apply FILE)"
		c.Short = "Give TTL-less keys of families with a max TTL their TTL, with jitter"
		c.Long = `expire fixes ttl-missing: --plan selects the keys without a TTL of families
whose policy has a max, with the TTL each gets (the max, or --ttl when
shorter, minus up to --spread percent of jitter); --apply sets it only on keys
that still have none (a script equivalent to EXPIRE NX), so a TTL the
application set meanwhile is never overwritten. See docs/remediation.md.`
	}
	o.flags(c.Flags())
	return c
}

func (a *app) runRemedy(ctx context.Context, o *remedyOptions) error {
	if (o.plan == "") == (o.apply == "") {
		return usageError(errors.New("give one of --plan FILE and --apply FILE"), "")
	}
	if !slices.Contains(remedy.Formats, o.format) {
		return usageError(fmt.Errorf("--format %q: want one of %s", o.format, strings.Join(remedy.Formats, ", ")), "")
	}
	if o.apply != "" {
		return a.applyPlan(ctx, o)
	}
	reg, err := loadRegistry(o.registry)
	if err != nil {
		return err
	}
	ro := remedy.Options{Selection: o.sel, Now: time.Now(), Rand: rand.Float64}
	if o.idleOver != "" {
		if ro.IdleOver, err = registry.ParseDuration(o.idleOver); err != nil {
			return usageError(fmt.Errorf("--idle-over: %v", err), "")
		}
	}
	if o.ttl != "" {
		if ro.TTL, err = registry.ParseDuration(o.ttl); err != nil {
			return usageError(fmt.Errorf("--ttl: %v", err), "")
		}
	}
	if err := ro.Check(reg, o.kind); err != nil {
		return usageError(err, "")
	}
	ctx, cancel := o.scan.withTimeout(ctx)
	defer cancel()
	src, closeSrc, err := a.openSource(ctx, &o.scan, sourceOptions{probe: scanner.Plan{Idle: true, Memory: true}})
	if err != nil {
		return err
	}
	defer closeSrc()
	p, scanErr := remedy.Build(ctx, src.Source, reg, o.kind, ro, remedy.Server{Target: src.target, Mode: src.mode})
	if p == nil {
		return usageError(scanErr, "")
	}
	if err := writeFileAtomic(o.plan, p.Write); err != nil {
		return runtimeError(fmt.Errorf("writing the plan: %w", err), "")
	}
	if err := remedy.WriteSummary(a.stdout, o.format, remedy.Summarize(p)); err != nil {
		return runtimeError(err, "")
	}
	if p.Partial {
		if scanErr == nil {
			scanErr = errors.New("the scan did not cover the keyspace")
		}
		return runtimeError(fmt.Errorf("partial plan: %w", scanErr), "the plan holds the keys seen; plan again for the rest")
	}
	return nil
}

// writeFileAtomic writes path through a synced temporary sibling and a
// rename, so that a reader never sees half a file.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".keyreg-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func readPlanFile(path string) (*remedy.Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageError(err, "")
	}
	defer f.Close()
	p, err := remedy.ReadPlan(f)
	if err != nil {
		return nil, usageError(fmt.Errorf("%s: %w", path, err), "")
	}
	return p, nil
}

func (a *app) applyPlan(ctx context.Context, o *remedyOptions) error {
	if o.kind == remedy.KindPrune && o.backup == "" {
		return usageError(errors.New("--apply needs --backup FILE: no key is deleted without its backup"), "")
	}
	if o.scan.snapshot() {
		return usageError(errors.New("--apply writes to a live Redis, not to --rdb"), "")
	}
	// The library takes 0 for its defaults; a value given out of range is
	// the user's mistake, not a request for the default.
	switch {
	case o.scan.rate < 0:
		return usageError(fmt.Errorf("--rate %d: want keys per second, 0 for the default %d", o.scan.rate, remedy.DefaultRate), "")
	case o.kind == remedy.KindPrune && o.maxKeyBytes <= 0:
		return usageError(fmt.Errorf("--max-key-bytes %d: want a positive size", o.maxKeyBytes), "")
	case o.maxLatency <= 0:
		return usageError(fmt.Errorf("--max-latency %s: want a positive duration", o.maxLatency), "")
	case o.maxPause <= 0:
		return usageError(fmt.Errorf("--max-pause %s: want a positive duration", o.maxPause), "")
	case o.maxPlanAge <= 0:
		return usageError(fmt.Errorf("--max-plan-age %s: want a positive duration", o.maxPlanAge), "")
	}
	p, err := readPlanFile(o.apply)
	if err != nil {
		return err
	}
	if p.Kind != o.kind {
		return usageError(fmt.Errorf("%s is a %s plan, not a %s plan", o.apply, p.Kind, o.kind), "")
	}
	ctx, cancel := o.scan.withTimeout(ctx)
	defer cancel()
	so, err := a.scannerOptions(&o.scan.conn, scanner.Plan{})
	if err != nil {
		return err
	}
	conn, err := scanner.Connect(ctx, so)
	if err != nil {
		return connectError(err)
	}
	defer conn.Close()
	if p.Server.Mode != "snapshot" && p.Server.Target != conn.Target() {
		// The plan's text is its author's: quoted, so that it cannot
		// drive the terminal.
		fmt.Fprintf(a.stderr, "keyreg: note: the plan was made on %s; applying on %s (every key is checked again)\n", strconv.Quote(p.Server.Target), conn.Target())
	}
	res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{
		Backup: o.backup, Rate: o.scan.rate, MaxLatency: o.maxLatency, MaxPause: o.maxPause,
		MaxKeyBytes: o.maxKeyBytes, MaxPlanAge: o.maxPlanAge,
	})
	var re *remedy.RefusedError
	if errors.As(err, &re) {
		return usageError(err, "") // a refusal did nothing: no "partial" outcome
	}
	if res != nil {
		// In the format asked, partial or not, with the exit code the run
		// ended with.
		if werr := remedy.WriteOutcome(a.stdout, o.format, remedy.NewOutcome(p, res, err)); werr != nil && err == nil {
			return runtimeError(werr, "")
		}
	}
	if err != nil {
		return runtimeError(fmt.Errorf("partial %s: %w", o.kind, err), "")
	}
	return nil
}

func (a *app) restoreCmd() *cobra.Command {
	var conn connOptions
	var o remedy.RestoreOptions
	var timeout time.Duration
	format := remedy.FormatText
	c := &cobra.Command{
		Use:   "restore BACKUP",
		Short: "Put back the keys of a prune backup, with their original expiry",
		Long: `restore reads a backup written by keyreg prune --apply (an RDB file, which
redis-check-rdb validates), checks it whole, then RESTOREs each key with its
absolute expiry (RESTORE … ABSTTL) and idle time. Keys whose expiry has
passed are skipped; an existing key is never overwritten unless --replace is
given. --dry-run says what would be restored and writes nothing.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			if !slices.Contains(remedy.Formats, format) {
				return usageError(fmt.Errorf("--format %q: want one of %s", format, strings.Join(remedy.Formats, ", ")), "")
			}
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			if _, err := remedy.VerifyBackup(argv[0], remedy.Limits{}); err != nil {
				return usageError(fmt.Errorf("%s: %w", argv[0], err), "")
			}
			so, err := a.scannerOptions(&conn, scanner.Plan{})
			if err != nil {
				return err
			}
			sc, err := scanner.Connect(ctx, so)
			if err != nil {
				return connectError(err)
			}
			defer sc.Close()
			res, err := remedy.Restore(ctx, argv[0], sc, o)
			if res != nil {
				if werr := remedy.WriteRestoreOutcome(a.stdout, format, remedy.NewRestoreOutcome(res, o.DryRun, err)); werr != nil && err == nil {
					return runtimeError(werr, "")
				}
			}
			var re *remedy.RefusedError
			switch {
			case errors.As(err, &re):
				return usageError(err, "")
			case err != nil:
				return runtimeError(fmt.Errorf("partial restore: %w", err), "")
			}
			return nil
		},
	}
	conn.flags(c.Flags())
	c.Flags().BoolVar(&o.Replace, "replace", false, "overwrite keys that exist")
	c.Flags().BoolVar(&o.DryRun, "dry-run", false, "say what would be restored; write nothing")
	c.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (0: no limit)")
	c.Flags().IntVar(&o.Rate, "rate", remedy.DefaultRate, "cap the keys restored per second")
	c.Flags().StringVar(&format, "format", format, "format of the outcome: "+strings.Join(remedy.Formats, ", "))
	return c
}
