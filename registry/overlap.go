package registry

import (
	"math/bits"
	"sort"
	"strings"
)

// This file proves statically which families can match the same key.
//
// Method. Every pattern is compiled to a small epsilon-free NFA with one
// start and one accepting state; each edge carries the exact set of bytes
// (a 256-bit set built from PlaceholderType.AcceptsAt) that may stand there.
// A literal byte is one edge, a fixed-length placeholder (uuid, ulid) is a
// chain of edges, and a variable-length placeholder is an entry edge plus a
// self-loop (Int gets an extra state so that a lone "-" is not accepted).
//
// Two patterns overlap iff the accepting pair is reachable in their product
// automaton, where a pair of edges can be taken together iff their byte sets
// intersect. A breadth-first search of the product gives a shortest common
// key directly, so the answer is exact: no sampling and no backtracking. It
// is also not a subset construction over all patterns at once, whose size
// can grow exponentially ("{a:any}0{id:ulid}" alone reaches 2^26 subsets);
// the product of two patterns has at most |A|*|B| states, a few hundred in
// practice (a map replaces the arrays for products over ovDenseMax states).
//
// Pairs that cannot overlap are discarded before any search by sound,
// cheap tests: the literal prefixes (bytes before the first placeholder) of
// both patterns must be prefixes of one another, which an index over
// prefixes enumerates without looking at incompatible pairs at all; the
// literal suffixes must be suffixes of one another; and the ranges of key
// length and of separator count must intersect. For a realistic registry
// these leave a few pairs per family, so 1,000 families take about 2 ms;
// 1,000 families that all start with a placeholder, so that every pair is a
// candidate, take about 25 ms (BenchmarkOverlaps1000).

// Overlap says that two families can match the same concrete key.
type Overlap struct {
	A, B    *Family // A.Index < B.Index
	Example string  // a shortest concrete key that both patterns match
}

// Overlaps proves, exactly and statically, which pairs of families can match
// the same key: a pair is reported iff some key matches both patterns, with a
// shortest such key as the example. sep is the registry's separator.
// Families with a nil Pattern are skipped. Each pair is reported once, with
// A.Index < B.Index, and the result is sorted by (A.Index, B.Index).
//
// Each candidate pair is decided by a search of at most |A|*|B| states, so
// the cost is polynomial in the size of the patterns, but quadratic in the
// number of families that pass the filters. Overlaps has no bound; lint uses
// OverlapsWithin.
func Overlaps(families []*Family, sep byte) []Overlap {
	out, _ := OverlapsWithin(families, sep, -1, -1)
	return out
}

// Bounds of the overlap proof that lint runs, so that a registry of many
// overlapping or adversarial patterns cannot take it down (docs/registry.md,
// "Limits").
const (
	// OverlapBudget bounds the work: the product states reached by the
	// searches of all candidate pairs, plus one per pair. One pair never
	// reaches more than |A|*|B| states, so the proof stops within one
	// pair's search of the budget. The 1,000-family registries of the
	// benchmarks use under a tenth of it.
	OverlapBudget = 1 << 25
	// MaxOverlaps bounds the overlaps reported.
	MaxOverlaps = 200
)

// OverlapsWithin is Overlaps with bounds: it stops once the product states
// reached by the searches exceed budget, or once max overlaps are found
// (a negative bound is no bound). complete is false when it stopped early:
// then pairs are left unchecked, and the registry is not proven free of
// overlaps. Pairs of families that presets designed to share keys
// (Family.SharesKeysWith) are not searched: their keys go to the family
// with the most literal bytes, as the preset intends.
func OverlapsWithin(families []*Family, sep byte, budget int64, max int) (out []Overlap, complete bool) {
	infos := make([]ovInfo, 0, len(families))
	c := ovCompiler{sep: sep, shapes: map[PlaceholderType]*ovShape{}}
	for _, f := range families {
		if f == nil || f.Pattern == nil {
			continue
		}
		infos = append(infos, c.summarize(f))
	}
	byHead := make(map[string][]int, len(infos))
	for i := range infos {
		byHead[infos[i].head] = append(byHead[infos[i].head], i)
	}
	var (
		s    ovSearcher
		work int64
	)
	complete = true
search:
	for i := range infos {
		a := &infos[i]
		// Every family whose literal prefix is a prefix of a's. A pair with
		// different prefixes is visited from the longer one only; a pair with
		// equal prefixes from the earlier one only.
		for l := 0; l <= len(a.head); l++ {
			for _, j := range byHead[a.head[:l]] {
				if l == len(a.head) && j <= i {
					continue
				}
				b := &infos[j]
				if !ovCompatible(a, b) || a.f.SharesKeysWith(b.f) {
					continue
				}
				if (budget >= 0 && work > budget) || (max >= 0 && len(out) >= max) {
					complete = false
					break search
				}
				ex, ok := s.intersect(&a.nfa, &b.nfa)
				work += int64(len(s.queue)) + 1 // the states the search reached
				if !ok {
					continue
				}
				fa, fb := a.f, b.f
				if fb.Index < fa.Index || (fb.Index == fa.Index && j < i) {
					fa, fb = fb, fa
				}
				out = append(out, Overlap{A: fa, B: fb, Example: ex})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].A.Index != out[j].A.Index {
			return out[i].A.Index < out[j].A.Index
		}
		return out[i].B.Index < out[j].B.Index
	})
	return out, complete
}

