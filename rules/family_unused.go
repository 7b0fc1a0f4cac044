package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// FamilyUnused reports families without a single live key after a complete
// audit: perhaps a removed feature whose entry can go, or a typo in the
// pattern. The audit decides it over the whole run, so it has no Key func.
var FamilyUnused = &Rule{
	ID:       "family-unused",
	Doc:      "a complete audit found no live key of a family",
	Kind:     KindKey,
	Severity: diag.Info,
	Summary:  func(*registry.Family) string { return "no live key found: the family may be unused" },
}
