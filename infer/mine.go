package infer

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/registry"
)

// The pattern miner.
//
// Keys go down a trie with one level per segment (the bytes between two
// separators). A segment is classified as it arrives, so that only the
// values that look like literals branch the trie:
//
//   - a value of a typed class (int, uuid, ulid, long hex, dotted numbers
//     such as dates, a {hash tag}) goes to the one child of its class;
//   - a literal head and a typed tail ("celery-task-meta-<uuid>",
//     "legacy_cache_<int>", "rev<int>", "<int>.json") goes to the child of
//     (head, class, tail);
//   - anything else is a literal and gets a child of its own.
//
// Each child keeps a position state (posState): the types every one of its
// values is valid for and whether they vary; a constant int stays a
// literal ("v1", the "1" of django-redis' ":1:"). A node that ends a key
// holds the Stats of the keys that end there: the state is per shape, never
// per key.
//
// Literal or placeholder is decided by evidence, when Families settles the
// trie bottom-up. The children of a node are grouped by the shape of their
// subtrees (literal labels of frequent children, classes, rare children as
// "*"); a group becomes one word placeholder when it holds many literals
// (kAfterPlaceholder after a placeholder, as the locales of
// "page:{id}:{locale}", kAfterLiteral after a literal) or mostly values seen
// once ("lock:{name}"). Children that differ in shape (product:{id} and
// page:{id}:{locale}) stay apart. A placeholder whose subtree has keys of
// several segment counts and no literal left becomes {name:any}.
//
// Past MaxShapes trie nodes, Add generalises the nodes with the most literal
// children first, so memory stays bounded whatever the keys.
//
// Last, Families renders the patterns, proves with registry.OverlapsWithin
// that no two of them can match one key, and merges the candidates that
// can into their least general generalisation, until none overlap.

// MinerOptions configures a Miner.
type MinerOptions struct {
	// Separator is the segment separator of the registry; 0 means ':'.
	// '{', '}' and '\' cannot separate segments in keys.yaml and are
	// replaced by ':' too.
	Separator byte
	// MaxShapes bounds the shapes (trie nodes) kept at once; 0 means
	// 10,000, and values below 64 count as 64.
	MaxShapes int
}

// Candidate is one inferred family.
type Candidate struct {
	// Pattern is in keys.yaml's pattern syntax; it parses with
	// registry.ParsePattern(Pattern, sep) and matches every key counted in
	// Stats. The patterns of the candidates of one Families call never
	// match a common key.
	Pattern string
	// Version is N when the pattern has a literal segment v<N> (the first
	// one), else 0.
	Version int
	// Stats are those of the keys assigned to the candidate; the caller
	// owns them.
	Stats *Stats
	// Saw lists, for placeholders that stand for literal siblings of one
	// shape, the values they took.
	Saw []Saw
}

// Saw is what one placeholder of a candidate took: literal siblings of
// one shape, merged.
type Saw struct {
	Placeholder string   // its name in Pattern
	Values      []string // sorted, at most maxSaw
	More        int      // values not listed
}

// Bounds of the miner.
const (
	// maxSegs is the number of segments classified per key; the rest of a
	// longer key becomes a {name:any} tail.
	maxSegs = 16
	// maxLit is the longest segment kept as a literal; a longer one is its
	// first longHead bytes and a word placeholder.
	maxLit   = 64
	longHead = 32
	// maxTyped is the longest segment checked for a typed value.
	maxTyped = 256
	// kAfterPlaceholder and kAfterLiteral are the numbers of same-shaped
	// literal siblings that make a placeholder, after a placeholder (the
	// locales of page:{id}:{locale}) and after a literal.
	kAfterPlaceholder = 6
	kAfterLiteral     = 16
	// minSiblings literal siblings of one sub-shape and one set of Redis
	// types, each with siblingKeys keys or more, are one placeholder
	// (scratch:{12 names}:{int}, page:{id}:de|en|fr|ja), whose values a
	// comment lists, at most maxSaw of them.
	minSiblings = 4
	siblingKeys = 32
	maxSaw      = 12
	// freqShare: a child with fewer than 1/freqShare of its parent's keys
	// (or a single key) is rare.
	freqShare = 64
	// joinKeys: next to a placeholder, a child of fewer keys joins it.
	joinKeys = 4
	// maxRounds bounds the rounds of overlap repair in Families.
	maxRounds = 64
	// overlapBudget bounds the steps of the overlap checks of one node
	// while Families settles it.
	overlapBudget = 200_000
	closeBudget   = 20_000
	minShapes     = 64
)

// Validity bits of a value: the placeholder types it is valid for, and the
// strong evidence that a value is an ID rather than a word ("cafe" is valid
// hex, but only "9f86d081" is evidence of hex).
const (
	vInt uint8 = 1 << iota
	vUUID
	vULID
	vHex
	sULID // valid ULID with a digit and a letter that is not a hex digit
	sHex  // valid hex of 8 or more bytes, with a digit and a letter

	validBits  = vInt | vUUID | vULID | vHex
	strongBits = sULID | sHex
)

// Classes of typed children.
const (
	cInt uint8 = iota
	cUUID
	cULID
	cHex
	cNum // digits joined by - _ . /: dates, addresses, versions
	cTagInt
	cTagUUID
	cTagULID
	cTagHex
	cTagNum
	cTagWord
	nTyped
	cLong = nTyped // of a decomposed segment: a long segment's tail
)

type edgeKind uint8

const (
	eRoot  edgeKind = iota
	eLit            // the whole segment, literally
	eDec            // a literal head (lit), a typed core (class, st) and a literal tail (post)
	eTyped          // a whole segment of a typed class
	eWild           // a word placeholder: the generalised position
	eEmpty          // the empty segment
	eRest           // the rest of the key: {name:any}
)

// posState sums up the values seen at a placeholder position.
type posState struct {
	first  string // the first value, while they are all the same
	valid  uint8  // AND of the validity bits of the values
	strong uint8  // OR of their strong bits
	varied bool   // two values differ
}

func newState(v string, mask uint8) posState {
	return posState{first: strings.Clone(v), valid: mask & validBits, strong: mask & strongBits}
}

func (p *posState) add(v string, mask uint8) {
	p.valid &= mask
	p.strong |= mask & strongBits
	if !p.varied && v != p.first {
		p.varied, p.first = true, ""
	}
}

func joinState(a, b posState) posState {
	out := posState{first: a.first, valid: a.valid & b.valid, strong: a.strong | b.strong}
	out.varied = a.varied || b.varied || a.first != b.first
	if out.varied {
		out.first = ""
	}
	return out
}

// typ is the most specific placeholder type valid for every value.
func (p posState) typ() registry.PlaceholderType {
	switch {
	case p.valid&vInt != 0:
		return registry.Int
	case p.valid&vUUID != 0:
		return registry.UUID
	case p.valid&vULID != 0 && p.strong&sULID != 0:
		return registry.ULID
	case p.valid&vHex != 0 && p.strong&sHex != 0:
		return registry.Hex
	}
	return registry.Word
}