// ovInfo is what Overlaps knows about one family's pattern.
type ovInfo struct {
	f              *Family
	nfa            ovNFA
	head, tail     string // literal bytes before the first and after the last placeholder
	minLen, maxLen int    // key length range; maxLen < 0 means unbounded
	minSep, maxSep int    // separator count range; maxSep < 0 means unbounded
}

// ovCompiler compiles patterns for one separator, caching the byte sets of
// each placeholder type.
type ovCompiler struct {
	sep    byte
	shapes map[PlaceholderType]*ovShape
}

// ovShape is the automaton fragment of a placeholder type.
type ovShape struct {
	fixed []ovSet // fixed-length types: the bytes accepted at each index
	// Variable-length types: a value is one byte of enter followed by any
	// number of bytes of rest, or one byte of lead (Int's '-', not a value
	// on its own) followed by one or more bytes of rest.
	enter, lead, rest ovSet
}

// shape returns the fragment of t, built from AcceptsAt and Valid.
func (c *ovCompiler) shape(t PlaceholderType) *ovShape {
	if sh, ok := c.shapes[t]; ok {
		return sh
	}
	accepts := func(i int) ovSet {
		var s ovSet
		for b := 0; b < 256; b++ {
			if t.AcceptsAt(i, byte(b), c.sep) {
				s.add(byte(b))
			}
		}
		return s
	}
	sh := &ovShape{}
	if k := t.FixedLen(); k > 0 {
		for i := 0; i < k; i++ {
			sh.fixed = append(sh.fixed, accepts(i))
		}
	} else {
		// AcceptsAt does not depend on the index past 0 for these types.
		first, rest := accepts(0), accepts(1)
		onlyFirst := first.andNot(&rest)
		for b := 0; b < 256; b++ {
			if onlyFirst.has(byte(b)) && !t.Valid(string([]byte{byte(b)}), c.sep) {
				sh.lead.add(byte(b))
			}
		}
		sh.enter, sh.rest = first.andNot(&sh.lead), rest
	}
	c.shapes[t] = sh
	return sh
}

// summarize compiles the pattern of f and works out its filter data.
func (c *ovCompiler) summarize(f *Family) ovInfo {
	p, sep := f.Pattern, c.sep
	in := ovInfo{f: f, nfa: c.compile(p)}
	if n := len(p.Parts); n > 0 {
		if !p.Parts[0].IsPlaceholder() {
			in.head = p.Parts[0].Lit
		}
		if !p.Parts[n-1].IsPlaceholder() {
			in.tail = p.Parts[n-1].Lit
		}
	}
	for _, pt := range p.Parts {
		if !pt.IsPlaceholder() {
			in.minLen += len(pt.Lit)
			in.minSep += strings.Count(pt.Lit, string(sep))
			continue
		}
		if k := pt.Type.FixedLen(); k > 0 {
			in.minLen += k
		} else {
			in.minLen++
			in.maxLen = -1
		}
		if ovCanHoldSep(pt.Type, sep) {
			in.maxSep = -1
		}
	}
	if in.maxLen >= 0 {
		in.maxLen = in.minLen
	}
	if in.maxSep >= 0 {
		in.maxSep = in.minSep
	}
	return in
}

