package main

import (
	"context"
	"fmt"
	"time"

	"github.com/keyreg/keyreg"
	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/internal/demo"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/report"
	"github.com/keyreg/keyreg/scanner"
	"github.com/keyreg/keyreg/source"
	"github.com/spf13/cobra"
)

type demoOptions struct {
	seed   uint64
	keys   int
	format string
	failOn string
}

func (a *app) demoCmd() *cobra.Command {
	var o demoOptions
	c := &cobra.Command{
		Use:   "demo",
		Short: "Audit an embedded, seeded Redis against the example keys.yaml (needs nothing installed)",
		Long: `Demo shows what keyreg audit reports, without a Redis server or a keys.yaml of
your own. It starts an embedded Redis (miniredis) inside the keyreg process,
fills it from the example registry built into keyreg (the keys.yaml of the
keyreg repository, with its owners and payload schemas), and runs the same
audit as keyreg audit, through the same scanner, over a real connection.

The keyspace has --keys clean keys per family, with values generated from each
family's payload schema, plus a few planted problems of every kind the audit
reports:

  - keys without a TTL, with a TTL over the policy's max, or with a TTL in a
    persistent family
  - keys of the wrong Redis type, and keys whose placeholder values have the
    wrong type (a user ID where the session UUID belongs)
  - payloads that break their JSON Schema, and payloads in another encoding
    (a Python pickle and msgpack values in json families)
  - oversized values, over-long collections, stale keys
  - keys of the deprecated user-session-v1 family after its sunset
  - about thirty unregistered keys in four prefix groups

The same --seed gives the same keys and values. Nothing is written to disk
and the embedded Redis is gone when the command ends.

Exit codes: every finding in the demo is planted, so demo exits 0 when the
audit ran (--fail-on defaults to never here; pass --fail-on error to see the
exit code keyreg audit would give). 2 is a usage error, 3 a runtime error.

To audit your own Redis: keyreg audit --url redis://host:6379 --registry keys.yaml`,
		Example: `  keyreg demo
  keyreg demo --format json | jq '.findings[] | {rule, family, count}'
  keyreg demo --seed 7 --keys 50 --format markdown > demo.md`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return a.runDemo(c.Context(), o)
		},
	}
	f := c.Flags()
	f.Uint64Var(&o.seed, "seed", demo.DefaultSeed, "random seed of the keyspace: the same seed gives the same keys")
	f.IntVar(&o.keys, "keys", demo.DefaultKeys, "clean keys per family")
	formatFlag(c, &o.format, "", report.DocAudit, report.FormatList(report.DocAudit)+" (default: table on a terminal, else text)")
	f.StringVar(&o.failOn, "fail-on", "never", "exit 1 on findings of this severity or above: error, warn, info or never")
	return c
}

func (a *app) runDemo(ctx context.Context, o demoOptions) error {
	outs, threshold, err := a.auditOutput(&outputOptions{doc: report.DocAudit, format: o.format}, o.failOn)
	if err != nil {
		return err
	}
	defer outs.discard()
	if o.keys < 1 || o.keys > 10_000 {
		return usageError(fmt.Errorf("bad --keys %d (want 1 to 10000)", o.keys), "")
	}
	if o.seed == 0 {
		return usageError(fmt.Errorf("bad --seed 0 (want a positive number)"), "")
	}
	reg, err := registry.Load(keyreg.Example, "keys.yaml")
	if err != nil {
		return runtimeError(fmt.Errorf("loading the example registry: %w", err), "")
	}

	now := time.Now()
	srv, err := demo.Start(reg, demo.Options{Seed: o.seed, Keys: o.keys, Now: now})
	if err != nil {
		return runtimeError(err, "")
	}
	defer srv.Close()
	planted := srv.Planted
	fmt.Fprintf(a.stderr, "keyreg demo: seeded %d keys into an embedded Redis; auditing against the example keys.yaml\n", len(planted.Keys))

	// An in-process miniredis has no eviction state to disturb.
	so := scanner.Options{URL: srv.URL(), AllowTouch: true}
	conn, err := scanner.Connect(ctx, so)
	if err != nil {
		return runtimeError(fmt.Errorf("connecting to the embedded redis: %w", err), "")
	}
	defer conn.Close()

	ao := audit.Defaults()
	ao.Registry, ao.Target, ao.Mode = reg.File, so.URL, conn.Mode()
	// Memory of every key, as --memory does, so the report shows it per
	// family and owner (miniredis estimates it roughly).
	ao.Now, ao.Memory = now, true
	// Read every key's payload, so every planted payload problem shows.
	ao.Sample = max(ao.Sample, planted.MaxFamilyKeys())
	return a.audit(ctx, untouchable{conn}, reg, ao, outs, threshold)
}

// untouchable is the embedded server as an audit source. The scanner
// cannot tell that miniredis keeps no LRU/LFU state (it does not say it
// has CLIENT NO-TOUCH), so it is opened with AllowTouch; its reads touch
// nothing, and the report must not claim an --allow-touch nobody gave.
type untouchable struct{ *scanner.Conn }

func (untouchable) Touch() source.TouchState { return source.TouchState{} }
