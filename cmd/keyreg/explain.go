package main

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/explain"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/scanner"
	"github.com/keyreg/keyreg/snapshot"

	"github.com/keyreg/keyreg/report"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type explainOptions struct {
	registry   string
	format     string
	live       bool
	showValues bool
	scan       scanSourceFlags
	noTouch    bool
	channel    string
}

func (a *app) explainCmd() *cobra.Command {
	var o explainOptions
	c := &cobra.Command{
		Use:   "explain <key> | --channel NAME",
		Short: "Tell who owns a key and what its rules are",
		Long: `Explain looks a key up in the registry and prints its family, owner and
contact, bound placeholders, type, encoding, TTL policy, payload schema,
limits, deprecation and the keys.yaml line that declares it.

When no family matches, it names the closest family and why it failed,
and exits 1.

With --live it also reads the key from Redis (read-only): its type, TTL,
memory, idle time, length, the encoding its value is in, and the verdict
of every key rule, decided exactly as keyreg audit decides it. The
verdict is ok, findings, incomplete (a check did not run: "not checked"
says which and why) or absent. It exits 1 when a rule fires at error
severity, else 3 when a check did not run. On a primary before redis 7.2
reading the value resets the key's LRU/LFU state: explain reads it anyway
and says so ("touched"), unless --no-touch. It reads one database: --db,
else the one in the URL, else 0. For a lock (kind: lock) it shows the lease
left, the shape of the holder's token (such as uuid or "text 20 bytes",
never the token) and the value of its fence; for a fence, its value; for
a stream with groups, each declared group's lag, pending entries and the
idlest consumer that holds some.

With --rdb FILE it reads the key from an RDB snapshot instead (the first
database that holds it), and checks it as keyreg audit --rdb does: TTLs as
of the snapshot's creation time, sizes as the file holds them.

With --channel NAME it explains a Pub/Sub channel instead of a key: the
channel declaration (channels: in keys.yaml) that NAME belongs to, its
owner and contact, bound placeholders, mode (the publish and subscribe
commands: PUBLISH/SUBSCRIBE, SPUBLISH/SSUBSCRIBE or PSUBSCRIBE with its
glob), encoding, schema and deprecation. A name no channel declares
exits 1. --channel reads nothing from Redis.`,
		Example: `  keyreg explain v2:user:session:0b6f1c1e-8a9d-4c47-9f5e-2b1d7a3c9e10
  keyreg explain --format json 'v1:cart:{42}:items'
  keyreg explain --live --url "$REDIS_URL" v1:lock:orders
  keyreg explain --channel 'v1:chat:room:{42}'`,
		Args: args(cobra.RangeArgs(0, 1)),
		RunE: func(c *cobra.Command, args []string) error {
			if o.channel != "" {
				if len(args) > 0 {
					return usageError(fmt.Errorf("explain takes a key or --channel NAME, not both"), "")
				}
				return a.runExplainChannel(o)
			}
			if len(args) != 1 {
				return usageError(fmt.Errorf("explain needs a key, or --channel NAME"), fmt.Sprintf("run %s --help for usage", c.CommandPath()))
			}
			return a.runExplain(c.Context(), args[0], o)
		},
		ValidArgsFunction: completeKeys,
	}
	registryFlag(c.Flags(), &o.registry)
	c.Flags().StringVar(&o.channel, "channel", "", "explain this Pub/Sub channel name (channels: in keys.yaml) instead of a key")
	c.Flags().BoolVar(&o.live, "live", false, "also read the key from Redis and check it against the key rules")
	c.Flags().BoolVar(&o.showValues, "show-values", false, "with --live or --rdb, include a lock's token and payload values in the verdicts (off: never printed)")
	o.scan.addFlags(c.Flags(), scanFlagHelp{rdb: "read the key from this RDB snapshot instead of a live Redis, and check it as audit --rdb does (repeatable; - reads standard input)"})
	touchFlags(c.Flags(), &o.noTouch, "explain reads the key's value, length and groups")
	// Explain reads one key, so one database, unlike the audit.
	c.Flags().Lookup("db").Usage = "logical database to read the key from (default: the URL's, else 0)"
	formatFlag(c, &o.format, "text", report.DocExplain, "output format: "+report.FormatList(report.DocExplain))
	return c
}

