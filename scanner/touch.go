package scanner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/keyreg/keyreg/source"
	"github.com/redis/go-redis/v9"
)

// Redis before 7.2 has no CLIENT NO-TOUCH. There, every read that looks a
// key up normally resets its LRU idle time and bumps its LFU counter:
// STRLEN, GET, the length commands (HLEN, LLEN, SCARD, ZCARD, XLEN) and the
// sampling reads (HSCAN, SSCAN, ZSCAN, LRANGE, XRANGE). TYPE, PTTL, OBJECT
// and MEMORY USAGE look keys up without touching them, and SCAN does not
// look keys up at all. A scheduled audit that sampled a primary would keep
// its sampled keys from ever looking stale and change what the server
// evicts, so the scanner refuses those reads unless they go to a replica,
// the server has CLIENT NO-TOUCH, or Options.AllowTouch says to touch.

// ErrTouch is returned by Sample when reading the value would reset the
// key's LRU/LFU state on a primary without CLIENT NO-TOUCH (Redis before
// 7.2) and Options.AllowTouch is off. Nothing was sent. It is
// source.ErrTouch.
var ErrTouch = source.ErrTouch

// TouchState says whether the reads that touch keys change the eviction
// state of a primary's keys, and what the scanner did about it (see
// source.TouchState). Allowed is Options.AllowTouch.
type TouchState = source.TouchState

// touchState is the Conn's view of TouchState, set once by initTouch.
type touchState struct {
	touches    bool
	version    string
	why        string
	touched    atomic.Int64
	lenSkipped atomic.Int64
	// groupsSkipped counts the streams whose consumer groups were not read.
	groupsSkipped atomic.Int64
}

// Touch returns the TouchState of the connection, with the counts so far.
func (c *Conn) Touch() TouchState {
	return TouchState{
		Touches:       c.touch.touches,
		Allowed:       c.opts.AllowTouch,
		Version:       c.touch.version,
		Why:           c.touch.why,
		Touched:       c.touch.touched.Load(),
		LenSkipped:    c.touch.lenSkipped.Load(),
		GroupsSkipped: c.touch.groupsSkipped.Load(),
	}
}

// blocked reports whether touching reads must not be sent.
func (c *Conn) touchBlocked() bool { return c.touch.touches && !c.opts.AllowTouch }

// counting reports whether touching reads are sent and must be counted.
func (c *Conn) touchCounting() bool { return c.touch.touches && c.opts.AllowTouch }

// initTouch works out whether reads touch a primary's keys: they do unless
// the server has CLIENT NO-TOUCH or every read goes to a replica. It asks
// the node read for INFO server and replication (Sentinel: the master, or
// the replica the sentinel picks).
func (c *Conn) initTouch(ctx context.Context) error {
	var cl *redis.Client
	switch c.mode {
	case modeCluster:
		cl = c.client(c.base.Addr, 0, false)
	case modeSentinel:
		cl = c.client("", c.firstDB(), false)
	default:
		cl = c.client(c.base.Addr, c.firstDB(), false)
	}
	info, err := cl.Info(ctx, "server", "replication").Result()
	var rerr redis.Error
	if errors.As(err, &rerr) {
		info, err = cl.Info(ctx).Result() // one section at most (before 7.0)
	}
	if err != nil && !errors.As(err, &rerr) {
		return fmt.Errorf("reading server info: %w", err)
	}
	f := infoFields(info)
	if c.mode == modeSentinel && !c.opts.Replica && f["role"] != "master" {
		// A sentinel that is wrong, stale or hostile may name a replica:
		// its keys are those of some master, but the eviction state and
		// the idle times are not, and nothing says which master.
		role := cmp.Or(f["role"], "unknown (INFO replication has no role)")
		return fmt.Errorf("master %q via sentinel: the node the sentinel names has the role %s, not master; refusing to audit it as the master", c.opts.SentinelMaster, role)
	}
	c.touch.version = f["redis_version"]
	replica := c.opts.Replica || (c.mode == modeStandalone && f["role"] == "slave")
	c.touch.touches = !c.noTouch && !replica
	switch {
	case !c.touch.touches:
	case c.mode == modeSentinel && supportsNoTouch(c.touch.version):
		c.touch.why = "the connections keyreg makes through Sentinel do not send CLIENT NO-TOUCH"
	case c.touch.version != "":
		c.touch.why = "redis " + c.touch.version + " has no CLIENT NO-TOUCH"
	default:
		c.touch.why = "the server does not say it has CLIENT NO-TOUCH"
	}
	return nil
}