type node struct {
	kind  edgeKind
	class uint8
	key   string // eLit, eDec: the signature in the parent's index
	lit   string // eLit: the segment; eDec: the head
	post  string // eDec: the tail
	st    posState
	keys  int64 // keys through this node
	term  *Stats
	sig   uint64 // the shape of the subtree, while Families settles

	kids              []*node // eLit and eDec children, in order of arrival
	index             map[string]*node
	typed             [nTyped]*node
	empty, wild, rest *node
	closed            bool // every non-empty segment goes to wild
	anyTail           bool // every non-empty rest of a key goes to rest
	gone              bool // merged into another node
	// saw, on a word placeholder made of siblings of one shape: the
	// literal values it took, sorted, at most maxSaw, and how many more;
	// open when other values joined it since.
	saw     []string
	sawMore int
	sawOpen bool
}

// Miner groups keys into candidate families. It is not safe for
// concurrent use.
type Miner struct {
	sep     byte
	sepLit  string // the separator as pattern text
	max     int
	root    *node
	nodes   int
	scratch []byte
	dropped int64
}

// NewMiner returns an empty miner.
func NewMiner(o MinerOptions) *Miner {
	sep := o.Separator
	if sep == 0 || sep == '{' || sep == '}' || sep == '\\' {
		sep = ':'
	}
	max := o.MaxShapes
	if max <= 0 {
		max = 10_000
	}
	max = maxInt(max, minShapes)
	return &Miner{sep: sep, sepLit: registry.EscapeLiteral(string([]byte{sep})), max: max, root: &node{kind: eRoot}, nodes: 1}
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// Dropped returns the number of empty keys given to Add: Redis allows the
// empty key, but no pattern matches it, so it is not counted anywhere.
func (m *Miner) Dropped() int64 { return m.dropped }

// Add counts one key. Its cost is linear in the length of the key, and
// only a key of a new shape allocates.
func (m *Miner) Add(f Fact) {
	key := f.Key
	if key == "" {
		m.dropped++
		return
	}
	n := m.root
	n.keys++
	start := 0
	for i := 0; ; i++ {
		rest := key[start:]
		if rest != "" && (n.anyTail || i == maxSegs) {
			n = m.restOf(n)
			n.keys++
			break
		}
		end := strings.IndexByte(rest, m.sep)
		seg := rest
		if end >= 0 {
			seg = rest[:end]
		}
		n = m.child(n, seg)
		n.keys++
		if end < 0 {
			break
		}
		start += end + 1
	}
	if n.term == nil {
		n.term = &Stats{}
	}
	addStats(n.term, f)
	if m.nodes > m.max {
		m.shrink()
	}
}

// addStats adds f to s, copying the key and the type when s keeps them,
// so that the caller's buffers are not retained.
func addStats(s *Stats, f Fact) {
	if n := s.seen + 1; len(s.Examples) < MaxExamples || splitmix(uint64(n))%uint64(n) < MaxExamples {
		f.Key = strings.Clone(f.Key)
	}
	if _, ok := s.Types[f.Type]; !ok && len(s.Types) < maxTypes {
		f.Type = strings.Clone(f.Type)
	}
	s.Add(f)
}

func (m *Miner) restOf(n *node) *node {
	if n.rest == nil {
		n.rest = &node{kind: eRest}
		m.nodes++
	}
	return n.rest
}

func (m *Miner) emptyOf(n *node) *node {
	if n.empty == nil {
		n.empty = &node{kind: eEmpty}
		m.nodes++
	}
	return n.empty
}

// child returns the child of n for segment seg, creating it.
func (m *Miner) child(n *node, seg string) *node {
	if seg == "" {
		return m.emptyOf(n)
	}
	// A literal seen here before needs no classifying: the class of a
	// value never changes.
	var b []byte
	if len(n.kids) > 0 {
		b = append(m.scratch[:0], 'L')
		b = append(b, seg...)
		m.scratch = b
		if c := n.index[string(b)]; c != nil {
			return c
		}
	}
	s := classify(seg)
	switch s.kind {
	case eTyped:
		c := n.typed[s.class]
		if c == nil && n.closed {
			return m.wildOf(n, seg)
		}
		if c == nil {
			c = &node{kind: eTyped, class: s.class, st: newState(s.core, s.mask)}
			n.typed[s.class] = c
			m.nodes++
		} else {
			c.st.add(s.core, s.mask)
		}
		return c
	case eDec:
		b = append(m.scratch[:0], 'D', byte(len(s.pre)), s.class)
		b = append(b, s.pre...)
		b = append(b, s.post...)
		m.scratch = b
		if c := n.index[string(b)]; c != nil {
			c.st.add(s.core, s.mask)
			return c
		}
		if n.closed {
			return m.wildOf(n, seg)
		}
		k := string(b)
		c := &node{kind: eDec, class: s.class, key: k, lit: k[3 : 3+len(s.pre)], post: k[3+len(s.pre):], st: newState(s.core, s.mask)}
		m.addKid(n, c)
		return c
	}
	if n.closed {
		return m.wildOf(n, seg)
	}
	b = append(m.scratch[:0], 'L')
	b = append(b, seg...)
	m.scratch = b
	k := string(b)
	c := &node{kind: eLit, key: k, lit: k[1:]}
	m.addKid(n, c)
	return c
}

// wildOf returns the word placeholder of n, for value seg.
func (m *Miner) wildOf(n *node, seg string) *node {
	mask := uint8(0)
	if len(seg) <= maxTyped {
		mask = valueMask(seg)
	}
	if n.wild == nil {
		n.wild = &node{kind: eWild, st: newState(seg, mask)}
		n.wild.st.varied = true
		m.nodes++
	} else {
		n.wild.st.add(seg, mask)
	}
	n.wild.sawOpen = true
	return n.wild
}

func (m *Miner) addKid(n, c *node) {
	if n.index == nil {
		n.index = map[string]*node{}
	}
	n.index[c.key] = c
	n.kids = append(n.kids, c)
	m.nodes++
}

// segInfo is the class of one segment.
type segInfo struct {
	kind            edgeKind // eLit, eDec or eTyped
	class           uint8
	pre, core, post string
	mask            uint8 // of core
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isLetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
func isAlnum(c byte) bool { return isDigit(c) || isLetter(c) }
func isHexDigit(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
func isCrockford(c byte) bool {
	if 'a' <= c && c <= 'z' {
		c -= 'a' - 'A'
	}
	switch {
	case isDigit(c):
		return true
	case 'A' <= c && c <= 'Z':
		return c != 'I' && c != 'L' && c != 'O' && c != 'U'
	}
	return false
}

// Byte flags for valueMask: what every byte of a value must be (low
// nibble, ANDed) and what some byte is (high nibble, ORed).
const (
	fInt   = 1 << iota // a digit
	fHex               // a hex digit
	fCrock             // a Crockford base32 digit
	_
	fSomeDigit     // a digit
	fSomeHexLetter // a-f, A-F
	fSomeLetter    // an ASCII letter
	fSomeBase32    // a Crockford letter that is not a hex digit (g-z)
)

var byteFlags = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		switch {
		case isDigit(b):
			t[c] = fInt | fHex | fCrock | fSomeDigit
		case isHexDigit(b):
			t[c] = fHex | fCrock | fSomeHexLetter | fSomeLetter
		case isLetter(b):
			t[c] = fSomeLetter
			if isCrockford(b) {
				t[c] |= fCrock | fSomeBase32
			}
		}
	}
	return t
}()

// valueMask returns the validity and strong bits of v.
func valueMask(v string) uint8 {
	n := len(v)
	if n == 0 {
		return 0
	}
	all, some := uint8(fInt|fHex|fCrock), uint8(0)
	start := 0
	if v[0] == '-' {
		start, all = 1, fInt
	}
	for i := start; i < n; i++ {
		f := byteFlags[v[i]]
		all &= f
		some |= f
		if all == 0 {
			break
		}
	}
	var m uint8
	if all&fInt != 0 && n > start {
		m |= vInt
	}
	if all&fHex != 0 {
		m |= vHex
		if n >= 8 && some&fSomeDigit != 0 && some&fSomeHexLetter != 0 {
			m |= sHex
		}
	}
	// A ULID's 128 bits leave its first character at most 7. Only a letter
	// beyond f is evidence of base32: 26 hex digits are hex.
	if all&fCrock != 0 && n == 26 && '0' <= v[0] && v[0] <= '7' {
		m |= vULID
		if some&fSomeDigit != 0 && some&fSomeBase32 != 0 {
			m |= sULID
		}
	}
	if n == 36 && isUUID(v) {
		m |= vUUID
	}
	return m
}

func isUUID(v string) bool {
	if len(v) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if v[i] != '-' {
				return false
			}
		} else if !isHexDigit(v[i]) {
			return false
		}
	}
	return true
}

