package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// TypeMismatch reports keys whose Redis type differs from their family's,
// which breaks every reader of the family with WRONGTYPE errors.
var TypeMismatch = &Rule{
	ID:       "type-mismatch",
	Doc:      "a live key's Redis type differs from its family's type",
	Kind:     KindKey,
	Severity: diag.Error,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Key: func(k *KeyFacts) bool {
		return k.Family != nil && k.Family.Type != "" && k.Type != redisType(k.Family.Type)
	},
	Detail:  func(k *KeyFacts) string { return "type " + k.Type },
	Summary: func(f *registry.Family) string { return "keys not of type " + f.Type },
}
