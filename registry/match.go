package registry

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Param is one bound placeholder value.
type Param struct{ Name, Value string }

// Matcher finds the family of a key. It compiles every pattern into one
// radix trie, so a lookup costs about the same for ten families as for a
// thousand.
//
// The trie has two kinds of edges. A literal edge carries a run of literal
// bytes; the literal edges of a node start with distinct bytes, so at most
// one of them fits a key at a given offset. A placeholder edge consumes one
// value of a placeholder type; a node has at most one per type, shared by
// every family whose pattern continues with a placeholder of that type.
// Since placeholders are never adjacent, a placeholder edge always leads to a
// node with literal edges or a terminal, and a value can only end where the
// key continues with the first byte of such a literal (or where the key
// ends). When no first byte of the following literals is a byte the type
// accepts, as for {id} followed by the separator, the value has exactly one
// possible end and nothing is tried twice.
//
// Matching is a depth-first search that visits a subtree only while it may
// still hold a family that beats the best match found so far, so a registry
// without overlaps costs one walk down the trie. Pathological keys (many
// {name:any} placeholders and many candidate ends) are bounded by memoising
// visited (node, offset) states once a small step budget is spent.
//
// Match itself first runs a deterministic automaton compiled from the trie
// (see dfa), which reads each byte of the key once; it uses the trie search
// only for the keys that reach a part of the automaton left out because it
// outgrew its budget. MatchParams and Closest always search the trie.
//
// A Matcher is immutable and safe for concurrent use.
type Matcher struct {
	sep byte

	// The trie, flattened for cache locality: nodes[0] is the root, nodes
	// are in depth-first order, and each node's edges are contiguous.
	nodes []trieNode
	lits  []litEdge
	phs   []phEdge
	terms []trieTerm
	rests []string      // for each literal edge, its bytes after the first
	index [][256]uint16 // first byte -> 1 + edge number, for nodes with many edges

	// acc[0][t] and acc[1][t] tell which bytes a value of type t accepts at
	// index 0 and at index 1 (and any later index, except for UUID).
	acc [2][numTypes][256]bool
	// uuid[0] are the bytes a UUID accepts at a digit position, uuid[1] at a
	// dash position.
	uuid [2][256]bool

	dfa *dfa // matches most keys without the trie
}

// trieTerm is a family at the end of a trie path.
type trieTerm struct {
	fam     *Family
	score   uint64    // higher wins; see familyScore
	steps   []patStep // the pattern, compiled for binding params
	nparams int
}

// familyScore orders families by the priority rule: more literal bytes
// first, then the lower index. It is never 0.
func familyScore(f *Family) uint64 {
	return uint64(f.Pattern.LiteralBytes()+1)<<32 | uint64(^uint32(f.Index))
}

// trieNode is one node of the flattened trie.
type trieNode struct {
	max    uint64 // the best score at or below this node; 0 when none
	lit0   int32  // the literal edges are lits[lit0:lit0+nlits]
	nlits  int32
	firsts [8]byte // the first byte of each literal edge, when nlits <= 8
	ph0    int32   // the placeholder edges are phs[ph0:ph0+nph]
	nph    int32   // at most one per type, best subtree first
	term   int32   // terms index of the best family ending here, or -1
	min    int32   // terms index of the lowest-index family at or below, or -1
	lit    int32   // literal bytes on the path from the root
	index  int32   // the node's first-byte table in Matcher.index when nlits > 8, else -1
}

// litEdge is a run of literal bytes. The first byte is in the parent's
// firsts or index; the rest is in Matcher.rests and, when short, inline.
type litEdge struct {
	child int32
	n     uint16 // len(rest)
	short [inlineRest]byte
}

// inlineRest is the longest rest of a literal edge kept inline in the edge,
// so matching it touches no other memory.
const inlineRest = 10

type phEdge struct {
	first matchBytes // the first bytes of the child's literal edges
	child int32
	typ   PlaceholderType
	// single: no byte of first is accepted inside a value, so only the
	// longest value can be followed by a literal.
	single bool
}

type matchBytes [4]uint64

