package registry

import (
	"encoding/binary"
	"maps"
	"slices"
)

// A dfa is a deterministic automaton equivalent to the matcher's trie, so
// that Match reads each key byte once, without backtracking. NewMatcher
// builds it eagerly, by subset construction, in three steps:
//
//   - nfa expands the trie to one position per byte: a trie node, or a
//     point inside a placeholder value.
//   - subset builds the byte-level automaton over byte classes: two bytes
//     are in one class when no literal and no placeholder tells them apart,
//     so a registry needs a few dozen classes rather than 256. A state is a
//     set of NFA positions.
//   - compress keeps a transition row only for the states where the key
//     can go more than one way. Most states allow exactly one way on (the
//     rest of a literal, the next character of a UUID), and runs of them
//     become one run of byte sets, checked without following a row per
//     byte. A state that stays where it is on some bytes (inside a word or
//     an int value) skips those bytes in a tight loop.
//
// Following a row per byte costs a dependent memory load per byte, which is
// slower than the trie search for large registries; the runs and loops are
// what make the automaton fast.
//
// The compressed automaton is one array of 16-bit words holding a record
// per state, so that a state is one offset and taking a transition touches
// the target's record, which holds all the state needs. Records are small
// and laid out depth first, so that a key tends to walk forwards through
// memory that is already in the cache. A record starts with four words:
//
//	run state: acc, acc, next, n, m, lits, set_m+1 ... set_n
//	                                                the key continues with
//	                                                n bytes, the j-th in
//	                                                set_j; then go to next.
//	                                                The first m sets are one
//	                                                byte each: lits holds
//	                                                those bytes, two a word,
//	                                                in whole groups of four
//	                                                words (compared eight
//	                                                bytes at a time)
//	row state: acc, acc, loop, 0, row_0 ... row_nc  the key may continue with
//	                                                bytes of loop and stay
//	                                                here; a byte of class c
//	                                                goes to row_c
//
// acc is the terms index of the best family that ends in the state, or -1,
// in two words, low first. Sets are indexes in dfa.sets. Records start at
// multiples of recAlign words, and next and rows hold record offsets
// divided by recAlign; 0 is the dead state, and notBuilt a transition
// that was not built. The program is at most 1 MiB.
//
// The automaton is bounded by maxDFAStates. A transition beyond the bound
// is notBuilt, and Match falls back to the trie for the keys that take it.
type dfa struct {
	class [256]uint8
	prog  []uint16
	start int
	sets  [][256]bool // the first is empty
}

const (
	deadState  = 0
	startState = 1
	notBuilt   = 1<<16 - 1 // in dfa.prog
	// notBuiltState is a transition of the byte-level automaton that was
	// not built.
	notBuiltState = -1
)

// Fields of a record in dfa.prog.
const (
	recAcc   = 0 // two words
	recNext  = 2 // the next state of a run; the loop set of a row state
	recRun   = 3 // the length of a run, or 0
	recData  = 4 // the sets of a run; the row of a row state
	recAlign = 8 // words
)

// maxDFAStates bounds the byte-level automaton; realistic registries of a
// thousand families need about 20,000 states.
const maxDFAStates = 1 << 16

// maxRun bounds a run, which only a cycle of states with one way on (and
// so no match) could make longer than a pattern.
const maxRun = 1024

