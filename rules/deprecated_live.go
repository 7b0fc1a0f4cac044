package rules

import (
	"time"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// DeprecatedLive reports keys of a deprecated family that are still live
// after its sunset: something still writes the old layout.
var DeprecatedLive = &Rule{
	ID:       "deprecated-live",
	Doc:      "a live key belongs to a deprecated family whose sunset has passed",
	Kind:     KindKey,
	Severity: diag.Error,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Key: func(k *KeyFacts) bool {
		if k.Family == nil || k.Family.Deprecated == nil {
			return false
		}
		sunset := k.Family.Deprecated.Sunset
		return !sunset.IsZero() && k.Now.After(sunset)
	},
	Summary: func(f *registry.Family) string {
		s := "keys live after the family's sunset " + f.Deprecated.Sunset.Format(time.DateOnly)
		if f.Deprecated.ReplacedBy != "" {
			s += " (replaced by " + f.Deprecated.ReplacedBy + ")"
		}
		return s
	},
}