func (s *matchBytes) add(b byte)      { s[b>>6] |= 1 << (b & 63) }
func (s *matchBytes) has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }

// edge returns the literal edge of n starting with b, or nil.
func (m *Matcher) edge(n *trieNode, b byte) (int32, bool) {
	i := int32(-1)
	if n.index >= 0 {
		i = int32(m.index[n.index][b]) - 1
	} else {
		for j := int32(0); j < n.nlits; j++ {
			if n.firsts[j] == b {
				i = j
				break
			}
		}
	}
	return n.lit0 + i, i >= 0
}

// follow reports whether key[pos:] starts with the rest of literal edge i.
func (m *Matcher) follow(i int32, key string, pos int) bool {
	e := &m.lits[i]
	n := int(e.n)
	if len(key)-pos < n {
		return false
	}
	if n > inlineRest {
		return key[pos:pos+n] == m.rests[i]
	}
	k := key[pos : pos+n]
	for j := 0; j < len(k); j++ {
		if k[j] != e.short[j] {
			return false
		}
	}
	return true
}

// NewMatcher compiles the patterns of families into one matcher. sep is the
// registry's segment separator. Families without a Pattern are skipped.
//
// When several families match one key (a registry that lint rejects), the
// family with the most literal bytes wins, and ties go to the lowest
// Family.Index.
func NewMatcher(families []*Family, sep byte) *Matcher {
	return newMatcher(families, sep, maxDFAStates)
}

// newMatcher is NewMatcher with a bound on the states of the automaton.
func newMatcher(families []*Family, sep byte, maxStates int) *Matcher {
	m := &Matcher{sep: sep}
	for t := range PlaceholderType(numTypes) {
		for b := range 256 {
			m.acc[0][t][b] = t.AcceptsAt(0, byte(b), sep)
			m.acc[1][t][b] = t.AcceptsAt(1, byte(b), sep)
		}
	}
	for b := range 256 {
		m.uuid[0][b] = UUID.AcceptsAt(0, byte(b), sep)
		m.uuid[1][b] = UUID.AcceptsAt(8, byte(b), sep)
	}

	// Build a trie with one literal byte per edge, then merge its chains
	// and lay it out flat.
	root := &buildNode{term: -1}
	for _, f := range families {
		if f == nil || f.Pattern == nil || len(f.Pattern.Parts) == 0 {
			continue
		}
		n := root
		for _, p := range f.Pattern.Parts {
			if p.IsPlaceholder() {
				if n.phs[p.Type] == nil {
					n.phs[p.Type] = &buildNode{term: -1}
				}
				n = n.phs[p.Type]
				continue
			}
			for i := 0; i < len(p.Lit); i++ {
				c := n.lits[p.Lit[i]]
				if c == nil {
					if n.lits == nil {
						n.lits = map[byte]*buildNode{}
					}
					c = &buildNode{term: -1}
					n.lits[p.Lit[i]] = c
				}
				n = c
			}
		}
		t := trieTerm{fam: f, score: familyScore(f)}
		t.steps, t.nparams = m.compile(f.Pattern)
		if n.term < 0 || t.score > m.terms[n.term].score {
			n.term = int32(len(m.terms))
			m.terms = append(m.terms, t)
		}
	}
	if len(m.terms) == 0 {
		return m
	}
	m.flatten(m.radix(root, 0))
	m.dfa = m.buildDFA(root, maxStates)
	return m
}

// buildNode is a trie node under construction: one literal byte per edge.
type buildNode struct {
	lits map[byte]*buildNode
	phs  [numTypes]*buildNode
	term int32
}

// radixNode is a trie node with chains of literal bytes merged into one
// edge, before it is laid out flat.
type radixNode struct {
	labels []string // literal edges, sorted
	kids   []*radixNode
	phs    []*radixNode // by PlaceholderType, nil when absent
	term   int32
	max    uint64
	min    int32
	lit    int
	first  matchBytes
}

