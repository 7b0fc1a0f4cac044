package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// TTLUnexpected reports keys that will expire although their family is
// persistent, such as a cache of records that must never be evicted. A
// fence (kind: fence) with a TTL is fence-invalid instead.
var TTLUnexpected = &Rule{
	ID:       "ttl-unexpected",
	Doc:      "a live key of a persistent family has a TTL",
	Kind:     KindKey,
	Severity: diag.Warn,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Key: func(k *KeyFacts) bool {
		return k.Family != nil && k.Family.TTL.Kind == registry.TTLPersistent && k.PTTL >= 0 && k.Family.Kind != registry.KindFence
	},
	Detail:  func(k *KeyFacts) string { return "ttl " + registry.FormatDuration(k.PTTL.Round(1e9)) },
	Summary: func(*registry.Family) string { return "keys with a TTL in a persistent family" },
}
