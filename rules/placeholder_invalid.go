package rules

import (
	"fmt"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// PlaceholderInvalid reports keys that have a family's shape but fail one
// of its typed placeholders, such as a session key whose ID is not a UUID:
// usually a writer that builds the key from the wrong variable.
var PlaceholderInvalid = &Rule{
	ID:       "placeholder-invalid",
	Doc:      "a live key has a family's shape but fails one of its typed placeholders",
	Kind:     KindKey,
	Severity: diag.Error,
	Phase:    PhaseKey,
	Unit:     UnitFamilyKeys,
	Key:      func(k *KeyFacts) bool { return k.Family == nil && k.Shape != nil },
	Detail:   func(k *KeyFacts) string { return k.ShapeReason },
	Summary: func(f *registry.Family) string {
		return fmt.Sprintf("keys with the shape of %q but placeholder values of the wrong type", f.Pattern.Source)
	},
}