// radix merges the chains of single literal bytes below b.
func (m *Matcher) radix(b *buildNode, lit int) *radixNode {
	n := &radixNode{term: b.term, min: b.term, lit: lit, phs: make([]*radixNode, numTypes)}
	if n.term >= 0 {
		n.max = m.terms[n.term].score
	}
	merge := func(c *radixNode) {
		n.max = max(n.max, c.max)
		if c.min >= 0 && (n.min < 0 || m.terms[c.min].fam.Index < m.terms[n.min].fam.Index) {
			n.min = c.min
		}
	}
	for _, first := range slices.Sorted(maps.Keys(b.lits)) {
		label := []byte{first}
		c := b.lits[first]
		for len(c.lits) == 1 && c.term < 0 && c.phs == [numTypes]*buildNode{} {
			for k, cc := range c.lits {
				label = append(label, k)
				c = cc
			}
		}
		child := m.radix(c, lit+len(label))
		n.labels = append(n.labels, string(label))
		n.kids = append(n.kids, child)
		n.first.add(first)
		merge(child)
	}
	for t, c := range b.phs {
		if c != nil {
			n.phs[t] = m.radix(c, lit)
			merge(n.phs[t])
		}
	}
	return n
}

// flatten appends r and its subtree to m.nodes in depth-first order and
// returns its index.
func (m *Matcher) flatten(r *radixNode) int32 {
	id := int32(len(m.nodes))
	n := trieNode{max: r.max, term: r.term, min: r.min, lit: int32(r.lit), index: -1,
		lit0: int32(len(m.lits)), nlits: int32(len(r.labels))}
	if len(r.labels) > len(n.firsts) {
		var t [256]uint16
		for i, l := range r.labels {
			t[l[0]] = uint16(i + 1)
		}
		n.index = int32(len(m.index))
		m.index = append(m.index, t)
	}
	for i, l := range r.labels {
		if i < len(n.firsts) {
			n.firsts[i] = l[0]
		}
		e := litEdge{n: uint16(len(l) - 1)}
		copy(e.short[:], l[1:])
		m.lits = append(m.lits, e)
		m.rests = append(m.rests, l[1:])
	}
	var phs []phEdge
	for t, c := range r.phs {
		if c != nil {
			typ := PlaceholderType(t)
			phs = append(phs, phEdge{first: c.first, typ: typ, single: m.single(typ, &c.first), child: -1})
		}
	}
	// Try the most promising placeholder first: it may prune the others.
	slices.SortStableFunc(phs, func(a, b phEdge) int {
		return cmp.Compare(r.phs[b.typ].max, r.phs[a.typ].max)
	})
	n.ph0, n.nph = int32(len(m.phs)), int32(len(phs))
	m.phs = append(m.phs, phs...)
	m.nodes = append(m.nodes, n)
	for i, c := range r.kids {
		m.lits[n.lit0+int32(i)].child = m.flatten(c)
	}
	for i := range phs {
		m.phs[n.ph0+int32(i)].child = m.flatten(r.phs[phs[i].typ])
	}
	return id
}

// single reports whether a value of type t can only be followed by a byte of
// next when it is as long as possible: no byte of next is accepted inside a
// value. Fixed-length types always have one end.
func (m *Matcher) single(t PlaceholderType, next *matchBytes) bool {
	if t.FixedLen() != 0 {
		return true
	}
	for b := range 256 {
		if next.has(byte(b)) && m.acc[1][t][b] {
			return false
		}
	}
	return true
}

