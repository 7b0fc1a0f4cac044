// Package audit runs one audit of a live Redis against the registry: it
// streams scanner batches, matches each key to its family, applies the key
// rules and aggregates the findings into a Report whose size is bounded by
// the number of families, never by the number of keys.
package audit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
	"github.com/keyreg/keyreg/source"
)

// Options tunes one run. The zero value samples nothing; see Defaults.
type Options struct {
	Registry string // keys.yaml path, for the report
	Target   string // the Redis URL with its password redacted, for the report
	Mode     string // standalone, cluster or sentinel, for the report

	// FleetTarget is the target's name in a fleet's target list (keyreg
	// audit --target-list), for the report; "" otherwise.
	FleetTarget string

	// Sample is the number of keys per family whose payload is read and
	// checked; 0 reads no payload.
	Sample int
	// SampleLen is the number of elements read per sampled collection.
	SampleLen int
	// MaxValueBytes skips (and counts) payloads larger than this.
	MaxValueBytes int64
	// Examples is the number of example keys kept per finding.
	Examples int
	// MaxGroups caps the prefix groups of unregistered keys; keys of
	// further prefixes are counted as other.
	MaxGroups int
	// ShowValues lets payload values into finding details. Off by default:
	// reports never carry values.
	ShowValues bool
	// Top is the number of largest keys the report keeps by each measure
	// (bytes, elements): 0 means DefaultTopN, a negative number none; at
	// most MaxTopN.
	Top int
	// Memory measures the memory of every key, not only of families with
	// max_bytes (--memory).
	Memory bool
	// Filtered says the scan covers part of the keyspace (--match), so an
	// absent family does not mean an unused one.
	Filtered bool
	// Now is the audit time, for deprecation sunsets; zero means time.Now.
	Now time.Time
	// Progress, when set, is called with the number of keys of every batch
	// once it is audited, before the audit takes the next one. It runs on
	// the goroutine that audits the batches, one call at a time; while it
	// blocks, so does the audit (and, through back-pressure, the scan), so
	// a test can inject a fault at a known point of the audit.
	Progress func(keys int)
	// Channels, when set, reads the Pub/Sub state of every node once the
	// key scan is done (scanner.Conn.Channels): the channel audit then
	// runs in the same run, and its section and findings join the report.
	Channels func(context.Context) ([]source.NodeChannels, error)
	// ChannelCounters, when set with Channels, reads only the publish
	// counters of every node (scanner.Conn.ChannelCounters): the audit
	// takes a first reading when it starts and compares the channel
	// phase's with it, for the fan-out estimate of classic Pub/Sub on a
	// cluster (FanOutReport).
	ChannelCounters func(context.Context) ([]source.NodeChannels, error)
	// FanOutWindow is the shortest window the fan-out is estimated over
	// (at most MaxFanOutWindow): on a cluster with a classic channel
	// subscribed, an audit shorter than this waits out the rest before
	// its second reading; elsewhere it never waits, and an audit shorter
	// than the window has no estimate. 0 skips the estimate.
	FanOutWindow time.Duration
	// FanOutWaiting, when set, is called before the audit waits out the
	// rest of FanOutWindow, with how long it will wait, so that a user
	// watching is told why the audit pauses.
	FanOutWaiting func(time.Duration)
	// ChannelsNote, when set, is a report note saying why the channels
	// declared in the registry were not audited (a snapshot has no
	// Pub/Sub state).
	ChannelsNote string
}

// Defaults returns the options keyreg audit starts from.
func Defaults() Options {
	return Options{Sample: 100, SampleLen: 10, MaxValueBytes: 1 << 20, Examples: 3, MaxGroups: 1000}
}

// run is the state of one audit.
type run struct {
	*checker
	o      Options
	src    Source
	fams   []famState
	unreg  famState // keys of no family, for unregistered-key
	groups map[string]*Group
	other  int64
	st     ScanStats
	facts  rules.KeyFacts // reused for every key: the rules take a pointer
	stats  stats          // top keys, types, TTL histogram
	dbs    []int          // the databases seen, in order
	pre    []presampled   // by batch index: samples read ahead for the batch being evaluated

	// The batch received last waits here while its payloads are read and
	// checked, and is evaluated when the next one arrives (or the scan
	// ends), so that checking one batch overlaps reading the next one's
	// samples: two SampleEach calls at most are in flight.
	pending *pendingBatch
	ahead   map[int]int64 // by family index: samples planned for the pending batch
}