func (a *app) runExplain(ctx context.Context, key string, o explainOptions) error {
	format, err := report.ParseFormat(o.format, report.Formats(report.DocExplain)...)
	if err != nil {
		return usageError(err, "")
	}
	reg, err := loadRegistry(o.registry)
	if err != nil {
		return err
	}
	e := explain.Explain(reg, key)
	fail := !e.Matched
	if o.scan.snapshot() || o.live {
		ao := audit.Defaults()
		ao.ShowValues = o.showValues
		// The audit's probe plan (the length of collections with max_len,
		// MEMORY USAGE, OBJECT IDLETIME), so the rules see what the audit's do.
		plan := audit.Plan(reg, true)
		o.scan.conn.allowTouch = !o.noTouch
		src, closeSrc, err := a.openSource(ctx, &o.scan, sourceOptions{
			snapshot: snapshot.SourceOptions{Sample: 1, SampleLen: max(ao.SampleLen, 10), MaxValueBytes: ao.MaxValueBytes},
			probe:    scanner.Plan{Idle: true, Memory: true},
			plan:     plan,
		})
		if err != nil {
			return err
		}
		defer closeSrc()
		p, err := src.prober(ctx, key, plan)
		if err != nil {
			return runtimeError(err, "")
		}
		kc, err := audit.CheckKey(ctx, p, reg, key, ao)
		if err != nil {
			return runtimeError(err, "")
		}
		touch := src.Touch()
		why := ""
		if touch.Blocked() {
			why = touch.Why
		}
		e.Live = explain.Live(kc, reg, why, src.snap != nil)
		e.Live.Touched = touch.Touched // 0 for a snapshot, which touches nothing
		if src.snap != nil {
			e.Live.Source = src.target
		}
		for _, f := range kc.Findings {
			fail = fail || (f.Severity == diag.Error && !f.Suppressed)
		}
	}
	if err := report.WriteExplanation(a.stdout, format, e, report.Options{}); err != nil {
		return runtimeError(err, "")
	}
	if fail {
		return errFindings
	}
	if e.Live != nil && len(e.Live.NotChecked) > 0 {
		var rules []string
		for _, n := range e.Live.NotChecked {
			rules = append(rules, n.Rules...)
		}
		return runtimeError(fmt.Errorf("not every check ran on the key: %s not checked (see \"not checked\" above)", strings.Join(rules, ", ")), "")
	}
	return nil
}

// runExplainChannel explains a channel name from the registry alone.
func (a *app) runExplainChannel(o explainOptions) error {
	format, err := report.ParseFormat(o.format, report.Formats(report.DocExplain)...)
	if err != nil {
		return usageError(err, "")
	}
	if o.live || o.scan.snapshot() {
		return usageError(fmt.Errorf("--channel reads the registry only: --live and --rdb do not apply (keyreg audit --channels reads live channels)"), "")
	}
	reg, err := loadRegistry(o.registry)
	if err != nil {
		return err
	}
	e := explain.Channel(reg, o.channel)
	if err := report.WriteExplanation(a.stdout, format, e, report.Options{}); err != nil {
		return runtimeError(err, "")
	}
	if !e.Matched {
		return errFindings
	}
	return nil
}

// touchFlags adds --no-touch to an interactive command (explain --live,
// init, suggest), which, unlike the audit, reads values on a primary before
// redis 7.2 by default: it reads a bounded number of keys and says how
// many it touched. --allow-touch, the audit's opt-in, stays accepted and
// hidden: it is the default here.
func touchFlags(f *pflag.FlagSet, noTouch *bool, what string) {
	f.BoolVar(noTouch, "no-touch", false, "on a primary before redis 7.2, read no value or length, which would reset those keys' LRU/LFU state (by default "+what+" and counts the keys touched)")
	_ = f.MarkHidden("allow-touch")
}

// completeKeys completes the key argument of explain from the registry's
// families: the literal start of each pattern (up to its first
// placeholder), described by the families it leads to, so that TAB
// offers v2:user:session: for user-session. A fully literal pattern is a
// whole key and ends the word.
func completeKeys(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	p, _ := registryOf(c)
	reg, err := registry.LoadFile(p)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var order []string
	names := map[string][]string{}
	whole := map[string]bool{}
	for _, f := range reg.Families {
		if f.Pattern == nil {
			continue
		}
		lit := f.Pattern.LiteralPrefix()
		if lit == "" || !strings.HasPrefix(lit, prefix) || strings.ContainsFunc(lit, func(r rune) bool { return r < 0x20 || r == 0x7f || r == utf8.RuneError }) {
			continue
		}
		if _, ok := names[lit]; !ok {
			order = append(order, lit)
		}
		names[lit] = append(names[lit], f.Name)
		whole[lit] = len(f.Pattern.Parts) == 1
	}
	var out []string
	directive := cobra.ShellCompDirectiveNoFileComp
	for _, lit := range order {
		fams := names[lit]
		desc := strings.Join(fams, ", ")
		if len(fams) > 3 {
			desc = strings.Join(fams[:3], ", ") + fmt.Sprintf(" and %d more", len(fams)-3)
		}
		out = append(out, lit+"\t"+desc)
		if !whole[lit] {
			directive |= cobra.ShellCompDirectiveNoSpace
		}
		if len(out) == maxCompletions {
			break
		}
	}
	return out, directive
}
