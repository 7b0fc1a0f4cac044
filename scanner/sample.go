package scanner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/keyreg/keyreg/payload"
	"github.com/redis/go-redis/v9"
)

// ErrTooLarge is returned by Sample when reading the value would exceed
// the byte limit. Nothing was read.
var ErrTooLarge = errors.New("value larger than the sampling limit")

// ErrVanished is returned by Sample when the key was deleted or expired
// after it was probed, or replaced by a key of another type (the read
// answered WRONGTYPE): the probed key is gone either way.
var ErrVanished = errors.New("key vanished")

// Sample reads a bounded part of the value of k: a whole string, or up to n
// elements of a collection (HSCAN, SSCAN and ZSCAN with COUNT n, LRANGE 0
// n-1, XRANGE - + COUNT n). It checks the size first, in its own round trip
// (STRLEN for strings; MEMORY USAGE scaled to n of LEN elements for
// collections), and returns ErrTooLarge without reading when the value, or
// the part of a collection it would read, is over maxBytes. What k's probe
// already measured is not asked again: a string whose MEMORY USAGE is within
// maxBytes needs no STRLEN, a collection no second LEN or MEMORY USAGE. A key that
// vanished returns ErrVanished. Module types (such as
// RedisJSON) are not read: the sample is empty.
func (c *Conn) Sample(ctx context.Context, k KeyInfo, n int, maxBytes int64) (payload.Sample, error) {
	ss, errs := c.SampleBatch(ctx, []KeyInfo{k}, n, maxBytes)
	return ss[0], errs[0]
}

// SampleBatch is Sample for many keys in two pipelined round trips per node:
// every size check in the first, every read that passed in the second. The
// i-th sample and error belong to keys[i]; each error is what Sample would
// return for that key.
func (c *Conn) SampleBatch(ctx context.Context, keys []KeyInfo, n int, maxBytes int64) ([]payload.Sample, []error) {
	defer c.watcher.watch(ctx)()
	ss := make([]payload.Sample, len(keys))
	errs := make([]error, len(keys))
	n = max(n, 1)
	// Keys of one batch come from one node; group anyway, by client.
	byClient := map[*redis.Client][]int{}
	var order []*redis.Client
	for i, k := range keys {
		ss[i].Type = k.Type
		cl := c.clientFor(k)
		if _, ok := byClient[cl]; !ok {
			order = append(order, cl)
		}
		byClient[cl] = append(byClient[cl], i)
	}
	for _, cl := range order {
		c.sampleNode(ctx, cl, keys, byClient[cl], n, maxBytes, ss, errs)
	}
	for i, err := range errs {
		switch {
		case err == nil, errors.Is(err, ErrTooLarge):
		case errors.Is(err, redis.Nil), redis.HasErrorPrefix(err, "WRONGTYPE"):
			errs[i] = ErrVanished
		default:
			errs[i] = redact(fmt.Errorf("sampling %q on %s: %w", keys[i].Key, keys[i].Node, err))
		}
	}
	return ss, errs
}

// sampleNode runs the size checks and then the reads of keys[idx] on cl.
// Size checks the probe already answered (MEMORY USAGE, the length) cost no
// command, and the first round trip is skipped when none is left to send.
func (c *Conn) sampleNode(ctx context.Context, cl *redis.Client, keys []KeyInfo, idx []int, n int, maxBytes int64, ss []payload.Sample, errs []error) {
	if maxBytes > 0 {
		pipe := cl.Pipeline()
		checks := make([]func() error, len(idx))
		for j, i := range idx {
			checks[j] = queueSizeCheck(ctx, pipe, keys[i], n, maxBytes)
		}
		if pipe.Len() > 0 {
			_, _ = pipe.Exec(ctx) // errors are read per command
		}
		for j, i := range idx {
			if checks[j] != nil {
				errs[i] = checks[j]()
			}
		}
	}
	pipe := cl.Pipeline()
	reads := make([]func(*payload.Sample) error, len(idx))
	for j, i := range idx {
		if errs[i] == nil {
			reads[j] = queueRead(ctx, pipe, keys[i].Type, keys[i].Key, n)
		}
	}
	if pipe.Len() == 0 {
		return
	}
	_, _ = pipe.Exec(ctx)
	for j, i := range idx {
		if reads[j] != nil {
			errs[i] = reads[j](&ss[i])
		}
	}
}

