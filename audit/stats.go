package audit

import (
	"cmp"
	"container/heap"
	"slices"
	"strings"
	"time"

	"github.com/keyreg/keyreg/source"
)

// The keyspace statistics of a report: the largest keys, per-type size
// distributions and TTL histograms. Like the rest of the report they are
// bounded by constants (TopN, maxTypes, the buckets), never by the number
// of keys, and they merge (Merge).

// TTLBuckets names the buckets of a TTL histogram, in order: keys without
// a TTL, then TTLs under one minute, hour, day, seven and thirty days, and
// the rest.
var TTLBuckets = [numTTLBuckets]string{"none", "<1m", "<1h", "<1d", "<7d", "<30d", ">=30d"}

const numTTLBuckets = 7

var ttlBounds = [...]time.Duration{time.Minute, time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour}

// TTLHistogram counts keys per TTL bucket, in the order of TTLBuckets.
type TTLHistogram [numTTLBuckets]int64

// add counts a key whose PTTL is pttl (negative: no TTL).
func (h *TTLHistogram) add(pttl time.Duration) { h[ttlBucket(pttl)]++ }

// ttlBucket is the index of pttl's bucket in TTLBuckets.
func ttlBucket(pttl time.Duration) int {
	if pttl < 0 {
		return 0
	}
	for i, b := range ttlBounds {
		if pttl < b {
			return i + 1
		}
	}
	return numTTLBuckets - 1
}

// Merge adds the counts of o to h.
func (h *TTLHistogram) Merge(o *TTLHistogram) {
	for i := range h {
		h[i] += o[i]
	}
}

// Total is the number of keys counted.
func (h *TTLHistogram) Total() int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	return n
}

// TopKey is one of the largest keys.
type TopKey struct {
	Key    string // clipped like an example key
	DB     int
	Family string // "" for a key of no family
	Type   string
	// Bytes is the key's MEMORY USAGE when measured (from a snapshot: its
	// estimate from the decoded value), else 0.
	Bytes int64
	// Elements is the length of a collection when read, else 0.
	Elements int64
	// TTL is the key's remaining time to live, or -1 without one.
	TTL time.Duration
}

// TopKeys holds the largest keys by each measure, largest first.
type TopKeys struct {
	ByBytes    []*TopKey
	ByElements []*TopKey
}

// DefaultTopN is the number of keys TopKeys keeps per measure unless
// Options.Top says otherwise.
const DefaultTopN = 10

// MaxTopN bounds Options.Top.
const MaxTopN = 1000

// topHeap keeps the n largest keys by one measure: a min-heap whose root
// is the smallest kept, so that a key smaller than it costs one compare.
type topHeap struct {
	n     int
	by    func(*TopKey) int64
	items []*TopKey
	// floor is the measure of the root once the heap is full: a key
	// below it is not kept, which is all most keys cost.
	floor int64
}