// ovCanHoldSep reports whether a value of t may contain the separator.
func ovCanHoldSep(t PlaceholderType, sep byte) bool {
	n := t.FixedLen()
	if n == 0 {
		n = 2 // variable-length types accept the same bytes at every index >= 1
	}
	for i := 0; i < n; i++ {
		if t.AcceptsAt(i, sep, sep) {
			return true
		}
	}
	return false
}

// ovCompatible applies the cheap necessary conditions for an overlap, other
// than the literal prefixes, which the caller has checked.
func ovCompatible(a, b *ovInfo) bool {
	if !strings.HasSuffix(a.tail, b.tail) && !strings.HasSuffix(b.tail, a.tail) {
		return false
	}
	if (a.maxLen >= 0 && a.maxLen < b.minLen) || (b.maxLen >= 0 && b.maxLen < a.minLen) {
		return false
	}
	if (a.maxSep >= 0 && a.maxSep < b.minSep) || (b.maxSep >= 0 && b.maxSep < a.minSep) {
		return false
	}
	return true
}

// ovSet is a set of bytes.
type ovSet [4]uint64

func (s *ovSet) add(b byte)         { s[b>>6] |= 1 << (b & 63) }
func (s *ovSet) has(b byte) bool    { return s[b>>6]&(1<<(b&63)) != 0 }
func (s *ovSet) and(t *ovSet) ovSet { return ovSet{s[0] & t[0], s[1] & t[1], s[2] & t[2], s[3] & t[3]} }
func (s *ovSet) andNot(t *ovSet) ovSet {
	return ovSet{s[0] &^ t[0], s[1] &^ t[1], s[2] &^ t[2], s[3] &^ t[3]}
}
func (s *ovSet) empty() bool { return s[0]|s[1]|s[2]|s[3] == 0 }

// Byte groups in the order pick prefers them: lower-case letters, digits,
// upper-case letters, other printable ASCII, then anything.
var ovPreferred = func() []ovSet {
	var groups []ovSet
	var seen ovSet
	for _, r := range [][2]int{{'a', 'z'}, {'0', '9'}, {'A', 'Z'}, {'!', '~'}, {0, 255}} {
		var g ovSet
		for b := r[0]; b <= r[1]; b++ {
			if !seen.has(byte(b)) {
				seen.add(byte(b))
				g.add(byte(b))
			}
		}
		groups = append(groups, g)
	}
	return groups
}()

// pick returns the most readable byte of a non-empty set.
func (s *ovSet) pick() byte {
	for i := range ovPreferred {
		x := s.and(&ovPreferred[i])
		for w, word := range x {
			if word != 0 {
				return byte(w*64 + bits.TrailingZeros64(word))
			}
		}
	}
	panic("registry: pick from an empty byte set")
}

// ovEdge is a transition on any byte of set.
type ovEdge struct {
	set      ovSet
	from, to int32
}

// ovNFA is an epsilon-free automaton for one pattern: state 0 is the start
// and the last state is the only accepting one.
type ovNFA struct {
	n     int32    // number of states
	edges []ovEdge // sorted by from once built
	first []int32  // edges[first[s]:first[s+1]] leave state s
}

func (n *ovNFA) state() int32 {
	n.n++
	return n.n - 1
}

func (n *ovNFA) edge(from int32, set ovSet, to int32) {
	if !set.empty() {
		n.edges = append(n.edges, ovEdge{set, from, to})
	}
}

// out returns the transitions leaving state s.
func (n *ovNFA) out(s int32) []ovEdge { return n.edges[n.first[s]:n.first[s+1]] }

// index sorts the edges by state and fills first.
func (n *ovNFA) index() {
	less := func(i, j int) bool { return n.edges[i].from < n.edges[j].from }
	if !sort.SliceIsSorted(n.edges, less) { // compile adds them in order
		sort.SliceStable(n.edges, less)
	}
	n.first = make([]int32, n.n+1)
	for _, e := range n.edges {
		n.first[e.from+1]++
	}
	for s := int32(1); s <= n.n; s++ {
		n.first[s] += n.first[s-1]
	}
}

