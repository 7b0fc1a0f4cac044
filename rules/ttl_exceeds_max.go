package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// TTLExceedsMax reports keys whose remaining TTL is longer than their
// family's max, such as a cache written with a week instead of an hour.
var TTLExceedsMax = &Rule{
	ID:       "ttl-exceeds-max",
	Doc:      "a live key's TTL is longer than its family's max",
	Kind:     KindKey,
	Severity: diag.Error,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Key:      func(k *KeyFacts) bool { return hasMaxTTL(k) && k.PTTL > k.Family.TTL.Max },
	Detail:   func(k *KeyFacts) string { return "ttl " + registry.FormatDuration(k.PTTL.Round(1e9)) },
	Summary: func(f *registry.Family) string {
		return "keys with a TTL over the policy's " + f.TTL.String()
	},
}