// pendingBatch is a batch whose samples were read and are being checked.
type pendingBatch struct {
	keys []source.KeyInfo
	pre  []presampled
	wait func() // returns when every check of pre is done
}

// presampled is a payload read ahead by SampleEach and checked.
type presampled struct {
	ok  bool
	res payload.Result // valid when err is nil
	err error
}

// famState aggregates one family while the scan runs.
type famState struct {
	rep   FamilyReport
	hits  []*hit   // by rule index; nil until the rule fires
	sev   []effect // by rule index: severity after overrides and ignores
	skipS int64    // samples skipped as too large
	// shaped counts the keys among rep.Keys that only have the family's
	// shape (placeholder-invalid): no other key rule checks them.
	shaped int64
	dbs    []*DBReport // by database, in the order first seen
	lastDB *DBReport   // the database of the key before: scans go database by database
}

// maxDBs bounds the databases a report splits its counts by; keys of a
// further database are counted, but not split.
const maxDBs = 1024

// db returns the entry of database n, adding it while under maxDBs; nil
// when there is no room.
func (s *famState) db(n int) *DBReport {
	if d := s.lastDB; d != nil && d.DB == n {
		return d
	}
	s.lastDB = s.findDB(n)
	return s.lastDB
}

func (s *famState) findDB(n int) *DBReport {
	for _, d := range s.dbs {
		if d.DB == n {
			return d
		}
	}
	if len(s.dbs) >= maxDBs {
		return nil
	}
	d := &DBReport{DB: n}
	s.dbs = append(s.dbs, d)
	return d
}

type effect struct {
	sev        diag.Severity
	suppressed bool
	reason     string
}

type hit struct {
	count    int64
	examples []Example
}

// Run audits the keys src yields against reg. On an error from the scan
// (a node failed, the context was cancelled) it still returns the report
// of what was seen, marked partial, together with the error.
func Run(ctx context.Context, src Source, reg *registry.Registry, o Options) (*Report, error) {
	return runRules(ctx, src, reg, o, rules.KeyRules())
}

// runRules is Run with the key rules rs, so that a test can add a rule
// without adding it to the rules package.
func runRules(ctx context.Context, src Source, reg *registry.Registry, o Options, rs []*rules.Rule) (*Report, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	o.Examples = cmp.Or(o.Examples, 3)
	o.MaxGroups = cmp.Or(o.MaxGroups, 1000)
	o.SampleLen = cmp.Or(o.SampleLen, 10)
	top := min(cmp.Or(o.Top, DefaultTopN), MaxTopN)
	r := &run{
		stats:   newStats(top),
		checker: newChecker(reg),
		o:       o,
		src:     src,
		fams:    make([]famState, len(reg.Families)),
		groups:  map[string]*Group{},
	}
	r.checker.rules = rs
	for i, f := range reg.Families {
		r.fams[i] = famState{rep: FamilyReport{Name: f.Name, Owner: f.Owner, Preset: f.Preset, Pos: f.Pos, Position: f.Pos.String()}}
		r.fams[i].init(reg, r.rules, f.Name)
	}
	r.unreg.init(reg, r.rules, "")
	sampled := o.Sample > 0
	if touchBlocked(src) {
		r.o.Sample = 0 // the reads would touch a primary's keys (touch.go)
	}
	started := time.Now()
	fan := firstReading(ctx, o)
	stats, err := src.ScanKeys(ctx, Plan(reg, o.Memory), func(batch []source.KeyInfo) error { return r.batch(ctx, batch) })
	if ferr := r.flush(ctx); err == nil {
		err = ferr
	}
	if err == nil {
		err = refusedError(stats.Refused)
	}
	rep := r.report(started, stats)
	touchNotes(src, rep, sampled)
	if d, ok := src.(interface{ Notes() []string }); ok {
		rep.Scan.Notes = append(rep.Scan.Notes, d.Notes()...) // what a snapshot source says of itself
	}
	if o.ChannelsNote != "" {
		rep.Scan.Notes = append(rep.Scan.Notes, o.ChannelsNote)
	}
	if o.Channels != nil {
		if err == nil {
			err = runChannels(ctx, rep, reg, o.Channels, fan)
		} else {
			// Say it: a report without a channels section otherwise reads
			// as an audit that was not asked to read them.
			rep.Scan.Notes = append(rep.Scan.Notes, "channels not audited: the audit stopped before its channel phase (see why it is partial)")
		}
	}
	if err != nil {
		rep.Partial = true
		// An error may quote a key name: the reason is bounded like one.
		switch {
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			rep.PartialReason = clip("interrupted: "+err.Error(), maxDetailBytes, true)
		default:
			rep.PartialReason = clip(err.Error(), maxDetailBytes, true)
		}
		return rep, err
	}
	return rep, nil
}

