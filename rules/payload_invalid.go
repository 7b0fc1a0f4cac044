package rules

import (
	"fmt"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// PayloadInvalid reports sampled values that break their family's JSON
// Schema. Details give the JSON pointer and the reason, and the value only
// when the user asked for values (--show-values).
var PayloadInvalid = &Rule{
	ID:       "payload-invalid",
	Doc:      "a sampled value breaks its family's payload schema",
	Kind:     KindKey,
	Severity: diag.Error,
	Phase:    PhaseSample,
	Unit:     UnitSamples,
	Reads:    FactPayload,
	Key:      func(k *KeyFacts) bool { return k.Payload != nil && len(k.Payload.Violations) > 0 },
	Detail: func(k *KeyFacts) string {
		v := k.Payload.Violations[0]
		ptr := v.Pointer
		if ptr == "" {
			ptr = "(root)"
		}
		d := ptr + ": " + v.Reason
		if k.ShowValues {
			d += fmt.Sprintf(" (value %s)", v.Value)
		}
		return d
	},
	Summary: func(f *registry.Family) string { return "sampled payloads that break the schema" },
}
