// Package source holds the key facts that every source of keys hands to the
// audit: the live scanner (scanner.Conn) and the RDB reader (snapshot.Source). A source yields
// KeyInfo batches and Stats, measures what a per-key Plan asks for, and
// reports its eviction-state policy in a TouchState. The interface itself
// is audit.Source, defined where it is consumed; this package has no
// dependency, so that every implementation can sit below the audit without
// importing another.
package source

import (
	"errors"
	"time"
)

// ErrTooLarge is returned by a sample read when reading the value would
// exceed the byte limit, or did: the rest of it was discarded unread.
var ErrTooLarge = errors.New("value larger than the sampling limit")

// ErrVanished is returned by a sample read when the key was deleted or
// expired after its facts were read, or replaced by a key of another type:
// the key whose facts were read is gone either way.
var ErrVanished = errors.New("key vanished")

// ErrTouch is returned by a sample read that would reset the key's LRU/LFU
// state on a primary without CLIENT NO-TOUCH (Redis before 7.2), when the
// source refuses such reads (TouchState.Blocked). Nothing was read.
var ErrTouch = errors.New("reading the value would reset its LRU/LFU state (redis before 7.2 has no CLIENT NO-TOUCH)")

// Family tags a key with the family its planner matched, from the Plan to
// the key's KeyInfo, so that the consumer does not match the key again. The
// zero Family means the key was not tagged (no planner); NoFamily means it
// matched no family.
type Family int32

// NoFamily is the Family of a key that matched no family.
const NoFamily Family = -1

// FamilyAt returns the Family of the family at index i of the registry.
func FamilyAt(i int) Family { return Family(i + 1) }

// Index returns the registry index of f, and false when f names no family
// (untagged, or NoFamily).
func (f Family) Index() (int, bool) { return int(f) - 1, f > 0 }

// Plan is what a source reads about one key beyond its type and TTL, and
// the tag it copies into the key's KeyInfo. A source that has a fact for
// free (a snapshot holds every length) may fill it without being asked.
type Plan struct {
	// Idle asks for the idle time (OBJECT IDLETIME: read first, since
	// later reads reset it).
	Idle bool
	// Memory asks for the memory used (MEMORY USAGE).
	Memory bool
	// Len is the collection type whose length to read: hash, list, set,
	// zset or stream; "" for none. A key of another type has no length.
	Len string
	// Family is copied into KeyInfo.Family.
	Family Family
	// Sample is the Redis type the audit would sample the key's value for:
	// its family's declared type, "*" when the family declares none, or ""
	// when no value of the family is checked. A live source reads samples
	// when asked (SampleEach); a snapshot, which streams past each value
	// once, keeps the values of the keys so planned, up to the audit's
	// quota per family, for SampleEach to hand over.
	Sample string
	// Fence is the key of a lock key's fencing counter (its family's
	// fencing), whose existence to read (EXISTS, which does not touch
	// it); "" for none.
	Fence string
	// Encoding asks for the object encoding of a string key (OBJECT
	// ENCODING, which does not touch it): fences must be integers.
	Encoding bool
	// Groups are the consumer groups of a stream key to read: XINFO
	// GROUPS, and XINFO CONSUMERS for each group with Consumers set.
	// Both touch the key, like a length command. nil for none.
	Groups []GroupQuery
}

// GroupQuery is one consumer group a stream must have.
type GroupQuery struct {
	Name string
	// Consumers asks for the group's consumers (XINFO CONSUMERS), to
	// find the longest idle one that holds pending entries.
	Consumers bool
}

// MaxConsumerName bounds the bytes of a consumer name a source keeps
// (GroupInfo.IdleConsumer); the rest is dropped.
const MaxConsumerName = 64

// GroupInfo is what a source read about one planned consumer group of a
// stream.
type GroupInfo struct {
	Name      string // the planned group's name
	Consumers int64
	// Pending counts the entries delivered to the group's consumers and
	// not acknowledged.
	Pending int64
	// Lag counts the entries the group has not read yet; valid when
	// HasLag. Redis 7.0 and later report it, except when it cannot be
	// computed (entries deleted from the middle of the stream).
	Lag    int64
	HasLag bool
	// IdlePending is the longest idle time of a consumer holding pending
	// entries, IdleConsumer its name (at most MaxConsumerName bytes);
	// valid when HasIdle, which needs the consumers read and one of them
	// holding entries.
	IdlePending  time.Duration
	IdleConsumer string
	HasIdle      bool
}

// Planner decides per key what its source reads. It is called once per key,
// possibly from several goroutines at once.
type Planner func(key string) Plan

