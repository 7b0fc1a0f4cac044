package rules

import (
	"github.com/keyreg/keyreg/diag"
)

// PlaceholderUntyped notes placeholders written {name} without a type.
// They accept any word, so a key built from the wrong variable still
// matches; a type such as int or uuid makes audit and explain catch it.
// Writing {name:word} states that any word is meant and silences the note.
var PlaceholderUntyped = &Rule{
	ID:       "placeholder-untyped",
	Doc:      "a placeholder has no type, so it accepts any word where a narrower type may fit",
	Kind:     KindLint,
	Severity: diag.Info,
	Lint: func(p *Pass) {
		for _, f := range p.Reg.Families {
			if f.Pattern == nil {
				continue
			}
			for _, pt := range f.Pattern.Placeholders() {
				if pt.Typed {
					continue
				}
				open := 1
				if pt.HashTag {
					open = 2
				}
				pos := f.PatternPos(pt.Offset-open, len(pt.Name)+2*open)
				p.Reportf(f, pos, "placeholder %q has no type: write {%s:int}, {%s:uuid} or another type, or {%s:word} if any word is meant",
					pt.Name, pt.Name, pt.Name, pt.Name)
			}
		}
	},
}
