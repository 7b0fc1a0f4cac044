package rules

import (
	"maps"
	"slices"
	"strings"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// EncodingMismatch reports sampled values that do not decode as their
// family's declared encoding, naming what they are instead: "declared json,
// found pickle". A fence (kind: fence) that is not an integer is
// fence-invalid instead, which every fence key is checked for.
var EncodingMismatch = &Rule{
	ID:       "encoding-mismatch",
	Doc:      "a sampled value does not decode as its family's declared encoding",
	Kind:     KindKey,
	Severity: diag.Error,
	Phase:    PhaseSample,
	Unit:     UnitSamples,
	Reads:    FactPayload,
	Key: func(k *KeyFacts) bool {
		return k.Payload != nil && k.Payload.DecodeErrors > 0 && (k.Family == nil || k.Family.Kind != registry.KindFence)
	},
	Detail: func(k *KeyFacts) string {
		var found []string
		for _, enc := range slices.Sorted(maps.Keys(k.Payload.Detected)) {
			if !slices.Contains(k.Family.Encodings(), enc) {
				found = append(found, enc)
			}
		}
		if len(found) == 0 {
			return k.Payload.DecodeError
		}
		return "found " + strings.Join(found, ", ")
	},
	Summary: func(f *registry.Family) string {
		enc := f.Encoding
		if enc == "" {
			enc = "json"
		}
		return "sampled payloads that do not decode as the declared " + strings.ReplaceAll(enc, "|", " or ")
	},
}
