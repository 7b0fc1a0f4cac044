package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"

	"github.com/keyreg/keyreg/infer"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
	"github.com/keyreg/keyreg/snapshot"
	"github.com/keyreg/keyreg/source"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type initOptions struct {
	scan      scanSourceFlags
	out       string
	force     bool
	separator string
	sample    int
	maxValue  int64
	limits    bool
	memory    bool
	noTouch   bool
	name      string // the command, init or suggest, for what it prints
}

func (a *app) initCmd() *cobra.Command {
	o := initOptions{name: "init"}
	c := &cobra.Command{
		Use:   "init",
		Short: "Write a first keys.yaml from an existing keyspace (read-only scan)",
		Long: `Init scans a live Redis with the audit's read-only machinery (SCAN, TYPE, PTTL,
bounded reads of sampled values; rate cap, replicas, Cluster and Sentinel) and
writes a first registry: families with patterns inferred from the key names,
their Redis types, TTL policies, encodings and JSON Schemas inferred from
sampled values (in schemas/), and presets: entries for the frameworks it
recognises. The presets: ` + presetNames(len("recognises. The presets: ")) + `.

Every family is owned by "unknown" (contact TODO): find the owners, then
review the patterns and policies, run keyreg lint and keyreg audit. The
output loads and lints without errors, and the same keyspace gives the same
file. Comments give each family's key count, TTL range and two example keys;
payload values never appear in the file. Keys that share no shape with
others (one-off keys, outliers) get no family: the file lists them at its
end, under "unregistered leftovers".

--limits proposes max_bytes from the 99th percentile of MEMORY USAGE.

On a primary before redis 7.2 reading a value resets the key's LRU/LFU
state. Init reads at most --sample values per family, and says how many
keys it touched; --no-touch reads none (no encodings, no schemas).

A scan cut short (Ctrl-C, a failed node, --max-keys) still writes what it
saw, says PARTIAL at the top of the file, and exits 3.

Exit codes: 0 written, 2 usage error (or --out exists without --force), 3
runtime error (Redis unreachable; a partial scan).`,
		Example: `  keyreg init --url redis://replica.internal:6379 --replica
  keyreg init --url "$REDIS_URL" --out keys.yaml --match 'v1:*' --limits`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return a.runInit(c.Context(), o) },
	}
	f := c.Flags()
	f.StringVar(&o.out, "out", "keys.yaml", "where to write the registry; its schemas go to schemas/ beside it")
	f.BoolVar(&o.force, "force", false, "overwrite --out and schema files that exist")
	f.StringVar(&o.separator, "separator", ":", "the byte that separates key segments")
	o.scanFlags(f)
	return c
}

// scanFlags registers the source, scan and sampling flags that init and
// suggest share.
func (o *initOptions) scanFlags(f *pflag.FlagSet) {
	o.scan.addFlags(f, scanFlagHelp{
		rdb:     "infer from this RDB snapshot file instead of a live Redis (repeatable; read twice when values are sampled)",
		match:   "only scan keys matching this Redis glob, as SCAN MATCH takes it (such as 'v1:*')",
		maxKeys: "stop after this many keys (0: no limit); the result is partial",
		timeout: "abort after this long (0: no limit)",
	})
	f.IntVar(&o.sample, "sample", 20, "values to read per family for its encoding and schema (0: none)")
	f.Int64Var(&o.maxValue, "max-value-bytes", 1<<20, "skip values larger than this")
	f.BoolVar(&o.limits, "limits", false, "propose max_bytes from high percentiles (measures MEMORY USAGE of every key)")
	f.BoolVar(&o.memory, "memory", false, "measure MEMORY USAGE of every key, for the share of memory in the comments")
	touchFlags(f, &o.noTouch, "it reads at most --sample values per family")
}

