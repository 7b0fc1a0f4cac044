package scanner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/keyreg/keyreg/internal/secret"
	"github.com/keyreg/keyreg/source"
	"github.com/redis/go-redis/v9"
)

// target is one (node, database) keyspace to SCAN.
type target struct {
	node   string // display address
	db     int
	client *redis.Client
}

// batch is what a node scanner hands to the consumer for one SCAN reply.
type batch struct {
	keys       []KeyInfo
	scanned    int
	duplicates int
	vanished   int
	notes      []string
	refused    []source.Refusal
	final      bool // last batch of its group
}

// targets lists the keyspaces to scan, grouped: groups run concurrently, the
// targets inside a group sequentially. A cluster has one group per shard; a
// standalone server or sentinel master has one group holding each database.
// A cluster whose healthy masters do not serve every slot also yields a
// *SlotsError, which Scan returns once the served slots are scanned.
func (c *Conn) targets(ctx context.Context) (groups [][]target, nodes int, uncovered error, err error) {
	switch c.mode {
	case modeCluster:
		topo, err := c.loadTopology(ctx)
		if err != nil {
			return nil, 0, nil, err
		}
		c.mu.Lock()
		c.topo = topo
		c.mu.Unlock()
		if topo.covered < clusterSlots {
			uncovered = &SlotsError{Served: topo.covered, Unserved: topo.unserved}
		}
		for _, s := range topo.shards {
			groups = append(groups, []target{{node: s.scan, db: 0, client: c.client(s.scan, 0, s.replica)}})
		}
		return groups, len(groups), uncovered, nil
	default:
		addr := c.base.Addr
		if c.mode == modeSentinel {
			addr = "" // resolved by the failover client
		}
		dbs := []int{c.db}
		if c.db == AllDBs {
			dbs, err = keyspaceDBs(ctx, c.client(addr, c.base.DB, false))
			if err != nil {
				return nil, 0, nil, err
			}
		}
		var g []target
		for _, db := range dbs {
			cl := c.client(addr, db, false)
			node := c.base.Addr
			if c.mode == modeSentinel {
				node = c.opts.SentinelMaster
			}
			g = append(g, target{node: node, db: db, client: cl})
		}
		if len(g) == 0 {
			return nil, 1, nil, nil
		}
		return [][]target{g}, 1, nil, nil
	}
}

// Scan walks the keyspace and calls fn with each probed batch of keys. fn is
// never called concurrently and never with an empty batch or vanished keys,
// so it needs no locking. In cluster mode every shard is scanned concurrently
// by its own goroutine (SCAN on each master, or on one replica per shard with
// READONLY); batches are serialized through a channel.
//
// Each SCAN reply is probed with exactly one pipelined round trip: OBJECT
// IDLETIME first (it must precede anything that could touch the key), TYPE,
// PTTL, then MEMORY USAGE, as enabled by Options. Per node, SCAN goes on
// while up to probeDepth of these pipelines are in flight (shared among the
// shards in cluster mode, at least one each); batches still reach fn one at
// a time, in SCAN order, and at most depth+1 of them are held per node.
//
// Duplicates: SCAN may return a key more than once, but only while the hash
// table is resized between calls. A per-node window holding the keys of the
// current and the previous reply drops the duplicates that appear within it
// (Stats.Duplicates); memory stays bounded by two batches, so a duplicate
// further apart (possible only during a rehash) reaches fn twice.
//
// fn owns each batch it is given: the scanner never reuses a batch's
// memory, so fn may keep it after returning.
//
// Scan stops early when fn returns an error (returned as is), when
// Options.MaxKeys keys were delivered, or when ctx is done (returning
// ctx.Err()); Stats.Partial is set in each case. A failing node aborts the
// whole scan with an error: a result is never silently incomplete. A cluster
// whose healthy masters leave slots unserved is scanned on those masters,
// then Scan returns a *SlotsError naming the slots it could not scan.
func (c *Conn) Scan(ctx context.Context, fn func(batch []KeyInfo) error) (Stats, error) {
	return c.ScanKeys(ctx, c.opts.Plan, fn)
}