// span returns the possible ends of a value of type t that starts at
// key[pos]: every end in lo..hi makes key[pos:end] a valid value, and no
// other end does. There is none when hi < lo.
func (m *Matcher) span(t PlaceholderType, key string, pos int) (lo, hi int) {
	switch t {
	case Any:
		return pos + 1, len(key)
	case Word:
		i := pos
		for i < len(key) && key[i] != m.sep {
			i++
		}
		return pos + 1, i
	case UUID:
		if len(key)-pos < 36 {
			return 1, 0
		}
		v := key[pos : pos+36]
		hex, dash := &m.uuid[0], &m.uuid[1]
		ok := dash[v[8]] && dash[v[13]] && dash[v[18]] && dash[v[23]]
		for i := 0; i < 36; i++ {
			if i != 8 && i != 13 && i != 18 && i != 23 {
				ok = ok && hex[v[i]]
			}
		}
		if !ok {
			return 1, 0
		}
		return pos + 36, pos + 36
	case ULID:
		if len(key)-pos < 26 {
			return 1, 0
		}
		if !m.acc[0][ULID][key[pos]] {
			return 1, 0
		}
		acc := &m.acc[1][ULID]
		for i := pos + 1; i < pos+26; i++ {
			if !acc[key[i]] {
				return 1, 0
			}
		}
		return pos + 26, pos + 26
	}
	a0, a1 := &m.acc[0][t], &m.acc[1][t]
	if pos >= len(key) || !a0[key[pos]] {
		return 1, 0
	}
	i := pos + 1
	for i < len(key) && a1[key[i]] {
		i++
	}
	lo = pos + 1
	if t == Int && key[pos] == '-' {
		lo = pos + 2 // "-" alone is not an int
	}
	return lo, i
}

// search is the state of one Match.
type matchSearch struct {
	key    string
	best   *trieTerm
	score  uint64 // best.score, or 0
	steps  int    // states visited
	budget int    // states to visit before memoising
	seen   map[uint64]struct{}
}

// stepBudget is the number of trie states a search visits before it starts
// to memoise them. Ordinary keys visit a handful.
func stepBudget(key string) int { return 64 + 8*len(key) }

// visited counts a visit of state (id, pos) and reports whether an earlier
// visit already explored it. Revisiting a state cannot find anything new:
// the best match only gets better, so whatever the earlier visit pruned
// stays pruned.
func (s *matchSearch) visited(id int32, pos int) bool {
	s.steps++
	if s.seen == nil {
		if s.steps <= s.budget {
			return false
		}
		s.seen = map[uint64]struct{}{}
	}
	k := uint64(id)<<32 | uint64(pos)
	if _, ok := s.seen[k]; ok {
		return true
	}
	s.seen[k] = struct{}{}
	return false
}

// walk finds the best family for key[pos:] below node id. It follows
// literal edges in a loop and recurses only where a node also has
// placeholder edges.
func (m *Matcher) walk(s *matchSearch, id int32, pos int) {
	key := s.key
	for {
		n := &m.nodes[id]
		if n.max <= s.score || s.visited(id, pos) {
			return
		}
		if pos == len(key) {
			if n.term >= 0 && m.terms[n.term].score > s.score {
				s.best = &m.terms[n.term]
				s.score = s.best.score
			}
			return
		}
		next, npos := int32(-1), 0
		if i, ok := m.edge(n, key[pos]); ok && m.follow(i, key, pos+1) {
			next, npos = m.lits[i].child, pos+1+int(m.lits[i].n)
		}
		if n.nph == 0 {
			if next < 0 {
				return
			}
			id, pos = next, npos
			continue
		}
		if next >= 0 {
			m.walk(s, next, npos)
		}
		m.walkPlaceholders(s, n, pos)
		return
	}
}

// walkPlaceholders follows the placeholder edges of n from key[pos:].
func (m *Matcher) walkPlaceholders(s *matchSearch, n *trieNode, pos int) {
	key := s.key
	for i := n.ph0; i < n.ph0+n.nph; i++ {
		e := &m.phs[i]
		lo, hi := m.span(e.typ, key, pos)
		if hi < lo {
			continue
		}
		if e.single {
			m.walk(s, e.child, hi)
			continue
		}
		for end := hi; end >= lo && m.nodes[e.child].max > s.score; end-- {
			if end == len(key) || e.first.has(key[end]) {
				m.walk(s, e.child, end)
			}
		}
	}
}

func (m *Matcher) find(key string) *trieTerm {
	if m == nil || len(m.nodes) == 0 {
		return nil
	}
	s := matchSearch{key: key, budget: stepBudget(key)}
	m.walk(&s, 0, 0)
	return s.best
}

