package rules

import (
	"strconv"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// FenceMissing reports a live lock whose fence key does not exist. The
// fence key is derived from the lock key's placeholder values (see
// fencing-invalid). A holder takes its fencing token by INCR of the fence
// before it writes; a lock held without a fence means the holder skipped
// it, so a holder whose lease ran out can still overwrite the work of the
// next one. The audit reads the fence with EXISTS, which does not touch it.
// A fence served by another cluster node than its lock is not checked (the
// scan says so; lint reports the pair as fencing-slot).
var FenceMissing = &Rule{
	ID:       "fence-missing",
	Doc:      "a live lock's fence key does not exist, so its holder took no fencing token",
	Kind:     KindKey,
	Severity: diag.Error,
	Phase:    PhaseKey,
	Unit:     UnitKeys,
	Key: func(k *KeyFacts) bool {
		return k.Family != nil && k.Family.Kind == registry.KindLock && k.HasFence && !k.FenceExists
	},
	Detail: func(k *KeyFacts) string { return "no fence " + strconv.Quote(k.Fence) },
	Summary: func(f *registry.Family) string {
		return "locks whose fence key (family " + strconv.Quote(f.Fencing) + ") does not exist"
	},
}
