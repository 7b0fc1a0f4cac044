package rules

import (
	"strconv"
	"time"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// FamilyRemoved reports a family of the old registry that the new one no
// longer declares, unless its removal is safe: the family was deprecated
// with a sunset, and the sunset plus the family's max TTL has passed, so
// that no key written before the sunset can still be live. (A family whose
// TTL policy is not a max has nothing to add: its keys must be gone at the
// sunset.)
//
// Removing a family that readers or writers still use makes its keys
// unregistered: audits report them, generated code loses its key builder,
// and nothing tells other teams who owns the data. The safe path is to
// deprecate first (deprecated: {since, sunset, replaced_by}) and remove
// later. The finding sits on the families: key of the new registry, since
// the family has no line there; a family of the new registry with the same
// pattern is named as a likely rename.
var FamilyRemoved = &Rule{
	ID:       "family-removed",
	Doc:      "a family was removed without being deprecated first, or before its sunset plus its max ttl passed",
	Kind:     KindBreaking,
	Category: CategoryKey,
	Severity: diag.Error,
	Breaking: func(p *BreakingPass) {
		pos := p.New.KeyPos("families")
		for _, of := range p.Old.Families {
			if _, ok := p.New.Family(of.Name); ok {
				continue
			}
			what := "family " + strconv.Quote(of.Name)
			if of.Pattern != nil {
				what += " (pattern " + strconv.Quote(of.Pattern.Source) + ")"
			}
			renamed := ""
			if nf := samePattern(p.New, of); nf != nil {
				renamed = "; renamed to " + strconv.Quote(nf.Name) + "? a rename removes the old name from generated code, ignores and audits"
			}
			d := of.Deprecated
			switch {
			case d == nil:
				p.Reportf(of, pos, "%s was removed without being deprecated first: deprecate it with a sunset, and remove it once the sunset plus its max ttl has passed%s", what, renamed)
			case d.Sunset.IsZero():
				p.Reportf(of, pos, "%s was removed while deprecated without a sunset: set deprecated.sunset, and remove it once the sunset plus its max ttl has passed%s", what, renamed)
			default:
				deadline, _ := retireDeadline(of)
				after := "its sunset " + d.Sunset.Format(time.DateOnly)
				if of.TTL.Kind == registry.TTLMax {
					after += " plus its max ttl " + registry.FormatDuration(of.TTL.Max)
				}
				if p.Now.Before(deadline) {
					p.Reportf(of, pos, "%s was removed before %s (%s): keys written until the sunset may still be live%s", what, after, deadline.Format("2006-01-02 15:04 MST"), renamed)
				}
			}
		}
	},
}

// retireDeadline returns when no key of family f can be live any more:
// its deprecation sunset, plus its max TTL when it has one. ok is false
// when f is not deprecated with a sunset.
func retireDeadline(f *registry.Family) (deadline time.Time, ok bool) {
	d := f.Deprecated
	if d == nil || d.Sunset.IsZero() {
		return time.Time{}, false
	}
	deadline = d.Sunset
	if f.TTL.Kind == registry.TTLMax {
		deadline = deadline.Add(f.TTL.Max)
	}
	return deadline, true
}

// samePattern returns the family of reg, not declared in the old registry
// under its name, whose pattern is written like of's.
func samePattern(reg *registry.Registry, of *registry.Family) *registry.Family {
	if of.Pattern == nil {
		return nil
	}
	for _, nf := range reg.Families {
		if nf.Pattern != nil && nf.Pattern.Source == of.Pattern.Source && nf.Name != of.Name {
			return nf
		}
	}
	return nil
}