// Match returns the family of key, or nil when no family matches. It does
// not allocate.
func (m *Matcher) Match(key string) *Family {
	if m != nil && m.dfa != nil {
		if t, ok := m.dfa.match(key); ok {
			if t < 0 {
				return nil
			}
			return m.terms[t].fam
		}
	}
	if t := m.find(key); t != nil {
		return t.fam
	}
	return nil
}

// MatchParams is Match that also binds the placeholders of the family. It
// appends one Param per placeholder, in pattern order, to buf[:0] and
// returns the result; each Value is a substring of key. It does not allocate
// when cap(buf) suffices.
//
// When a key can be split between the placeholders in more than one way
// (possible with {name:any}, or when a value may contain the first byte of
// the following literal), earlier placeholders take the longest value that
// still lets the rest of the pattern match: "{a:any}:{b:any}" binds
// "x:y:z" as a="x:y", b="z".
func (m *Matcher) MatchParams(key string, buf []Param) (*Family, []Param) {
	buf = buf[:0]
	t := m.find(key)
	if t == nil {
		return nil, buf
	}
	if cap(buf) < t.nparams {
		buf = make([]Param, t.nparams)
	}
	buf = buf[:t.nparams]
	b := binder{key: key, out: buf}
	if !m.bind(&b, t.steps, 0, 0) {
		panic(fmt.Sprintf("registry: matcher found family %q for key %q but cannot bind it", t.fam.Name, key))
	}
	return t.fam, buf
}

// step is one part of a compiled pattern.
type patStep struct {
	lit    string // the literal bytes; empty for a placeholder
	part   Part
	param  int  // index of the placeholder among the placeholders
	next   int  // first byte of the following literal; -1 when none
	single bool // only the longest value can be followed by next
}

func (m *Matcher) compile(p *Pattern) ([]patStep, int) {
	steps := make([]patStep, len(p.Parts))
	np := 0
	for i, pt := range p.Parts {
		st := patStep{lit: pt.Lit, part: pt, next: -1}
		if pt.IsPlaceholder() {
			st.param = np
			np++
			if i+1 < len(p.Parts) {
				st.next = int(p.Parts[i+1].Lit[0])
			}
			var next matchBytes
			if st.next >= 0 {
				next.add(byte(st.next))
			}
			st.single = m.single(pt.Type, &next)
		}
		steps[i] = st
	}
	return steps, np
}

// binder is the state of binding one family's params.
type binder struct {
	key   string
	out   []Param
	steps int
	seen  map[uint64]struct{}
}

func (b *binder) visited(i, pos int) bool {
	b.steps++
	if b.seen == nil {
		if b.steps <= stepBudget(b.key) {
			return false
		}
		b.seen = map[uint64]struct{}{}
	}
	k := uint64(i)<<32 | uint64(pos)
	if _, ok := b.seen[k]; ok {
		return true
	}
	b.seen[k] = struct{}{}
	return false
}

// bind matches key[pos:] against steps[i:], filling b.out, and reports
// whether it matched. Placeholder values are tried longest first.
func (m *Matcher) bind(b *binder, steps []patStep, i, pos int) bool {
	if b.visited(i, pos) {
		return false // an earlier visit failed, or it would have returned true
	}
	key := b.key
	for ; i < len(steps); i++ {
		st := &steps[i]
		if !st.part.IsPlaceholder() {
			if !strings.HasPrefix(key[pos:], st.lit) {
				return false
			}
			pos += len(st.lit)
			continue
		}
		lo, hi := m.span(st.part.Type, key, pos)
		if hi < lo {
			return false
		}
		if st.next < 0 {
			if hi != len(key) {
				return false
			}
			b.out[st.param] = Param{st.part.Name, key[pos:]}
			return true
		}
		if st.single {
			lo = hi
		}
		for end := hi; end >= lo; end-- {
			if end < len(key) && key[end] == byte(st.next) {
				b.out[st.param] = Param{st.part.Name, key[pos:end]}
				if m.bind(b, steps, i+1, end) {
					return true
				}
			}
		}
		return false
	}
	return pos == len(key)
}