func (s *famState) init(reg *registry.Registry, rs []*rules.Rule, family string) {
	s.hits = make([]*hit, len(rs))
	s.sev = make([]effect, len(rs))
	for i, r := range rs {
		sev, sup, reason := rules.Effective(reg, r, family, r.Severity)
		s.sev[i] = effect{sev, sup, reason}
	}
}

// batch starts reading and checking the samples of batch in the
// background, and evaluates the batch before it. It runs on one goroutine
// at a time; the scanner hands every batch over for good, so it may be
// kept.
func (r *run) batch(ctx context.Context, batch []source.KeyInfo) error {
	next := r.presample(ctx, batch)
	if err := r.flush(ctx); err != nil {
		next.wait()
		return err
	}
	r.pending = next
	return nil
}

// flush evaluates the pending batch, if there is one. It is taken off
// first, so it is evaluated once even when evaluating fails.
func (r *run) flush(ctx context.Context) error {
	p := r.pending
	if p == nil {
		return nil
	}
	r.pending = nil
	return r.evaluate(ctx, p)
}

// evaluate audits one batch of keys once its read-ahead checks are done.
func (r *run) evaluate(ctx context.Context, p *pendingBatch) error {
	p.wait()
	r.pre = p.pre
	batch := p.keys
	facts := &r.facts
	for i := range batch {
		k := &batch[i]
		*facts = keyFacts(k, r.o.Now)
		facts.ShowValues = r.o.ShowValues
		r.classify(k, facts)
		var st *famState
		if f := facts.Family; f != nil {
			st = &r.fams[f.Index]
			gone, err := r.sample(ctx, i, k, st, facts)
			if err != nil {
				return err
			}
			if gone {
				// Deleted or retyped since the probe: the key counts as
				// vanished, not audited, so it is never counted twice.
				continue
			}
		} else if f := facts.Shape; f != nil {
			// A key with a family's shape but a bad placeholder value
			// belongs to that family (it counts among its keys, and as
			// registered), reported there as placeholder-invalid.
			st = &r.fams[f.Index]
			st.shaped++
		} else {
			// A key of no family and no family's shape is unregistered.
			st = &r.unreg
			r.group(k)
		}
		st.rep.Keys++
		if k.PTTL >= 0 {
			st.rep.WithTTL++
		}
		if k.HasMemory {
			st.rep.Memory += k.Memory
			st.rep.MemoryMeasured = true
			st.rep.MemoryKeys++
		}
		st.rep.TTL.add(k.PTTL)
		r.perDB(st, k)
		r.stats.add(k, st.rep.Name)
		active := false
		r.fire(facts, func(j int, rule *rules.Rule) {
			h := st.hits[j]
			if h == nil {
				h = &hit{}
				st.hits[j] = h
			}
			h.count++
			if len(h.examples) < r.o.Examples {
				h.examples = append(h.examples, Example{Key: shortKey(facts.Key), DB: k.DB, Detail: detail(rule, facts)})
			}
			if e := st.sev[j]; e.sev > diag.Off && !e.suppressed {
				active = true
			}
		})
		if active {
			st.rep.Findings++
		}
	}
	if r.o.Progress != nil {
		r.o.Progress(len(batch))
	}
	return nil
}