// queueSizeCheck queues the size check of k and returns the function that
// judges it after Exec: ErrTooLarge when the read would exceed maxBytes.
// A string needs its STRLEN, unless the probe's MEMORY USAGE is within
// maxBytes already (a string's MEMORY USAGE is never below its length). A
// collection needs MEMORY USAGE and its length; what the probe read is not
// asked again. It returns nil when nothing needs checking, and for module
// types, which are not read.
func queueSizeCheck(ctx context.Context, pipe redis.Pipeliner, k KeyInfo, n int, maxBytes int64) func() error {
	if k.Type == "string" {
		if k.HasMemory && k.Memory <= maxBytes {
			return nil
		}
		size := pipe.StrLen(ctx, k.Key)
		return func() error {
			v, err := size.Result()
			if err == nil && v > maxBytes {
				err = ErrTooLarge
			}
			return err
		}
	}
	var memCmd, lenCmdQ *redis.IntCmd
	if !k.HasLen {
		if lenCmdQ = lenCmd(ctx, k.Type, k.Key); lenCmdQ == nil {
			return nil
		}
	}
	if !k.HasMemory {
		memCmd = pipe.MemoryUsage(ctx, k.Key)
	}
	if lenCmdQ != nil {
		_ = pipe.Process(ctx, lenCmdQ)
	}
	return func() error {
		m, l := k.Memory, k.Len
		var err error
		if memCmd != nil {
			if m, err = memCmd.Result(); err != nil {
				return err
			}
		}
		if lenCmdQ != nil {
			if l, err = lenCmdQ.Result(); err != nil {
				return err
			}
		}
		if l > 0 && m*min(int64(n), l)/l > maxBytes {
			return ErrTooLarge
		}
		return nil
	}
}

// queueRead queues the read of up to n elements of key (the whole value of
// a string) and returns the function that fills the sample after Exec; nil
// for module types, which are not read.
func queueRead(ctx context.Context, pipe redis.Pipeliner, typ, key string, n int) func(*payload.Sample) error {
	switch typ {
	case "string":
		cmd := pipe.Get(ctx, key)
		return func(s *payload.Sample) error {
			v, err := cmd.Bytes()
			s.String = v
			return err
		}
	case "hash":
		cmd := pipe.HScan(ctx, key, 0, "", int64(n))
		return func(s *payload.Sample) error {
			kv, _, err := cmd.Result()
			s.Fields = make(map[string][]byte, len(kv)/2)
			for i := 0; i+1 < len(kv) && len(s.Fields) < n; i += 2 {
				s.Fields[kv[i]] = []byte(kv[i+1])
			}
			return err
		}
	case "list":
		cmd := pipe.LRange(ctx, key, 0, int64(n-1))
		return func(s *payload.Sample) error {
			vs, err := cmd.Result()
			s.Members = bytesOf(vs, n, 1)
			return err
		}
	case "set":
		cmd := pipe.SScan(ctx, key, 0, "", int64(n))
		return func(s *payload.Sample) error {
			vs, _, err := cmd.Result()
			s.Members = bytesOf(vs, n, 1)
			return err
		}
	case "zset":
		cmd := pipe.ZScan(ctx, key, 0, "", int64(n))
		return func(s *payload.Sample) error {
			vs, _, err := cmd.Result()
			s.Members = bytesOf(vs, n, 2) // member, score pairs
			return err
		}
	case "stream":
		cmd := pipe.XRangeN(ctx, key, "-", "+", int64(n))
		return func(s *payload.Sample) error {
			msgs, err := cmd.Result()
			for _, m := range msgs {
				e := make(map[string][]byte, len(m.Values))
				for f, v := range m.Values {
					if str, ok := v.(string); ok {
						e[f] = []byte(str)
					}
				}
				s.Entries = append(s.Entries, e)
			}
			return err
		}
	}
	return nil
}

// bytesOf keeps every stride-th string of vs, at most n of them.
func bytesOf(vs []string, n, stride int) [][]byte {
	out := make([][]byte, 0, min(n, len(vs)/stride))
	for i := 0; i < len(vs) && len(out) < n; i += stride {
		out = append(out, []byte(vs[i]))
	}
	return out
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