// isNum reports digit groups joined by single - _ . or /: 2026-12-01,
// 10.0.0.1, 1.2.3.
func isNum(v string) bool {
	if len(v) < 3 || !isDigit(v[0]) || !isDigit(v[len(v)-1]) {
		return false
	}
	punct := false
	for i := 1; i < len(v); i++ {
		switch c := v[i]; {
		case isDigit(c):
		case c == '-' || c == '_' || c == '.' || c == '/':
			if !isDigit(v[i-1]) {
				return false
			}
			punct = true
		default:
			return false
		}
	}
	return punct
}

// typedClass returns the class of a whole typed value, if v is one.
func typedClass(v string, mask uint8) (uint8, bool) {
	switch {
	case mask&vInt != 0:
		return cInt, true
	case mask&vUUID != 0:
		return cUUID, true
	case mask&sULID != 0:
		return cULID, true
	case mask&sHex != 0:
		return cHex, true
	case isNum(v):
		return cNum, true
	}
	return 0, false
}

// classify splits a non-empty segment into its class.
func classify(seg string) segInfo {
	n := len(seg)
	if n > maxTyped {
		return segInfo{kind: eDec, class: cLong, pre: seg[:longHead], core: seg[longHead:]}
	}
	mask := valueMask(seg)
	if c, ok := typedClass(seg, mask); ok {
		return segInfo{kind: eTyped, class: c, core: seg, mask: mask}
	}
	if n >= 3 && seg[0] == '{' && seg[n-1] == '}' && !strings.ContainsAny(seg[1:n-1], "{}") {
		inner := seg[1 : n-1]
		im := valueMask(inner)
		c, ok := typedClass(inner, im)
		if !ok {
			return segInfo{kind: eTyped, class: cTagWord, core: inner, mask: im}
		}
		return segInfo{kind: eTyped, class: c + cTagInt, core: inner, mask: im}
	}
	if n > maxLit {
		return segInfo{kind: eDec, class: cLong, pre: seg[:longHead], core: seg[longHead:]}
	}
	dec := func(pre, core, post string) segInfo {
		m := valueMask(core)
		c, _ := typedClass(core, m)
		return segInfo{kind: eDec, class: c, pre: pre, core: core, post: post, mask: m}
	}
	// A UUID or ULID tail after any head: they are distinctive enough.
	if n > 36 && isUUID(seg[n-36:]) {
		return dec(seg[:n-36], seg[n-36:], "")
	}
	if n > 26 && valueMask(seg[n-26:])&sULID != 0 {
		return dec(seg[:n-26], seg[n-26:], "")
	}
	if n > 36 && isUUID(seg[:36]) && !isAlnum(seg[36]) {
		return dec("", seg[:36], seg[36:])
	}
	// A typed tail after the last delimiter: job-42, sess_9f86d081.
	i := n - 1
	for i >= 0 && isAlnum(seg[i]) {
		i--
	}
	if i >= 0 && i < n-1 {
		if m := valueMask(seg[i+1:]); m&(vInt|sHex|sULID) != 0 {
			return dec(seg[:i+1], seg[i+1:], "")
		}
	}
	// Digits after letters: rev12, team42 (not the version v2).
	j := n
	for j > 0 && isDigit(seg[j-1]) {
		j--
	}
	if j < n && j > 0 && isLetter(seg[j-1]) && !(j == 1 && (seg[0] == 'v' || seg[0] == 'V')) {
		return dec(seg[:j], seg[j:], "")
	}
	// A typed head before a delimiter: 42.json.
	k := 0
	if seg[0] == '-' {
		k = 1
	}
	for k < n && isAlnum(seg[k]) {
		k++
	}
	if k < n && k > 0 {
		if m := valueMask(seg[:k]); m&(vInt|sHex) != 0 {
			return dec("", seg[:k], seg[k:])
		}
	}
	return segInfo{kind: eLit}
}

// keepConst reports whether a placeholder position of class c whose values
// are all the same renders as that literal value.
func keepConst(kind edgeKind, c uint8) bool {
	switch kind {
	case eTyped:
		return c == cInt || c == cNum || c == cTagInt || c == cTagNum || c == cTagWord
	case eDec:
		return c == cInt || c == cNum
	}
	return false
}

func isTag(c uint8) bool { return c >= cTagInt && c <= cTagWord }

// valueState is the state of the whole-segment values of a child, as a
// word placeholder absorbing it sees them.
func valueState(kind edgeKind, class uint8, lit string, st posState) posState {
	switch kind {
	case eLit:
		return posState{first: lit, valid: valueMask(lit) & validBits, strong: valueMask(lit) & strongBits}
	case eTyped:
		if !isTag(class) {
			return st
		}
	case eWild:
		return st
	}
	return posState{varied: true}
}

