package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// TTLUnexpected reports keys that will expire although their family is
// persistent, such as a fencing-token counter that must never reset.
var TTLUnexpected = &Rule{
	ID:       "ttl-unexpected",
	Doc:      "a live key of a persistent family has a TTL",
	Kind:     KindKey,
	Severity: diag.Warn,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Key: func(k *KeyFacts) bool {
		return k.Family != nil && k.Family.TTL.Kind == registry.TTLPersistent && k.PTTL >= 0
	},
	Detail:  func(k *KeyFacts) string { return "ttl " + registry.FormatDuration(k.PTTL.Round(1e9)) },
	Summary: func(*registry.Family) string { return "keys with a TTL in a persistent family" },
}
