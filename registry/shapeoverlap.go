package registry

import "strings"

// ShapeIndex answers which families a key shape can match: a shape is a
// Pattern built by a static analysis (keyreg vet) from code, literal bytes
// with typed holes where the code puts a value it does not know. It uses
// the overlap proof of Overlaps, so a shape and a family are matched as
// patterns against patterns, exactly: a family is returned iff some key
// fits both.
type ShapeIndex struct {
	c     ovCompiler
	infos []ovInfo
	s     ovSearcher
}

// NewShapeIndex prepares the families of r for Families. It is not safe
// for concurrent use.
func (r *Registry) NewShapeIndex() *ShapeIndex {
	x := &ShapeIndex{c: ovCompiler{sep: r.sep(), shapes: map[PlaceholderType]*ovShape{}}}
	for _, f := range r.Families {
		if f == nil || f.Pattern == nil {
			continue
		}
		x.infos = append(x.infos, x.c.summarize(f))
	}
	return x
}

// Families returns, in registry order, every family that some key of the
// shape p can match. p's parts may hold adjacent placeholders; it must
// have at most MaxPlaceholders placeholders and MaxPatternLen bytes, or
// Families returns nil.
func (x *ShapeIndex) Families(p *Pattern) []*Family {
	if p == nil || len(p.Placeholders()) > MaxPlaceholders || len(p.Parts) > 2*MaxPlaceholders+1 {
		return nil
	}
	size := 0
	for _, pt := range p.Parts {
		size += len(pt.Lit)
	}
	if size > MaxPatternLen {
		return nil
	}
	a := x.c.summarize(&Family{Pattern: p})
	var out []*Family
	for i := range x.infos {
		b := &x.infos[i]
		if !strings.HasPrefix(a.head, b.head) && !strings.HasPrefix(b.head, a.head) {
			continue
		}
		if !ovCompatible(&a, b) {
			continue
		}
		if _, ok := x.s.intersect(&a.nfa, &b.nfa); ok {
			out = append(out, b.f)
		}
	}
	return out
}
