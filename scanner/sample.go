package scanner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/source"
	"github.com/redis/go-redis/v9"
)

// ErrTooLarge is returned by Sample when reading the value would exceed
// the byte limit, or did: the rest of the reply was discarded unread. It is
// source.ErrTooLarge.
var ErrTooLarge = source.ErrTooLarge

// ErrVanished is returned by Sample when the key was deleted or expired
// after it was probed, or replaced by a key of another type (the read
// answered WRONGTYPE): the probed key is gone either way. It is
// source.ErrVanished.
var ErrVanished = source.ErrVanished

// DefaultSampleBudget is the Options.SampleBudget used when it is 0. The
// audit keeps two SampleEach calls in flight (one batch's samples being
// checked while the next batch's are read), so its values held at once
// stay within twice this: 32 MiB.
const DefaultSampleBudget = 16 << 20

// Sample reads a bounded part of the value of k: a whole string, or up to n
// elements of a collection (HSCAN, SSCAN and ZSCAN with COUNT n, LRANGE 0
// n-1, XRANGE - + COUNT n).
//
// No more than maxBytes of k is ever held in memory (a maxBytes of 0 or
// below means the sample budget). The size is checked first, in its own
// round trip, and the read skipped with ErrTooLarge when it is over
// maxBytes: STRLEN for a string, exact; for a collection MEMORY USAGE
// scaled to n of its LEN elements, an estimate. What k's probe already
// measured is not asked again.
// The read itself is parsed element by element: an element that would take
// the value over maxBytes makes Sample return ErrTooLarge, and the rest of
// the reply is discarded without being kept, so neither a big element
// among the first n nor an estimate that was too low can exceed the limit.
//
// A key that vanished returns ErrVanished. Module types (such as RedisJSON)
// are not read: the sample is empty. On a primary without CLIENT NO-TOUCH
// it returns ErrTouch without sending anything, unless Options.AllowTouch
// is set (see TouchState).
func (c *Conn) Sample(ctx context.Context, k KeyInfo, n int, maxBytes int64) (payload.Sample, error) {
	ss, errs := c.SampleBatch(ctx, []KeyInfo{k}, n, maxBytes)
	return ss[0], errs[0]
}

// SampleBatch is Sample for many keys: the i-th sample and error belong to
// keys[i]. It holds every sample at once; SampleEach hands them over in
// waves, so that the memory held stays within the sample budget.
func (c *Conn) SampleBatch(ctx context.Context, keys []KeyInfo, n int, maxBytes int64) ([]payload.Sample, []error) {
	ss := make([]payload.Sample, len(keys))
	errs := make([]error, len(keys))
	c.SampleEach(ctx, keys, n, maxBytes, func(idx []int, ws []payload.Sample, werrs []error) {
		for j, i := range idx {
			ss[i], errs[i] = ws[j], werrs[j]
		}
	})
	return ss, errs
}