func (a *app) runInit(ctx context.Context, o initOptions) error {
	if len(o.separator) != 1 {
		return usageError(fmt.Errorf("--separator %q must be one byte", o.separator), "")
	}
	if o.sample < 0 || o.maxValue <= 0 {
		return usageError(errors.New("--sample must be 0 or more and --max-value-bytes above 0"), "")
	}
	if _, err := os.Stat(o.out); err == nil && !o.force {
		return usageError(fmt.Errorf("%s exists", o.out), "pass --force to overwrite it, or --out another path")
	}
	in := infer.New(infer.Options{Separator: o.separator[0], Owner: "unknown", Limits: o.limits})
	draft, schemas, stats, partial, err := a.inferFrom(ctx, o, in)
	if err != nil {
		return err
	}
	if err := writeDraft(o.out, draft, schemas, o.force); err != nil {
		return err
	}
	reg, err := registry.LoadFile(o.out)
	if err != nil {
		return runtimeError(fmt.Errorf("the registry written to %s does not load, which is a bug: %w", o.out, err), "")
	}
	l := rules.Lint(reg)
	leftovers := ""
	if stats.Leftovers > 0 {
		leftovers = fmt.Sprintf(", %d left over, listed at the end of the file", stats.Leftovers)
	}
	fmt.Fprintf(a.stderr, "keyreg init: wrote %s: %s and %s for %s (%d registered%s); lint: %s\n",
		o.out, diag.Count(stats.Families, "family"), diag.Count(stats.Presets, "preset"), diag.Count(stats.Keys, "key"),
		stats.Registered, leftovers, l.Active().Count())
	if partial != "" {
		return runtimeError(fmt.Errorf("the scan was partial (%s): %s lacks the families of the keys not scanned", partial, o.out), "")
	}
	return nil
}

// inferFrom scans, samples and infers a draft.
//
// A scan cut short (interrupted, a node failed, --max-keys) still yields
// a draft of what it saw; partial says why it is partial.
func (a *app) inferFrom(ctx context.Context, o initOptions, in *infer.Inference) (d *registry.Draft, schemas map[string][]byte, sum infer.Summary, partial string, err error) {
	ctx, cancel := o.scan.withTimeout(ctx)
	defer cancel()
	// Unlike the audit, init and suggest read values on a primary before
	// redis 7.2 by default: they read at most --sample keys per family,
	// once, and say how many they touched.
	o.scan.conn.allowTouch = !o.noTouch
	src, closeSrc, err := a.openSource(ctx, &o.scan, sourceOptions{})
	if err != nil {
		return nil, nil, sum, "", err
	}
	defer closeSrc()
	if src.snap != nil && o.sample > 0 && slices.Contains(o.scan.rdb, "-") {
		return nil, nil, sum, "", usageError(errors.New("--rdb - is read once, but the values to sample are chosen after the keys: give a file, or --sample 0"), "")
	}
	// A live Redis samples the keys it scanned; the keys of a snapshot
	// to sample are known once every key was seen, and a second pass over
	// the files keeps their values.
	resample := func(context.Context, []infer.Target) audit.Source { return src.Source }
	if src.snap != nil {
		resample = func(ctx context.Context, targets []infer.Target) audit.Source {
			want := make(map[string]bool, len(targets))
			for _, t := range targets {
				want[t.Key] = true
			}
			s := snapshot.NewSource(o.scan.rdb, snapshot.SourceOptions{Sample: len(targets) + 1, SampleLen: 100, MaxValueBytes: o.maxValue})
			_, _ = s.ScanKeys(ctx, func(k string) source.Plan {
				if want[k] {
					return source.Plan{Sample: "*"}
				}
				return source.Plan{}
			}, func([]source.KeyInfo) error { return nil })
			return s
		}
	}
	memory := o.limits || o.memory
	plan := func(string) source.Plan { return source.Plan{Memory: memory} }
	var n atomic.Int64
	stop := a.progressOf(&n, "init: scanned")
	stats, err := src.ScanKeys(ctx, plan, func(batch []source.KeyInfo) error {
		for i := range batch {
			k := &batch[i]
			f := infer.Fact{Key: k.Key, DB: k.DB, Type: k.Type, TTL: k.PTTL, Memory: -1, Len: -1}
			if k.HasMemory {
				f.Memory = k.Memory
			}
			in.Add(f)
		}
		n.Add(int64(len(batch)))
		return nil
	})
	stop()
	switch {
	case err != nil && stats.Keys == 0:
		return nil, nil, sum, "", runtimeError(err, "")
	case err != nil:
		partial = err.Error()
	case stats.Partial:
		partial = "the scan stopped early"
	}
	if partial != "" {
		in.Partial(fmt.Sprintf("the scan stopped after %d keys: %s", stats.Keys, partial))
		ctx = context.WithoutCancel(ctx) // sample what was seen even after Ctrl-C
	}
	targets := in.Candidates(o.sample)
	if o.sample > 0 && len(targets) > 0 && !src.Touch().Blocked() {
		sampler := resample(ctx, targets)
		for _, group := range groupTargets(targets) {
			keys := make([]source.KeyInfo, len(group))
			for i, t := range group {
				// The key's own database: a key of db 1 is read there,
				// not in db 0, which may hold another key of that name.
				keys[i] = source.KeyInfo{Key: t.Key, Type: t.Type, DB: t.DB}
			}
			var (
				ss    []payload.Sample
				names []string
			)
			sampler.SampleEach(ctx, keys, 100, o.maxValue, func(idx []int, got []payload.Sample, errs []error) {
				for j := range got {
					if errs[j] == nil {
						ss = append(ss, got[j])
						names = append(names, keys[idx[j]].Key)
					}
				}
			})
			in.AddSamples(group[0].Candidate, names, ss)
		}
	}
	a.touchNote(o, src, len(targets))
	d, schemas, sum = in.Draft()
	return d, schemas, sum, partial, nil
}

