package scanner

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// clusterSlots is the number of hash slots in Redis Cluster.
const clusterSlots = 16384

// clusterNode is one line of CLUSTER NODES.
type clusterNode struct {
	id       string
	addr     string
	master   bool
	masterID string // for replicas
	healthy  bool   // no fail/handshake/noaddr flag and link connected
	state    string // its flags and link state, as CLUSTER NODES says them (bounded)
	slots    [][2]int
}

// shard is a master with slots and the node chosen to scan it.
type shard struct {
	master  clusterNode
	scan    string // address to scan: the master, or a replica in replica mode
	replica bool
}

// topology is the slot map read from one node.
type topology struct {
	shards   []shard
	covered  int      // slots served by a healthy master that is scanned
	unserved [][2]int // the other slots, as sorted inclusive ranges
}

// loadTopology reads CLUSTER NODES from the seed (or any known node) and
// picks the node to scan per shard.
func (c *Conn) loadTopology(ctx context.Context) (*topology, error) {
	seeds := []string{c.base.Addr}
	if c.topo != nil {
		for _, s := range c.topo.shards {
			seeds = append(seeds, s.master.addr)
		}
	}
	var lastErr error
	for _, addr := range seeds {
		out, err := c.client(addr, 0, false).ClusterNodes(ctx).Result()
		if err != nil {
			lastErr = fmt.Errorf("cluster nodes on %s: %w", addr, err)
			continue
		}
		seedHost, _, _ := net.SplitHostPort(addr)
		nodes, err := parseClusterNodes(out, seedHost)
		if err != nil {
			return nil, fmt.Errorf("cluster nodes on %s: %w", addr, err)
		}
		return buildTopology(nodes, c.opts.Replica)
	}
	return nil, lastErr
}

// parseClusterNodes parses the CLUSTER NODES reply. Nodes that do not know
// their own IP report ":port"; seedHost fills it in.
func parseClusterNodes(out, seedHost string) ([]clusterNode, error) {
	var nodes []clusterNode
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 8 {
			return nil, fmt.Errorf("malformed line %q", line)
		}
		addr := f[1]
		if i := strings.IndexAny(addr, "@,"); i >= 0 {
			addr = addr[:i]
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("malformed address %q: %w", f[1], err)
		}
		if host == "" {
			host = seedHost
		}
		flags := "," + f[2] + ","
		n := clusterNode{
			id:     f[0],
			addr:   net.JoinHostPort(host, port),
			master: strings.Contains(flags, ",master,"),
			healthy: !strings.Contains(flags, ",fail") && !strings.Contains(flags, ",handshake,") &&
				!strings.Contains(flags, ",noaddr,") && f[7] == "connected",
			state: clipState(f[2] + " " + f[7]),
		}
		if f[3] != "-" {
			n.masterID = f[3]
		}
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") {
				continue // migrating/importing slot marker
			}
			lo, hi, isRange := strings.Cut(s, "-")
			a, err := strconv.Atoi(lo)
			if err != nil {
				return nil, fmt.Errorf("malformed slot %q", s)
			}
			b := a
			if isRange {
				if b, err = strconv.Atoi(hi); err != nil {
					return nil, fmt.Errorf("malformed slot %q", s)
				}
			}
			if a < 0 || b < a || b >= clusterSlots {
				return nil, fmt.Errorf("malformed slot %q", s)
			}
			n.slots = append(n.slots, [2]int{a, b})
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// clipState bounds a node's flags and link state as reported: a server
// says a few words, a hostile one anything.
func clipState(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strings.ToValidUTF8(s, "?")
}

// buildTopology turns nodes into shards. In replica mode every shard must
// have a healthy replica; scanning the master instead would silently load
// the node the user asked to spare.
func buildTopology(nodes []clusterNode, replica bool) (*topology, error) {
	t := &topology{}
	var served [clusterSlots]bool
	for _, m := range nodes {
		if !m.master || len(m.slots) == 0 {
			continue
		}
		if !m.healthy {
			continue // its slots count as uncovered
		}
		sh := shard{master: m, scan: m.addr}
		if replica {
			found := false
			for _, r := range nodes {
				if !r.master && r.masterID == m.id && r.healthy {
					sh.scan, sh.replica, found = r.addr, true, true
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("replica mode: master %s has no healthy replica", m.addr)
			}
		}
		for _, r := range m.slots {
			for s := r[0]; s <= r[1]; s++ {
				served[s] = true
			}
		}
		t.shards = append(t.shards, sh)
	}
	if len(t.shards) == 0 {
		return nil, fmt.Errorf("cluster has no healthy master serving slots")
	}
	// A bitmap, not a sum of range lengths: two masters claiming the same
	// slots (a failover in progress) must not hide a gap elsewhere.
	for s := 0; s < clusterSlots; s++ {
		switch {
		case served[s]:
			t.covered++
		case len(t.unserved) > 0 && t.unserved[len(t.unserved)-1][1] == s-1:
			t.unserved[len(t.unserved)-1][1] = s
		default:
			t.unserved = append(t.unserved, [2]int{s, s})
		}
	}
	return t, nil
}

// SlotsError reports that a cluster scan completed on every healthy
// master, but some hash slots are served by no healthy master (a master is
// down and cluster-require-full-coverage is off, or slots are unassigned):
// their keys were not scanned, so the result is partial.
type SlotsError struct {
	// Served is the number of slots served by the masters scanned.
	Served int
	// Unserved holds the other slots as sorted, inclusive ranges.
	Unserved [][2]int
}

// maxRangesShown caps the slot ranges SlotsError names.
const maxRangesShown = 8

// Error names the unserved slot ranges, at most maxRangesShown of them.
func (e *SlotsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d cluster slots are served by no healthy master, so their keys were not scanned: slots ", clusterSlots-e.Served, clusterSlots)
	for i, r := range e.Unserved {
		if i == maxRangesShown {
			fmt.Fprintf(&b, " and %d more ranges", len(e.Unserved)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if r[0] == r[1] {
			b.WriteString(strconv.Itoa(r[0]))
		} else {
			fmt.Fprintf(&b, "%d-%d", r[0], r[1])
		}
	}
	return b.String()
}

// shardFor returns the shard serving key, or false.
func (t *topology) shardFor(key string) (shard, bool) {
	slot := int(keySlot(key))
	for _, s := range t.shards {
		for _, r := range s.master.slots {
			if slot >= r[0] && slot <= r[1] {
				return s, true
			}
		}
	}
	return shard{}, false
}

// keySlot is the Redis Cluster hash slot of key, honouring {hash tags}.
func keySlot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return crc16(key) % clusterSlots
}

// crc16 is CRC-16/XMODEM, the checksum Redis Cluster uses for key slots.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