// SampleEach is Sample for many keys, in few pipelined round trips per node:
// every size check in the first, then the reads in waves. A wave holds the
// keys whose expected sizes fit the sample budget (Options.SampleBudget, at
// least maxBytes); a key that turns out not to fit once read is read again
// in the next wave, so the bytes of a wave's values never exceed the budget.
//
// After each wave fn gets the samples and errors of the keys it settled:
// ss[j] and errs[j] belong to keys[idx[j]], and each error is what Sample
// would return for that key. Every key is settled exactly once. fn is called
// on the caller's goroutine, and the next wave is read only after it
// returns: as long as fn does not keep the samples, the sampled values held
// at any time are bounded by the budget, whatever the keys hold.
func (c *Conn) SampleEach(ctx context.Context, keys []KeyInfo, n int, maxBytes int64, fn func(idx []int, ss []payload.Sample, errs []error)) {
	if len(keys) == 0 {
		return
	}
	defer c.watcher.watch(ctx)()
	if c.touchBlocked() {
		idx := make([]int, len(keys))
		ss := make([]payload.Sample, len(keys))
		errs := make([]error, len(keys))
		for i := range keys {
			idx[i], ss[i].Type, errs[i] = i, keys[i].Type, ErrTouch
		}
		fn(idx, ss, errs)
		return
	}
	n = max(n, 1)
	budget := c.opts.SampleBudget
	if budget <= 0 {
		budget = DefaultSampleBudget
	}
	budget = max(budget, maxBytes) // one value always fits
	if maxBytes <= 0 {
		maxBytes = budget
	}
	// Keys of one batch come from one node; group anyway, by client.
	byClient := map[*redis.Client][]int{}
	var order []*redis.Client
	for i, k := range keys {
		cl := c.clientFor(k)
		if _, ok := byClient[cl]; !ok {
			order = append(order, cl)
		}
		byClient[cl] = append(byClient[cl], i)
	}
	for _, cl := range order {
		c.sampleNode(ctx, cl, keys, byClient[cl], n, maxBytes, budget, fn)
	}
	if c.touchCounting() {
		// A key whose length the probe read was counted then.
		for _, k := range keys {
			if !k.HasLen && readCommand(k.Type, k.Key, n) != nil {
				c.touch.touched.Add(1)
			}
		}
	}
}

// sampleErr maps the error of a sample read to what Sample returns.
func (c *Conn) sampleErr(k KeyInfo, err error) error {
	switch {
	case err == nil, errors.Is(err, ErrTooLarge), errors.Is(err, ErrTouch):
		return err
	case errors.Is(err, redis.Nil), redis.HasErrorPrefix(err, "WRONGTYPE"):
		return ErrVanished
	}
	return c.redact(fmt.Errorf("sampling %q on %s: %w", k.Key, k.Node, err))
}

// settled collects the keys of a node that are done, for the next fn call.
type settled struct {
	c    *Conn
	idx  []int
	ss   []payload.Sample
	errs []error
}

func (s *settled) add(i int, k KeyInfo, smp payload.Sample, err error) {
	smp.Type = k.Type
	s.idx, s.ss, s.errs = append(s.idx, i), append(s.ss, smp), append(s.errs, s.c.sampleErr(k, err))
}

// hand passes the settled keys to fn, and forgets them.
func (s *settled) hand(fn func([]int, []payload.Sample, []error)) {
	if len(s.idx) > 0 {
		fn(s.idx, s.ss, s.errs)
	}
	*s = settled{c: s.c}
}

// sampleNode runs the size checks of keys[idx] on cl, then the reads in
// waves of at most budget bytes, calling fn after each.
func (c *Conn) sampleNode(ctx context.Context, cl *redis.Client, keys []KeyInfo, idx []int, n int, maxBytes, budget int64, fn func([]int, []payload.Sample, []error)) {
	done := settled{c: c}
	pipe := cl.Pipeline()
	checks := make([]func() (int64, error), len(idx))
	for j, i := range idx {
		if readCommand(keys[i].Type, keys[i].Key, n) != nil {
			checks[j] = queueSizeCheck(ctx, pipe, keys[i], n, maxBytes)
		}
	}
	if pipe.Len() > 0 {
		_, _ = pipe.Exec(ctx) // errors are read per command
	}
	var todo []int         // keys still to read
	est := map[int]int64{} // their expected sizes
	for j, i := range idx {
		if checks[j] == nil {
			done.add(i, keys[i], payload.Sample{}, nil) // a module type: not read
			continue
		}
		size, err := checks[j]()
		if err != nil {
			done.add(i, keys[i], payload.Sample{}, err)
			continue
		}
		est[i] = min(max(size, 0), maxBytes)
		todo = append(todo, i)
	}
	for len(todo) > 0 {
		// The wave: keys in order while their expected sizes fit, at least
		// one. The first key has the whole budget, and maxBytes is within
		// it, so every wave settles at least one key.
		var sum int64
		w := 0
		for w < len(todo) && (w == 0 || (w < maxWaveReads && sum+est[todo[w]] <= budget)) {
			sum += est[todo[w]]
			w++
		}
		wave := todo[:w:w]
		todo = todo[w:]
		ss, errs, again, broke := c.readWave(ctx, cl, keys, wave, n, maxBytes, budget)
		if broke != nil {
			// The connection failed: the keys left would only fail the
			// same way, one dial or timeout at a time.
			for _, i := range todo {
				done.add(i, keys[i], payload.Sample{}, broke)
			}
			todo = nil
		}
		var retry []int
		for j, i := range wave {
			if again[j] {
				// Its estimate was wrong (a big element diluted in
				// MEMORY USAGE): plan for the worst it may be, so the
				// next wave has room for it and it is not sent again.
				est[i] = maxBytes
				retry = append(retry, i)
			} else {
				done.add(i, keys[i], ss[j], errs[j])
			}
		}
		todo = append(retry, todo...)
		done.hand(fn)
	}
	done.hand(fn)
}

