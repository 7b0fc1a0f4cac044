package rules

import (
	"fmt"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// ValueTooLarge reports keys whose MEMORY USAGE exceeds their family's
// max_bytes: big values block Redis while they are read or deleted.
var ValueTooLarge = &Rule{
	ID:       "value-too-large",
	Doc:      "a live key uses more memory than its family's max_bytes",
	Kind:     KindKey,
	Severity: diag.Warn,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Reads:    FactMemory,
	Key: func(k *KeyFacts) bool {
		return k.Family != nil && k.Family.MaxBytes > 0 && k.HasMemory && k.Memory > k.Family.MaxBytes
	},
	Detail: func(k *KeyFacts) string { return fmt.Sprintf("%d bytes", k.Memory) },
	Summary: func(f *registry.Family) string {
		return fmt.Sprintf("keys over max_bytes %d", f.MaxBytes)
	},
}
