package rules

import (
	"fmt"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// StreamTrimSlack is how far past max_len a stream may be before
// collection-too-long reports it: XADD ... MAXLEN ~ N (what generated code
// and most clients send) trims whole stream nodes only, so a trimmed
// stream keeps up to N plus one node's entries less one, and a node holds
// at most stream-node-max-entries (100 by default) entries: on Redis
// 7.0.15, 3,099 XADD MAXLEN ~ 1000 leave 1,099 entries.
const StreamTrimSlack = 99

// CollectionTooLong reports hashes, lists, sets, sorted sets and streams
// with more elements than their family's max_len, such as a stream that is
// never trimmed. A stream is allowed StreamTrimSlack entries more, for
// approximate trimming.
var CollectionTooLong = &Rule{
	ID:       "collection-too-long",
	Doc:      "a live collection has more elements than its family's max_len",
	Kind:     KindKey,
	Severity: diag.Warn,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Reads:    FactLen,
	Key: func(k *KeyFacts) bool {
		if k.Family == nil || k.Family.MaxLen <= 0 || !k.HasLen {
			return false
		}
		limit := k.Family.MaxLen
		if k.Type == "stream" {
			limit = max(limit, limit+StreamTrimSlack) // no overflow past MaxInt64
		}
		return k.Len > limit
	},
	Detail: func(k *KeyFacts) string { return fmt.Sprintf("%d elements", k.Len) },
	Summary: func(f *registry.Family) string {
		return fmt.Sprintf("collections over max_len %d", f.MaxLen)
	},
}