// match runs the automaton on key. It returns the terms index of the family
// of key (-1 when there is none), or ok == false when the key reached a part
// of the automaton that was not built.
func (d *dfa) match(key string) (term int32, ok bool) {
	prog, sets, class := d.prog, d.sets, &d.class
	p := d.start
	i := 0
	for {
		rec := prog[p : p+recData+1]
		if n := int(rec[recRun]); n > 0 {
			if len(key)-i < n {
				return acc(rec), true
			}
			nlit := int(rec[recData])
			q := p + recData + 1
			if n == 1 && nlit == 1 {
				// One literal byte, the most common run.
				if key[i] != byte(prog[q]) {
					return -1, true
				}
				i++
				p = int(rec[recNext]) * recAlign
				continue
			}
			// The literal prefix, eight bytes at a time.
			k := key[i:]
			for r := nlit; r > 0; r -= 8 {
				w := prog[q : q+4]
				x := uint64(w[0]) | uint64(w[1])<<16 | uint64(w[2])<<32 | uint64(w[3])<<48
				if len(k) >= 8 {
					x ^= le64(k)
					k = k[8:]
				} else {
					for j := 0; j < len(k); j++ {
						x ^= uint64(k[j]) << (8 * j)
					}
				}
				if r < 8 {
					x &= 1<<(8*r) - 1
				}
				if x != 0 {
					return -1, true
				}
				q += 4
			}
			run, k := prog[q:q+n-nlit], key[i+nlit:i+n]
			for j, set := range run {
				if !sets[set][k[j]] {
					return -1, true
				}
			}
			i += n
			p = int(rec[recNext]) * recAlign
			continue
		}
		loop := &sets[rec[recNext]]
		for i < len(key) && loop[key[i]] {
			i++
		}
		if i == len(key) {
			return acc(rec), true
		}
		next := prog[p+recData+int(class[key[i]])]
		i++
		if next == deadState || next == notBuilt {
			return -1, next == deadState
		}
		p = int(next) * recAlign
	}
}

// le64 returns the first eight bytes of s, little endian.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// acc returns the acc field of a record.
func acc(rec []uint16) int32 {
	return int32(uint32(rec[recAcc]) | uint32(rec[recAcc+1])<<16)
}

// nfa is the trie expanded to one position per byte: a trie node, or a
// point inside a placeholder value. A position has byte edges to other
// positions, and a placeholder position where a value may end has an
// epsilon edge to the node that follows the placeholder.
type nfa struct {
	pos []nfaPos
}

type nfaPos struct {
	edges []nfaEdge
	eps   int32 // epsilon edge, or -1
	term  int32 // terms index of the best family ending at this node, or -1
}

type nfaEdge struct {
	bytes   matchBytes // the bytes that take the edge
	classes matchBytes // the same, as classes
	to      int32
}

func (a *nfa) add(term int32) int32 {
	a.pos = append(a.pos, nfaPos{eps: -1, term: term})
	return int32(len(a.pos) - 1)
}

func (a *nfa) edge(from int32, bytes matchBytes, to int32) {
	a.pos[from].edges = append(a.pos[from].edges, nfaEdge{bytes: bytes, to: to})
}

// node adds the positions of trie node root and everything below it, and
// returns the position of root. Positions are numbered depth first: a node,
// then the subtree of each literal edge in byte order, then the subtree and
// the value positions of each placeholder edge in type order. The walk
// keeps its own stack, so a trie as deep as a long pattern cannot overflow
// the goroutine's stack.
func (a *nfa) node(root *buildNode, sep byte) int32 {
	type frame struct {
		b    *buildNode
		id   int32
		lits []byte // the literal edges' bytes, sorted
		li   int    // the next literal edge to descend
		pt   int    // the next placeholder type to descend
		// How the parent reaches this node: by literal byte lit, or by a
		// value of type typ when viaPh is set.
		lit   byte
		typ   PlaceholderType
		viaPh bool
	}
	enter := func(b *buildNode) frame {
		return frame{b: b, id: a.add(b.term), lits: slices.Sorted(maps.Keys(b.lits))}
	}
	stack := []frame{enter(root)}
	for {
		f := &stack[len(stack)-1]
		if f.li < len(f.lits) {
			c := f.lits[f.li]
			f.li++
			child := enter(f.b.lits[c])
			child.lit = c
			stack = append(stack, child)
			continue
		}
		for f.pt < numTypes && f.b.phs[f.pt] == nil {
			f.pt++
		}
		if f.pt < numTypes {
			t := PlaceholderType(f.pt)
			f.pt++
			child := enter(f.b.phs[t])
			child.typ, child.viaPh = t, true
			stack = append(stack, child)
			continue
		}
		done := *f
		stack = stack[:len(stack)-1]
		if len(stack) == 0 {
			return done.id
		}
		parent := stack[len(stack)-1].id
		if done.viaPh {
			a.placeholder(parent, done.typ, done.id, sep)
			continue
		}
		var set matchBytes
		set.add(done.lit)
		a.edge(parent, set, done.id)
	}
}