// members returns the non-empty, non-rest children of n, in a stable order.
func (n *node) members() []*node {
	out := make([]*node, 0, len(n.kids)+4)
	for _, c := range n.kids {
		if !c.gone {
			out = append(out, c)
		}
	}
	for _, c := range n.typed {
		if c != nil {
			out = append(out, c)
		}
	}
	if n.wild != nil {
		out = append(out, n.wild)
	}
	return out
}

// detach removes c from the children of n (kids are compacted by the
// caller, through compact).
func (n *node) detach(c *node) {
	switch c.kind {
	case eLit, eDec:
		c.gone = true
		delete(n.index, c.key)
	case eTyped:
		n.typed[c.class] = nil
	case eWild:
		n.wild = nil
	case eEmpty:
		n.empty = nil
	case eRest:
		n.rest = nil
	}
}

func (n *node) compact() {
	k := n.kids[:0]
	for _, c := range n.kids {
		if !c.gone {
			k = append(k, c)
		}
	}
	clear(n.kids[len(k):])
	n.kids = k
}

// toWild merges child c of n into n's word placeholder.
func (m *Miner) toWild(n, c *node) {
	n.detach(c)
	m.adoptWild(n, c)
}

// mergeInto moves the keys and the subtree of src into dst, which stand at
// the same position; src is discarded. The caller joins the states.
func (m *Miner) mergeInto(dst, src *node) {
	m.take(dst, src)
	for _, c := range src.children() {
		m.adopt(dst, c)
	}
	dst.compact()
}

// take adds src's key count and the stats of the keys that end at src to
// dst, and discards src; the caller moves src's children.
func (m *Miner) take(dst, src *node) {
	m.nodes--
	src.gone = true
	dst.keys += src.keys
	if src.term != nil {
		if dst.term == nil {
			dst.term = src.term
		} else {
			dst.term.Merge(src.term)
		}
		src.term = nil
	}
}

// children returns every child of n.
func (n *node) children() []*node {
	out := n.members()
	if n.empty != nil {
		out = append(out, n.empty)
	}
	if n.rest != nil {
		out = append(out, n.rest)
	}
	return out
}

// adopt makes c a child of n, merging it with the child already there.
func (m *Miner) adopt(n, c *node) {
	c.gone = false
	if c.kind == eRest || (n.anyTail && c.kind != eEmpty) {
		m.absorb(m.restOf(n), c)
		return
	}
	if c.kind == eEmpty {
		if n.empty == nil {
			n.empty = c
		} else {
			m.mergeInto(n.empty, c)
		}
		if n.anyTail {
			// Below an any tail, only the key that ends with the empty
			// segment stays out of the tail.
			e := n.empty
			for _, g := range e.children() {
				e.detach(g)
				m.absorb(m.restOf(n), g)
			}
			e.compact()
		}
		return
	}
	switch c.kind {
	case eLit, eDec:
		if d := n.index[c.key]; d != nil && !d.gone {
			d.st = joinState(d.st, c.st)
			m.mergeInto(d, c)
			return
		}
		if n.closed {
			m.adoptWild(n, c)
			return
		}
		if n.index == nil {
			n.index = map[string]*node{}
		}
		n.index[c.key] = c
		n.kids = append(n.kids, c)
	case eTyped:
		if d := n.typed[c.class]; d != nil {
			d.st = joinState(d.st, c.st)
			m.mergeInto(d, c)
			return
		}
		if n.closed {
			m.adoptWild(n, c)
			return
		}
		n.typed[c.class] = c
	case eWild:
		if n.wild != nil {
			n.wild.st = joinState(n.wild.st, c.st)
			n.wild.sawOpen = true
			m.mergeInto(n.wild, c)
			return
		}
		n.wild = c
	}
}

// adoptWild merges c, which is not a child of n, into n's placeholder.
func (m *Miner) adoptWild(n, c *node) {
	vs := valueState(c.kind, c.class, c.lit, c.st)
	if n.wild == nil {
		n.wild = &node{kind: eWild, st: vs}
		m.nodes++
	} else {
		n.wild.st = joinState(n.wild.st, vs)
		n.wild.sawOpen = true
	}
	n.wild.st.varied = true
	m.mergeInto(n.wild, c)
}

// absorb adds the keys of the whole subtree of src to the any tail rest.
func (m *Miner) absorb(rest, src *node) {
	m.take(rest, src)
	for _, c := range src.children() {
		m.absorb(rest, c)
	}
}

// close generalises n: its rare children (all of them with all) merge
// into a word placeholder, which gets every value n has no child for yet.
func (m *Miner) close(n *node, all bool) {
	thr := threshold(n)
	others := frequent(n, thr)
	budget := closeBudget
	for _, c := range n.members() {
		if c.kind != eWild && (all || c.keys < thr && !(n == m.root && m.overlapsAny([]*node{c}, others, &budget))) {
			m.toWild(n, c)
		}
	}
	n.compact()
	n.closed = true
}

// rareKids counts the children of n that close would merge.
func rareKids(n *node) int {
	thr, k := threshold(n), 0
	for _, c := range n.members() {
		if c.kind != eWild && c.keys < thr {
			k++
		}
	}
	return k
}

// shrink generalises the nodes with the most rare children until the
// trie is back under seven eighths of its bound; when that is not enough,
// the nodes with the most children, and then subtrees into any tails.
func (m *Miner) shrink() {
	target := m.max * 7 / 8
	all := false
	for m.nodes > target {
		before := m.nodes
		type cand struct {
			n         *node
			lits, all int
		}
		var cs []cand
		var walk func(n *node)
		walk = func(n *node) {
			if !n.anyTail {
				if k := len(n.members()); k >= 2 {
					if r := rareKids(n); all || r >= 1 {
						cs = append(cs, cand{n, r, k})
					}
				}
			}
			for _, c := range n.children() {
				walk(c)
			}
		}
		walk(m.root)
		slices.SortStableFunc(cs, func(a, b cand) int {
			if a.lits != b.lits {
				return b.lits - a.lits
			}
			return b.all - a.all
		})
		for _, c := range cs {
			if m.nodes <= target {
				break
			}
			if !c.n.gone {
				m.close(c.n, all)
			}
		}
		if m.nodes < before {
			continue
		}
		if !all {
			all = true
			continue
		}
		// Only empty segments and tails branch: cut subtrees into any
		// tails, the largest first.
		m.tails(target)
		return
	}
}

// tails turns the largest subtrees into any tails until the trie is under
// target nodes.
func (m *Miner) tails(target int) {
	type cand struct {
		n    *node
		size int
	}
	var cs []cand
	var walk func(n *node) int
	walk = func(n *node) int {
		size := 1
		for _, c := range n.children() {
			size += walk(c)
		}
		if n != m.root && !n.anyTail && size > 1 {
			cs = append(cs, cand{n, size})
		}
		return size
	}
	walk(m.root)
	slices.SortStableFunc(cs, func(a, b cand) int { return b.size - a.size })
	for _, c := range cs {
		if m.nodes <= target {
			return
		}
		if !c.n.gone {
			m.tail(c.n)
		}
	}
	if m.nodes > target {
		m.tail(m.root)
	}
}

