package scanner

import (
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ErrReplicaMode is returned by WriteClient on a Conn opened with
// Options.Replica: a remediation writes to primaries only.
var ErrReplicaMode = errors.New("the connection reads replicas (--replica): remediation writes to the primary")

// WriteClient returns the client of the primary that holds key in database
// db, for the remediation commands (package remedy), the only part of keyreg
// that writes. The scanner itself never sends a write command through it:
// it only finds the node (the cluster master serving the key's slot, the
// Sentinel's master, or the standalone server). The client keeps the
// Conn's settings, CLIENT NO-TOUCH included on Redis 7.2 and later.
func (c *Conn) WriteClient(key string, db int) (*redis.Client, error) {
	if c.opts.Replica {
		return nil, ErrReplicaMode
	}
	switch c.mode {
	case modeSentinel:
		return c.clientOf(clientKey{db: db, primary: true}), nil
	case modeCluster:
		if db != 0 {
			return nil, fmt.Errorf("a cluster has database 0 only, not %d", db)
		}
		c.mu.Lock()
		topo := c.topo
		c.mu.Unlock()
		if topo == nil {
			return nil, errors.New("the cluster topology is not known")
		}
		s, ok := topo.shardFor(key)
		if !ok {
			return nil, c.redact(fmt.Errorf("no healthy master serves the slot %d", keySlot(key)))
		}
		return c.client(s.master.addr, 0, false), nil
	}
	return c.client(c.base.Addr, db, false), nil
}

// WriteNodes returns one client per primary (every cluster master, or the
// one primary) in database db, for the checks a remediation makes before it
// writes (role, ACL, latency).
func (c *Conn) WriteNodes(db int) ([]*redis.Client, error) {
	if c.opts.Replica {
		return nil, ErrReplicaMode
	}
	switch c.mode {
	case modeSentinel:
		return []*redis.Client{c.clientOf(clientKey{db: db, primary: true})}, nil
	case modeCluster:
		c.mu.Lock()
		topo := c.topo
		c.mu.Unlock()
		if topo == nil {
			return nil, errors.New("the cluster topology is not known")
		}
		var out []*redis.Client
		for _, s := range topo.shards {
			out = append(out, c.client(s.master.addr, 0, false))
		}
		return out, nil
	}
	return []*redis.Client{c.client(c.base.Addr, db, false)}, nil
}