// Closest explains a key that matches no family. It returns the family that
// shares the most literal bytes with key, counting the literal bytes that
// match while walking its pattern; ties go to the family that gets further
// into key, then to the lowest Family.Index. The reason says why key is not
// one of the family's keys, such as
// `placeholder {session_id:uuid} does not accept "abc"`; byte offsets in it
// count from 0. f is nil when no family shares even one literal byte. When
// key does match a family, Closest returns it with an empty reason.
//
// Closest is meant for explaining a key; unlike Match it allocates.
func (m *Matcher) Closest(key string) (f *Family, reason string) {
	if t := m.find(key); t != nil {
		return t.fam, ""
	}
	if m == nil || len(m.nodes) == 0 {
		return nil, ""
	}
	c := closestSearch{key: key, seen: map[uint64]struct{}{}}
	m.near(&c, 0, 0)
	if c.best == nil {
		return nil, ""
	}
	d := diagnosis{m: m, key: key, steps: c.best.steps, seen: map[uint64]struct{}{}, lit: -1}
	d.run(0, 0, 0, -1, 0)
	return c.best.fam, d.reason
}

type closestSearch struct {
	key  string
	lit  int // literal bytes matched by best
	pos  int // how far into key best got
	best *trieTerm
	seen map[uint64]struct{}
}

func (c *closestSearch) consider(lit, pos int, t *trieTerm) {
	if lit == 0 || t == nil {
		return
	}
	if c.best == nil || lit > c.lit || lit == c.lit && (pos > c.pos || pos == c.pos && t.fam.Index < c.best.fam.Index) {
		c.lit, c.pos, c.best = lit, pos, t
	}
}

// near walks every path of the trie that key[pos:] can take from node id
// and records the furthest progress.
func (m *Matcher) near(c *closestSearch, id int32, pos int) {
	k := uint64(id)<<32 | uint64(pos)
	if _, ok := c.seen[k]; ok {
		return
	}
	c.seen[k] = struct{}{}
	n := &m.nodes[id]
	lit := int(n.lit)
	c.consider(lit, pos, m.term(n.min))
	key := c.key
	if pos == len(key) {
		return
	}
	if i, ok := m.edge(n, key[pos]); ok {
		rest, child := m.rests[i], m.lits[i].child
		k := 1 + commonPrefix(rest, key[pos+1:])
		if k == 1+len(rest) {
			m.near(c, child, pos+k)
		} else {
			c.consider(lit+k, pos+k, m.term(m.nodes[child].min))
		}
	}
	for i := n.ph0; i < n.ph0+n.nph; i++ {
		e := &m.phs[i]
		lo, hi := m.span(e.typ, key, pos)
		if hi >= lo {
			c.consider(lit, hi, m.term(m.nodes[e.child].min)) // a value, then a mismatch
		}
		for end := hi; end >= lo; end-- {
			if end == len(key) || e.first.has(key[end]) {
				m.near(c, e.child, end)
			}
		}
	}
}

