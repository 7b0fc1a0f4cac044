package scanner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
		return finish(redact(fmt.Errorf("scanning %s: %w", c.addr, err)))
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
			if err := c.scanGroup(inner, g, depth, lim, out); err != nil {
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
		return finish(uncovered)
	case firstErr != nil:
		return finish(redact(firstErr))
	}
	// Every scanned shard completed, but slots no healthy master serves
	// were never scanned: the result is partial, and says which.
	return finish(uncovered)
}

// scanGroup scans the targets of one group in order.
func (c *Conn) scanGroup(ctx context.Context, g []target, depth int, lim *limiter, out chan<- batch) error {
	for i, t := range g {
		if err := c.scanTarget(ctx, t, i == len(g)-1, depth, lim, out); err != nil {
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
func (c *Conn) scanTarget(ctx context.Context, t target, lastOfGroup bool, depth int, lim *limiter, out chan<- batch) error {
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
	err := c.scanLoop(ctx, t, where, lim, queue)
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
func (c *Conn) scanLoop(ctx context.Context, t target, where string, lim *limiter, queue chan<- *inflight) error {
	match := PrefixGlob(c.opts.Match)
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
			infos, vanished, notes, err := c.probe(ctx, t.client, t.node, t.db, uniq)
			if err != nil {
				p.err = fmt.Errorf("probing keys on %s: %w", where, err)
				return
			}
			p.b.keys, p.b.vanished, p.b.notes = infos, vanished, notes
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

// probe sends one pipeline with the probe commands for every key and returns
// the live keys, the number of vanished keys, and non-fatal notes. The
// commands go out on one of the probe's own connections (see resp.go), in
// this order per key: OBJECT IDLETIME (when planned), TYPE, PTTL, MEMORY
// USAGE (when planned).
//
// A key whose plan asks for the length of a collection type gets that
// length command instead of TYPE: HLEN, LLEN, SCARD, ZCARD or XLEN answers
// WRONGTYPE for a key of any other type, so a length above 0 proves the
// type, and one command per key is saved. A WRONGTYPE answer, a length of 0
// (a missing key, or an empty stream) or any other error is settled by a
// TYPE in a second round trip, for those keys only.
func (c *Conn) probe(ctx context.Context, cl *redis.Client, node string, db int, keys []string) ([]KeyInfo, int, []string, error) {
	pool := c.rawPool(cl)
	rc, err := pool.get(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	ioErr := true // cleared once the replies were read
	defer func() { pool.put(rc, ioErr) }()
	if err := rc.begin(ctx, c.base.ReadTimeout); err != nil {
		return nil, 0, nil, err
	}

	plans := make([]Plan, len(keys))
	at := make([]int, len(keys)) // index of each key's TYPE (or length) reply
	n := 0
	for i, k := range keys {
		p := Plan{Idle: c.opts.Idle, Memory: c.opts.Memory}
		if c.opts.Plan != nil {
			kp := c.opts.Plan(k)
			p = Plan{Idle: p.Idle || kp.Idle, Memory: p.Memory || kp.Memory, Len: kp.Len, Class: kp.Class}
		}
		lenResp := respLen(p.Len)
		switch {
		case lenResp == "":
			p.Len = ""
		case c.touchBlocked():
			// A length command would touch the key (see touch.go).
			p.Len, lenResp = "", ""
			c.touch.lenSkipped.Add(1)
		case c.touchCounting():
			c.touch.touched.Add(1)
		}
		plans[i] = p
		if p.Idle {
			rc.keyCmd(respIdle, k)
			n++
		}
		at[i] = n
		if lenResp != "" {
			rc.keyCmd(lenResp, k)
		} else {
			rc.keyCmd(respType, k)
		}
		rc.keyCmd(respPTTL, k)
		n += 2
		if p.Memory {
			rc.keyCmd(respMemUsage, k)
			n++
		}
	}
	rs, err := rc.do(rc.replies[:0])
	rc.replies = rs
	if err != nil {
		return nil, 0, nil, err
	}
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
	types, err := c.settleTypes(ctx, rc, keys, plans, at, note)
	if err != nil {
		return nil, 0, nil, err
	}
	ioErr = false
	for i, k := range keys {
		p, j := &plans[i], at[i]
		var idle *reply
		if p.Idle {
			idle = &rs[j-1]
		}
		first, pr := rs[j], rs[j+1] // TYPE or the length; PTTL
		if pr.kind != ':' {
			return nil, 0, nil, fmt.Errorf("pttl: %w", replyErr(pr))
		}
		typ := types[i]
		// TYPE "none" or PTTL -2: the key was deleted or expired after SCAN
		// returned it (or between the two commands).
		if typ == "none" || pr.n == -2 {
			vanished++
			continue
		}
		ki := KeyInfo{Key: k, DB: db, Node: node, Type: typ, PTTL: NoExpiry, Class: p.Class}
		if pr.n >= 0 {
			ki.PTTL = time.Duration(pr.n) * time.Millisecond
		}
		if idle != nil {
			switch {
			case idle.kind == ':':
				ki.Idle, ki.HasIdle = time.Duration(idle.n)*time.Second, true
			case idle.isNil():
				vanished++
				continue
			default:
				note("object idletime", replyErr(*idle))
			}
		}
		if p.Memory {
			switch m := rs[j+2]; {
			case m.kind == ':':
				ki.Memory, ki.HasMemory = m.n, true
			case m.isNil():
				vanished++
				continue
			default:
				note("memory usage", replyErr(m))
			}
		}
		if p.Len != "" && typ == p.Len && first.kind == ':' {
			ki.Len, ki.HasLen = first.n, true
		}
		infos = append(infos, ki)
	}
	return infos, vanished, notes, nil
}

// replyErr is the error of an error reply, or errProtocol for a reply of a
// kind the command never answers.
func replyErr(r reply) error {
	if err := r.err(); err != nil {
		return err
	}
	return errProtocol
}

// settleTypes returns the type of every probed key: TYPE's answer, or the
// planned collection type when its length command answered a length above
// 0. The keys left unsettled are asked TYPE in one more round trip on rc.
func (c *Conn) settleTypes(ctx context.Context, rc *rawConn, keys []string, plans []Plan, at []int, note func(string, error)) ([]string, error) {
	types := make([]string, len(keys))
	var again []int
	for i := range keys {
		r := rc.replies[at[i]]
		switch {
		case plans[i].Len == "":
			if r.kind != '+' {
				return nil, fmt.Errorf("type: %w", replyErr(r))
			}
			types[i] = r.s
			continue
		case r.kind == ':' && r.n > 0:
			types[i] = plans[i].Len
			continue
		case r.kind == '-' && !strings.HasPrefix(r.s, "WRONGTYPE"):
			note(strings.ToLower(lenCommands[plans[i].Len]), r.err())
		}
		again = append(again, i)
	}
	if len(again) == 0 {
		return types, nil
	}
	if err := rc.begin(ctx, c.base.ReadTimeout); err != nil {
		return nil, err
	}
	for _, i := range again {
		rc.keyCmd(respType, keys[i])
	}
	rs, err := rc.do(nil)
	if err != nil {
		return nil, err
	}
	for j, i := range again {
		if rs[j].kind != '+' {
			return nil, fmt.Errorf("type: %w", replyErr(rs[j]))
		}
		types[i] = rs[j].s
	}
	return types, nil
}

// Probe reports the facts of one key with the same commands Scan uses (one
// pipelined round trip). A missing key returns Vanished set and no error.
// Outside cluster mode it looks in the database of Options.DB, or the URL's
// database when Options.DB is AllDBs.
func (c *Conn) Probe(ctx context.Context, key string) (KeyInfo, error) {
	defer c.watcher.watch(ctx)()
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