// acceptSet returns the bytes that type t accepts at index i of a value.
func acceptSet(t PlaceholderType, i int, sep byte) matchBytes {
	var set matchBytes
	for b := range 256 {
		if t.AcceptsAt(i, byte(b), sep) {
			set.add(byte(b))
		}
	}
	return set
}

// placeholder adds the positions inside a value of type t that starts at
// position from and is followed by position next.
func (a *nfa) placeholder(from int32, t PlaceholderType, next int32, sep byte) {
	if n := t.FixedLen(); n != 0 {
		prev := from
		for i := range n {
			p := a.add(-1)
			a.edge(prev, acceptSet(t, i, sep), p)
			prev = p
		}
		a.pos[prev].eps = next
		return
	}
	// One position for "one or more bytes, may end here"; Int also needs
	// one for a lone "-", which may not end.
	in := a.add(-1)
	a.pos[in].eps = next
	rest := acceptSet(t, 1, sep)
	a.edge(in, rest, in)
	first := acceptSet(t, 0, sep)
	if t == Int {
		minus := a.add(-1)
		var m matchBytes
		m.add('-')
		a.edge(from, m, minus)
		a.edge(minus, rest, in)
		first = rest
	}
	a.edge(from, first, in)
}

// classes partitions the 256 bytes into classes that no edge tells apart,
// and records each edge's classes.
func (a *nfa) classes(d *subset) {
	// Refine one partition by each distinct edge set in turn, splitting
	// each class into its bytes inside and outside the set.
	var class [256]int
	seen := map[matchBytes]bool{}
	for _, p := range a.pos {
		for _, e := range p.edges {
			if seen[e.bytes] {
				continue
			}
			seen[e.bytes] = true
			for b := range 256 {
				if e.bytes.has(byte(b)) {
					class[b] += 256 // temporarily out of the way
				}
			}
			d.nc = renumber(&class)
		}
	}
	if len(seen) == 0 {
		d.nc = renumber(&class)
	}
	for b, c := range class {
		d.class[b] = uint8(c)
	}
	for i := range a.pos {
		for j := range a.pos[i].edges {
			e := &a.pos[i].edges[j]
			for b := range 256 {
				if e.bytes.has(byte(b)) {
					e.classes.add(d.class[b])
				}
			}
		}
	}
}

// renumber numbers the classes densely in order of their first byte and
// returns how many there are.
func renumber(class *[256]int) int {
	var to [512]int
	n := 0
	for b, c := range class {
		if to[c] == 0 {
			n++
			to[c] = n
		}
		class[b] = to[c] - 1
	}
	return n
}

// subset is the byte-level automaton, before compress.
type subset struct {
	class [256]uint8
	nc    int
	rows  []int32 // rows[s*nc+c] is the state after class c in state s
	acc   []int32 // per state, the terms index of the best family that ends there, or -1
}

// buildDFA compiles the trie below root into an automaton with at most
// maxStates byte-level states.
func (m *Matcher) buildDFA(root *buildNode, maxStates int) *dfa {
	var a nfa
	a.node(root, m.sep)
	return m.subset(&a, maxStates).compress()
}