func (m *Matcher) term(i int32) *trieTerm {
	if i < 0 {
		return nil
	}
	return &m.terms[i]
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// diagnosis finds the furthest point one pattern gets into a key that it
// does not match, and says what went wrong there.
type diagnosis struct {
	m      *Matcher
	key    string
	steps  []patStep
	seen   map[uint64]struct{}
	lit    int // literal bytes matched at the best failure so far
	pos    int // key offset of the best failure so far
	reason string
}

// fail records a failure after lit literal bytes at key offset pos, unless
// an earlier one got further. The reason is built only when needed.
func (d *diagnosis) fail(lit, pos int, reason func() string) {
	if lit > d.lit || (lit == d.lit && pos > d.pos) {
		d.lit, d.pos, d.reason = lit, pos, reason()
	}
}

// run explores steps[i:] against key[pos:]. lit is the number of literal
// bytes matched so far. ph is the index of the step just before i when it is
// a placeholder, else -1; phStart is where its value started.
func (d *diagnosis) run(i, pos, lit, ph, phStart int) {
	k := uint64(i)<<32 | uint64(pos)
	if _, ok := d.seen[k]; ok {
		return
	}
	d.seen[k] = struct{}{}
	key := d.key
	// badValue reports the previous placeholder's value as the culprit when
	// the key goes on with a byte that neither the value nor the pattern
	// takes, such as "12g4" for {id:hex}.
	badValue := func() (string, bool) {
		if ph < 0 || pos >= len(key) || key[pos] == d.m.sep || d.steps[ph].part.Type == Any {
			return "", false
		}
		return fmt.Sprintf("placeholder %s does not accept %q", placeholderString(d.steps[ph].part), d.segment(phStart)), true
	}
	if i == len(d.steps) {
		if pos < len(key) {
			d.fail(lit, pos, func() string {
				if r, ok := badValue(); ok {
					return r
				}
				return fmt.Sprintf("unexpected trailing bytes %q after the pattern ends", key[pos:])
			})
		}
		return
	}
	st := &d.steps[i]
	if !st.part.IsPlaceholder() {
		n := commonPrefix(st.lit, key[pos:])
		if n == len(st.lit) {
			d.run(i+1, pos+n, lit+n, -1, 0)
			return
		}
		at := pos + n
		d.fail(lit+n, at, func() string {
			switch {
			case at == len(key):
				return fmt.Sprintf("key ends after %q where %q was expected", key, st.lit[n:])
			case n == 0 && ph >= 0:
				if r, ok := badValue(); ok {
					return r
				}
				return fmt.Sprintf("expected %q after %s at byte %d", st.lit, placeholderString(d.steps[ph].part), at)
			}
			return fmt.Sprintf("expected %q at byte %d", st.lit[n:], at)
		})
		return
	}
	if pos == len(key) {
		d.fail(lit, pos, func() string {
			return fmt.Sprintf("key ends after %q where %s was expected", key, placeholderString(st.part))
		})
		return
	}
	lo, hi := d.m.span(st.part.Type, key, pos)
	if hi < lo {
		d.fail(lit, pos, func() string {
			return fmt.Sprintf("placeholder %s does not accept %q", placeholderString(st.part), d.segment(pos))
		})
		return
	}
	for end := hi; end >= lo; end-- {
		d.run(i+1, end, lit, i, pos)
	}
}

// segment returns the bytes of key from pos up to the next separator.
func (d *diagnosis) segment(pos int) string {
	s := d.key[pos:]
	if i := strings.IndexByte(s, d.m.sep); i >= 0 {
		s = s[:i]
	}
	return s
}

// placeholderString renders a placeholder as written in a pattern, without
// hash tag braces: {id} or {id:uuid}.
func placeholderString(p Part) string {
	if p.Typed {
		return "{" + p.Name + ":" + p.Type.String() + "}"
	}
	return "{" + p.Name + "}"
}

// matcherMu guards the lazy construction of Registry.matcher.
var matcherMu sync.Mutex

// buildLockMatchers compiles the one-family matcher of every lock with a
// fence, which FenceKey runs on each lock key an audit reads. Load calls
// it. The registry's own matcher is built on first use (Matcher): lint,
// breaking and gen never match a key, and at 30,000 families the automaton
// costs more memory than the rest of the load.
func (r *Registry) buildLockMatchers() {
	for _, f := range r.Families {
		if f.FencingFamily != nil && f.Pattern != nil {
			f.lockMatcher = NewMatcher([]*Family{f}, r.sep())
		}
	}
}

func (r *Registry) sep() byte {
	if r.Separator == 0 {
		return ':'
	}
	return r.Separator
}

// Matcher returns the matcher of all families of r, building it on first
// use. Callers on a hot path should keep the result rather than call
// Matcher per key.
func (r *Registry) Matcher() *Matcher {
	matcherMu.Lock()
	defer matcherMu.Unlock()
	if r.matcher == nil {
		r.matcher = NewMatcher(r.Families, r.sep())
	}
	return r.matcher
}

// Match returns the family of key and its bound placeholder values, or nil
// when no family matches. See Matcher.MatchParams for how values are bound.
func (r *Registry) Match(key string) (*Family, []Param) {
	f, params := r.Matcher().MatchParams(key, nil)
	if f == nil {
		return nil, nil
	}
	return f, params
}
