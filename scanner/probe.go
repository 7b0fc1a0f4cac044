package scanner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/keyreg/keyreg/source"
	"github.com/redis/go-redis/v9"
)

// The probe reads the facts of every key of a SCAN reply in one pipelined
// round trip. Each command it may send per key is a probeCmd with one entry
// in probeCmds: when the key's plan asks for it, what it sends, and how its
// reply goes into the key's KeyInfo. A key's replies are found by name, in
// its probed.slot, so a new command is one constant and one entry here (and
// its Plan and KeyInfo fields in package source).

// probeCmd names one command the probe may send per key.
type probeCmd uint8

// The probe commands, in the order they are sent for a key.
const (
	cmdIdle     probeCmd = iota // OBJECT IDLETIME: first, since any later read resets it
	cmdType                     // TYPE, or the planned collection's length command in its place
	cmdPTTL                     // PTTL
	cmdMemory                   // MEMORY USAGE
	cmdEncoding                 // OBJECT ENCODING, of fences
	cmdFence                    // EXISTS of a lock's fence key, which is not the key probed
	numProbeCmds
)

// probeCmds says, per probe command, when and how it is sent and read.
var probeCmds = [numProbeCmds]struct {
	// name names the command in notes and errors.
	name string
	// resp returns the command in RESP, its key to come, or "" when p
	// does not ask for it.
	resp func(p *Plan) string
	// arg returns the command's key argument when it is not the probed
	// key; nil for the probed key.
	arg func(p *Plan) string
	// read records the reply r to the command in ki, which holds the
	// key's settled type. gone reports that r says the key no longer
	// exists; err is a refused or unexpected reply.
	read func(ki *KeyInfo, p *Plan, r reply) (gone bool, err error)
	// required commands are read first, for every key: an error fails the
	// whole probe, since the key's facts would be wrong. An error of any
	// other command is a note, and the fact stays unknown (Has... false).
	required bool
}{
	cmdIdle: {
		name: "object idletime",
		resp: func(p *Plan) string { return ifPlanned(p.Idle, respIdle) },
		read: func(ki *KeyInfo, _ *Plan, r reply) (bool, error) {
			v, ok, err := intReply(r)
			ki.Idle, ki.HasIdle = time.Duration(v)*time.Second, ok
			return r.isNil(), err
		},
	},
	cmdType: {
		name: "type",
		resp: func(p *Plan) string {
			if p.Len != "" {
				return respLen(p.Len)
			}
			return respType
		},
		// The type itself is settled before (settleTypes): a length
		// command proves it, or TYPE is asked.
		read: func(ki *KeyInfo, p *Plan, r reply) (bool, error) {
			if p.Len != "" && ki.Type == p.Len && r.kind == ':' {
				ki.Len, ki.HasLen = r.n, true
			}
			return ki.Type == "none", nil
		},
		required: true,
	},
	cmdPTTL: {
		name: "pttl",
		resp: func(*Plan) string { return respPTTL },
		read: func(ki *KeyInfo, _ *Plan, r reply) (bool, error) {
			if r.kind != ':' {
				return false, replyErr(r)
			}
			if r.n >= 0 {
				ki.PTTL = millis(r.n)
			}
			return r.n == -2, nil
		},
		required: true,
	},
	cmdMemory: {
		name: "memory usage",
		resp: func(p *Plan) string { return ifPlanned(p.Memory, respMemUsage) },
		read: func(ki *KeyInfo, _ *Plan, r reply) (bool, error) {
			v, ok, err := intReply(r)
			ki.Memory, ki.HasMemory = v, ok
			return r.isNil(), err
		},
	},
	cmdEncoding: {
		name: "object encoding",
		resp: func(p *Plan) string { return ifPlanned(p.Encoding, respEncoding) },
		read: func(ki *KeyInfo, _ *Plan, r reply) (bool, error) {
			switch {
			case r.isNil():
				return true, nil
			case r.kind == '$':
				ki.Encoding = r.s
				return false, nil
			}
			return false, replyErr(r)
		},
	},
	cmdFence: {
		name: "exists",
		resp: func(p *Plan) string { return ifPlanned(p.Fence != "", respExists) },
		arg:  func(p *Plan) string { return p.Fence },
		read: func(ki *KeyInfo, p *Plan, r reply) (bool, error) {
			ki.Fence = p.Fence
			switch {
			case r.kind == ':':
				ki.FenceExists, ki.HasFence = r.n > 0, true
				return false, nil
			case r.kind == '-' && (strings.HasPrefix(r.s, "MOVED ") || strings.HasPrefix(r.s, "ASK ")):
				return false, errFenceSlot
			}
			return false, replyErr(r)
		},
	},
}