// perDB counts k in its database's share of st, and notes the database.
func (r *run) perDB(st *famState, k *source.KeyInfo) {
	if n := len(r.dbs); (n == 0 || r.dbs[n-1] != k.DB) && !slices.Contains(r.dbs, k.DB) && n < maxDBs {
		r.dbs = append(r.dbs, k.DB)
	}
	d := st.db(k.DB)
	if d == nil {
		return
	}
	d.Keys++
	if k.PTTL >= 0 {
		d.WithTTL++
	}
	if k.HasMemory {
		d.Memory += k.Memory
		d.MemoryKeys++
	}
}

// sample reads and checks the payload of a key while its family is under
// its sample quota. gone reports that the key vanished (or changed type)
// since the probe; it is then counted in Vanished.
func (r *run) sample(ctx context.Context, i int, k *source.KeyInfo, st *famState, facts *rules.KeyFacts) (gone bool, err error) {
	f := facts.Family
	if !r.wantSample(k, f, st, 0) {
		return false, nil
	}
	var (
		s   payload.Sample
		res payload.Result
		pre = i < len(r.pre) && r.pre[i].ok
	)
	if pre {
		res, err = r.pre[i].res, r.pre[i].err
	} else {
		s, err = sampleOne(ctx, r.src, *k, r.o.SampleLen, r.o.MaxValueBytes)
	}
	switch {
	case errors.Is(err, source.ErrTooLarge):
		st.skipS++
		r.st.Skipped++
		return false, nil
	case errors.Is(err, source.ErrVanished):
		r.st.Vanished++
		return true, nil
	case err != nil:
		return false, err
	}
	if !pre {
		res = payload.Check(f, s, payload.Options{ShowValues: r.o.ShowValues})
	}
	facts.Payload = &res
	st.rep.Sampled++
	r.st.Sampled++
	return false, nil
}

// wantSample reports whether k's payload is read: its family has a schema
// or an encoding, k has the family's type (else type-mismatch says it all;
// the payload would not decode), and the family is under its sample quota,
// counting planned samples not yet taken.
func (r *run) wantSample(k *source.KeyInfo, f *registry.Family, st *famState, planned int64) bool {
	return r.o.Sample > 0 && st.rep.Sampled+st.skipS+planned < int64(r.o.Sample) && samplable(f, k.Type)
}

// presample reads ahead, in one SampleEach call, the payloads batch would
// sample key by key: the keys of each family up to its remaining quota,
// counting what is planned for the batch still pending. It runs in the
// background and returns at once: each wave of samples is checked on up to
// checkWorkers goroutines (payload.Check is pure) before the next wave is
// read. With the pending batch's call still finishing, two calls at most
// are in flight, so two waves at most are held. Quotas are settled when the
// batch is evaluated: a key that vanished frees its quota, and a later key
// then takes it with a plain Sample call, so the keys sampled are exactly
// those of a key-by-key run.
func (r *run) presample(ctx context.Context, batch []source.KeyInfo) *pendingBatch {
	p := &pendingBatch{keys: batch, wait: func() {}}
	if r.o.Sample <= 0 {
		r.ahead = nil
		return p
	}
	var (
		idx     []int
		keys    []source.KeyInfo
		fams    []*registry.Family
		planned map[int]int64
	)
	for i := range batch {
		k := &batch[i]
		f := r.family(k)
		if f == nil || !r.wantSample(k, f, &r.fams[f.Index], r.ahead[f.Index]+planned[f.Index]) {
			continue
		}
		if planned == nil {
			planned = map[int]int64{}
		}
		planned[f.Index]++
		idx = append(idx, i)
		keys = append(keys, *k)
		fams = append(fams, f)
	}
	r.ahead = planned
	if len(keys) == 0 {
		return p
	}
	p.pre = make([]presampled, len(batch))
	show := r.o.ShowValues
	check := func(wave []int, ss []payload.Sample, errs []error) {
		workers := min(runtime.GOMAXPROCS(0), checkWorkers, len(wave))
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for j := w; j < len(wave); j += workers {
					pr := presampled{ok: true, err: errs[j]}
					if pr.err == nil {
						pr.res = payload.Check(fams[wave[j]], ss[j], payload.Options{ShowValues: show})
					}
					p.pre[idx[wave[j]]] = pr
				}
			})
		}
		wg.Wait()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.src.SampleEach(ctx, keys, r.o.SampleLen, r.o.MaxValueBytes, check)
	}()
	p.wait = func() { <-done }
	return p
}

