package rules

import (
	"fmt"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// CollectionTooLong reports hashes, lists, sets, sorted sets and streams
// with more elements than their family's max_len, such as a stream that is
// never trimmed.
var CollectionTooLong = &Rule{
	ID:       "collection-too-long",
	Doc:      "a live collection has more elements than its family's max_len",
	Kind:     KindKey,
	Severity: diag.Warn,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Reads:    FactLen,
	Key: func(k *KeyFacts) bool {
		return k.Family != nil && k.Family.MaxLen > 0 && k.HasLen && k.Len > k.Family.MaxLen
	},
	Detail: func(k *KeyFacts) string { return fmt.Sprintf("%d elements", k.Len) },
	Summary: func(f *registry.Family) string {
		return fmt.Sprintf("collections over max_len %d", f.MaxLen)
	},
}
