package rules

import (
	"time"

	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// KeyFacts is what an audit knows about one live key when the key rules
// run on it.
type KeyFacts struct {
	Key    string
	Family *registry.Family // nil when no family matches
	// Shape is set when Family is nil but the key has the shape of a
	// family whose placeholder types it fails; ShapeReason says which.
	Shape       *registry.Family
	ShapeReason string

	Type      string        // TYPE reply: string, hash, …, or a module type such as ReJSON-RL
	PTTL      time.Duration // remaining TTL; -1 when the key does not expire
	Idle      time.Duration // OBJECT IDLETIME, valid when HasIdle
	HasIdle   bool
	Memory    int64 // MEMORY USAGE in bytes, valid when HasMemory
	HasMemory bool
	Len       int64 // collection length, valid when HasLen
	HasLen    bool
	// Fence is the key of a lock's fencing counter and FenceExists
	// whether it exists, valid when HasFence.
	Fence       string
	FenceExists bool
	HasFence    bool
	// Encoding is the object encoding of a fence (int, embstr, raw); ""
	// when not read.
	Encoding string
	// Groups are the stream's consumer groups that its family declares
	// and it has, valid when HasGroups.
	Groups    []source.GroupInfo
	HasGroups bool
	// Payload is the result of checking a sampled value; nil when the key
	// was not sampled.
	Payload *payload.Result
	// Now is the time of the audit, for deprecation sunsets.
	Now time.Time
	// ShowValues lets a rule's Detail quote payload values: the user asked
	// for them (--show-values).
	ShowValues bool
}

// hasMaxTTL reports whether k's family has a max TTL policy.
func hasMaxTTL(k *KeyFacts) bool {
	return k.Family != nil && k.Family.TTL.Kind == registry.TTLMax
}

// redisType is the TYPE reply a family's declared type produces.
func redisType(declared string) string {
	if declared == "json" {
		return "ReJSON-RL"
	}
	return declared
}
