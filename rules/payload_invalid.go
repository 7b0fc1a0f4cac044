package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// PayloadInvalid reports sampled values that break their family's JSON
// Schema. Details give the JSON pointer and the reason, never the value.
var PayloadInvalid = &Rule{
	ID:       "payload-invalid",
	Doc:      "a sampled value breaks its family's payload schema",
	Kind:     KindKey,
	Severity: diag.Error,
	Key:      func(k *KeyFacts) bool { return k.Payload != nil && len(k.Payload.Violations) > 0 },
	Detail: func(k *KeyFacts) string {
		v := k.Payload.Violations[0]
		ptr := v.Pointer
		if ptr == "" {
			ptr = "(root)"
		}
		return ptr + ": " + v.Reason
	},
	Summary: func(f *registry.Family) string { return "sampled payloads that break the schema" },
}
