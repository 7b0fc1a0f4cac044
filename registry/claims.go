package registry

import "strings"

// ClaimOverlap says that two owners claim prefixes that share keys.
type ClaimOverlap struct {
	A, B   *Owner // A is declared before B
	PA, PB Prefix // the prefixes of A and of B
	// Example is a shortest key inside both claims: it starts with a match
	// of PA and with a match of PB.
	Example string
}

// ClaimOverlapsWithin proves, exactly, which claimed prefixes of different
// owners (owners.<name>.prefixes) share a key, by the overlap engine that
// decides pattern-overlap. A claim is a glob in which "*" matches any run of
// bytes other than sep, the empty run included, and it holds every key
// that starts with a match: the automaton of a claim is its literal bytes,
// a self-loop on every byte but sep for each "*", and a self-loop on every
// byte after the last one. Two claims share a key iff the product of their
// automata reaches the accepting pair, so "v*:user:" and "v2:user:prefs:"
// conflict, while "v1:user:" and "v1:users:" do not.
//
// Pairs whose literal heads (the bytes before the first "*") are not
// prefixes of one another are discarded first. budget bounds the product
// states searched (plus one per pair), max the overlaps returned; a
// negative bound is no bound. complete is false when a bound stopped the
// proof before every pair was decided. The result is in declaration order
// of A, then B, then their prefixes.
func ClaimOverlapsWithin(owners []*Owner, sep byte, budget int64, max int) (out []ClaimOverlap, complete bool) {
	type claim struct {
		o    *Owner
		p    Prefix
		head string
		nfa  ovNFA
	}
	var claims []claim
	for _, o := range owners {
		for _, p := range o.Prefixes {
			head, _, _ := strings.Cut(p.Glob, "*")
			claims = append(claims, claim{o: o, p: p, head: head, nfa: claimNFA(p.Glob, sep)})
		}
	}
	var (
		s    ovSearcher
		work int64
	)
	for i := range claims {
		for j := i + 1; j < len(claims); j++ {
			a, b := &claims[i], &claims[j]
			if a.o == b.o || !(strings.HasPrefix(a.head, b.head) || strings.HasPrefix(b.head, a.head)) {
				continue
			}
			if (budget >= 0 && work > budget) || (max >= 0 && len(out) >= max) {
				return out, false
			}
			ex, ok := s.intersect(&a.nfa, &b.nfa)
			work += int64(len(s.queue)) + 1
			if ok {
				// The automata accept keys one byte past the claims (see
				// claimNFA); that byte is not part of the example.
				out = append(out, ClaimOverlap{A: a.o, B: b.o, PA: a.p, PB: b.p, Example: ex[:len(ex)-1]})
			}
		}
	}
	return out, true
}

// claimNFA compiles a claimed prefix to an automaton of the keys that
// extend it by at least one byte. Any key inside a claim extends to one
// such key, so two claims share a key iff their automata do; the extra
// byte keeps the accepting state apart from the start, which intersect
// needs, even for the claim "*".
func claimNFA(glob string, sep byte) ovNFA {
	var all, word ovSet
	for b := 0; b < 256; b++ {
		all.add(byte(b))
		if byte(b) != sep {
			word.add(byte(b))
		}
	}
	n := ovNFA{edges: make([]ovEdge, 0, len(glob)+2)}
	cur := n.state()
	for i := 0; i < len(glob); i++ {
		if glob[i] == '*' {
			n.edge(cur, word, cur)
			continue
		}
		var lit ovSet
		lit.add(glob[i])
		next := n.state()
		n.edge(cur, lit, next)
		cur = next
	}
	end := n.state()
	n.edge(cur, all, end)
	n.edge(end, all, end)
	n.index()
	return n
}