// maxWaveReads bounds the reads of one wave, whatever their estimates: the
// server builds the replies of a pipeline before the reader can refuse one,
// so this bounds how many underestimated values one wave can put in its
// output buffer, while small values still go 512 to a round trip.
const maxWaveReads = 512

// queueSizeCheck queues the size check of k and returns the function that
// judges it after Exec: the expected size of the read, or ErrTooLarge when
// it is over maxBytes. A string needs its STRLEN, unless the probe's MEMORY
// USAGE is within maxBytes already (a string's MEMORY USAGE is never below
// its length). A collection needs MEMORY USAGE and its length; the expected
// size is the share of n of them. That is an estimate: MEMORY USAGE
// measures 5 nodes or elements and scales them to the whole, so one big
// element among thousands of small ones is diluted, and only the reader's
// limits (sampleread.go) hold then. What the probe read is not asked again.
// Module types cost nothing.
func queueSizeCheck(ctx context.Context, pipe redis.Pipeliner, k KeyInfo, n int, maxBytes int64) func() (int64, error) {
	judge := func(size int64, err error) (int64, error) {
		if err == nil && size > maxBytes {
			err = ErrTooLarge
		}
		return size, err
	}
	switch k.Type {
	case "string":
		if k.HasMemory && k.Memory <= maxBytes {
			return func() (int64, error) { return k.Memory, nil }
		}
		size := pipe.StrLen(ctx, k.Key)
		return func() (int64, error) { return judge(size.Result()) }
	}
	var memCmd, lenCmdQ *redis.IntCmd
	if !k.HasLen {
		if lenCmdQ = lenCmd(ctx, k.Type, k.Key); lenCmdQ == nil {
			return func() (int64, error) { return 0, nil }
		}
	}
	if !k.HasMemory {
		memCmd = pipe.MemoryUsage(ctx, k.Key)
	}
	if lenCmdQ != nil {
		_ = pipe.Process(ctx, lenCmdQ)
	}
	return func() (int64, error) {
		m, l := k.Memory, k.Len
		var err error
		if memCmd != nil {
			if m, err = memCmd.Result(); err != nil {
				return 0, err
			}
		}
		if lenCmdQ != nil {
			if l, err = lenCmdQ.Result(); err != nil {
				return 0, err
			}
		}
		if l <= 0 {
			return 0, nil
		}
		return judge(m*min(int64(n), l)/l, nil)
	}
}

// lenCmd returns the length command for a collection type; nil for others.
func lenCmd(ctx context.Context, typ, key string) *redis.IntCmd {
	name, ok := lenCommands[typ]
	if !ok {
		return nil
	}
	return redis.NewIntCmd(ctx, strings.ToLower(name), key)
}

// clientFor returns the client that reads k where it was scanned.
func (c *Conn) clientFor(k KeyInfo) *redis.Client {
	switch c.mode {
	case modeCluster:
		return c.client(k.Node, 0, c.opts.Replica)
	case modeSentinel:
		return c.client("", k.DB, false)
	}
	return c.client(k.Node, k.DB, false)
}