// tail makes every non-empty rest of a key below n an any tail; only the
// key that ends with an empty segment after n keeps its own shape.
func (m *Miner) tail(n *node) {
	for _, c := range n.children() {
		switch c.kind {
		case eRest:
		case eEmpty:
			for _, g := range c.children() {
				c.detach(g)
				m.absorb(m.restOf(n), g)
			}
			c.compact()
		default:
			n.detach(c)
			m.absorb(m.restOf(n), c)
		}
	}
	n.compact()
	n.index = nil
	n.closed, n.anyTail = false, true
}

// fnv mixing, for subtree shapes.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func mix(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func mix64(h, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= fnvPrime
		v >>= 8
	}
	return h
}

// threshold is the key count below which a child of n is rare: a single
// key, or a small share of the keys of n and of the average child.
func threshold(n *node) int64 {
	var sum int64
	ms := n.members()
	for _, c := range ms {
		sum += c.keys
	}
	if len(ms) == 0 {
		return 2
	}
	return max(2, min(sum/freqShare, sum/int64(len(ms))/8))
}

// share is 1/freqShare of the keys of the children of n.
func share(n *node) int64 {
	var sum int64
	for _, c := range n.members() {
		sum += c.keys
	}
	return sum / freqShare
}

// label is how child c of a node with the given rarity threshold counts in
// the shape of that node.
func label(c *node, thr int64) uint64 {
	switch c.kind {
	case eEmpty:
		return mix(fnvOffset, "e")
	case eRest:
		return mix(fnvOffset, "a")
	case eWild:
		return mix(fnvOffset, "*")
	}
	if c.keys < thr {
		return mix(fnvOffset, "*")
	}
	if c.kind == eTyped {
		return mix64(mix(fnvOffset, "t"), uint64(c.class))
	}
	return mix(fnvOffset, c.key)
}

// shape computes n.sig from the labels and shapes of its children.
func shape(n *node) {
	thr := threshold(n)
	cs := n.children()
	hs := make([]uint64, 0, len(cs))
	for _, c := range cs {
		hs = append(hs, mix64(label(c, thr), c.sig))
	}
	slices.Sort(hs)
	hs = slices.Compact(hs)
	h := uint64(fnvOffset)
	if n.term != nil {
		h = mix(h, "T")
	}
	for _, v := range hs {
		h = mix64(h, v)
	}
	n.sig = h
}

// settle decides literal or placeholder below n, bottom-up.
func (m *Miner) settle(n *node, root bool) {
	for _, c := range n.children() {
		m.settle(c, false)
	}
	if n.kind == eRest || n.anyTail {
		shape(n)
		return
	}
	m.decide(n, root)
	m.collapse(n)
	shape(n)
}

func (m *Miner) decide(n *node, root bool) {
	m.signs(n)
	thr := threshold(n)
	m.heads(n, max(thr, joinKeys))
	k := kAfterLiteral
	if n.kind == eTyped || n.kind == eWild {
		k = kAfterPlaceholder
	}
	// Group the members by the shape of their subtrees.
	var order []uint64
	groups := map[uint64][]*node{}
	for _, c := range n.members() {
		if _, ok := groups[c.sig]; !ok {
			order = append(order, c.sig)
		}
		groups[c.sig] = append(groups[c.sig], c)
	}
	merged := false
	budget := overlapBudget
	for _, sig := range order {
		g := groups[sig]
		lits, rare, freqLits, freq, wild := 0, 0, 0, 0, false
		for _, c := range g {
			isLit := c.kind == eLit || c.kind == eDec
			if c.kind == eWild {
				wild = true
			}
			if c.keys < thr {
				if isLit {
					rare++
				}
			} else {
				freq++
				if isLit {
					freqLits++
				}
			}
			if isLit {
				lits++
			}
		}
		// A first segment is generalised only on strong evidence: many
		// rare literals. A handful of unrelated prefixes with a key or
		// two each (what a keyspace's leftovers look like) stay literal
		// families: a placeholder there would claim every future key.
		ok := wild ||
			(!root && lits >= k) ||
			(rare >= 2 && rare >= freqLits && (!root || freq == 0 && rare >= kAfterLiteral))
		if !ok && !root && n.wild == nil && siblings(g) {
			// Siblings of one shape, each with many keys: one
			// placeholder, which remembers their values.
			saw := make([]string, 0, len(g))
			for _, c := range g {
				saw = append(saw, c.lit)
			}
			slices.Sort(saw)
			for _, c := range g {
				m.toWild(n, c)
			}
			n.wild.saw, n.wild.sawMore, n.wild.sawOpen = saw[:min(len(saw), maxSaw)], max(0, len(saw)-maxSaw), false
			merged = true
			continue
		}
		if !ok || len(g) < 2 && !wild {
			continue
		}
		if root && !wild && m.overlapsOthers(n, g, thr, &budget) {
			// A placeholder for the first segment must not take the keys
			// of the frequent families beside it.
			continue
		}
		for _, c := range g {
			if c.kind != eWild {
				m.toWild(n, c)
				merged = true
			}
		}
	}
	if n.wild != nil {
		// A placeholder is here: the rare values join it, and so do those
		// of a few keys, weak evidence next to it. For the first segment,
		// not those that would make it match keys of a frequent family
		// beside it (a typo "v9:" of "v1:..." stays apart): elsewhere the
		// overlap repair of Families merges such families locally, but a
		// placeholder first segment would swallow the keyspace.
		join := max(thr, joinKeys, share(n))
		others := frequent(n, join)
		for _, c := range n.members() {
			if c.kind != eWild && c.keys < join && !(root && m.overlapsAny([]*node{c}, others, &budget)) {
				m.toWild(n, c)
				merged = true
			}
		}
	}
	n.compact()
	if merged {
		m.settle(n.wild, false)
	}
	// Typed siblings of one shape whose types share values (an 8-digit
	// hex ID is an int) are one placeholder.
	for _, set := range [][]uint8{{cHex, cULID, cInt}, {cTagWord, cTagHex, cTagULID, cTagInt}} {
		for i, a := range set {
			da := n.typed[a]
			if da == nil {
				continue
			}
			for _, b := range set[i+1:] {
				if db := n.typed[b]; db != nil && db.sig == da.sig {
					n.typed[b] = nil
					da.st = joinState(da.st, db.st)
					m.mergeInto(da, db)
				}
			}
		}
	}
}

// siblings reports whether the members g of one node, of one sub-shape,
// are siblings to merge into one placeholder: at least minSiblings whole
// literals, each with siblingKeys keys or more, whose keys have the same
// Redis types (a user's profile hash, settings string and sessions set
// stay apart).
func siblings(g []*node) bool {
	if len(g) < minSiblings {
		return false
	}
	types := ""
	for i, c := range g {
		if c.kind != eLit || c.keys < siblingKeys {
			return false
		}
		t := typesBelow(c)
		if i > 0 && t != types {
			return false
		}
		types = t
	}
	return true
}

