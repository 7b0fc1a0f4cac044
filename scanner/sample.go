package scanner

import (
	"context"
	"errors"
	"fmt"

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
// the part of a collection it would read, is over maxBytes. A key that
// vanished returns ErrVanished. Module types (such as
// RedisJSON) are not read: the sample is empty.
func (c *Conn) Sample(ctx context.Context, k KeyInfo, n int, maxBytes int64) (payload.Sample, error) {
	s := payload.Sample{Type: k.Type}
	cl := c.clientFor(k)
	if n < 1 {
		n = 1
	}
	if err := c.sizeCheck(ctx, cl, k, n, maxBytes); err != nil {
		if errors.Is(err, redis.Nil) || redis.HasErrorPrefix(err, "WRONGTYPE") {
			return s, ErrVanished
		}
		if errors.Is(err, ErrTooLarge) {
			return s, err
		}
		return s, redact(fmt.Errorf("sampling %q on %s: %w", k.Key, k.Node, err))
	}
	var err error
	switch k.Type {
	case "string":
		var v string
		v, err = cl.Get(ctx, k.Key).Result()
		s.String = []byte(v)
	case "hash":
		var kv []string
		kv, _, err = cl.HScan(ctx, k.Key, 0, "", int64(n)).Result()
		s.Fields = make(map[string][]byte, len(kv)/2)
		for i := 0; i+1 < len(kv) && len(s.Fields) < n; i += 2 {
			s.Fields[kv[i]] = []byte(kv[i+1])
		}
	case "list":
		var vs []string
		vs, err = cl.LRange(ctx, k.Key, 0, int64(n-1)).Result()
		s.Members = bytesOf(vs, n, 1)
	case "set":
		var vs []string
		vs, _, err = cl.SScan(ctx, k.Key, 0, "", int64(n)).Result()
		s.Members = bytesOf(vs, n, 1)
	case "zset":
		var vs []string
		vs, _, err = cl.ZScan(ctx, k.Key, 0, "", int64(n)).Result()
		s.Members = bytesOf(vs, n, 2) // member, score pairs
	case "stream":
		var msgs []redis.XMessage
		msgs, err = cl.XRangeN(ctx, k.Key, "-", "+", int64(n)).Result()
		for _, m := range msgs {
			e := make(map[string][]byte, len(m.Values))
			for f, v := range m.Values {
				if str, ok := v.(string); ok {
					e[f] = []byte(str)
				}
			}
			s.Entries = append(s.Entries, e)
		}
	}
	switch {
	case errors.Is(err, redis.Nil), redis.HasErrorPrefix(err, "WRONGTYPE"):
		return s, ErrVanished
	case err != nil:
		return s, redact(fmt.Errorf("sampling %q on %s: %w", k.Key, k.Node, err))
	}
	return s, nil
}

// sizeCheck refuses values whose read would exceed maxBytes.
func (c *Conn) sizeCheck(ctx context.Context, cl *redis.Client, k KeyInfo, n int, maxBytes int64) error {
	if maxBytes <= 0 {
		return nil
	}
	if k.Type == "string" {
		size, err := cl.StrLen(ctx, k.Key).Result()
		if err != nil {
			return err
		}
		if size > maxBytes {
			return ErrTooLarge
		}
		return nil
	}
	pipe := cl.Pipeline()
	mem := pipe.MemoryUsage(ctx, k.Key)
	length := lenCmd(ctx, pipe, k.Type, k.Key)
	if length == nil {
		return nil // a module type: Sample reads nothing
	}
	_, _ = pipe.Exec(ctx)
	m, err := mem.Result()
	if err != nil {
		return err
	}
	l, err := length.Result()
	if err != nil {
		return err
	}
	if l > 0 && m*min(int64(n), l)/l > maxBytes {
		return ErrTooLarge
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
