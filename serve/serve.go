// Package serve is keyreg serve: a long-running exporter that audits its
// targets on their own schedule and serves the last complete audit's figures
// as Prometheus metrics, with the latest report in HTML and json.
//
// A scrape never talks to Redis: every audit builds its metrics once, into
// a snapshot encoded once per format that /metrics writes as it is, so a
// scrape costs the same whatever the keyspace holds, and a slow, failed or hung
// audit only shows in the keyreg_audit_* gauges. Audits run one at a time,
// per target, every Interval with jitter; the registry file is watched, and a change
// that loads is used from the next audit on. The package never prints: it
// logs through the slog.Logger it is given.
package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/audit/auditjson"
	"github.com/keyreg/keyreg/internal/secret"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// Defaults of Options.
const (
	DefaultInterval  = 5 * time.Minute
	DefaultMaxGroups = 20
	DefaultJitter    = 0.1
	DefaultWatch     = 2 * time.Second
	// MaxMaxGroups bounds --max-groups: the groups are series of every
	// scrape, and the audit keeps at most audit.Defaults().MaxGroups.
	MaxMaxGroups = 1000
)

// Source is an opened audit source with the names the report gives it.
type Source struct {
	audit.Source
	Target, Mode string
	Close        func()
	// Channels reads the Pub/Sub state of every node (scanner.Conn.Channels);
	// nil for a source that has none (a snapshot).
	Channels func(context.Context) ([]source.NodeChannels, error)
}

// Options configure an Exporter.
type Options struct {
	// Registry is the keys.yaml path, watched for changes; Load loads it
	// (with the caller's path options) and returns an error that says
	// file:line:col.
	Registry string
	Load     func() (*registry.Registry, error)
	// Targets are the instances to audit, each on its own schedule; at
	// least one.
	Targets []Target
	// Audit is the template of every run's options (sample, memory, top);
	// Registry, Target, Mode and Progress are set per run.
	Audit audit.Options
	// Interval is the time between the end of one audit and the start of
	// the next, give or take Jitter (a fraction of it, 0.1 by default).
	Interval time.Duration
	Jitter   float64
	// Timeout bounds one audit (0: none).
	Timeout time.Duration
	// MaxGroups caps the unregistered prefix groups exported as series;
	// the rest are summed under group="other" (and the unregistered
	// channel prefixes the same way, under prefix="other").
	MaxGroups int
	// Channels says when a cycle also reads the channels of every node,
	// after the keys: by default when the registry declares channels.
	Channels ChannelsMode
	// Watch is how often the registry file is checked for a change.
	Watch time.Duration
	// HTML renders the /report page of a report.
	HTML func(w io.Writer, r *audit.Report) error
	// Tool names keyreg in the json report.
	Tool   auditjson.Tool
	Logger *slog.Logger
	// Progress, when set, is audit.Options.Progress of every run: tests
	// hold an audit mid-run there.
	Progress func(keys int)
}

// Target is one instance to audit.
type Target struct {
	// Name is the target label of its series, when there are several
	// targets (the URL, password hidden); the only target has none.
	Name string
	// Open connects to the target for one audit; the exporter closes it
	// after the audit. A new connection per audit rides out restarts.
	Open func(ctx context.Context) (*Source, error)
}

// Exporter runs the audits and holds what the endpoints serve.
type Exporter struct {
	o   Options
	log *slog.Logger

	reg     atomic.Pointer[registry.Registry]
	regStat fileStat // of the last load attempt; the watcher's alone
	regSt   struct {
		mu         sync.Mutex
		loadErrors int64
		lastLoadOK time.Time
	}

	targets []*target

	// expo is every target's last complete audit encoded for /metrics;
	// expoMu serialises its rebuilds, one per complete audit of any target.
	expo   atomic.Pointer[exposition]
	expoMu sync.Mutex
}

// target is one target's audits and what they published.
type target struct {
	Target
	log  *slog.Logger
	last atomic.Pointer[published] // the last complete audit; nil before
	// chLast is the last complete channel read's metrics; nil before, and
	// when a cycle no longer reads the channels.
	chLast atomic.Pointer[snapshot]
	st     status
}

// published is everything one complete audit serves: built once, handed
// out as it is by every request until the next complete audit.
type published struct {
	report  *audit.Report
	metrics *snapshot
	json    []byte
	html    []byte
	end     time.Time
}

// status is the state of the audits themselves, read by every scrape.
type status struct {
	mu          sync.Mutex
	attempted   bool
	success     bool
	partial     bool
	duration    time.Duration
	running     bool
	audits      map[string]int64 // by result: success, partial, error
	lastSuccess time.Time
	ch          chanStatus
}

