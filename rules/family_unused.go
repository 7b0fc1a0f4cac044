package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// FamilyUnused reports families without a single live key after a complete
// audit: perhaps a removed feature whose entry can go, or a typo in the
// pattern. It decides once per family, after a run over the whole keyspace.
// A preset's families never count.
var FamilyUnused = &Rule{
	ID:       "family-unused",
	Doc:      "a complete audit found no live key of a family",
	Kind:     KindKey,
	Severity: diag.Info,
	Phase:    PhaseRun,
	Unit:     UnitNone,
	// Families of a preset are exempt: most installations use only some
	// of a library's keys.
	Run:     func(r *RunFacts) bool { return r.Complete && r.Keys == 0 && !r.Family.FromPreset() },
	Summary: func(*registry.Family) string { return "no live key found: the family may be unused" },
}
