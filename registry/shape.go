package registry

// ShapeMatcher matches keys against the shapes of the families: their
// patterns with every typed placeholder relaxed to a word (any stays any).
// A key that matches no family but matches a shape has the family's layout
// with a placeholder value of the wrong type, such as a session key whose ID
// is not a UUID.
type ShapeMatcher struct {
	m    *Matcher
	fams []*Family
}

// ShapeMatcher builds the shape matcher of r.
func (r *Registry) ShapeMatcher() *ShapeMatcher {
	relaxed := make([]*Family, 0, len(r.Families))
	for _, f := range r.Families {
		if f.Pattern == nil {
			continue
		}
		cp := *f
		p := *f.Pattern
		p.Parts = make([]Part, len(f.Pattern.Parts))
		for i, pt := range f.Pattern.Parts {
			if pt.IsPlaceholder() && pt.Type != Any {
				pt.Type = Word
			}
			p.Parts[i] = pt
		}
		cp.Pattern = &p
		relaxed = append(relaxed, &cp)
	}
	return &ShapeMatcher{m: NewMatcher(relaxed, r.Separator), fams: r.Families}
}

// Match returns the family whose shape key has, or nil.
func (s *ShapeMatcher) Match(key string) *Family {
	f := s.m.Match(key)
	if f == nil {
		return nil
	}
	return s.fams[f.Index]
}
