package scanner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

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
	final      bool // last batch of its group
}

// targets lists the keyspaces to scan, grouped: groups run concurrently, the
// targets inside a group sequentially. A cluster has one group per shard; a
// standalone server or sentinel master has one group holding each database.
func (c *Conn) targets(ctx context.Context) (groups [][]target, nodes int, notes []string, err error) {
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
			notes = append(notes, fmt.Sprintf("only %d of %d cluster slots are served by a healthy master; their keys were not scanned", topo.covered, clusterSlots))
		}
		for _, s := range topo.shards {
			groups = append(groups, []target{{node: s.scan, db: 0, client: c.client(s.scan, 0, s.replica)}})
		}
		return groups, len(groups), notes, nil
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
// PTTL, then MEMORY USAGE, as enabled by Options.
//
// Duplicates: SCAN may return a key more than once, but only while the hash
// table is resized between calls. A per-node window holding the keys of the
// current and the previous reply drops the duplicates that appear within it
// (Stats.Duplicates); memory stays bounded by two batches, so a duplicate
// further apart (possible only during a rehash) reaches fn twice.
//
// Scan stops early when fn returns an error (returned as is), when
// Options.MaxKeys keys were delivered, or when ctx is done (returning
// ctx.Err()); Stats.Partial is set in each case. A failing node aborts the
// whole scan with an error: a result is never silently incomplete.
func (c *Conn) Scan(ctx context.Context, fn func(batch []KeyInfo) error) (Stats, error) {
	start := time.Now()
	var st Stats
	finish := func(err error) (Stats, error) {
		st.Duration = time.Since(start)
		if err != nil {
			st.Partial = true
		}
		return st, err
	}
	groups, nodes, notes, err := c.targets(ctx)
	st.Nodes = nodes
	st.Errors = append(st.Errors, notes...)
	if len(notes) > 0 {
		st.Partial = true
	}
	if err != nil {
		if ctx.Err() != nil {
			return finish(ctx.Err())
		}
		return finish(redact(fmt.Errorf("scanning %s: %w", c.addr, err)))
	}

	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	var lim *limiter
	if c.opts.Rate > 0 {
		lim = newLimiter(c.opts.Rate)
	}
	out := make(chan batch, len(groups))
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for _, g := range groups {
		wg.Go(func() {
			if err := c.scanGroup(inner, g, lim, out); err != nil {
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
			if !seenNotes[n] && len(st.Errors) < maxNotes {
				seenNotes[n] = true
				st.Errors = append(st.Errors, n)
			}
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
		return finish(nil)
	case firstErr != nil:
		return finish(redact(firstErr))
	}
	return finish(nil)
}

// scanGroup scans the targets of one group in order.
func (c *Conn) scanGroup(ctx context.Context, g []target, lim *limiter, out chan<- batch) error {
	for i, t := range g {
		if err := c.scanTarget(ctx, t, i == len(g)-1, lim, out); err != nil {
			return err
		}
	}
	return nil
}

// scanTarget runs the SCAN cursor loop on one node and database. The probe
// stage is a separate function of (client, keys) so that several probe
// pipelines could later be kept in flight per node.
func (c *Conn) scanTarget(ctx context.Context, t target, lastOfGroup bool, lim *limiter, out chan<- batch) error {
	match := PrefixGlob(c.opts.Match)
	var (
		cursor uint64
		prev   = map[string]struct{}{}
	)
	where := t.node
	if c.mode != modeCluster {
		where += " db " + strconv.Itoa(t.db)
	}
	// A SCAN cursor means nothing to a restarted (or failed-over) server:
	// the scan would end early and look complete. The run_id, read before
	// the first SCAN and after the last, tells.
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
		b := batch{scanned: len(keys)}
		uniq, cur, dups := dedupe(keys, prev)
		b.duplicates = dups
		prev = cur
		if lim != nil && len(uniq) > 0 {
			if err := lim.wait(ctx, len(uniq)); err != nil {
				return err
			}
		}
		if len(uniq) > 0 {
			infos, vanished, notes, err := c.probe(ctx, t.client, t.node, t.db, uniq)
			if err != nil {
				return fmt.Errorf("probing keys on %s: %w", where, err)
			}
			b.keys, b.vanished, b.notes = infos, vanished, notes
		}
		cursor = next
		if cursor == 0 && run0 != "" {
			run1, err := runID(ctx, t.client)
			if err != nil {
				return fmt.Errorf("scan on %s: %w", where, err)
			}
			if run1 != run0 {
				return fmt.Errorf("scan on %s: the server restarted during the scan (run_id changed), so keys were missed", where)
			}
		}
		b.final = cursor == 0 && lastOfGroup
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		if cursor == 0 {
			return nil
		}
	}
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
// keys. It returns the unique keys, the set of this reply's keys (the next
// call's prev) and the number dropped. It reuses the backing array of keys.
func dedupe(keys []string, prev map[string]struct{}) ([]string, map[string]struct{}, int) {
	cur := make(map[string]struct{}, len(keys))
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
	return uniq, cur, dups
}

// probeCmds holds the pipelined commands for one key.
type probeCmds struct {
	idle *redis.DurationCmd
	typ  *redis.StatusCmd
	pttl *redis.DurationCmd
	mem  *redis.IntCmd
	len  *redis.IntCmd
}

// lenCmd queues the length command for a collection type; nil for others.
func lenCmd(ctx context.Context, pipe redis.Pipeliner, typ, key string) *redis.IntCmd {
	switch typ {
	case "hash":
		return pipe.HLen(ctx, key)
	case "list":
		return pipe.LLen(ctx, key)
	case "set":
		return pipe.SCard(ctx, key)
	case "zset":
		return pipe.ZCard(ctx, key)
	case "stream":
		return pipe.XLen(ctx, key)
	}
	return nil
}

// probe sends one pipeline with the probe commands for every key and returns
// the live keys, the number of vanished keys, and non-fatal notes. Each
// command's own error is read; Pipelined's aggregate error is not used, since
// a vanished key makes it redis.Nil.
func (c *Conn) probe(ctx context.Context, cl *redis.Client, node string, db int, keys []string) ([]KeyInfo, int, []string, error) {
	cmds := make([]probeCmds, len(keys))
	pipe := cl.Pipeline()
	for i, k := range keys {
		p := Plan{Idle: c.opts.Idle, Memory: c.opts.Memory}
		if c.opts.Plan != nil {
			kp := c.opts.Plan(k)
			p = Plan{Idle: p.Idle || kp.Idle, Memory: p.Memory || kp.Memory, Len: kp.Len}
		}
		if p.Idle {
			cmds[i].idle = pipe.ObjectIdleTime(ctx, k)
		}
		cmds[i].typ = pipe.Type(ctx, k)
		cmds[i].pttl = pipe.PTTL(ctx, k)
		if p.Memory {
			cmds[i].mem = pipe.MemoryUsage(ctx, k)
		}
		cmds[i].len = lenCmd(ctx, pipe, p.Len, k)
	}
	_, _ = pipe.Exec(ctx) // errors are read per command below
	var (
		infos    = make([]KeyInfo, 0, len(keys))
		vanished int
		notes    []string
		noted    = map[string]bool{}
	)
	note := func(cmd string, err error) {
		n := fmt.Sprintf("%s on %s: %v", cmd, node, err)
		if !noted[n] {
			noted[n] = true
			notes = append(notes, n)
		}
	}
	for i, k := range keys {
		pc := cmds[i]
		typ, err := pc.typ.Result()
		if err != nil {
			return nil, 0, nil, fmt.Errorf("type: %w", err)
		}
		pttl, err := pc.pttl.Result()
		if err != nil {
			return nil, 0, nil, fmt.Errorf("pttl: %w", err)
		}
		// TYPE "none" or PTTL -2: the key was deleted or expired after SCAN
		// returned it (or between the two commands).
		if typ == "none" || pttl == -2 {
			vanished++
			continue
		}
		ki := KeyInfo{Key: k, DB: db, Node: node, Type: typ, PTTL: pttl}
		if pttl < 0 {
			ki.PTTL = NoExpiry
		}
		if pc.idle != nil {
			switch d, err := pc.idle.Result(); {
			case err == nil:
				ki.Idle, ki.HasIdle = d, true
			case errors.Is(err, redis.Nil):
				vanished++
				continue
			default:
				note("object idletime", err)
			}
		}
		if pc.mem != nil {
			switch n, err := pc.mem.Result(); {
			case err == nil:
				ki.Memory, ki.HasMemory = n, true
			case errors.Is(err, redis.Nil):
				vanished++
				continue
			default:
				note("memory usage", err)
			}
		}
		if pc.len != nil {
			// A key of another type answers WRONGTYPE: no length then.
			if n, err := pc.len.Result(); err == nil {
				ki.Len, ki.HasLen = n, true
			}
		}
		infos = append(infos, ki)
	}
	return infos, vanished, notes, nil
}

// Probe reports the facts of one key with the same commands Scan uses (one
// pipelined round trip). A missing key returns Vanished set and no error.
// Outside cluster mode it looks in the database of Options.DB, or the URL's
// database when Options.DB is AllDBs.
func (c *Conn) Probe(ctx context.Context, key string) (KeyInfo, error) {
	ki, err := c.probeOne(ctx, key, true)
	if err != nil {
		return ki, redact(fmt.Errorf("probing key %q: %w", key, err))
	}
	return ki, nil
}

func (c *Conn) probeOne(ctx context.Context, key string, retry bool) (KeyInfo, error) {
	db := c.firstDB()
	var cl *redis.Client
	node := c.base.Addr
	switch c.mode {
	case modeCluster:
		c.mu.Lock()
		topo := c.topo
		c.mu.Unlock()
		s, ok := topo.shardFor(key)
		if !ok {
			return KeyInfo{}, fmt.Errorf("slot %d is not served by a healthy master", keySlot(key))
		}
		node, db = s.scan, 0
		cl = c.client(s.scan, 0, s.replica)
	case modeSentinel:
		node = c.opts.SentinelMaster
		cl = c.client("", db, false)
	default:
		cl = c.client(node, db, false)
	}
	infos, vanished, _, err := c.probe(ctx, cl, node, db, []string{key})
	if err != nil {
		var rerr redis.Error
		if retry && c.mode == modeCluster && errors.As(err, &rerr) && isRedirect(rerr.Error()) {
			topo, terr := c.loadTopology(ctx)
			if terr != nil {
				return KeyInfo{}, terr
			}
			c.mu.Lock()
			c.topo = topo
			c.mu.Unlock()
			return c.probeOne(ctx, key, false)
		}
		return KeyInfo{}, err
	}
	if vanished > 0 || len(infos) == 0 {
		return KeyInfo{Key: key, DB: db, Node: node, Vanished: true, PTTL: -2}, nil
	}
	// A refused OBJECT IDLETIME or MEMORY USAGE (for example under an LFU
	// policy) only leaves HasIdle or HasMemory false.
	return infos[0], nil
}

func isRedirect(msg string) bool {
	return len(msg) > 5 && (msg[:5] == "MOVED" || msg[:3] == "ASK")
}

// limiter is a token bucket shared by all node scanners: Rate tokens per
// second, a burst of one second's worth, and debt allowed so that a batch
// larger than the burst waits proportionally instead of forever.
type limiter struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newLimiter(rate int) *limiter {
	return &limiter{rate: float64(rate), burst: float64(rate), tokens: float64(rate), last: time.Now()}
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