// KeyInfo is what a source learned about one key.
type KeyInfo struct {
	// Key is the key name; keys are binary-safe, so it may hold any bytes.
	Key string
	// DB is the logical database the key lives in.
	DB int
	// Node is the "host:port" address of the node the key was read from.
	Node string
	// Type is the Redis type as TYPE reports it: string, hash, list, set,
	// zset, stream, or a module type name such as ReJSON-RL.
	Type string
	// PTTL is the remaining time to live with millisecond precision, or -1
	// (exactly NoExpiry) when the key has no expiry.
	PTTL time.Duration
	// Idle is the idle time (second precision); valid when HasIdle.
	Idle time.Duration
	// HasIdle reports whether Idle was collected. It is false when not
	// planned or when the source could not tell (for example a server
	// under an LFU maxmemory-policy).
	HasIdle bool
	// Memory is the memory used in bytes; valid when HasMemory.
	Memory int64
	// HasMemory reports whether Memory was collected.
	HasMemory bool
	// Len is the number of elements of a collection; valid when HasLen.
	Len int64
	// HasLen reports whether Len was collected: the plan asked for it and
	// the key has the planned type.
	HasLen bool
	// Family is Plan.Family of the plan the key was read with; zero
	// without a planner.
	Family Family
	// Fence is Plan.Fence, the key of the lock's fencing counter;
	// FenceExists says whether it exists, valid when HasFence.
	Fence       string
	FenceExists bool
	HasFence    bool
	// Encoding is the object encoding of a string (OBJECT ENCODING: int,
	// embstr or raw) when Plan.Encoding asked for it; "" when not read.
	Encoding string
	// Groups are the planned consumer groups that the stream has, in
	// plan order; a planned group absent from Groups does not exist.
	// Valid when HasGroups.
	Groups    []GroupInfo
	HasGroups bool
	// Vanished reports that the key did not exist when read. Batches never
	// hold vanished keys (they are only counted); a lookup of one key sets
	// it for a missing key.
	Vanished bool
}

// NoExpiry is the KeyInfo.PTTL of a key without a TTL.
const NoExpiry = time.Duration(-1)

// Stats summarizes one scan of a source.
type Stats struct {
	// Nodes is the number of nodes scanned.
	Nodes int
	// Scanned is the number of key names read, duplicates included.
	Scanned int64
	// Keys is the number of keys passed to the callback.
	Keys int64
	// Duplicates is the number of key names dropped as duplicates.
	Duplicates int64
	// Vanished is the number of keys that disappeared before their facts
	// were read (deleted or expired); they are not passed to the callback.
	Vanished int64
	// Duration is the wall time of the scan.
	Duration time.Duration
	// Partial reports that the scan did not cover the whole keyspace: a
	// key limit was reached, the context was cancelled, an error occurred,
	// or part of the keyspace could not be reached.
	Partial bool
	// Errors holds distinct non-fatal problems, such as a fence key in
	// another cluster slot; the source bounds their number.
	Errors []string
	// Refused lists, per command, the keys whose planned command the
	// server refused (NOPERM, or OBJECT IDLETIME under an LFU policy): the
	// checks that need it did not run on them, and the audit is partial.
	Refused []Refusal
}

// Refusal is a planned command that the server refused on some keys.
type Refusal struct {
	// Command is the command, lowercase ("memory usage", "object idletime").
	Command string
	// Keys counts the keys it was refused on.
	Keys int64
	// Err is the first refusal's error text.
	Err string
}

// TouchState says whether a source's reads of values and lengths change
// the eviction state of a primary's keys, and what the source did about
// it. A source whose reads touch nothing (a snapshot file) reports the zero
// TouchState.
type TouchState struct {
	// Touches reports that value reads and length commands would land on
	// a primary that has no CLIENT NO-TOUCH. It is false on Redis 7.2 and
	// later, and when the scanner reads a replica.
	Touches bool
	// Allowed reports that touching is allowed: when Touches, the reads
	// are made anyway and counted in Touched. When Touches and not
	// Allowed, the source refuses every sample read.
	Allowed bool
	// Version is the redis_version of the node read ("" when unknown).
	Version string
	// Why says why the reads touch, when Touches: "redis 7.0.15 has no
	// CLIENT NO-TOUCH", or that connections through Sentinel do not send
	// it.
	Why string
	// Touched counts the keys whose LRU/LFU state was touched: each key
	// once, whether by its length command or by sampling. Only when
	// Touches and Allowed.
	Touched int64
	// LenSkipped counts the keys whose planned length was not read
	// because reading it would have touched them (Touches without
	// Allowed).
	LenSkipped int64
	// GroupsSkipped counts the stream keys whose planned consumer groups
	// were not read (XINFO touches the key), under Touches without
	// Allowed.
	GroupsSkipped int64
}

// Blocked reports whether the source refuses the reads that would touch a
// primary's keys: it then samples nothing and reads no planned length or
// consumer group.
func (t TouchState) Blocked() bool { return t.Touches && !t.Allowed }