// touchNote says on stderr what sampling did to the eviction state of a
// primary before redis 7.2: the keys whose LRU/LFU state it reset, or,
// under --no-touch, that no value was read.
func (a *app) touchNote(o initOptions, src audit.Source, targets int) {
	st := src.Touch()
	switch {
	case !st.Touches || o.sample == 0 || targets == 0:
	case st.Allowed:
		fmt.Fprintf(a.stderr, "keyreg %s: touched %d keys: reading their values reset their LRU/LFU state (%s; --no-touch reads none)\n", o.name, st.Touched, st.Why)
	default:
		fmt.Fprintf(a.stderr, "keyreg %s: read no value (--no-touch: %s): the families have no encoding or schema\n", o.name, st.Why)
	}
}

// groupTargets splits the sample targets by candidate, in order.
func groupTargets(ts []infer.Target) [][]infer.Target {
	var out [][]infer.Target
	for i := 0; i < len(ts); {
		j := i
		for j < len(ts) && ts[j].Candidate == ts[i].Candidate {
			j++
		}
		out = append(out, ts[i:j])
		i = j
	}
	return out
}

// writeDraft writes the registry and its schema files, refusing to
// overwrite a schema file unless force is set.
func writeDraft(out string, d *registry.Draft, schemas map[string][]byte, force bool) error {
	data, err := d.Marshal()
	if err != nil {
		return runtimeError(err, "")
	}
	return writeDraftFiles(out, data, schemas, force)
}

// writeDraftFiles writes a registry's bytes to out and its new schema
// files beside it, refusing to overwrite a schema file unless force is
// set.
func writeDraftFiles(out string, data []byte, schemas map[string][]byte, force bool) error {
	dir := filepath.Dir(out)
	for name := range schemas {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if _, err := os.Stat(p); err == nil && !force {
			return usageError(fmt.Errorf("%s exists", p), "pass --force to overwrite it")
		}
	}
	for name, b := range schemas {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return runtimeError(err, "")
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return runtimeError(err, "")
		}
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return runtimeError(err, "")
	}
	return nil
}
