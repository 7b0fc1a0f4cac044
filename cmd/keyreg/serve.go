package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync/atomic"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/audit/auditjson"
	"github.com/keyreg/keyreg/internal/secret"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/report"
	"github.com/keyreg/keyreg/serve"
	"github.com/keyreg/keyreg/snapshot"
	"github.com/spf13/cobra"
)

// defaultListen is serve's --listen: loopback, so that exposing the
// exporter is a decision.
const defaultListen = "127.0.0.1:9852"

type serveOptions struct {
	registry  string
	scan      scanSourceFlags
	memory    bool
	sample    int
	maxValue  int64
	top       int
	paths     pathOptions
	targets   []string
	listen    string
	interval  time.Duration
	maxGroups int
	webConfig string
	logFormat string
	// channels is --channels; channelsSet says it was given, true or false.
	channels, channelsSet bool
}

func (a *app) serveCmd() *cobra.Command {
	var o serveOptions
	d := audit.Defaults()
	c := &cobra.Command{
		Use:   "serve",
		Short: "Audit a live Redis on a schedule and serve Prometheus metrics and the latest report",
		Long: `Serve is a long-running exporter: it audits a target (standalone, Cluster,
Sentinel, or a replica with --replica) every --interval, with jitter, one
audit at a time, and serves the last complete audit's figures. --target URL,
repeated, audits several targets, each on its own schedule, with a target
label on its series (/report and /report.json then take ?target=URL).

A scrape never reaches Redis: each complete audit builds its metrics once,
and /metrics hands them out as they are, in the Prometheus text format or
OpenMetrics, as the scraper asks. A slow, failed or partial audit never
blocks a scrape; it shows in keyreg_audit_success, keyreg_audit_partial,
keyreg_audit_duration_seconds and keyreg_audit_last_success_timestamp_seconds,
and the figures stay those of the last complete audit.

Endpoints: /metrics, /report (the last complete audit in HTML), /report.json
(the same as keyreg audit --format json, which keyreg report merge reads),
/healthz, and /readyz (ready after the first complete audit).

The registry file is watched: a change that loads is used from the next
audit on; one that does not load keeps the previous registry and raises
keyreg_registry_load_errors_total. The unregistered keys are exported for
the --max-groups largest prefix groups, the rest as group="other".

When keys.yaml declares channels: (or with --channels), each audit also
reads the Pub/Sub state of every node (PUBSUB CHANNELS, NUMSUB, NUMPAT,
SHARDCHANNELS, SHARDNUMSUB, and the publish counters of INFO commandstats
and CLUSTER INFO) and serves the keyreg_channel_* metrics; a read that
leaves a node unread (the ACL lacks +pubsub) shows in
keyreg_channel_audit_partial and keyreg_channel_nodes_not_checked, and the
channel figures stay those of the last complete read. --channels=false
skips it; a snapshot has no Pub/Sub state.

The connection, TLS, rate and sampling flags are the audit's; --timeout
bounds each audit. Like the audit, serve never writes to Redis. --listen is
loopback by default; --web-config-file takes the Prometheus exporter-toolkit
web configuration (TLS, basic auth). docs/serve.md lists the metrics.

SIGTERM or SIGINT stops it: a running audit is cancelled, requests in
flight finish, and it exits 0. Exit codes: 2 usage or config error (an
invalid registry at start), 3 runtime error (the address cannot be listened on).`,
		Example: `  keyreg serve --url redis://audit:secret@redis.internal:6379 --interval 5m --rate 20000
  keyreg serve --replica --url redis://redis.internal:6379 --listen :9852 --web-config-file web.yml`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			o.channelsSet = c.Flags().Changed("channels")
			return a.runServe(c.Context(), o)
		},
	}
	f := c.Flags()
	registryFlag(f, &o.registry)
	o.scan.addFlags(f, scanFlagHelp{
		rdb:     "audit this RDB snapshot file each interval instead of a live Redis (repeatable, one per shard; not -)",
		match:   "only audit keys matching this Redis glob, as SCAN MATCH takes it (such as 'v1:*')",
		maxKeys: "must stay 0: an audit stopped at a key limit is partial, and a partial audit is never published",
		timeout: "abort an audit after this long; the figures stay those of the last complete one (0: no limit)",
	})
	f.BoolVar(&o.memory, "memory", false, "measure MEMORY USAGE of every key, for keyreg_family_bytes (always done for families with max_bytes)")
	f.IntVar(&o.sample, "sample", d.Sample, "payloads to read and check per family per audit (0: none)")
	f.Int64Var(&o.maxValue, "max-value-bytes", d.MaxValueBytes, "skip and count payloads larger than this (above 0; for a collection, the part read)")
	f.IntVar(&o.top, "top", audit.DefaultTopN, fmt.Sprintf("largest keys the report keeps per measure (0: none; at most %d)", audit.MaxTopN))
	pathPrefixFlag(c, &o.paths)
	f.StringArrayVar(&o.targets, "target", nil, "audit this URL instead of --url (repeatable: one schedule per target, its series labelled target=\"URL\", password hidden); the other connection flags apply to every target")
	f.StringVar(&o.listen, "listen", defaultListen, "address to serve the endpoints on")
	f.DurationVar(&o.interval, "interval", serve.DefaultInterval, "time between audits, give or take 10% of jitter")
	f.IntVar(&o.maxGroups, "max-groups", serve.DefaultMaxGroups, fmt.Sprintf("unregistered prefix groups exported as series, the rest as group=\"other\" (1 to %d)", serve.MaxMaxGroups))
	f.StringVar(&o.webConfig, "web-config-file", "", "exporter-toolkit web configuration file: TLS and basic auth of the listener")
	f.StringVar(&o.logFormat, "log-format", "text", "log format on stderr: text or json")
	f.BoolVar(&o.channels, "channels", false, "also read the Pub/Sub channels of every node each audit, for the keyreg_channel_* metrics (default: on when the registry declares channels; --channels=false skips)")
	return c
}