// checkWorkers caps the goroutines that check read-ahead payloads.
const checkWorkers = 4

// group counts an unregistered key under its inferred prefix.
//
// Groups are keyed by the prefix as the report shows it, cut at
// MaxKeyBytes, so long prefixes that share their first MaxKeyBytes bytes
// share a group, and no group keeps a long key alive.
func (r *run) group(k *source.KeyInfo) {
	p := InferPrefix(k.Key, r.reg.Separator)
	if len(p) > MaxKeyBytes {
		p = shortPrefix(p)
	}
	g, ok := r.groups[p]
	if !ok {
		if len(r.groups) >= r.o.MaxGroups {
			r.other++
			return
		}
		p = strings.Clone(p)
		g = &Group{Prefix: p, Examples: []string{}}
		r.groups[p] = g
	}
	g.Keys++
	if k.PTTL >= 0 {
		g.WithTTL++
	}
	if k.HasMemory {
		g.Memory += k.Memory
		g.MemoryKeys++
	}
	g.DBs = addDB(g.DBs, k.DB)
	if len(g.Examples) < 3 {
		g.Examples = append(g.Examples, shortKey(k.Key))
	}
}

// addDB adds db to the sorted list dbs, at most maxDBs long. Keys come in
// runs of one database, so the common case is the last entry.
func addDB(dbs []int, db int) []int {
	if n := len(dbs); n > 0 && dbs[n-1] == db {
		return dbs
	}
	i, found := slices.BinarySearch(dbs, db)
	if found || len(dbs) >= maxDBs {
		return dbs
	}
	return slices.Insert(dbs, i, db)
}

// InferPrefix guesses the prefix that groups a key with its siblings: up to
// two separator-ended segments, stopping before a segment that looks like
// an ID (digits, hex, UUIDs). A key without a separator is grouped by its
// leading letters ("celery-task-meta-" for "celery-task-meta-<uuid>").
//
// The prefix is always shorter than the key, so that a prefix never is a
// whole key name (baselines record prefixes, never key names): a key
// without one, such as "sessions" or "a:", is grouped under "". The prefix
// is a substring of key, sharing its memory: clone it to keep it.
func InferPrefix(key string, sep byte) string {
	n := 0 // bytes of key in the prefix
	for range 2 {
		rest := key[n:]
		i := strings.IndexByte(rest, sep)
		// A segment counts when something follows its separator.
		if i < 0 || i+1 == len(rest) || looksLikeID(rest[:i]) {
			break
		}
		n += i + 1
	}
	if n > 0 {
		return key[:n]
	}
	// No segment: keep the leading run up to the last '-', '_' or '.'
	// before the first digit.
	end := len(key)
	for i := 0; i < len(key); i++ {
		if key[i] >= '0' && key[i] <= '9' {
			end = i
			break
		}
	}
	head := key[:end]
	if i := strings.LastIndexAny(head, "-_."); i >= 0 && i+1 < len(key) {
		return head[:i+1]
	}
	if end < len(key) {
		return head
	}
	return ""
}

func looksLikeID(seg string) bool {
	if seg == "" {
		return false
	}
	digits, hex := 0, 0
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			hex++
		case c >= 'a' && c <= 'f', c >= 'A' && c <= 'F', c == '-':
			hex++
		}
	}
	return digits == len(seg) || (hex == len(seg) && len(seg) >= 8 && digits > 0)
}

