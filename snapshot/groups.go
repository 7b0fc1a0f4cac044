package snapshot

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/keyreg/keyreg/source"
)

// StreamGroup is what a snapshot holds of one consumer group of a stream
// key that Entry.WantGroups asked for: what XINFO GROUPS and XINFO
// CONSUMERS would have said when the file was saved.
type StreamGroup struct {
	Name      string
	Consumers int64
	// Pending counts the entries delivered and not acknowledged (the
	// group's PEL).
	Pending int64
	// Lag is what XINFO GROUPS reports as lag, computed as Redis 7.0 does
	// (streamReplyWithCGLag); HasLag is false where Redis reports none: in
	// files of Redis before 7.0 (no entries-read counter) and when entries
	// deleted after the group's last id make it unknowable.
	Lag    int64
	HasLag bool
	// IdleConsumer is the consumer holding pending entries that was seen
	// longest ago (its name cut to source.MaxConsumerName bytes), SeenAt
	// when; HasIdle when one holds entries and the query asked for
	// consumers.
	IdleConsumer string
	SeenAt       time.Time
	HasIdle      bool
}

// WantGroups asks the reader to keep, while it skips or samples this
// stream's value, the facts of the consumer groups q names: Groups then
// holds those the stream has, in q's order, and HasGroups is set. It must
// be called before Skip or Value; other entries ignore it.
func (e *Entry) WantGroups(q []source.GroupQuery) { e.want = q }

// streamID is a stream entry id.
type streamID struct{ ms, seq uint64 }

func (a streamID) cmp(b streamID) int {
	switch {
	case a.ms != b.ms:
		if a.ms < b.ms {
			return -1
		}
		return 1
	case a.seq != b.seq:
		if a.seq < b.seq {
			return -1
		}
		return 1
	}
	return 0
}

func (a streamID) zero() bool { return a.ms == 0 && a.seq == 0 }

// streamMeta is the stream's own counters, as saved after its listpacks.
type streamMeta struct {
	length                  int64
	last, first, maxDeleted streamID
	entriesAdded            uint64
	v2                      bool // the file has first, maxDeleted, entriesAdded and per-group entries read
}

func (r *Reader) readID(what string) (streamID, error) {
	ms, err := r.readLen(what)
	if err != nil {
		return streamID{}, err
	}
	seq, err := r.readLen(what)
	return streamID{ms, seq}, err
}

// invalidRead is SCG_INVALID_ENTRIES_READ: Redis saves -1 as a length.
const invalidRead = -1

// lag is streamReplyWithCGLag of Redis 7.0 (t_stream.c).
func (m *streamMeta) lag(last streamID, entriesRead int64) (int64, bool) {
	if !m.v2 {
		return 0, false
	}
	if m.entriesAdded == 0 {
		return 0, true
	}
	if entriesRead != invalidRead && !m.tombstonesFrom(last) {
		return int64(m.entriesAdded) - entriesRead, true
	}
	if n := m.distance(last); n != invalidRead {
		return int64(m.entriesAdded) - n, true
	}
	return 0, false
}

// tombstonesFrom is streamRangeHasTombstones(s, start, NULL).
func (m *streamMeta) tombstonesFrom(start streamID) bool {
	if m.length == 0 || m.maxDeleted.zero() || m.first.cmp(m.maxDeleted) > 0 {
		return false
	}
	return start.cmp(m.maxDeleted) <= 0
}

// distance is streamEstimateDistanceFromFirstEverEntry.
func (m *streamMeta) distance(id streamID) int64 {
	added := int64(m.entriesAdded)
	if m.entriesAdded == 0 {
		return 0
	}
	if m.length == 0 && id.cmp(m.last) < 1 {
		return added
	}
	switch c := id.cmp(m.last); {
	case c == 0:
		return added
	case c > 0:
		return invalidRead
	}
	if m.maxDeleted.zero() || m.maxDeleted.cmp(m.first) < 0 {
		switch c := id.cmp(m.first); {
		case c < 0:
			return added - m.length
		case c == 0:
			return added - m.length + 1
		}
	}
	return invalidRead
}

// maxGroupName bounds the bytes of a group name compared with the wanted
// ones; a longer name is none of them (the registry bounds its names).
const maxGroupName = 256

// readGroups reads the consumer groups of a stream, keeping the facts of
// those e wants.
func (r *Reader) readGroups(e *Entry, t byte, m *streamMeta) error {
	groups, err := r.readCount("a consumer group count")
	if err != nil {
		return err
	}
	// The wanted groups the stream has, by their index in e.want.
	found := make([]*StreamGroup, len(e.want))
	var buf [maxGroupName]byte
	for range groups {
		h, err := r.readStrHdr("a consumer group name")
		if err != nil {
			return err
		}
		name, err := r.readStr(h, maxGroupName, buf[:0], "a consumer group name")
		if err != nil {
			return err
		}
		want := -1
		if h.size() <= maxGroupName {
			for i, q := range e.want {
				if q.Name == string(name) {
					want = i
					break
				}
			}
		}
		last, err := r.readID("a consumer group id")
		if err != nil {
			return err
		}
		read := int64(invalidRead)
		if t >= tStreamListpacks2 {
			n, err := r.readLen("a consumer group's entries read")
			if err != nil {
				return err
			}
			if n <= math.MaxInt64 {
				read = int64(n)
			}
		}
		pel, err := r.readCount("a pending entries count")
		if err != nil {
			return err
		}
		for range pel {
			if err := r.in.discard(16+8, "a pending entry"); err != nil {
				return err
			}
			if _, err := r.readLen("a delivery count"); err != nil {
				return err
			}
		}
		consumers, err := r.readCount("a consumer count")
		if err != nil {
			return err
		}
		g := StreamGroup{Pending: pel, Consumers: consumers}
		if want >= 0 {
			g.Name = e.want[want].Name
			g.Lag, g.HasLag = m.lag(last, read)
		}
		var cname [source.MaxConsumerName]byte
		for range consumers {
			h, err := r.readStrHdr("a consumer name")
			if err != nil {
				return err
			}
			cn, err := r.readStr(h, source.MaxConsumerName, cname[:0], "a consumer name")
			if err != nil {
				return err
			}
			p, err := r.in.next(8, "a consumer's seen time")
			if err != nil {
				return err
			}
			seen := int64(binary.LittleEndian.Uint64(p))
			if t >= tStreamListpacks3 {
				if err := r.in.discard(8, "a consumer's active time"); err != nil {
					return err
				}
			}
			cp, err := r.readCount("a consumer's pending count")
			if err != nil {
				return err
			}
			if cp > 1<<40 {
				return &FormatError{Offset: r.in.offset(), Expected: "a consumer's pending count", Found: fmt.Sprint(cp)}
			}
			if err := r.in.discard(cp*16, "a consumer's pending ids"); err != nil {
				return err
			}
			if want >= 0 && e.want[want].Consumers && cp > 0 && (!g.HasIdle || time.UnixMilli(seen).Before(g.SeenAt)) {
				g.IdleConsumer, g.SeenAt, g.HasIdle = string(cn), time.UnixMilli(seen), true
			}
		}
		if want >= 0 && found[want] == nil {
			found[want] = &g
		}
	}
	if e.want == nil {
		return nil
	}
	e.Groups, e.HasGroups = nil, true
	for _, g := range found {
		if g != nil {
			e.Groups = append(e.Groups, *g)
		}
	}
	return nil
}