func (a *app) runServe(ctx context.Context, o serveOptions) error {
	if !slices.Contains([]string{"text", "json"}, o.logFormat) {
		return usageError(fmt.Errorf("bad --log-format %q (want text or json)", o.logFormat), "")
	}
	if o.interval < time.Second {
		return usageError(fmt.Errorf("--interval %v is under a second", o.interval), "")
	}
	if o.maxGroups < 1 || o.maxGroups > serve.MaxMaxGroups {
		return usageError(fmt.Errorf("--max-groups %d is not between 1 and %d", o.maxGroups, serve.MaxMaxGroups), "")
	}
	if o.scan.maxKeys > 0 {
		return usageError(errors.New("--max-keys makes every audit partial, and serve publishes complete audits only"), "narrow the audit with --match, or bound it with --rate and --timeout")
	}
	if slices.Contains(o.scan.rdb, "-") {
		return usageError(errors.New("--rdb - cannot be read once per interval"), "give the snapshot as a file")
	}
	if o.sample < 0 {
		return usageError(fmt.Errorf("--sample %d is negative", o.sample), "--sample 0 reads no payload")
	}
	if o.maxValue <= 0 {
		return usageError(fmt.Errorf("--max-value-bytes %d is not above 0", o.maxValue), "every sampled value is bounded; the default is 1048576")
	}
	top, err := topFlag(o.top)
	if err != nil {
		return err
	}
	if err := serve.ValidateWebConfig(o.webConfig); err != nil {
		return usageError(fmt.Errorf("--web-config-file: %w", err), "")
	}
	chMode := serve.ChannelsAuto
	switch {
	case o.channelsSet && o.channels:
		chMode = serve.ChannelsOn
	case o.channelsSet:
		chMode = serve.ChannelsOff
	}
	log := newLogger(a.stderr, o.logFormat)
	ao := audit.Defaults()
	ao.Sample, ao.MaxValueBytes, ao.Filtered, ao.Memory, ao.Top = o.sample, o.maxValue, o.scan.match != "", o.memory, top
	if o.scan.snapshot() {
		if chMode == serve.ChannelsOn {
			return usageError(errors.New("--channels needs a live Redis: a snapshot holds no Pub/Sub state"), "drop --channels, or serve the live server")
		}
		chMode = serve.ChannelsOff
		// Said in every report of a registry with channels, as audit does.
		ao.ChannelsNote = "channels not audited: a snapshot holds no Pub/Sub state (serve the live server for them)"
	}
	targets, err := a.serveTargets(&o, ao)
	if err != nil {
		return err
	}
	tool := report.Tool{Name: "keyreg", Version: toolVersion(), InformationURI: "https://github.com/keyreg/keyreg"}
	e, err := serve.New(serve.Options{
		Registry:  o.registry,
		Load:      func() (*registry.Registry, error) { return loadRegistryAs(o.registry, o.paths) },
		Targets:   targets,
		Audit:     ao,
		Interval:  o.interval,
		Jitter:    serve.DefaultJitter,
		Timeout:   o.scan.timeout,
		MaxGroups: o.maxGroups,
		Channels:  chMode,
		HTML: func(w io.Writer, r *audit.Report) error {
			return report.Audit(w, report.HTML, r, report.Options{Tool: tool, Rules: ruleInfos()})
		},
		Tool:     auditjson.Tool{Name: tool.Name, Version: tool.Version},
		Logger:   log,
		Progress: a.serveProgress(),
	})
	if err != nil {
		return err // the registry's own error: usage (invalid) or runtime
	}
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return runtimeError(fmt.Errorf("--listen %s: %w", o.listen, err), "")
	}
	log.Info("listening", "addr", l.Addr().String(), "interval", o.interval, "registry", o.registry)
	parent := ctx
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	audits := make(chan struct{})
	go func() {
		defer close(audits)
		e.Run(ctx)
	}()
	serr := serve.Serve(ctx, l, e.Handler(), o.webConfig, log)
	stop()
	<-audits
	if serr != nil && parent.Err() == nil {
		return runtimeError(serr, "")
	}
	log.Info("stopped")
	return nil
}