// subset builds the byte-level automaton of a by subset construction.
func (m *Matcher) subset(a *nfa, maxStates int) *subset {
	d := &subset{}
	a.classes(d)

	var (
		sets  [][]int32            // the positions of each state, sorted
		ids   = map[string]int32{} // the state of each set, keyed by its bytes
		buf   []int32
		kbuf  []byte
		edges []*nfaEdge
	)
	// state returns the state of set (sorted, with its epsilon closure),
	// adding it when there is room.
	state := func(set []int32) int32 {
		kbuf = kbuf[:0]
		for _, p := range set {
			kbuf = binary.LittleEndian.AppendUint32(kbuf, uint32(p))
		}
		if id, ok := ids[string(kbuf)]; ok {
			return id
		}
		if len(sets) >= maxStates {
			return notBuiltState
		}
		id := int32(len(sets))
		sets = append(sets, slices.Clone(set))
		ids[string(kbuf)] = id
		best := int32(-1)
		for _, p := range set {
			if t := a.pos[p].term; t >= 0 && (best < 0 || m.terms[t].score > m.terms[best].score) {
				best = t
			}
		}
		d.acc = append(d.acc, best)
		return id
	}
	// closure sorts set, adds epsilon targets and removes duplicates.
	closure := func(set []int32) []int32 {
		for _, p := range set {
			if e := a.pos[p].eps; e >= 0 {
				set = append(set, e)
			}
		}
		slices.Sort(set)
		return slices.Compact(set)
	}
	state(nil)                 // dead
	state(closure([]int32{0})) // start
	nc := d.nc
	for s := 0; s < len(sets); s++ {
		d.rows = append(d.rows, make([]int32, nc)...)
		if s == deadState {
			continue
		}
		row := d.rows[s*nc : (s+1)*nc]
		edges = edges[:0]
		for _, p := range sets[s] {
			for i := range a.pos[p].edges {
				edges = append(edges, &a.pos[p].edges[i])
			}
		}
		// Classes that take the same edges go to the same state: remember
		// the last few results by the mask of edges taken.
		type memo struct {
			mask uint64
			to   int32
		}
		var memos [4]memo
		nm, next := 0, 0
		for c := range nc {
			var mask uint64
			buf = buf[:0]
			for i, e := range edges {
				if e.classes.has(byte(c)) {
					mask |= 1 << (i & 63)
					buf = append(buf, e.to)
				}
			}
			if len(buf) == 0 {
				row[c] = deadState
				continue
			}
			to := int32(notBuiltState - 1)
			if len(edges) <= 64 {
				for _, mm := range memos[:nm] {
					if mm.mask == mask {
						to = mm.to
						break
					}
				}
			}
			if to == notBuiltState-1 {
				buf = closure(buf)
				to = state(buf)
				if len(edges) <= 64 {
					memos[next] = memo{mask, to}
					next = (next + 1) % len(memos)
					nm = min(nm+1, len(memos))
				}
			}
			row[c] = to
		}
	}
	return d
}

