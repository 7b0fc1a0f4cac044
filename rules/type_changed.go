package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// TypeChanged reports a family whose declared Redis type changed, such as
// string to hash, while its keys stayed the same. Readers and writers of
// the other type get WRONGTYPE errors on every live key. Declaring a type
// where none was, or dropping the declaration, is not reported.
//
// A version bump that also changes the pattern starts a new key space and
// is not reported: old keys keep their old readers until they expire.
var TypeChanged = &Rule{
	ID:       "type-changed",
	Doc:      "a family's redis type changed while its keys stayed the same",
	Kind:     KindBreaking,
	Category: CategoryKey,
	Severity: diag.Error,
	Breaking: func(p *BreakingPass) {
		p.Pairs(func(of, nf *registry.Family) {
			if of.Type == "" || nf.Type == "" || of.Type == nf.Type || newKeySpace(of, nf) {
				return
			}
			p.Reportf(nf, nf.PosOf("type"), "type changed from %s to %s: commands for one type fail with WRONGTYPE on keys of the other; declare the new type under a new version and deprecate the old one", of.Type, nf.Type)
		})
	},
}