// New loads the registry and returns an exporter that has not audited yet.
// A registry that does not load is an error here: the exporter never
// starts without one.
func New(o Options) (*Exporter, error) {
	if o.Load == nil || len(o.Targets) == 0 {
		return nil, errors.New("serve: Load and a target are required")
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Jitter < 0 || o.Jitter >= 1 {
		return nil, fmt.Errorf("serve: jitter %v is not in [0, 1)", o.Jitter)
	}
	if o.MaxGroups <= 0 {
		o.MaxGroups = DefaultMaxGroups
	}
	o.MaxGroups = min(o.MaxGroups, MaxMaxGroups)
	if o.Watch <= 0 {
		o.Watch = DefaultWatch
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Exporter{o: o, log: o.Logger}
	e.expo.Store(&exposition{})
	names := map[string]bool{}
	for _, t := range o.Targets {
		if t.Open == nil || names[t.Name] || (t.Name == "") != (len(o.Targets) == 1) {
			return nil, errors.New("serve: every target needs Open and, when there are several, a name of its own")
		}
		names[t.Name] = true
		tg := &target{Target: t, log: e.log}
		if t.Name != "" {
			tg.log = e.log.With("target", t.Name)
		}
		tg.st.audits = map[string]int64{}
		e.targets = append(e.targets, tg)
	}
	e.regStat = statOf(o.Registry)
	reg, err := o.Load()
	if err != nil {
		return nil, err
	}
	e.reg.Store(reg)
	e.regSt.lastLoadOK = time.Now()
	return e, nil
}

// Run audits every target every Interval, and watches the registry, until
// ctx ends; it returns once the running audits have returned (their reads
// are cancelled with ctx).
func (e *Exporter) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { e.watch(ctx) })
	for _, t := range e.targets {
		wg.Go(func() { e.schedule(ctx, t) })
	}
	wg.Wait()
}

// schedule runs t's audits, one at a time, until ctx ends.
func (e *Exporter) schedule(ctx context.Context, t *target) {
	for {
		e.auditOnce(ctx, t)
		t := time.NewTimer(e.nextWait())
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// nextWait is Interval with its jitter: uniform in Interval × [1-J, 1+J],
// so that exporters started together drift apart.
func (e *Exporter) nextWait() time.Duration {
	if e.o.Jitter == 0 {
		return e.o.Interval
	}
	f := 1 + e.o.Jitter*(2*rand.Float64()-1)
	return time.Duration(float64(e.o.Interval) * f)
}

// auditOnce runs one audit and publishes it when it is complete; a failed
// or partial one only updates the status, keeping the figures of the last
// complete audit.
func (e *Exporter) auditOnce(ctx context.Context, t *target) {
	if ctx.Err() != nil {
		return
	}
	reg := e.reg.Load()
	actx, cancel := ctx, context.CancelFunc(func() {})
	if e.o.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, e.o.Timeout)
	}
	defer cancel()
	t.setRunning(true)
	start := time.Now()
	rep, rd, err := e.runAudit(actx, t, reg)
	d := time.Since(start)
	if ctx.Err() != nil {
		// Shutting down: an interrupted audit is no outcome to report.
		t.setRunning(false)
		t.log.Info("audit cancelled by shutdown", "duration", d)
		return
	}
	// The channels are published on their own: a refused PUBSUB leaves
	// the key figures fresh, and a failed key audit the channel ones. Their
	// status changes once their figures are out, whatever the keys did.
	chSnap := e.channelSnapshot(t, reg, rd)
	defer t.channelsDone(rd)
	if err == nil && rep.Partial {
		err = errors.New(rep.PartialReason)
	}
	if err != nil {
		partial := rep != nil && rep.Partial
		if chSnap != nil {
			if perr := e.publishTo(t, nil, chSnap); perr != nil {
				t.log.Error("channel metrics could not be encoded", "err", perr)
			}
		}
		t.finish(false, partial, d, time.Time{})
		t.log.Error("audit failed", "partial", partial, "duration", d, "err", secret.Redact(err.Error()))
		return
	}
	if rd != nil {
		if rd.err == nil {
			audit.AddChannels(rep, reg, rd.cr) // complete: the report's channel section
		} else {
			rep.Scan.Notes = append(rep.Scan.Notes, "channels not in this report: "+label(secret.Redact(rd.err.Error())))
		}
	}
	p, perr := e.publish(rep, reg)
	if perr != nil {
		t.finish(false, false, d, time.Time{})
		t.log.Error("audit report could not be rendered", "err", perr)
		return
	}
	if err := e.publishTo(t, p, chSnap); err != nil {
		t.finish(false, false, d, time.Time{})
		t.log.Error("audit metrics could not be encoded", "err", err)
		return
	}
	t.finish(true, false, d, p.end)
	t.log.Info("audit complete", "keys", rep.Scan.Keys, "families", len(rep.Families),
		"unregistered", rep.Unregistered.Keys, "findings", rep.Totals.Errors+rep.Totals.Warnings+rep.Totals.Infos,
		"duration", d)
}

