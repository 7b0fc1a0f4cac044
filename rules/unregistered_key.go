package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// UnregisteredKey reports live keys that no family declares. The audit
// groups them by inferred prefix, so the report says which team to ask.
var UnregisteredKey = &Rule{
	ID:       "unregistered-key",
	Doc:      "a live key matches no family in the registry",
	Kind:     KindKey,
	Severity: diag.Error,
	Phase:    PhaseKey,
	Unit:     UnitAllKeys,
	Key:      func(k *KeyFacts) bool { return k.Family == nil && k.Shape == nil },
	Summary:  func(*registry.Family) string { return "keys that match no family" },
}
