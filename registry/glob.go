package registry

import (
	"fmt"
	"strings"
)

// A Glob is a Redis glob, as PSUBSCRIBE (and KEYS, SCAN MATCH) take it: "*"
// matches any run of bytes, "?" any one byte, "[abc]", "[a-z]" and "[^a]"
// one byte of a set, and "\x" the byte x. It is compiled into a
// deterministic automaton, so that lint can prove what it matches against
// channel patterns (Missing, Catches) and the audit can match names.
type Glob struct {
	Source string
	toks   []globTok
	// The deterministic automaton: states are sets of token positions;
	// next[s*len(classes)+c] is the state after a byte of class c.
	classOf [256]uint16
	classes []ovSet
	next    []int32
	accept  []bool
}

type globTok struct {
	star bool
	set  ovSet // the bytes one non-star token accepts
}

// Bounds of a glob, so that a hostile subscribe_glob cannot make lint slow.
const (
	MaxGlobLen = 1024 // bytes
	// MaxGlobStates bounds the deterministic automaton of one glob. The
	// globs subscribers use ("prefix*", "a:*:b") have a few states; a glob
	// of many "*" and classes could have exponentially many.
	MaxGlobStates = 512
)

// ParseGlob parses and compiles a Redis glob.
func ParseGlob(src string) (*Glob, error) {
	if src == "" {
		return nil, fmt.Errorf("empty glob")
	}
	if len(src) > MaxGlobLen {
		return nil, fmt.Errorf("glob is %d bytes long, more than the limit of %d", len(src), MaxGlobLen)
	}
	g := &Glob{Source: src}
	for i := 0; i < len(src); i++ {
		c := src[i]
		var t globTok
		switch c {
		case '*':
			if n := len(g.toks); n > 0 && g.toks[n-1].star {
				continue // "**" is "*"
			}
			t.star = true
		case '?':
			t.set = ovSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
		case '\\':
			if i+1 == len(src) {
				return nil, fmt.Errorf("column %d: \"\\\" ends the glob (escape a byte after it)", i+1)
			}
			i++
			t.set.add(src[i])
		case '[':
			start := i
			i++
			neg := i < len(src) && src[i] == '^'
			if neg {
				i++
			}
			closed := false
			for ; i < len(src); i++ {
				b := src[i]
				if b == ']' {
					closed = true
					break
				}
				if b == '\\' && i+1 < len(src) {
					i++
					b = src[i]
				}
				if i+2 < len(src) && src[i+1] == '-' && src[i+2] != ']' {
					lo, hi := b, src[i+2]
					if src[i+2] == '\\' && i+3 < len(src) {
						hi = src[i+3]
						i++
					}
					i += 2
					if lo > hi {
						lo, hi = hi, lo
					}
					for x := int(lo); x <= int(hi); x++ {
						t.set.add(byte(x))
					}
					continue
				}
				t.set.add(b)
			}
			if !closed {
				return nil, fmt.Errorf("column %d: \"[\" has no closing \"]\"", start+1)
			}
			if neg {
				t.set = ovSet{^t.set[0], ^t.set[1], ^t.set[2], ^t.set[3]}
			}
		default:
			t.set.add(c)
		}
		g.toks = append(g.toks, t)
	}
	if err := g.compile(); err != nil {
		return nil, err
	}
	return g, nil
}

// compile builds the deterministic automaton by subset construction over
// the byte classes the tokens induce.
func (g *Glob) compile() error {
	// Byte classes: bytes that every token treats alike.
	sig := map[string]uint16{}
	for b := 0; b < 256; b++ {
		var k strings.Builder
		for _, t := range g.toks {
			if !t.star && t.set.has(byte(b)) {
				k.WriteByte('1')
			} else {
				k.WriteByte('0')
			}
		}
		id, ok := sig[k.String()]
		if !ok {
			id = uint16(len(g.classes))
			sig[k.String()] = id
			g.classes = append(g.classes, ovSet{})
		}
		g.classOf[b] = id
		g.classes[id].add(byte(b))
	}
	n := len(g.toks)
	closure := func(set []bool) {
		for i := 0; i < n; i++ {
			if set[i] && g.toks[i].star {
				set[i+1] = true
			}
		}
	}
	key := func(set []bool) string {
		b := make([]byte, len(set))
		for i, v := range set {
			if v {
				b[i] = 1
			}
		}
		return string(b)
	}
	start := make([]bool, n+1)
	start[0] = true
	closure(start)
	states := [][]bool{start}
	index := map[string]int32{key(start): 0}
	nc := len(g.classes)
	for s := 0; s < len(states); s++ {
		cur := states[s]
		g.accept = append(g.accept, cur[n])
		for c := 0; c < nc; c++ {
			b := g.classes[c].pick()
			nxt := make([]bool, n+1)
			for i := 0; i < n; i++ {
				if !cur[i] {
					continue
				}
				if g.toks[i].star {
					nxt[i] = true
				} else if g.toks[i].set.has(b) {
					nxt[i+1] = true
				}
			}
			closure(nxt)
			k := key(nxt)
			id, ok := index[k]
			if !ok {
				if len(states) >= MaxGlobStates {
					return fmt.Errorf("glob is too complex: its automaton has more than %d states (use fewer \"*\" and \"[...]\")", MaxGlobStates)
				}
				id = int32(len(states))
				index[k] = id
				states = append(states, nxt)
			}
			g.next = append(g.next, id)
		}
	}
	return nil
}

// Match reports whether name matches the glob.
func (g *Glob) Match(name string) bool {
	s := int32(0)
	nc := int32(len(g.classes))
	for i := 0; i < len(name); i++ {
		s = g.next[s*nc+int32(g.classOf[name[i]])]
	}
	return g.accept[s]
}

// nfa returns the automaton in the overlap proof's form, accepting the
// names the glob matches, or, with complement, those it does not.
func (g *Glob) nfa(complement bool) ovNFA {
	k := int32(len(g.accept))
	n := ovNFA{n: k + 1} // state k is the one accepting state
	nc := int32(len(g.classes))
	for s := int32(0); s < k; s++ {
		for c := int32(0); c < nc; c++ {
			t := g.next[s*nc+c]
			n.edge(s, g.classes[c], t)
			if g.accept[t] != complement {
				n.edge(s, g.classes[c], k)
			}
		}
	}
	n.index()
	return n
}

// Missing returns a shortest name that p matches and the glob does not:
// a channel of the pattern that a PSUBSCRIBE of the glob never receives.
// sep is the registry's separator.
func (g *Glob) Missing(p *Pattern, sep byte) (string, bool) {
	c := ovCompiler{sep: sep, shapes: map[PlaceholderType]*ovShape{}}
	pn, gn := c.compile(p), g.nfa(true)
	var s ovSearcher
	return s.intersect(&pn, &gn)
}

// Catches returns a shortest name that both p and the glob match.
func (g *Glob) Catches(p *Pattern, sep byte) (string, bool) {
	c := ovCompiler{sep: sep, shapes: map[PlaceholderType]*ovShape{}}
	pn, gn := c.compile(p), g.nfa(false)
	var s ovSearcher
	return s.intersect(&pn, &gn)
}