// ScanKeys is Scan with plan in place of Options.Plan: it decides per key
// what the probe adds to TYPE and PTTL, on top of Options.Idle and
// Options.Memory (nil adds nothing), and tags the key's KeyInfo. With
// SampleEach and Touch it makes a *Conn an audit.Source.
func (c *Conn) ScanKeys(ctx context.Context, plan source.Planner, fn func(batch []KeyInfo) error) (Stats, error) {
	defer c.watcher.watch(ctx)()
	start := time.Now()
	var st Stats
	if c.insecure {
		st.Errors = append(st.Errors, InsecureNote)
	}
	finish := func(err error) (Stats, error) {
		st.Duration = time.Since(start)
		if err != nil {
			st.Partial = true
		}
		return st, err
	}
	groups, nodes, uncovered, err := c.targets(ctx)
	st.Nodes = nodes
	if err != nil {
		if ctx.Err() != nil {
			return finish(ctx.Err())
		}
		return finish(c.redact(fmt.Errorf("scanning %s: %w", c.addr, err)))
	}

	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	var lim *limiter
	if c.opts.Rate > 0 {
		lim = newLimiter(c.opts.Rate)
	}
	// At most Parallel groups run at once. The in-flight probes share
	// probeDepth among them: more would only add memory and contention for
	// the same CPUs.
	parallel := len(groups)
	if p := c.opts.Parallel; p > 0 && p < parallel {
		parallel = p
	}
	depth := max(1, probeDepth/max(1, parallel))
	out := make(chan batch, len(groups))
	slots := make(chan struct{}, parallel)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for _, g := range groups {
		wg.Go(func() {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-inner.Done():
				return
			}
			if err := c.scanGroup(inner, g, plan, depth, lim, out); err != nil {
				errOnce.Do(func() { firstErr = err })
				cancel()
			}
		})
	}
	go func() { wg.Wait(); close(out) }()

	seenNotes := map[string]bool{}
	for _, n := range st.Errors {
		seenNotes[n] = true
	}
	var fnErr error
	limitHit, finals := false, 0
	for b := range out {
		st.Scanned += int64(b.scanned)
		st.Duplicates += int64(b.duplicates)
		st.Vanished += int64(b.vanished)
		for _, n := range b.notes {
			n = secret.Mask(n, c.secrets...)
			if !seenNotes[n] && len(st.Errors) < maxNotes {
				seenNotes[n] = true
				st.Errors = append(st.Errors, n)
			}
		}
		for _, r := range b.refused {
			st.Refused = addRefusal(st.Refused, r, c.secrets)
		}
		if b.final {
			finals++
		}
		if fnErr != nil || limitHit || inner.Err() != nil {
			continue // draining after a stop, cancellation or node failure
		}
		keys := b.keys
		if m := c.opts.MaxKeys; m > 0 && st.Keys+int64(len(keys)) >= m {
			if st.Keys+int64(len(keys)) > m {
				st.Partial = true // keys were dropped
			}
			keys = keys[:m-st.Keys]
			limitHit = true
		}
		if len(keys) > 0 {
			if err := fn(keys); err != nil {
				fnErr = err
				cancel()
				continue
			}
			st.Keys += int64(len(keys))
		}
		if limitHit {
			cancel()
		}
	}
	switch {
	case fnErr != nil:
		return finish(fnErr)
	case ctx.Err() != nil:
		return finish(ctx.Err())
	case limitHit:
		if finals < len(groups) {
			st.Partial = true
		}
		return finish(uncovered)
	case firstErr != nil:
		return finish(c.redact(firstErr))
	}
	// Every scanned shard completed, but slots no healthy master serves
	// were never scanned: the result is partial, and says which.
	return finish(uncovered)
}

// addRefusal adds r to rs, merged with the refusals of the same command,
// its error text masked.
func addRefusal(rs []source.Refusal, r source.Refusal, secrets []string) []source.Refusal {
	for i := range rs {
		if rs[i].Command == r.Command {
			rs[i].Keys += r.Keys
			return rs
		}
	}
	r.Err = secret.Mask(r.Err, secrets...)
	return append(rs, r)
}

// scanGroup scans the targets of one group in order.
func (c *Conn) scanGroup(ctx context.Context, g []target, plan source.Planner, depth int, lim *limiter, out chan<- batch) error {
	for i, t := range g {
		if err := c.scanTarget(ctx, t, plan, i == len(g)-1, depth, lim, out); err != nil {
			return err
		}
	}
	return nil
}

// probeDepth is the number of probe pipelines a node scanner keeps in flight
// while its SCAN loop goes on. SCAN runs on the client's main pool and the
// pipelines on go-redis' pipeline pool (10 connections by default), so the
// next SCAN reply is on its way while earlier batches are being probed.
const probeDepth = 3

// inflight is one SCAN batch whose probe runs in its own goroutine; done is
// closed when b and err are set.
type inflight struct {
	b    batch
	err  error
	done chan struct{}
}

