package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// TTLMissing reports keys without a TTL in a family whose policy sets a
// max: they live until someone deletes them by hand.
var TTLMissing = &Rule{
	ID:       "ttl-missing",
	Doc:      "a live key has no TTL, but its family's policy sets a max",
	Kind:     KindKey,
	Severity: diag.Error,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Key:      func(k *KeyFacts) bool { return hasMaxTTL(k) && k.PTTL < 0 },
	Detail:   func(*KeyFacts) string { return "no ttl" },
	Summary: func(f *registry.Family) string {
		return "keys without a TTL (policy: " + f.TTL.String() + ")"
	},
}