// typesBelow lists the Redis types of the keys below n, sorted.
func typesBelow(n *node) string {
	set := map[string]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		if n.term != nil {
			for t := range n.term.Types {
				set[t] = true
			}
		}
		for _, c := range n.children() {
			if len(set) <= maxTypes {
				walk(c)
			}
		}
	}
	walk(n)
	return strings.Join(slices.Sorted(maps.Keys(set)), ",")
}

// overlapsOthers reports whether a word placeholder made of the members g
// of n could match a key of a child of n outside g with freq keys or more,
// the children that stay literal. A spent budget counts as an overlap.
func (m *Miner) overlapsOthers(n *node, g []*node, freq int64, budget *int) bool {
	return m.overlapsAny(g, frequent(n, freq), budget)
}

// frequent returns the children of n, but its placeholder, with freq keys
// or more.
func frequent(n *node, freq int64) []*node {
	var out []*node
	for _, c := range n.members() {
		if c.kind != eWild && c.keys >= freq {
			out = append(out, c)
		}
	}
	return out
}

// overlapsAny reports whether a placeholder over the nodes g could match a
// key below one of others.
func (m *Miner) overlapsAny(g, others []*node, budget *int) bool {
	for _, c := range g {
		for _, o := range others {
			// The placeholder accepts the segment of o: compare below.
			if m.below(c, o, budget) {
				return true
			}
		}
	}
	return false
}

// below reports whether some rest of a key can follow both a and b, two
// nodes whose own segments are taken to be compatible.
func (m *Miner) below(a, b *node, budget *int) bool {
	*budget--
	if *budget < 0 {
		return true
	}
	if a.term != nil && b.term != nil {
		return true
	}
	if a.rest != nil && continues(b) || b.rest != nil && continues(a) {
		return true
	}
	for _, ca := range a.children() {
		if ca.kind == eRest {
			continue
		}
		la := m.langOf(ca)
		for _, cb := range b.children() {
			if cb.kind == eRest {
				continue
			}
			if m.compat(la, m.langOf(cb)) && m.below(ca, cb, budget) {
				return true
			}
		}
	}
	return false
}

// continues reports whether some key below n has bytes after n's segment
// and its separator.
func continues(n *node) bool {
	if n.rest != nil {
		return true
	}
	for _, c := range n.children() {
		if c.kind != eEmpty || len(c.children()) > 0 {
			return true
		}
	}
	return false
}

// lang is the language of one rendered segment.
type lang struct {
	kind      uint8 // lLit, lPh, lDec, lEmpty
	lit, post string
	typ       registry.PlaceholderType
	tag       bool
}

const (
	lLit uint8 = iota
	lPh
	lDec
	lEmpty
)

func (m *Miner) langOf(c *node) lang {
	switch c.kind {
	case eEmpty:
		return lang{kind: lEmpty}
	case eLit:
		return lang{kind: lLit, lit: c.lit}
	case eTyped:
		if keepConst(c.kind, c.class) && !c.st.varied {
			if isTag(c.class) {
				return lang{kind: lLit, lit: "{" + c.st.first + "}"}
			}
			return lang{kind: lLit, lit: c.st.first}
		}
		return lang{kind: lPh, typ: c.st.typ(), tag: isTag(c.class)}
	case eDec:
		if keepConst(c.kind, c.class) && !c.st.varied {
			return lang{kind: lLit, lit: c.lit + c.st.first + c.post}
		}
		t := c.st.typ()
		if c.class == cLong {
			t = registry.Word
		}
		return lang{kind: lDec, lit: c.lit, post: c.post, typ: t}
	}
	return lang{kind: lPh, typ: c.st.typ()}
}

// compat reports whether two segment languages may share a value; it may
// say yes when they do not.
func (m *Miner) compat(x, y lang) bool {
	if x.kind > y.kind {
		x, y = y, x
	}
	switch {
	case x.kind == lEmpty || y.kind == lEmpty:
		return x.kind == y.kind
	case x.kind == lLit && y.kind == lLit:
		return x.lit == y.lit
	case x.kind == lLit && y.kind == lPh:
		v := x.lit
		if y.tag {
			if len(v) < 3 || v[0] != '{' || v[len(v)-1] != '}' {
				return false
			}
			v = v[1 : len(v)-1]
		}
		return y.typ.Valid(v, m.sep)
	case x.kind == lLit && y.kind == lDec:
		v := x.lit
		return len(v) > len(y.lit)+len(y.post) && strings.HasPrefix(v, y.lit) && strings.HasSuffix(v, y.post) &&
			y.typ.Valid(v[len(y.lit):len(v)-len(y.post)], m.sep)
	case x.kind == lPh && y.kind == lPh:
		if x.tag != y.tag {
			return x.typ == registry.Word || y.typ == registry.Word
		}
		return typesMeet(x.typ, y.typ)
	case x.kind == lPh && y.kind == lDec:
		if x.typ == registry.Word {
			return true
		}
		for _, part := range []string{y.lit, y.post} {
			for i := 0; i < len(part); i++ {
				if !x.typ.AcceptsAt(1, part[i], m.sep) {
					return false
				}
			}
		}
		return true
	}
	// Two decomposed segments.
	return (strings.HasPrefix(x.lit, y.lit) || strings.HasPrefix(y.lit, x.lit)) &&
		(strings.HasSuffix(x.post, y.post) || strings.HasSuffix(y.post, x.post))
}

// typesMeet reports whether two placeholder types share a value.
func typesMeet(a, b registry.PlaceholderType) bool {
	if a == b || a == registry.Word || b == registry.Word || a == registry.Any || b == registry.Any {
		return true
	}
	return a != registry.UUID && b != registry.UUID // int, hex and ulid meet pairwise
}

// heads merges rare literal children that share a head ending in a
// delimiter ("_kombu.binding.celery", "_kombu.binding.reports") into one
// child: the head and a word placeholder.
func (m *Miner) heads(n *node, rare int64) {
	count := map[string]int{}
	var lits []*node
	for _, c := range n.kids {
		if c.gone || c.kind != eLit || c.keys >= rare {
			continue
		}
		lits = append(lits, c)
		for _, h := range delimHeads(c.lit) {
			count[h]++
		}
	}
	for _, c := range lits {
		best := ""
		for _, h := range delimHeads(c.lit) {
			if count[h] >= joinKeys && len(h) >= 3 {
				best = h
			}
		}
		if best == "" {
			continue
		}
		k := string([]byte{'D', byte(len(best)), cLong}) + best
		d := n.index[k]
		n.detach(c)
		if d == nil || d.gone {
			d = &node{kind: eDec, class: cLong, key: k, lit: k[3:], st: posState{varied: true}}
			n.index[k] = d
			n.kids = append(n.kids, d)
			m.nodes++
		}
		m.mergeInto(d, c)
	}
	n.compact()
}