// scanTarget runs the SCAN cursor loop on one node and database, with up to
// depth probe pipelines in flight (see probeDepth). A forwarder hands
// the probed batches to out in SCAN order, so the consumer sees exactly the
// sequence a strictly sequential loop would produce; the group's final marker
// is sent only after every batch and the run_id check.
func (c *Conn) scanTarget(ctx context.Context, t target, plan source.Planner, lastOfGroup bool, depth int, lim *limiter, out chan<- batch) error {
	where := t.node
	if c.mode != modeCluster {
		where += " db " + strconv.Itoa(t.db)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The queue bounds the batches between SCAN and the consumer: at most
	// depth being probed, the forwarder's included.
	queue := make(chan *inflight, depth-1)
	fwd := make(chan error, 1)
	go func() { fwd <- forward(ctx, cancel, queue, out) }()
	err := c.scanLoop(ctx, t, plan, where, lim, queue)
	close(queue)
	ferr := <-fwd
	switch {
	case ferr != nil && (err == nil || errors.Is(err, context.Canceled)):
		// A probe failed first; the SCAN loop only saw the cancellation.
		return ferr
	case err != nil:
		return err
	}
	if lastOfGroup {
		select {
		case out <- batch{final: true}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// forward passes the probed batches of queue to out in order. After the first
// error it cancels the scan and only waits for the remaining probes, so no
// goroutine outlives scanTarget.
func forward(ctx context.Context, cancel context.CancelFunc, queue <-chan *inflight, out chan<- batch) error {
	var first error
	for p := range queue {
		<-p.done
		if first != nil {
			continue
		}
		if p.err != nil {
			first = p.err
			cancel()
			continue
		}
		select {
		case out <- p.b:
		case <-ctx.Done():
			first = ctx.Err()
		}
	}
	return first
}

// scanLoop runs SCAN until the cursor is 0 and queues every batch for
// probing. A SCAN cursor means nothing to a restarted (or failed-over)
// server: the scan would end early and look complete. The run_id, read
// before the first SCAN and after the last, tells.
func (c *Conn) scanLoop(ctx context.Context, t target, plan source.Planner, where string, lim *limiter, queue chan<- *inflight) error {
	match := scanMatch(c.opts.Match)
	var (
		cursor    uint64
		prev, cur = map[string]struct{}{}, map[string]struct{}{}
	)
	run0, err := runID(ctx, t.client)
	if err != nil {
		return fmt.Errorf("scan on %s: %w", where, err)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		keys, next, err := t.client.Scan(ctx, cursor, match, int64(c.opts.Count)).Result()
		if err != nil {
			return fmt.Errorf("scan on %s: %w", where, err)
		}
		uniq, dups := dedupe(keys, prev, cur)
		prev, cur = cur, prev
		if lim != nil && len(uniq) > 0 {
			if err := lim.wait(ctx, len(uniq)); err != nil {
				return err
			}
		}
		p := &inflight{b: batch{scanned: len(keys), duplicates: dups}, done: make(chan struct{})}
		select {
		case queue <- p:
		case <-ctx.Done():
			return ctx.Err()
		}
		go func() {
			defer close(p.done)
			if len(uniq) == 0 {
				return
			}
			infos, vanished, notes, err := c.probePlanned(ctx, t.client, t.node, t.db, uniq, plan)
			if err != nil {
				p.err = fmt.Errorf("probing keys on %s: %w", where, err)
				return
			}
			p.b.keys, p.b.vanished, p.b.notes, p.b.refused = infos, vanished, notes.text, notes.refused
		}()
		cursor = next
		if cursor == 0 {
			break
		}
	}
	if run0 != "" {
		run1, err := runID(ctx, t.client)
		if err != nil {
			return fmt.Errorf("scan on %s: %w", where, err)
		}
		if run1 != run0 {
			return fmt.Errorf("scan on %s: the server restarted during the scan (run_id changed), so keys were missed", where)
		}
	}
	return nil
}

// runID returns the run_id of the server behind cl, which changes when it
// restarts; "" when the server does not tell (INFO server refused, or a
// reply without run_id).
func runID(ctx context.Context, cl *redis.Client) (string, error) {
	info, err := cl.Info(ctx, "server").Result()
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading server info: %w", err)
	}
	return infoFields(info)["run_id"], nil
}

// dedupe drops keys already in prev (the previous reply's keys) or earlier in
// keys. It fills cur (cleared first) with this reply's keys, the next call's
// prev, and returns the unique keys and the number dropped. It reuses the
// backing array of keys.
func dedupe(keys []string, prev, cur map[string]struct{}) ([]string, int) {
	clear(cur)
	uniq := keys[:0]
	dups := 0
	for _, k := range keys {
		_, inCur := cur[k]
		_, inPrev := prev[k]
		if inCur || inPrev {
			dups++
			continue
		}
		cur[k] = struct{}{}
		uniq = append(uniq, k)
	}
	return uniq, dups
}

func isRedirect(msg string) bool {
	return len(msg) > 5 && (msg[:5] == "MOVED" || msg[:3] == "ASK")
}

// limiter is a token bucket shared by all node scanners: Rate tokens per
// second. It starts empty and holds at most a tenth of a second's worth, so
// the long-run rate is Rate from the first key on (a full one-second bucket
// at the start let a 10 s audit run 10% over its cap). Debt is allowed, so a
// batch larger than the bucket waits proportionally instead of forever.
type limiter struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newLimiter(rate int) *limiter {
	return &limiter{rate: float64(rate), burst: float64(rate) / 10, last: time.Now()}
}

// wait takes n tokens, sleeping until the bucket is out of debt.
func (l *limiter) wait(ctx context.Context, n int) error {
	l.mu.Lock()
	now := time.Now()
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	l.tokens -= float64(n)
	debt := -l.tokens
	l.mu.Unlock()
	if debt <= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(debt / l.rate * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
