package infer

import (
	"maps"
	"slices"
	"time"
)

// Fact is what the scan learnt about one key.
type Fact struct {
	Key    string
	DB     int           // the logical database the key lives in
	Type   string        // as TYPE reports it
	TTL    time.Duration // -1 when the key has none
	Memory int64         // MEMORY USAGE in bytes, or -1 when not measured
	Len    int64         // the length of a collection, or -1 when not read
}

// Bounds of Stats.
const (
	// MaxExamples is the number of example keys kept per candidate family,
	// by reservoir sampling: the keys whose values are sampled.
	MaxExamples = 64
	// maxTypes bounds the distinct Redis types counted (module types
	// included).
	maxTypes = 16
	// maxSizes bounds the sizes kept for percentiles.
	maxSizes = 256
)

// Stats aggregates the facts of the keys of one candidate family, in
// bounded memory.
type Stats struct {
	Keys    int64
	Types   map[string]int64 // keys per Redis type, at most maxTypes types
	WithTTL int64
	MinTTL  time.Duration // among the keys with a TTL
	MaxTTL  time.Duration
	// Memory sums MEMORY USAGE over MemoryKeys keys.
	Memory, MemoryKeys int64
	// Examples holds up to MaxExamples keys, a uniform sample of all;
	// ExampleTypes[i] is the Redis type of Examples[i] and ExampleDBs[i]
	// its database, for sampling.
	Examples     []string
	ExampleTypes []string
	ExampleDBs   []int
	// Sizes and Lens hold up to maxSizes memory sizes and collection
	// lengths, uniform samples, for the percentiles of --limits.
	Sizes, Lens []int64
	seen        int64 // facts offered to the reservoirs
	sizesSeen   int64
	lensSeen    int64
}

// splitmix is a fixed hash of n: the reservoirs' randomness, so that the
// same keyspace in the same order gives the same registry, without
// allocating a generator per key.
func splitmix(n uint64) uint64 {
	n += 0x9e3779b97f4a7c15
	n = (n ^ n>>30) * 0xbf58476d1ce4e5b9
	n = (n ^ n>>27) * 0x94d049bb133111eb
	return n ^ n>>31
}

// reservoir offers v to r, which keeps a uniform sample of at most max of
// the n values offered so far (n counts v).
func reservoir[T any](r []T, v T, n int64, max int) []T {
	if len(r) < max {
		return append(r, v)
	}
	if j := int64(splitmix(uint64(n)) % uint64(n)); j < int64(max) {
		r[j] = v
	}
	return r
}

// Add counts one key.
func (s *Stats) Add(f Fact) {
	s.Keys++
	if s.Types == nil {
		s.Types = map[string]int64{}
	}
	if _, ok := s.Types[f.Type]; ok || len(s.Types) < maxTypes {
		s.Types[f.Type]++
	}
	if f.TTL >= 0 {
		if s.WithTTL == 0 || f.TTL < s.MinTTL {
			s.MinTTL = f.TTL
		}
		if f.TTL > s.MaxTTL {
			s.MaxTTL = f.TTL
		}
		s.WithTTL++
	}
	if f.Memory >= 0 {
		s.Memory += f.Memory
		s.MemoryKeys++
		s.sizesSeen++
		s.Sizes = reservoir(s.Sizes, f.Memory, s.sizesSeen, maxSizes)
	}
	if f.Len >= 0 {
		s.lensSeen++
		s.Lens = reservoir(s.Lens, f.Len, s.lensSeen, maxSizes)
	}
	s.seen++
	switch i := reservoirSlot(len(s.Examples), s.seen, MaxExamples); {
	case i == len(s.Examples):
		s.Examples = append(s.Examples, f.Key)
		s.ExampleTypes = append(s.ExampleTypes, f.Type)
		s.ExampleDBs = append(s.ExampleDBs, f.DB)
	case i >= 0:
		s.Examples[i], s.ExampleTypes[i], s.ExampleDBs[i] = f.Key, f.Type, f.DB
	}
}

// reservoirSlot says where the n-th value offered goes in a reservoir of
// size have and capacity max: have to append it, an index to replace, or
// -1 to drop it.
func reservoirSlot(have int, n int64, max int) int {
	if have < max {
		return have
	}
	if j := int64(splitmix(uint64(n)) % uint64(n)); j < int64(max) {
		return int(j)
	}
	return -1
}

// Merge adds the keys counted by o to s. The reservoirs of the two are
// combined in proportion to the keys each saw, so the examples stay a
// uniform sample of both.
func (s *Stats) Merge(o *Stats) {
	if o.Keys == 0 {
		return
	}
	if s.Keys == 0 {
		*s = o.clone()
		return
	}
	for t, n := range o.Types {
		if _, ok := s.Types[t]; ok || len(s.Types) < maxTypes {
			s.Types[t] += n
		}
	}
	if o.WithTTL > 0 {
		if s.WithTTL == 0 || o.MinTTL < s.MinTTL {
			s.MinTTL = o.MinTTL
		}
		s.MaxTTL = max(s.MaxTTL, o.MaxTTL)
	}
	s.WithTTL += o.WithTTL
	s.Memory += o.Memory
	s.MemoryKeys += o.MemoryKeys
	types := mergeSample(s.ExampleTypes, s.seen, o.ExampleTypes, o.seen, MaxExamples)
	dbs := mergeSample(s.ExampleDBs, s.seen, o.ExampleDBs, o.seen, MaxExamples)
	s.Examples = mergeSample(s.Examples, s.seen, o.Examples, o.seen, MaxExamples)
	s.ExampleTypes, s.ExampleDBs = types, dbs
	s.Sizes = mergeSample(s.Sizes, s.sizesSeen, o.Sizes, o.sizesSeen, maxSizes)
	s.Lens = mergeSample(s.Lens, s.lensSeen, o.Lens, o.lensSeen, maxSizes)
	s.Keys += o.Keys
	s.seen += o.seen
	s.sizesSeen += o.sizesSeen
	s.lensSeen += o.lensSeen
}

func (s *Stats) clone() Stats {
	c := *s
	c.Types = make(map[string]int64, len(s.Types))
	for t, n := range s.Types {
		c.Types[t] = n
	}
	c.Examples = slices.Clone(s.Examples)
	c.ExampleTypes = slices.Clone(s.ExampleTypes)
	c.ExampleDBs = slices.Clone(s.ExampleDBs)
	c.Sizes = slices.Clone(s.Sizes)
	c.Lens = slices.Clone(s.Lens)
	return c
}

// mergeSample combines two uniform samples of na and nb values into one of
// at most max, taking from each in proportion to the values it stands for.
func mergeSample[T any](a []T, na int64, b []T, nb int64, max int) []T {
	if len(a)+len(b) <= max {
		return append(slices.Clone(a), b...)
	}
	takeA := int(int64(max) * na / (na + nb))
	takeA = min(takeA, len(a))
	takeB := min(max-takeA, len(b))
	takeA = min(max-takeB, len(a))
	out := make([]T, 0, takeA+takeB)
	out = append(out, a[:takeA]...)
	return append(out, b[:takeB]...)
}

// Type returns the Redis type most keys have, and whether every key has it.
// Ties go to the name that sorts first, so the result is stable.
func (s *Stats) Type() (typ string, all bool) {
	var best int64
	for _, t := range slices.Sorted(maps.Keys(s.Types)) {
		if n := s.Types[t]; n > best {
			typ, best = t, n
		}
	}
	return typ, best == s.Keys
}