// delimHeads returns the prefixes of lit that end with one of its first
// four delimiters and leave at least one byte, shortest first.
func delimHeads(lit string) []string {
	var out []string
	for i := 0; i < len(lit)-1 && len(out) < 4; i++ {
		if !isAlnum(lit[i]) {
			out = append(out, lit[:i+1])
		}
	}
	return out
}

// signs merges the child "rev-" + int into its sibling "rev" + int: the
// dash was the sign of a negative int ("rev-5" is rev{rev:int}).
func (m *Miner) signs(n *node) {
	for _, d := range n.kids {
		if d.gone || d.kind != eDec || d.class != cInt || len(d.lit) < 2 || d.lit[len(d.lit)-1] != '-' || !isLetter(d.lit[len(d.lit)-2]) {
			continue
		}
		pre := d.lit[:len(d.lit)-1]
		k := string([]byte{'D', byte(len(pre)), cInt}) + pre + d.post
		e := n.index[k]
		if e == nil || e.gone {
			continue
		}
		n.detach(d)
		e.st = joinState(e.st, posState{valid: vInt, varied: true})
		m.mergeInto(e, d)
	}
	n.compact()
}

// collapse turns a word placeholder of n whose subtree holds keys of
// several segment counts, and no literal of an eighth of its keys, into a
// {name:any} tail.
func (m *Miner) collapse(n *node) {
	w := n.wild
	if w == nil || len(n.kids) > 0 {
		return
	}
	// The typed siblings of the placeholder go into the tail with it.
	ms := n.members()
	var keys int64
	for _, c := range ms {
		keys += c.keys
	}
	depths := map[int]bool{}
	for _, c := range ms {
		if !unstructured(c, 0, max(2, keys/8), depths) {
			return
		}
	}
	if len(depths) < 2 {
		return
	}
	for _, c := range ms {
		n.detach(c)
		m.absorb(m.restOf(n), c)
	}
	n.closed, n.anyTail = false, true
	if e := n.empty; e != nil {
		for _, g := range e.children() {
			e.detach(g)
			m.absorb(n.rest, g)
		}
		e.compact()
	}
}

// unstructured reports whether no literal below n (n excluded) holds limit
// keys or more, and collects the depths where the keys of the subtree of n
// end (-1 for an any tail).
func unstructured(n *node, depth int, limit int64, depths map[int]bool) bool {
	if depth > 0 && (n.kind == eLit || n.kind == eDec || n.kind == eEmpty) && n.keys >= limit {
		return false
	}
	if n.term != nil {
		if n.kind == eRest {
			depths[-1] = true
		} else {
			depths[depth] = true
		}
	}
	for _, c := range n.children() {
		if !unstructured(c, depth+1, limit, depths) {
			return false
		}
	}
	return true
}

// fseg is one segment of a flat candidate.
type fseg struct {
	kind  edgeKind // eLit (the empty segment too), eDec, eTyped, eWild, eRest
	class uint8
	lit   string
	post  string
	st    posState
	saw   []string // eWild: the siblings it took (node.saw), nil when open
	more  int
}

type fcand struct {
	segs  []fseg
	stats *Stats
	pat   string
}

// Families settles the trie and returns the candidate families, sorted
// by pattern. Settling generalises the miner's state: keys added later go
// to the settled shapes.
func (m *Miner) Families() []Candidate {
	m.settle(m.root, true)
	var cands []*fcand
	var path []fseg
	var walk func(n *node)
	walk = func(n *node) {
		switch n.kind {
		case eLit, eEmpty:
			path = append(path, fseg{kind: eLit, lit: n.lit})
		case eRoot:
		default:
			f := fseg{kind: n.kind, class: n.class, lit: n.lit, post: n.post, st: n.st}
			if n.kind == eWild && !n.sawOpen {
				f.saw, f.more = n.saw, n.sawMore
			}
			path = append(path, f)
		}
		if n.term != nil && n.term.Keys > 0 {
			s := &Stats{}
			s.Merge(n.term)
			cands = append(cands, &fcand{segs: slices.Clone(path), stats: s})
		}
		for _, c := range n.children() {
			walk(c)
		}
		if n.kind != eRoot {
			path = path[:len(path)-1]
		}
	}
	walk(m.root)
	cands = m.resolve(cands)
	out := make([]Candidate, len(cands))
	for i, c := range cands {
		out[i] = Candidate{Pattern: c.pat, Version: version(c.segs), Stats: c.stats, Saw: m.saws(c)}
	}
	slices.SortFunc(out, func(a, b Candidate) int { return strings.Compare(a.Pattern, b.Pattern) })
	return out
}

// saws names the placeholders of c that stand for merged siblings, with
// the values they took.
func (m *Miner) saws(c *fcand) []Saw {
	p, err := registry.ParsePattern(c.pat, m.sep)
	if err != nil {
		return nil
	}
	phs := p.Placeholders()
	var out []Saw
	k := 0
	for _, s := range c.segs {
		if !segPlaceholder(s) {
			continue
		}
		if s.kind == eWild && len(s.saw) > 0 && k < len(phs) {
			out = append(out, Saw{Placeholder: phs[k].Name, Values: s.saw, More: s.more})
		}
		k++
	}
	return out
}

// segPlaceholder reports whether a segment renders as a placeholder.
func segPlaceholder(s fseg) bool {
	switch s.kind {
	case eTyped, eDec:
		return !(keepConst(s.kind, s.class) && !s.st.varied)
	case eWild, eRest:
		return true
	}
	return false
}

func version(segs []fseg) int {
	for _, s := range segs {
		if s.kind != eLit || len(s.lit) < 2 || len(s.lit) > 10 || s.lit[0] != 'v' {
			continue
		}
		if n, err := strconv.Atoi(s.lit[1:]); err == nil && n >= 1 && isDigit(s.lit[1]) {
			return n
		}
	}
	return 0
}

// resolve renders the candidates and merges those whose patterns overlap.
func (m *Miner) resolve(cands []*fcand) []*fcand {
	for range maxRounds {
		fams := make([]*registry.Family, len(cands))
		for i, c := range cands {
			c.pat = m.render(c)
			p, err := registry.ParsePattern(c.pat, m.sep)
			if err != nil {
				// Not expected; a whole-key tail always parses.
				c.segs = []fseg{{kind: eRest}}
				c.pat = m.render(c)
				p, _ = registry.ParsePattern(c.pat, m.sep)
			}
			fams[i] = &registry.Family{Index: i, Name: "c" + strconv.Itoa(i), Pattern: p}
		}
		ovs, _ := registry.OverlapsWithin(fams, m.sep, registry.OverlapBudget, -1)
		if len(ovs) == 0 {
			return cands
		}
		parent := make([]int, len(cands))
		for i := range parent {
			parent[i] = i
		}
		find := func(i int) int {
			for parent[i] != i {
				parent[i] = parent[parent[i]]
				i = parent[i]
			}
			return i
		}
		for _, o := range ovs {
			a, b := find(o.A.Index), find(o.B.Index)
			if a > b {
				a, b = b, a
			}
			parent[b] = a
		}
		var next []*fcand
		for i, c := range cands {
			r := find(i)
			if r == i {
				next = append(next, c)
				continue
			}
			d := cands[r]
			d.segs = lgg(d.segs, c.segs)
			d.stats.Merge(c.stats)
		}
		cands = next
	}
	return cands
}