// errFenceSlot notes a fence key that lives in another cluster slot than
// its lock, on another node: it is not checked (lint reports the pair as
// fencing-slot).
var errFenceSlot = errors.New("a fence key is served by another node than its lock (fencing-slot), so it was not checked")

// millis returns n milliseconds as a Duration, clamped to the longest one
// (292 years): a PTTL may be up to 2^63-1 ms, which would overflow.
func millis(n int64) time.Duration {
	if n > int64(math.MaxInt64/time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(n) * time.Millisecond
}

func ifPlanned(planned bool, resp string) string {
	if planned {
		return resp
	}
	return ""
}

// intReply reads the integer reply of an optional fact: ok when r is an
// integer; no error for a nil (the key is gone), replyErr for the rest.
func intReply(r reply) (v int64, ok bool, err error) {
	switch {
	case r.kind == ':':
		return r.n, true, nil
	case r.isNil():
		return 0, false, nil
	}
	return 0, false, replyErr(r)
}

// The probe commands with their key argument still to come, in RESP.
const (
	respType     = "*2\r\n$4\r\nTYPE\r\n"
	respPTTL     = "*2\r\n$4\r\nPTTL\r\n"
	respIdle     = "*3\r\n$6\r\nOBJECT\r\n$8\r\nIDLETIME\r\n"
	respMemUsage = "*3\r\n$6\r\nMEMORY\r\n$5\r\nUSAGE\r\n"
	respEncoding = "*3\r\n$6\r\nOBJECT\r\n$8\r\nENCODING\r\n"
	respExists   = "*2\r\n$6\r\nEXISTS\r\n"
)

// lenCommands are the length commands of the collection types.
var lenCommands = map[string]string{"hash": "HLEN", "list": "LLEN", "set": "SCARD", "zset": "ZCARD", "stream": "XLEN"}

// respLens are lenCommands in RESP, key to come.
var respLens = func() map[string]string {
	m := map[string]string{}
	for typ, name := range lenCommands {
		m[typ] = "*2\r\n$" + strconv.Itoa(len(name)) + "\r\n" + name + "\r\n"
	}
	return m
}()

// respLen is the length command of a collection type, key to come; "" for
// other types.
func respLen(typ string) string { return respLens[typ] }

// probed is one key of a probe: its plan, and where each of its replies
// is in the reply buffer.
type probed struct {
	plan Plan
	slot [numProbeCmds]int32 // index of each command's reply; -1 when not sent
}

// planFor returns the plan of key: Options.Idle and Options.Memory, with
// what plan adds. A length the server would answer by touching the key
// (see touch.go) is dropped, and counted.
func (c *Conn) planFor(plan source.Planner, key string) Plan {
	p := Plan{Idle: c.opts.Idle, Memory: c.opts.Memory}
	if plan != nil {
		kp := plan(key)
		p = Plan{Idle: p.Idle || kp.Idle, Memory: p.Memory || kp.Memory, Len: kp.Len, Family: kp.Family,
			Fence: kp.Fence, Encoding: kp.Encoding, Groups: kp.Groups}
	}
	if respLen(p.Len) == "" {
		p.Len = ""
	}
	if p.Len == "" && p.Groups == nil {
		return p
	}
	switch {
	case c.touchBlocked():
		if p.Len != "" {
			c.touch.lenSkipped.Add(1)
		}
		if p.Groups != nil {
			c.touch.groupsSkipped.Add(1)
		}
		p.Len, p.Groups = "", nil
	case c.touchCounting():
		c.touch.touched.Add(1)
	}
	return p
}

// probe sends one pipeline with the probe commands for every key and returns
// the live keys, the number of vanished keys, and non-fatal notes. The
// commands go out on one of the probe's own connections (see resp.go), in
// the order of probeCmds, each when the key's plan asks for it.
//
// A key whose plan asks for the length of a collection type gets that
// length command instead of TYPE: HLEN, LLEN, SCARD, ZCARD or XLEN answers
// WRONGTYPE for a key of any other type, so a length above 0 proves the
// type, and one command per key is saved. A WRONGTYPE answer, a length of 0
// (a missing key, or an empty stream) or any other error is settled by a
// TYPE in a second round trip, for those keys only.
func (c *Conn) probe(ctx context.Context, cl *redis.Client, node string, db int, keys []string) ([]KeyInfo, int, probeNotes, error) {
	return c.probePlanned(ctx, cl, node, db, keys, c.opts.Plan)
}

// probePlanned is probe with plan in place of Options.Plan.
func (c *Conn) probePlanned(ctx context.Context, cl *redis.Client, node string, db int, keys []string, plan source.Planner) ([]KeyInfo, int, probeNotes, error) {
	pool := c.rawPool(cl)
	rc, err := pool.get(ctx)
	if err != nil {
		return nil, 0, probeNotes{}, err
	}
	ioErr := true // cleared once the replies were read
	defer func() { pool.put(rc, ioErr) }()
	if err := rc.begin(ctx, c.base.ReadTimeout); err != nil {
		return nil, 0, probeNotes{}, err
	}

	kps := make([]probed, len(keys))
	var (
		n        int32
		idleKeys []int // in replica mode, the keys whose idle time the primary gives: indices into infos
		fromPrim []bool
	)
	if c.opts.Replica {
		fromPrim = make([]bool, len(keys))
	}
	for i, k := range keys {
		kp := &kps[i]
		kp.plan = c.planFor(plan, k)
		if fromPrim != nil && kp.plan.Idle {
			// A replica's idle time is that of the last replicated write
			// or of keyreg's own reads, not of what applications read.
			fromPrim[i], kp.plan.Idle = true, false
		}
		for cmd := range numProbeCmds {
			kp.slot[cmd] = -1
			if resp := probeCmds[cmd].resp(&kp.plan); resp != "" {
				arg := k
				if a := probeCmds[cmd].arg; a != nil {
					arg = a(&kp.plan)
				}
				rc.keyCmd(resp, arg)
				kp.slot[cmd] = n
				n++
			}
		}
	}
	rs, err := rc.do(rc.replies[:0])
	rc.replies = rs
	if err != nil {
		return nil, 0, probeNotes{}, err
	}
	var (
		infos    = make([]KeyInfo, 0, len(keys))
		vanished int
		notes    probeNotes
		noted    = map[string]bool{}
	)
	note := func(cmd string, err error) {
		if !errors.Is(err, errFenceSlot) {
			notes.refuse(cmd, fmt.Errorf("on %s: %w", node, err))
			return
		}
		n := fmt.Sprintf("%s on %s: %v", cmd, node, err)
		if !noted[n] {
			noted[n] = true
			notes.text = append(notes.text, n)
		}
	}
	types, err := c.settleTypes(ctx, rc, keys, kps, note)
	if err != nil {
		return nil, 0, probeNotes{}, err
	}
	ioErr = false
	var streams []int // of each stream whose groups to read: its index in keys, then in infos
keys:
	for i, k := range keys {
		kp := &kps[i]
		// The facts are read in place (a local KeyInfo would escape to
		// the heap through the calls of probeCmds), and dropped again when
		// the key is gone.
		infos = append(infos, KeyInfo{Key: k, DB: db, Node: node, Type: types[i], PTTL: NoExpiry, Family: kp.plan.Family})
		ki := &infos[len(infos)-1]
		// Required replies first: an error there fails the probe even
		// when another reply says the key is gone.
		gone := false
		for cmd, pc := range probeCmds {
			if s := kp.slot[cmd]; s >= 0 && pc.required {
				g, err := pc.read(ki, &kp.plan, rs[s])
				if err != nil {
					return nil, 0, probeNotes{}, fmt.Errorf("%s: %w", pc.name, err)
				}
				gone = gone || g
			}
		}
		// TYPE "none" or PTTL -2: the key was deleted or expired after SCAN
		// returned it (or between the two commands).
		if gone {
			vanished++
			infos = infos[:len(infos)-1]
			continue
		}
		for cmd, pc := range probeCmds {
			if s := kp.slot[cmd]; s >= 0 && !pc.required {
				g, err := pc.read(ki, &kp.plan, rs[s])
				if g {
					vanished++
					infos = infos[:len(infos)-1]
					continue keys
				}
				if err != nil {
					note(pc.name, err)
				}
			}
		}
		if kp.plan.Groups != nil && ki.Type == "stream" {
			streams = append(streams, i, len(infos)-1)
		}
		if fromPrim != nil && fromPrim[i] {
			idleKeys = append(idleKeys, len(infos)-1)
		}
	}
	if len(idleKeys) > 0 {
		c.primaryIdle(ctx, node, infos, idleKeys, &notes)
	}
	if len(streams) > 0 {
		if err := c.readGroups(ctx, rc, keys, kps, infos, streams, note); err != nil {
			ioErr = true
			return nil, 0, probeNotes{}, err
		}
	}
	return infos, vanished, notes, nil
}

// primaryIdle reads OBJECT IDLETIME of infos[idx] on the primary of the
// replica node, in one round trip: OBJECT never touches a key, so the
// primary's idle times are the applications'. When the primary cannot be
// read, the keys have no idle time and the refusal is counted, so that the
// audit says stale-key was not checked.
func (c *Conn) primaryIdle(ctx context.Context, node string, infos []KeyInfo, idx []int, notes *probeNotes) {
	fail := func(err error) {
		for range idx {
			notes.refuse("object idletime", err)
		}
	}
	cl, addr, err := c.primaryClient(node, infos[idx[0]].DB)
	if err != nil {
		fail(err)
		return
	}
	pool := c.rawPool(cl)
	rc, err := pool.get(ctx)
	if err != nil {
		fail(fmt.Errorf("on primary %s: %w", addr, err))
		return
	}
	ioErr := true
	defer func() { pool.put(rc, ioErr) }()
	if err := rc.begin(ctx, c.base.ReadTimeout); err != nil {
		fail(fmt.Errorf("on primary %s: %w", addr, err))
		return
	}
	for _, i := range idx {
		rc.keyCmd(respIdle, infos[i].Key)
	}
	rs, err := rc.do(nil)
	if err != nil {
		fail(fmt.Errorf("on primary %s: %w", addr, err))
		return
	}
	ioErr = false
	for j, i := range idx {
		v, ok, err := intReply(rs[j])
		switch {
		case err != nil:
			notes.refuse("object idletime", fmt.Errorf("on primary %s: %w", addr, err))
		case ok:
			infos[i].Idle, infos[i].HasIdle = time.Duration(v)*time.Second, true
		}
		// nil: not on the primary (yet, or any more); no idle time.
	}
}

// probeNotes are what a probe has to say besides the keys: notes, and the
// planned commands the server refused.
type probeNotes struct {
	text    []string
	refused []source.Refusal
}

// refuse counts one key whose command cmd was refused with err.
func (n *probeNotes) refuse(cmd string, err error) {
	for i := range n.refused {
		if n.refused[i].Command == cmd {
			n.refused[i].Keys++
			return
		}
	}
	n.refused = append(n.refused, source.Refusal{Command: cmd, Keys: 1, Err: err.Error()})
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
func (c *Conn) settleTypes(ctx context.Context, rc *rawConn, keys []string, kps []probed, note func(string, error)) ([]string, error) {
	types := make([]string, len(keys))
	var again []int
	for i := range keys {
		r, typ := rc.replies[kps[i].slot[cmdType]], kps[i].plan.Len
		switch {
		case typ == "":
			if r.kind != '+' {
				return nil, fmt.Errorf("type: %w", replyErr(r))
			}
			types[i] = r.s
			continue
		case r.kind == ':' && r.n > 0:
			types[i] = typ
			continue
		case r.kind == '-' && !strings.HasPrefix(r.s, "WRONGTYPE"):
			note(strings.ToLower(lenCommands[typ]), r.err())
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

func (c *Conn) Probe(ctx context.Context, key string) (KeyInfo, error) {
	defer c.watcher.watch(ctx)()
	ki, err := c.probeOne(ctx, key, true)
	if err != nil {
		return ki, c.redact(fmt.Errorf("probing key %q: %w", key, err))
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