// compress turns the byte-level automaton into a dfa: runs of states with
// one way on become runs of byte sets, and only the other states keep a
// row.
func (b *subset) compress() *dfa {
	nc := b.nc
	d := &dfa{class: b.class, sets: make([][256]bool, 1)}
	setOf := map[[256]bool]uint16{{}: 0}
	// set returns the index in d.sets of the bytes of the classes in cs.
	set := func(cs *matchBytes) (uint16, bool) {
		var bs [256]bool
		for c := range 256 {
			bs[c] = cs.has(b.class[c])
		}
		i, ok := setOf[bs]
		if !ok {
			if len(d.sets) == notBuilt {
				return 0, false
			}
			i = uint16(len(d.sets))
			d.sets = append(d.sets, bs)
			setOf[bs] = i
		}
		return i, true
	}
	row := func(s int32) []int32 { return b.rows[int(s)*nc : int(s+1)*nc] }
	// one reports the only state other than s and the dead state that s
	// leads to, and the classes that lead there. A state that accepts, or
	// that was not built, has none.
	one := func(s int32) (to int32, cs matchBytes, ok bool) {
		to = notBuiltState
		if s == deadState || b.acc[s] >= 0 {
			return to, cs, false
		}
		for c, t := range row(s) {
			switch {
			case t == deadState:
			case t == notBuiltState || t == s || (to != notBuiltState && t != to):
				return notBuiltState, cs, false
			default:
				to = t
				cs.add(byte(c))
			}
		}
		return to, cs, to != notBuiltState
	}

	// A record is a run or a row. A run follows states with one way on. A
	// cycle of such states accepts nothing: cut it anywhere.
	type record struct {
		run  []uint16 // the set of each byte of the run
		lits []byte   // the leading bytes of the run whose set is one byte
		loop uint16   // the loop set of a row state
		next int32    // the state after the run
		off  int      // the record's offset in prog, or -1
	}
	recs := make([]record, len(b.acc))
	fill := func(s int32) *record {
		r := &recs[s]
		t := s
		for len(r.run) < maxRun {
			to, cs, ok := one(t)
			if !ok {
				break
			}
			set, ok := set(&cs)
			if !ok {
				break
			}
			r.run = append(r.run, set)
			t = to
		}
		r.next = t
		for _, set := range r.run {
			c, ok := single(&d.sets[set])
			if !ok {
				break
			}
			r.lits = append(r.lits, c)
		}
		if len(r.run) == 0 && b.acc[s] >= 0 && !slices.ContainsFunc(row(s), func(t int32) bool { return t != deadState }) {
			// A state that accepts and leads nowhere is a run of one
			// byte that is in no set.
			r.run, r.next = []uint16{0}, deadState
		}
		if len(r.run) == 0 && s != deadState {
			var loop matchBytes
			for c, t := range row(s) {
				if t == s {
					loop.add(byte(c))
				}
			}
			var ok bool
			if r.loop, ok = set(&loop); !ok {
				r.loop = 0 // the loop's bytes take the row, back to s
			}
		}
		return r
	}

	// Lay the records out depth first from the start, after the dead
	// state at offset 0, while they fit.
	const maxProg = notBuilt * recAlign
	size := 0
	var order []int32
	stack := []int32{startState, deadState}
	for i := range recs {
		recs[i].off = -1
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s < 0 || recs[s].off >= 0 {
			continue
		}
		r := fill(s)
		n := recData + 1 + (len(r.lits)+7)/8*4 + len(r.run) - len(r.lits)
		if len(r.run) == 0 {
			n = recData + nc
		}
		n = (n + recAlign - 1) / recAlign * recAlign
		if size+n > maxProg {
			continue // not built
		}
		r.off = size
		size += n
		order = append(order, s)
		if len(r.run) > 0 {
			stack = append(stack, r.next)
			continue
		}
		for _, t := range slices.Backward(row(s)) {
			stack = append(stack, t)
		}
	}
	d.prog = make([]uint16, size)
	offset := func(s int32) uint16 {
		if s < 0 || recs[s].off < 0 {
			return notBuilt
		}
		return uint16(recs[s].off / recAlign)
	}
	for _, s := range order {
		r := &recs[s]
		rec := d.prog[r.off:]
		rec[recAcc] = uint16(b.acc[s])
		rec[recAcc+1] = uint16(uint32(b.acc[s]) >> 16)
		if len(r.run) > 0 {
			rec[recNext] = offset(r.next)
			rec[recRun] = uint16(len(r.run))
			rec[recData] = uint16(len(r.lits))
			q := recData + 1
			for j, c := range r.lits {
				rec[q+j/2] |= uint16(c) << (8 * (j % 2))
			}
			q += (len(r.lits) + 7) / 8 * 4
			copy(rec[q:], r.run[len(r.lits):])
			continue
		}
		rec[recNext] = r.loop
		for c, t := range row(s) {
			rec[recData+c] = offset(t)
		}
	}
	d.start = recs[startState].off
	return d
}

// single returns the byte of a set of one byte.
func single(set *[256]bool) (byte, bool) {
	n, c := 0, 0
	for b, in := range set {
		if in {
			n, c = n+1, b
		}
	}
	return byte(c), n == 1
}