// render writes the pattern of c, cutting it into an any tail when it
// would pass the limits of the grammar.
func (m *Miner) render(c *fcand) string {
	for {
		s, phs := m.renderSegs(c.segs)
		if len(s) <= registry.MaxPatternLen && phs <= registry.MaxPlaceholders {
			return s
		}
		// Cut at the last segment from which the rest of every key is
		// non-empty, one segment earlier than before.
		p := len(c.segs) - 1
		if c.segs[p].kind == eRest {
			p--
		}
		for p > 0 && !restNonEmpty(c.segs, p) {
			p--
		}
		c.segs = append(c.segs[:p:p], fseg{kind: eRest})
	}
}

func (m *Miner) renderSegs(segs []fseg) (string, int) {
	var b strings.Builder
	used := map[string]bool{}
	base, phs := "", 0
	ph := func(t registry.PlaceholderType, tag bool) {
		phs++
		name := placeholderName(base, t, used)
		if tag {
			b.WriteByte('{')
		}
		b.WriteByte('{')
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(t.String())
		b.WriteByte('}')
		if tag {
			b.WriteByte('}')
		}
	}
	for i, s := range segs {
		if i > 0 {
			b.WriteString(m.sepLit)
		}
		switch s.kind {
		case eLit:
			b.WriteString(registry.EscapeLiteral(s.lit))
			base = baseOf(s.lit, base)
		case eTyped:
			if keepConst(s.kind, s.class) && !s.st.varied {
				if isTag(s.class) {
					b.WriteString(registry.EscapeLiteral("{" + s.st.first + "}"))
				} else {
					b.WriteString(registry.EscapeLiteral(s.st.first))
				}
				continue
			}
			ph(s.st.typ(), isTag(s.class))
		case eDec:
			if keepConst(s.kind, s.class) && !s.st.varied {
				b.WriteString(registry.EscapeLiteral(s.lit + s.st.first + s.post))
				base = baseOf(s.lit+s.st.first+s.post, base)
				continue
			}
			b.WriteString(registry.EscapeLiteral(s.lit))
			base = baseOf(s.lit, base)
			t := s.st.typ()
			if s.class == cLong {
				t = registry.Word
			}
			ph(t, false)
			b.WriteString(registry.EscapeLiteral(s.post))
		case eWild:
			ph(s.st.typ(), false)
		case eRest:
			ph(registry.Any, false)
		}
	}
	return b.String(), phs
}

// baseOf returns the name stem a literal gives the placeholders after it:
// its last word, lowercased; prev when it has none (a number, a version).
func baseOf(lit, prev string) string {
	end := len(lit)
	for end > 0 && !isAlnum(lit[end-1]) {
		end--
	}
	start := end
	for start > 0 && (isAlnum(lit[start-1]) || lit[start-1] == '_') {
		start--
	}
	w := strings.Trim(lit[start:end], "_")
	if w == "" || isDigit(w[0]) || (len(w) > 1 && (w[0] == 'v' || w[0] == 'V') && allDigits(w[1:])) {
		return prev
	}
	if len(w) > 24 {
		w = strings.TrimRight(w[:24], "_")
	}
	return strings.ToLower(w)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// placeholderName names a placeholder of type t after stem base, unique
// among used.
func placeholderName(base string, t registry.PlaceholderType, used map[string]bool) string {
	var name string
	switch {
	case t == registry.Any && base != "":
		name = base + "_key"
	case t == registry.Any:
		name = "key"
	case t == registry.Word && base != "":
		name = base
	case t == registry.Word:
		name = "name"
	case base != "":
		name = base + "_id"
	default:
		name = "id"
	}
	out := name
	for i := 2; used[out]; i++ {
		out = name + "_" + strconv.Itoa(i)
	}
	used[out] = true
	return out
}

// restNonEmpty reports whether the keys of segs have at least one byte from
// segment p on.
func restNonEmpty(segs []fseg, p int) bool {
	if p >= len(segs) {
		return false
	}
	return p < len(segs)-1 || segs[p].kind != eLit || segs[p].lit != ""
}

// lgg returns the least general segments that cover the keys of a and b.
func lgg(a, b []fseg) []fseg {
	if len(a) == len(b) {
		out := make([]fseg, len(a))
		ok := true
		for i := range a {
			s, good := lggSeg(a[i], b[i])
			if !good {
				ok = false
				break
			}
			out[i] = s
		}
		if ok {
			return out
		}
	}
	p := 0
	for p < len(a) && p < len(b) {
		if _, good := lggSeg(a[p], b[p]); !good {
			break
		}
		p++
	}
	p = min(p, len(a)-1, len(b)-1)
	for p > 0 && !(restNonEmpty(a, p) && restNonEmpty(b, p)) {
		p--
	}
	out := make([]fseg, 0, p+1)
	for i := range p {
		s, _ := lggSeg(a[i], b[i])
		out = append(out, s)
	}
	return append(out, fseg{kind: eRest})
}

func lggSeg(x, y fseg) (fseg, bool) {
	if x.kind == eRest || y.kind == eRest {
		return fseg{}, false
	}
	xe, ye := x.kind == eLit && x.lit == "", y.kind == eLit && y.lit == ""
	if xe || ye {
		return x, xe && ye
	}
	switch {
	case x.kind == eLit && y.kind == eLit && x.lit == y.lit:
		return x, true
	case x.kind == eTyped && y.kind == eTyped && isTag(x.class) == isTag(y.class):
		x.st = joinState(x.st, y.st)
		if x.class != y.class {
			x.st.varied, x.st.first = true, ""
		}
		return x, true
	case x.kind == eDec && y.kind == eDec && x.lit == y.lit && x.post == y.post && (x.class == cLong) == (y.class == cLong):
		x.st = joinState(x.st, y.st)
		if x.class != y.class {
			x.st.varied, x.st.first = true, ""
		}
		return x, true
	case x.kind == eWild && y.kind == eWild:
		x.st = joinState(x.st, y.st)
		x.saw, x.more = nil, 0 // no longer the siblings of one node
		return x, true
	}
	st := joinState(valueState(x.kind, x.class, x.lit, x.st), valueState(y.kind, y.class, y.lit, y.st))
	st.varied = true
	return fseg{kind: eWild, st: st}, true
}
