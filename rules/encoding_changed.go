package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// EncodingChanged reports a family whose declared encoding changed, such
// as json to msgpack, while its keys stayed the same. Readers of one
// encoding cannot decode values written in the other, and both kinds of
// value are live until the old ones expire. Declaring an encoding where
// none was, or dropping the declaration, is not reported.
//
// A version bump that also changes the pattern starts a new key space and
// is not reported.
var EncodingChanged = &Rule{
	ID:       "encoding-changed",
	Doc:      "a family's value encoding changed while its keys stayed the same",
	Kind:     KindBreaking,
	Category: CategoryKey,
	Severity: diag.Error,
	Breaking: func(p *BreakingPass) {
		p.Pairs(func(of, nf *registry.Family) {
			if of.Encoding == "" || nf.Encoding == "" || of.Encoding == nf.Encoding || newKeySpace(of, nf) {
				return
			}
			p.Reportf(nf, nf.PosOf("encoding"), "encoding changed from %s to %s: readers cannot decode values written in the other encoding; declare the new encoding under a new version and deprecate the old one", of.Encoding, nf.Encoding)
		})
	},
}
