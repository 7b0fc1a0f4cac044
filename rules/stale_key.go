package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// StaleKey reports keys nobody has read or written for longer than their
// family's max_idle: usually a leftover of a removed feature.
var StaleKey = &Rule{
	ID:       "stale-key",
	Doc:      "a live key has not been accessed for longer than its family's max_idle",
	Kind:     KindKey,
	Severity: diag.Warn,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Reads:    FactIdle,
	Key: func(k *KeyFacts) bool {
		return k.Family != nil && k.Family.MaxIdle > 0 && k.HasIdle && k.Idle > k.Family.MaxIdle
	},
	Detail: func(k *KeyFacts) string { return "idle " + registry.FormatDuration(k.Idle) },
	Summary: func(f *registry.Family) string {
		return "keys idle longer than max_idle " + registry.FormatDuration(f.MaxIdle)
	},
}