// compile builds the automaton of p. It accepts exactly the keys that match
// p: literals byte for byte, each placeholder per AcceptsAt and Valid.
func (c *ovCompiler) compile(p *Pattern) ovNFA {
	size := 0
	for _, pt := range p.Parts {
		size += len(pt.Lit)
		if pt.IsPlaceholder() {
			size += max(pt.Type.FixedLen(), 4)
		}
	}
	n := ovNFA{edges: make([]ovEdge, 0, size)}
	cur := n.state()
	for _, pt := range p.Parts {
		if !pt.IsPlaceholder() {
			for i := 0; i < len(pt.Lit); i++ {
				var s ovSet
				s.add(pt.Lit[i])
				next := n.state()
				n.edge(cur, s, next)
				cur = next
			}
			continue
		}
		sh := c.shape(pt.Type)
		if sh.fixed != nil {
			for i := range sh.fixed {
				next := n.state()
				n.edge(cur, sh.fixed[i], next)
				cur = next
			}
			continue
		}
		// The accepting state must stay the last one, so lead's state
		// comes first.
		mid := int32(-1)
		if !sh.lead.empty() {
			mid = n.state()
		}
		end := n.state()
		n.edge(cur, sh.enter, end)
		if mid >= 0 {
			n.edge(cur, sh.lead, mid)
			n.edge(mid, sh.rest, end)
		}
		n.edge(end, sh.rest, end)
		cur = end
	}
	n.index()
	return n
}

// ovDenseMax is the largest product, in states, that ovSearcher indexes with
// arrays; larger ones (patterns thousands of bytes long) use a map.
const ovDenseMax = 1 << 20

// ovSearcher runs breadth-first searches of product automata, reusing its
// buffers from one pair to the next. Product state (p, q) has id p*|B|+q.
type ovSearcher struct {
	seen   []uint32 // seen[id] == gen marks a visited state
	gen    uint32
	parent []int // the state a visited state was reached from
	by     []byte
	sparse map[int]ovStep // instead of the three above, for a large product
	queue  []int
}

type ovStep struct {
	parent int
	by     byte
}

// reset prepares for a product of size states.
func (s *ovSearcher) reset(size int) {
	s.queue = s.queue[:0]
	if size > ovDenseMax {
		s.sparse = map[int]ovStep{}
		return
	}
	s.sparse = nil
	if len(s.seen) < size {
		s.seen = make([]uint32, size)
		s.parent = make([]int, size)
		s.by = make([]byte, size)
		s.gen = 0
	}
	s.gen++
	if s.gen == 0 {
		clear(s.seen)
		s.gen = 1
	}
}

// visit marks state id as reached from parent on byte by. It reports false
// when id was visited before.
func (s *ovSearcher) visit(id, parent int, by byte) bool {
	if s.sparse != nil {
		if _, ok := s.sparse[id]; ok {
			return false
		}
		s.sparse[id] = ovStep{parent, by}
		return true
	}
	if s.seen[id] == s.gen {
		return false
	}
	s.seen[id], s.parent[id], s.by[id] = s.gen, parent, by
	return true
}

// step returns how state id was reached.
func (s *ovSearcher) step(id int) (parent int, by byte) {
	if s.sparse != nil {
		st := s.sparse[id]
		return st.parent, st.by
	}
	return s.parent[id], s.by[id]
}

// intersect returns a shortest key accepted by both a and b.
func (s *ovSearcher) intersect(a, b *ovNFA) (string, bool) {
	na, nb := int(a.n), int(b.n)
	s.reset(na * nb)
	goal := na*nb - 1 // both accepting states are last
	s.visit(0, -1, 0)
	s.queue = append(s.queue, 0)
	found := false // goal is never the start: patterns are not empty
	for qi := 0; qi < len(s.queue) && !found; qi++ {
		cur := s.queue[qi]
		outA, outB := a.out(int32(cur/nb)), b.out(int32(cur%nb))
		for i := range outA {
			ea := &outA[i]
			for j := range outB {
				eb := &outB[j]
				x := ea.set.and(&eb.set)
				if x.empty() {
					continue
				}
				next := int(ea.to)*nb + int(eb.to)
				if !s.visit(next, cur, x.pick()) {
					continue
				}
				if next == goal {
					found = true
					break
				}
				s.queue = append(s.queue, next)
			}
			if found {
				break
			}
		}
	}
	if !found {
		return "", false
	}
	var rev []byte
	for id := goal; id != 0; {
		parent, by := s.step(id)
		rev = append(rev, by)
		id = parent
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return string(rev), true
}
