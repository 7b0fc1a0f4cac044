package rules

import (
	"strconv"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// PatternChanged reports a family whose pattern now describes other keys
// while its version stayed the same: a literal segment, the separator, or
// the number, position or type of the placeholders changed. Keys written
// with one layout are invisible to readers of the other, and both are live
// during a deploy.
//
// Renaming a placeholder does not change the keys (placeholder-renamed
// reports it for generated code), and neither does a hash tag alone
// (hash-tag-changed reports that). The safe path is a new version: declare
// the new layout with version: N+1 and its v<N+1> segment, usually as a new
// family, and deprecate the old one.
var PatternChanged = &Rule{
	ID:       "pattern-changed",
	Doc:      "a family's pattern matches other keys than before without a version bump",
	Kind:     KindBreaking,
	Category: CategoryKey,
	Severity: diag.Error,
	Breaking: func(p *BreakingPass) {
		p.Pairs(func(of, nf *registry.Family) {
			if of.Pattern == nil || nf.Pattern == nil || of.Version != nf.Version {
				return
			}
			if layout(of.Pattern, false) == layout(nf.Pattern, false) {
				return
			}
			bump := "bump the version and its v<N> segment"
			if nf.Version > 0 {
				bump = "declare it as version " + strconv.Itoa(nf.Version+1) + " with a v" + strconv.Itoa(nf.Version+1) + " segment"
			}
			if of.Pattern.Source == nf.Pattern.Source {
				p.Reportf(nf, nf.PosOf("pattern"), "pattern %q now splits segments at %q instead of %q, so its placeholders match other keys: %s", nf.Pattern.Source, string(nf.Pattern.Sep), string(of.Pattern.Sep), bump)
				return
			}
			p.Reportf(nf, nf.PosOf("pattern"), "pattern changed from %q to %q without a version bump: readers of one layout do not see keys written with the other; %s and deprecate the old layout", of.Pattern.Source, nf.Pattern.Source, bump)
		})
	},
}
