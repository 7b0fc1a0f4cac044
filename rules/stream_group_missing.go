package rules

import (
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// StreamGroupMissing reports a live stream that lacks a consumer group its
// family declares under groups:. Nobody consumes the stream for that group:
// its entries pile up unread, or (with XADD MAXLEN) are trimmed before the
// consumers that should have read them were deployed. Groups are read with
// XINFO GROUPS, which touches the key: on Redis before 7.2 only from a
// replica or with --allow-touch.
var StreamGroupMissing = &Rule{
	ID:       "stream-group-missing",
	Doc:      "a live stream lacks a consumer group its family declares",
	Kind:     KindKey,
	Severity: diag.Error,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Reads:    FactGroups,
	Key: func(k *KeyFacts) bool {
		return k.Family != nil && k.HasGroups && k.Type == "stream" && len(k.Groups) < len(k.Family.Groups)
	},
	Detail: func(k *KeyFacts) string {
		var missing []string
		for _, d := range k.Family.Groups {
			found := false
			for _, g := range k.Groups {
				found = found || g.Name == d.Name
			}
			if !found {
				missing = append(missing, strconv.Quote(d.Name))
			}
		}
		return "no group " + strings.Join(missing, ", ")
	},
	Summary: func(*registry.Family) string { return "streams without a declared consumer group" },
}