// report assembles the Report at the end of the run.
func (r *run) report(started time.Time, stats source.Stats) *Report {
	rep := &Report{
		Version:  ReportVersion,
		Registry: r.reg.File,
		Target:   r.o.Target,
		Mode:     r.o.Mode,
		Started:  started,
		Partial:  stats.Partial,
		Findings: []*Finding{},
		Owners:   []*OwnerReport{},
	}
	// Its name in the fleet, which report merge --target-list matches.
	rep.FleetTarget = r.o.FleetTarget
	if stats.Partial {
		rep.PartialReason = "--max-keys reached before the scan covered the whole keyspace"
	}
	st := r.st
	st.Nodes, st.Scanned, st.Duplicates = stats.Nodes, stats.Scanned, stats.Duplicates
	// Keys that vanished before their sample was read were delivered by
	// the scanner but not audited: they count as vanished only.
	st.Keys = stats.Keys - r.st.Vanished
	st.Vanished += stats.Vanished
	st.Duration = stats.Duration
	for _, n := range stats.Errors {
		st.Notes = append(st.Notes, clip(n, maxDetailBytes, true))
	}
	if secs := stats.Duration.Seconds(); secs > 0 {
		st.KeysPerSec = float64(stats.Keys) / secs
	}
	rep.Scan = st

	owners := map[string]*OwnerReport{}
	for i := range r.fams {
		fs := &r.fams[i]
		f := r.reg.Families[i]
		fs.rep.DBs = sortedDBs(fs.dbs)
		rep.TTL.Merge(&fs.rep.TTL)
		rep.Families = append(rep.Families, &fs.rep)
		rep.Totals.Keys += fs.rep.Keys
		rep.Totals.Registered += fs.rep.Keys
		rep.Totals.WithTTL += fs.rep.WithTTL
		rep.Totals.Memory += fs.rep.Memory
		rep.Totals.MemoryKeys += fs.rep.MemoryKeys
		o := owners[f.Owner]
		if o == nil {
			o = &OwnerReport{Name: f.Owner}
			if ow, ok := r.reg.Owner(f.Owner); ok {
				o.Contact = ow.Contact
			}
			owners[f.Owner] = o
		}
		o.Families = append(o.Families, f.Name)
		o.Keys += fs.rep.Keys
		o.WithTTL += fs.rep.WithTTL
		o.Memory += fs.rep.Memory
		o.MemoryKeys += fs.rep.MemoryKeys
		o.Findings += fs.rep.Findings
	}
	for _, o := range owners {
		rep.Owners = append(rep.Owners, o)
	}
	slices.SortFunc(rep.Owners, func(a, b *OwnerReport) int { return strings.Compare(a.Name, b.Name) })

	u := &r.unreg.rep
	rep.Totals.Keys += u.Keys
	rep.Totals.Unregistered = u.Keys
	rep.Totals.WithTTL += u.WithTTL
	rep.Totals.Memory += u.Memory
	rep.Totals.MemoryKeys += u.MemoryKeys
	rep.Unregistered = UnregisteredReport{
		Keys: u.Keys, Other: r.other, Groups: []*Group{},
		WithTTL: u.WithTTL, Memory: u.Memory, MemoryMeasured: u.MemoryMeasured, MemoryKeys: u.MemoryKeys, TTL: u.TTL,
	}
	rep.TTL.Merge(&u.TTL)
	rep.DBs = slices.Sorted(slices.Values(r.dbs))
	if rep.DBs == nil {
		rep.DBs = []int{}
	}
	rep.TopKeys = TopKeys{ByBytes: r.stats.bytes.sorted(), ByElements: r.stats.elements.sorted()}
	rep.Types = r.stats.types
	rep.TTLMemory, rep.KeyBytes = r.stats.ttlMemory, r.stats.keyBytes
	if rep.Types == nil {
		rep.Types = []*TypeStats{}
	}
	sortTypes(rep.Types)
	for _, g := range r.groups {
		rep.Unregistered.Groups = append(rep.Unregistered.Groups, g)
	}
	slices.SortFunc(rep.Unregistered.Groups, func(a, b *Group) int {
		return cmp.Or(cmp.Compare(b.Keys, a.Keys), strings.Compare(a.Prefix, b.Prefix))
	})

	// Findings come once the totals are known: a rule may count over
	// every key (rules.UnitAllKeys).
	for i, f := range r.reg.Families {
		r.findings(rep, &r.fams[i], f)
	}
	r.findings(rep, &r.unreg, nil)

	settleFindings(rep)
	return rep
}

