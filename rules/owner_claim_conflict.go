package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// OwnerClaimConflict reports two owners whose claimed prefixes
// (owners.<name>.prefixes) share keys, such as identity and growth both
// claiming "v2:user:", or "v*:user:" against "v2:user:prefs:". A key inside
// both claims has no one owner: owner-prefix-claim reports a family there
// for whichever owner does not own it, so neither team can place one.
//
// The check is the exact proof of registry.ClaimOverlapsWithin, the overlap
// engine of pattern-overlap run on the claims' automata, not a comparison
// of strings: "*" matches a run of bytes within one segment, so "v*:user:"
// and "v1:users:" do not conflict, while "v*:user:" and "v12:user:" do.
// The finding sits on the prefix declared later, and shows a shortest key
// both claims hold, once per owner it overlaps (naming that owner's first
// overlapping prefix). Prefixes of one owner that overlap are not reported.
var OwnerClaimConflict = &Rule{
	ID:       "owner-claim-conflict",
	Doc:      "two owners claim key prefixes that share keys, so those keys have no one owner",
	Kind:     KindLint,
	Severity: diag.Error,
	Lint: func(p *Pass) {
		conflicts, complete := registry.ClaimOverlapsWithin(p.Reg.Owners, p.Reg.Separator, registry.OverlapBudget, registry.MaxOverlaps)
		type seen struct {
			b, a *registry.Owner
			glob string // of b: an owner's prefixes are unique
		}
		done := map[seen]bool{}
		for _, c := range conflicts {
			// One finding per later prefix and earlier owner, naming the
			// owner's first overlapping prefix.
			k := seen{c.B, c.A, c.PB.Glob}
			if done[k] {
				continue
			}
			done[k] = true
			p.Reportf(nil, c.PB.Pos, "owner %q claims prefix %q, which overlaps prefix %q claimed by owner %q: both claim keys such as %q; a key has one owner: narrow one of the claims, or move the keys to one owner",
				c.B.Name, c.PB.Glob, c.PA.Glob, c.A.Name, c.Example)
		}
		if !complete {
			p.Reportf(nil, p.Reg.KeyPos("owners"),
				"the proof of claimed prefixes stopped at its bound (%d conflicts, or %d product states searched): some pairs of claims were not checked",
				registry.MaxOverlaps, registry.OverlapBudget)
		}
	},
}