func (h *topHeap) Len() int { return len(h.items) }
func (h *topHeap) Less(i, j int) bool {
	return topLess(h.by, h.items[i], h.items[j])
}
func (h *topHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *topHeap) Push(x any)    { h.items = append(h.items, x.(*TopKey)) }
func (h *topHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// topLess orders keys by measure, then by name descending, so that ties
// keep the same keys whatever the order the keys come in.
func topLess(by func(*TopKey) int64, a, b *TopKey) bool {
	if va, vb := by(a), by(b); va != vb {
		return va < vb
	}
	return cmp.Or(strings.Compare(b.Key, a.Key), cmp.Compare(b.DB, a.DB)) < 0
}

// wants reports whether a key measuring v (and named key) would be kept.
func (h *topHeap) wants(v int64, key string, db int) bool {
	if v <= 0 || v < h.floor || h.n <= 0 {
		return false
	}
	if len(h.items) < h.n {
		return true
	}
	root := h.items[0]
	rv := h.by(root)
	return v > rv || (v == rv && (key < root.Key || key == root.Key && db < root.DB))
}

// offer keeps t if it is among the n largest.
func (h *topHeap) offer(t *TopKey) {
	if !h.wants(h.by(t), t.Key, t.DB) {
		return
	}
	if len(h.items) < h.n {
		heap.Push(h, t)
	} else {
		h.items[0] = t
		heap.Fix(h, 0)
	}
	if len(h.items) == h.n {
		h.floor = h.by(h.items[0])
	}
}

// sorted returns the kept keys, largest first.
func (h *topHeap) sorted() []*TopKey {
	out := slices.Clone(h.items)
	slices.SortFunc(out, func(a, b *TopKey) int {
		if topLess(h.by, b, a) {
			return -1
		}
		if topLess(h.by, a, b) {
			return 1
		}
		return 0
	})
	if out == nil {
		out = []*TopKey{}
	}
	return out
}

func byBytes(t *TopKey) int64    { return t.Bytes }
func byElements(t *TopKey) int64 { return t.Elements }

// TypeStats describes the keys of one Redis type.
type TypeStats struct {
	Type string
	Keys int64
	// Bytes sums the measured sizes (see TopKey.Bytes); BytesDist is their
	// distribution over the keys whose size was measured.
	Bytes     int64
	BytesDist Sketch
	// Elements sums the collection lengths read; ElementsDist is their
	// distribution over the keys whose length was read.
	Elements     int64
	ElementsDist Sketch
	// Encodings counts the keys by object encoding (embstr, int, …) where
	// the source read it (Plan.Encoding: the strings of fenced lock
	// families). At most MaxEncodings, the rest "other".
	Encodings []EncodingCount
}

// EncodingCount is the number of keys of one object encoding.
type EncodingCount struct {
	Encoding string
	Keys     int64
}

// MaxEncodings bounds the encodings counted apart per type (and read back
// from a json report).
const MaxEncodings = 8

// addEncoding counts n keys of encoding enc; it allocates only for an
// encoding not seen before.
func (t *TypeStats) addEncoding(enc string, n int64) {
	for i := range t.Encodings {
		if t.Encodings[i].Encoding == enc {
			t.Encodings[i].Keys += n
			return
		}
	}
	if len(t.Encodings) >= MaxEncodings-1 && enc != "other" {
		t.addEncoding("other", n)
		return
	}
	t.Encodings = append(t.Encodings, EncodingCount{Encoding: strings.Clone(enc), Keys: n})
}

// maxTypes caps the types counted apart: module types carry their own
// names, and a key of a further type counts as type "other".
const maxTypes = 32

// stats aggregates the keyspace statistics of a run. TTL histograms are
// kept per family, and summed at the end.
type stats struct {
	// keyBytes sums the lengths of the key names; ttlMemory the measured
	// memory per TTL bucket.
	keyBytes        int64
	ttlMemory       TTLHistogram
	bytes, elements topHeap
	types           []*TypeStats // in the order first seen
	last            *TypeStats   // the type of the key before: most runs of keys share one
}

func newStats(n int) stats {
	return stats{bytes: topHeap{n: n, by: byBytes}, elements: topHeap{n: n, by: byElements}}
}

// typeOf returns the stats of type typ, adding them while under maxTypes.
func (s *stats) typeOf(typ string) *TypeStats {
	if s.last != nil && s.last.Type == typ {
		return s.last
	}
	s.last = s.find(typ)
	return s.last
}

func (s *stats) find(typ string) *TypeStats {
	for _, t := range s.types {
		if t.Type == typ {
			return t
		}
	}
	if len(s.types) >= maxTypes-1 && typ != "other" {
		return s.find("other")
	}
	t := &TypeStats{Type: strings.Clone(typ)}
	s.types = append(s.types, t)
	return t
}

// add counts one audited key of the family named family ("" for none). It
// allocates only for a new type and for a key that makes the top lists.
func (s *stats) add(k *source.KeyInfo, family string) {
	t := s.typeOf(k.Type)
	t.Keys++
	s.keyBytes += int64(len(k.Key))
	if k.Encoding != "" {
		t.addEncoding(k.Encoding, 1)
	}
	var b, e int64
	if k.HasMemory {
		s.ttlMemory[ttlBucket(k.PTTL)] += k.Memory
		b = k.Memory
		t.Bytes += b
		t.BytesDist.Add(b)
	}
	if k.HasLen {
		e = k.Len
		t.Elements += e
		t.ElementsDist.Add(e)
	}
	wb, we := s.bytes.wants(b, k.Key, k.DB), s.elements.wants(e, k.Key, k.DB)
	if !wb && !we {
		return
	}
	tk := &TopKey{Key: shortKey(k.Key), DB: k.DB, Family: family, Type: t.Type, Bytes: b, Elements: e, TTL: k.PTTL}
	if k.PTTL < 0 {
		tk.TTL = -1
	}
	if wb {
		s.bytes.offer(tk)
	}
	if we {
		s.elements.offer(tk)
	}
}

// sortTypes orders per-type stats by keys, most first, then by name.
func sortTypes(ts []*TypeStats) {
	for _, t := range ts {
		// Encodings too: most keys first, then by name.
		slices.SortFunc(t.Encodings, func(a, b EncodingCount) int {
			return cmp.Or(cmp.Compare(b.Keys, a.Keys), strings.Compare(a.Encoding, b.Encoding))
		})
	}
	slices.SortFunc(ts, func(a, b *TypeStats) int {
		return cmp.Or(cmp.Compare(b.Keys, a.Keys), strings.Compare(a.Type, b.Type))
	})
}