// settleFindings sums the findings of rep into its severity totals and
// sorts them by severity, then family, then rule.
func settleFindings(rep *Report) {
	rep.Totals.Errors, rep.Totals.Warnings, rep.Totals.Infos = 0, 0, 0
	for _, f := range rep.Findings {
		if f.Suppressed {
			continue
		}
		switch f.Severity {
		case diag.Error:
			rep.Totals.Errors += f.Count
		case diag.Warn:
			rep.Totals.Warnings += f.Count
		case diag.Info:
			rep.Totals.Infos += max(f.Count, 1)
		}
	}
	slices.SortStableFunc(rep.Findings, func(a, b *Finding) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), strings.Compare(a.Family, b.Family), strings.Compare(a.Channel, b.Channel), strings.Compare(a.Rule, b.Rule))
	})
}

// sortedDBs returns ds in database order, never nil.
func sortedDBs(ds []*DBReport) []*DBReport {
	out := append([]*DBReport{}, ds...)
	slices.SortFunc(out, func(a, b *DBReport) int { return cmp.Compare(a.DB, b.DB) })
	return out
}

// findings adds the findings of one family (nil for unregistered keys).
func (r *run) findings(rep *Report, fs *famState, f *registry.Family) {
	// Unregistered keys belong to no family: their finding sits on the
	// families: key, where a family for them would be declared.
	pos := r.reg.KeyPos("families")
	name := ""
	if f != nil {
		pos, name = f.Pos, f.Name
	}
	for j, rule := range r.rules {
		e := fs.sev[j]
		if e.sev == diag.Off {
			continue
		}
		h := fs.hits[j]
		if rule.Phase == rules.PhaseRun {
			h = nil
			if f != nil && rule.Run(&rules.RunFacts{Family: f, Keys: fs.rep.Keys, Sampled: fs.rep.Sampled, Complete: !rep.Partial && !r.o.Filtered}) {
				h = &hit{}
			}
		}
		if h == nil {
			continue
		}
		fd := &Finding{
			Rule: rule.ID, Severity: e.sev, Family: name, Pos: pos, Position: pos.String(),
			Count: h.count, Of: of(rule.Unit, rep, fs), Examples: h.examples,
			Suppressed: e.suppressed, Reason: e.reason,
		}
		if fd.Examples == nil {
			fd.Examples = []Example{}
		}
		fd.Message = rule.Summary(f)
		if rule.Unit != rules.UnitNone {
			fd.Message += fmt.Sprintf(": %d of %d", fd.Count, fd.Of)
		}
		if f == nil {
			// Keys of no family: say which prefixes they have.
			if gs := topPrefixes(r.groups, 3); gs != "" {
				fd.Message += "; top prefixes: " + gs
			}
		}
		rep.Findings = append(rep.Findings, fd)
	}
}

// of is the M of a finding's "N of M" for a rule counting in unit u on the
// keys fs aggregates, once rep's totals are summed.
func of(u rules.Unit, rep *Report, fs *famState) int64 {
	switch u {
	case rules.UnitSamples:
		return fs.rep.Sampled
	case rules.UnitFamilyKeys:
		return fs.rep.Keys
	case rules.UnitAllKeys:
		return rep.Totals.Keys
	case rules.UnitNone:
		return 0
	}
	return fs.rep.Keys - fs.shaped // rules.UnitKeys
}

func topPrefixes(groups map[string]*Group, n int) string {
	gs := make([]*Group, 0, len(groups))
	for _, g := range groups {
		gs = append(gs, g)
	}
	slices.SortFunc(gs, func(a, b *Group) int {
		return cmp.Or(cmp.Compare(b.Keys, a.Keys), strings.Compare(a.Prefix, b.Prefix))
	})
	var parts []string
	for i, g := range gs {
		if i == n {
			break
		}
		parts = append(parts, fmt.Sprintf("%q (%d)", g.Prefix, g.Keys))
	}
	return strings.Join(parts, ", ")
}