// runAudit opens the target and audits it once: its keys, then, when the
// cycle reads them, its channels (nil when it does not), even after a
// failed key audit.
func (e *Exporter) runAudit(ctx context.Context, t *target, reg *registry.Registry) (*audit.Report, *channelRead, error) {
	var rd *channelRead
	src, err := t.Open(ctx)
	if err != nil {
		if e.channelsWanted(reg) {
			rd = &channelRead{err: err}
		}
		return nil, rd, err
	}
	if src.Close != nil {
		defer src.Close()
	}
	ao := e.o.Audit
	ao.Registry, ao.Target, ao.Mode = reg.File, src.Target, src.Mode
	ao.Progress = e.o.Progress
	ao.Channels = nil // read below, published on their own
	if len(reg.Channels) == 0 {
		ao.ChannelsNote = "" // no channels declared: nothing left unaudited
	}
	rep, err := audit.Run(ctx, src.Source, reg, ao)
	if e.channelsWanted(reg) {
		rd = readChannels(ctx, src, reg)
	}
	return rep, rd, err
}

// channelSnapshot is the channel metrics a cycle publishes: a complete
// read's, an empty snapshot that drops the last read's series when the
// cycle read no channels, or nil to keep what is published (an incomplete
// read, whose figures would read as channels gone; its status says so).
// It is built without t's status lock, which every scrape takes.
func (e *Exporter) channelSnapshot(t *target, reg *registry.Registry, rd *channelRead) *snapshot {
	switch {
	case rd == nil && t.chLast.Load() != nil:
		return &snapshot{}
	case rd == nil:
		return nil
	case rd.err != nil:
		t.log.Error("channel read incomplete; the channel figures stay those of the last complete read",
			"nodes_not_checked", rd.notChecked(), "err", secret.Redact(rd.err.Error()))
		return nil
	}
	t.log.Info("channels read", "nodes", rd.cr.Nodes, "live", len(rd.cr.Channels), "findings", len(rd.cr.Findings))
	return newChannelSnapshot(reg, rd.cr, rd.nodes, e.o.MaxGroups)
}

// channelsDone records a cycle's channel read (nil: none) in t's status.
func (t *target) channelsDone(rd *channelRead) {
	st := &t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if rd == nil {
		st.ch = chanStatus{}
		return
	}
	st.ch.attempted, st.ch.success, st.ch.notChecked = true, rd.err == nil, rd.notChecked()
	if rd.err == nil {
		st.ch.lastSuccess = time.Now()
	}
}

// publish renders what the endpoints serve of a complete audit.
func (e *Exporter) publish(rep *audit.Report, reg *registry.Registry) (*published, error) {
	p := &published{report: rep, end: rep.Started.Add(rep.Scan.Duration), metrics: newSnapshot(rep, e.o.MaxGroups)}
	var b bytes.Buffer
	if err := auditjson.Encode(&b, rep, nil, e.o.Tool); err != nil {
		return nil, err
	}
	p.json = bytes.Clone(b.Bytes())
	if e.o.HTML != nil {
		b.Reset()
		if err := e.o.HTML(&b, rep); err != nil {
			return nil, err
		}
		p.html = bytes.Clone(b.Bytes())
	}
	return p, nil
}

func (t *target) setRunning(r bool) {
	t.st.mu.Lock()
	t.st.running = r
	t.st.mu.Unlock()
}

func (t *target) finish(success, partial bool, d time.Duration, end time.Time) {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	t.st.running = false
	t.st.attempted, t.st.success, t.st.partial, t.st.duration = true, success, partial, d
	switch {
	case success:
		t.st.audits["success"]++
		t.st.lastSuccess = end
	case partial:
		t.st.audits["partial"]++
	default:
		t.st.audits["error"]++
	}
}

// Ready says whether every target has a complete audit published.
func (e *Exporter) Ready() bool {
	for _, t := range e.targets {
		if t.last.Load() == nil {
			return false
		}
	}
	return true
}

// fileStat identifies one version of the registry file, as cheaply as a
// stat can: an edit in place changes the time or size, an editor's
// rename the inode.
type fileStat struct {
	ok    bool
	mod   time.Time
	size  int64
	inode uint64
}

func statOf(path string) fileStat {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStat{}
	}
	return fileStat{ok: true, mod: fi.ModTime(), size: fi.Size(), inode: inode(fi)}
}

// watch checks the registry file every Watch and loads it when it changed.
// A version that does not load is counted once and logged, and the old
// registry stays; the next change is tried again.
func (e *Exporter) watch(ctx context.Context) {
	if e.o.Registry == "" {
		return
	}
	t := time.NewTicker(e.o.Watch)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s := statOf(e.o.Registry)
		if s == e.regStat {
			continue
		}
		e.regStat = s
		reg, err := e.o.Load()
		if err != nil {
			e.regSt.mu.Lock()
			e.regSt.loadErrors++
			e.regSt.mu.Unlock()
			e.log.Error("registry changed but does not load; keeping the previous one", "registry", e.o.Registry, "err", err)
			continue
		}
		e.reg.Store(reg)
		e.regSt.mu.Lock()
		e.regSt.lastLoadOK = time.Now()
		e.regSt.mu.Unlock()
		e.log.Info("registry reloaded; used from the next audit", "registry", e.o.Registry, "families", len(reg.Families))
	}
}
