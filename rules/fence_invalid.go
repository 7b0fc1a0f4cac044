package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// FenceInvalid reports a live fence (kind: fence) that is not an integer
// or has a TTL. A fence that expires restarts at 1, and one that is not an
// integer makes INCR fail: either way the next holder's token is not
// larger than the last one. "Not an integer" is what Redis says about the
// string: OBJECT ENCODING is int for every value INCR writes or any SET
// of a canonical int64; a value built with APPEND or SETRANGE is raw even
// when it reads as a number, and is reported too. A fence of another type
// is type-mismatch. ttl-unexpected and encoding-mismatch leave fences to
// this rule.
var FenceInvalid = &Rule{
	ID:       "fence-invalid",
	Doc:      "a live fence is not an integer or has a ttl",
	Kind:     KindKey,
	Severity: diag.Error,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Key: func(k *KeyFacts) bool {
		return k.Family != nil && k.Family.Kind == registry.KindFence && k.Type == "string" &&
			(k.PTTL >= 0 || (k.Encoding != "" && k.Encoding != "int"))
	},
	Detail: func(k *KeyFacts) string {
		var why string
		if k.Encoding != "" && k.Encoding != "int" {
			why = "not an integer (object encoding " + k.Encoding + ")"
		}
		if k.PTTL >= 0 {
			if why != "" {
				why += ", "
			}
			why += "ttl " + registry.FormatDuration(k.PTTL.Round(1e9))
		}
		return why
	},
	Summary: func(*registry.Family) string { return "fences that are not integers or have a TTL" },
}
