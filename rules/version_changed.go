package rules

import (
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// VersionChanged reports a family whose version changed in place: the
// same name now declares another version and another key layout, such as
// "v1:cart:{{user_id:int}}:items" (version 1) becoming "v2:cart:…"
// (version 2). No old key is a key of the new layout (so pattern-changed,
// type-changed and the other rules that compare one key space do not
// run), but the old keys are still live until their TTL expires: with
// the old family gone from the registry, the next audit reports every one
// of them as unregistered, and code generated for the old layout loses its
// builder while old writers still use it.
//
// The safe path is a new family next to the old one (user-cart-v2, version
// 2 with its v2 segment), and the old family deprecated with a sunset and
// replaced_by. The change is allowed once the old family was deprecated
// with a sunset, and the sunset plus its max TTL has passed, as
// family-removed allows the removal then. A version change that keeps the
// key layout (a framework-named family without a v<N> segment) is not
// reported: its keys are what they were, and the other rules compare them.
var VersionChanged = &Rule{
	ID:       "version-changed",
	Doc:      "a family's version and key layout changed under the same name, so its old keys become unregistered",
	Kind:     KindBreaking,
	Category: CategoryKey,
	Severity: diag.Error,
	Breaking: func(p *BreakingPass) {
		p.Pairs(func(of, nf *registry.Family) {
			if !newKeySpace(of, nf) {
				return
			}
			if deadline, ok := retireDeadline(of); ok && !p.Now.Before(deadline) {
				return // retired: no key of the old layout can be live
			}
			next := nextName(of.Name, nf.Version)
			live := "stay live until they expire"
			switch of.TTL.Kind {
			case registry.TTLMax:
				live = "stay live for up to " + registry.FormatDuration(of.TTL.Max)
			case registry.TTLPersistent:
				live = "never expire"
			}
			p.Reportf(nf, nf.PosOf("version"),
				"version changed from %d to %d in place (pattern %q to %q): keys of the old layout %s and become unregistered; add the new layout as a new family (such as %q) and deprecate %q with a sunset and replaced_by",
				of.Version, nf.Version, of.Pattern.Source, nf.Pattern.Source, live, next, of.Name)
		})
	},
}

// nextName suggests the name of the new family of version v beside the
// family called name: "cart-v2" for "cart", and for "cart-v1" too.
func nextName(name string, v int) string {
	if i := strings.LastIndex(name, "-v"); i > 0 && isVersionSegment([]byte(name[i+1:])) {
		name = name[:i]
	}
	return name + "-v" + strconv.Itoa(max(v, 1))
}