// serveTargets are --target's URLs, each with the other connection flags,
// or the one target of --url.
func (a *app) serveTargets(o *serveOptions, ao audit.Options) ([]serve.Target, error) {
	open := func(scan scanSourceFlags) func(context.Context) (*serve.Source, error) {
		return func(ctx context.Context) (*serve.Source, error) {
			src, closeSrc, err := a.openSource(ctx, &scan, sourceOptions{
				snapshot: snapshot.SourceOptions{Sample: o.sample, SampleLen: ao.SampleLen, MaxValueBytes: o.maxValue},
			})
			if err != nil {
				return nil, err
			}
			s := &serve.Source{Source: src.Source, Target: src.target, Mode: src.mode, Close: closeSrc}
			if src.live != nil {
				s.Channels = src.live.Channels
			}
			return s, nil
		}
	}
	if len(o.targets) == 0 {
		return []serve.Target{{Open: open(o.scan)}}, nil
	}
	if o.scan.conn.url != "" || o.scan.snapshot() {
		return nil, usageError(errors.New("--target names every target: --url and --rdb do not go with it"), "")
	}
	var ts []serve.Target
	seen := map[string]bool{}
	for _, u := range o.targets {
		name := secret.URLString(u)
		if u == "" || seen[name] {
			return nil, usageError(fmt.Errorf("--target %q is empty or given twice", name), "")
		}
		seen[name] = true
		scan := o.scan
		scan.conn.url = u
		ts = append(ts, serve.Target{Name: name, Open: open(scan)})
	}
	if len(ts) == 1 {
		ts[0].Name = "" // one target: no target label, as with --url
	}
	return ts, nil
}

// serveProgress is the audits' progress hook: the tests' a.audited, with
// the keys counted per audit.
func (a *app) serveProgress() func(int) {
	if a.audited == nil {
		return nil
	}
	var total atomic.Int64 // summed over the targets, which audit concurrently
	return func(n int) {
		a.audited(total.Add(int64(n)))
	}
}

// newLogger is serve's structured log on stderr.
func newLogger(w io.Writer, format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}
