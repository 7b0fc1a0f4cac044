package registry

import (
	"strings"
	"sync"
	"time"

	"github.com/keyreg/keyreg/diag"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Registry is a loaded keys.yaml.
type Registry struct {
	File      string // path of keys.yaml inside its file system
	Version   int
	Separator byte
	Defaults  Defaults
	Owners    []*Owner   // in declaration order
	Rules     []Override // severity overrides, in declaration order
	Families  []*Family  // in declaration order; Family.Index is the position here
	// CompatPolicy is the payload compatibility policy of families that do
	// not set their own: PolicyLenient (the default) or PolicyStrict.
	CompatPolicy string
	// Breaking selects the rules `keyreg breaking` runs (breaking: in
	// keys.yaml).
	Breaking Breaking
	// Cluster says the registry's Redis is a Redis Cluster (cluster: true).
	Cluster bool
	// Channels are the Pub/Sub channels (channels:), in declaration order;
	// Channel.Index is the position here.
	Channels []*Channel
	Pos      diag.Pos // the document start
	fieldPos map[string]diag.Pos
	keyPos   map[string]diag.Pos

	owners  map[string]*Owner
	byName  map[string]*Family
	matcher *Matcher

	channelByName  map[string]*Channel
	channelOnce    sync.Once
	channelMatcher *Matcher
}

// Defaults apply to every family that does not set the field itself.
type Defaults struct {
	TTL      TTLPolicy
	MaxIdle  time.Duration
	MaxBytes int64
	MaxLen   int64
	Pos      diag.Pos
}

// Owner is a team that owns families.
type Owner struct {
	Name        string
	Contact     string
	Description string
	Prefixes    []Prefix // key prefixes this owner claims; other owners may not use them
	Pos         diag.Pos
}

// Prefix is a claimed key prefix. "*" in a prefix matches any run of bytes
// within one segment, so "v*:user:" claims "v1:user:" and "v2:user:".
type Prefix struct {
	Glob string
	Pos  diag.Pos
}

// Override sets the severity of a rule for the whole registry.
type Override struct {
	Rule     string
	Severity diag.Severity
	Pos      diag.Pos
}

// Payload compatibility levels a family may declare under compat:. They
// say which direction of a payload schema change must be safe; see
// docs/breaking.md.
const (
	CompatBackward = "BACKWARD" // new readers can read values old writers stored
	CompatForward  = "FORWARD"  // old readers can read values new writers store
	CompatFull     = "FULL"     // both; the default
	CompatNone     = "NONE"     // payload changes are not checked
)

// Payload compatibility policies (compat_policy:). Lenient also accepts
// adding and removing optional properties of an open object, which is safe
// for readers that ignore unknown fields.
const (
	PolicyLenient = "lenient" // the default
	PolicyStrict  = "strict"
)

// Breaking is the breaking: block: which breaking rules run. An empty Use
// means every breaking rule; Except then removes rules. Entries name a
// category (upper case, such as "PAYLOAD") or a rule ID.
type Breaking struct {
	Use    []RuleRef
	Except []RuleRef
	Pos    diag.Pos // the block's position; zero when absent
}

// RuleRef names a rule or a category in keys.yaml.
type RuleRef struct {
	Name string
	Pos  diag.Pos
}

// TTLKind is the kind of a TTL policy.
type TTLKind uint8

// TTL policy kinds. TTLUnset means the family declares none and no default
// applies.
const (
	TTLUnset      TTLKind = iota
	TTLMax                // the key must expire within Max
	TTLPersistent         // the key must never expire
	TTLOptional           // either is fine
)

// TTLPolicy says how long keys of a family may live.
type TTLPolicy struct {
	Kind TTLKind
	Max  time.Duration
}

// String returns the policy as written in keys.yaml, such as "max 24h".
func (p TTLPolicy) String() string {
	switch p.Kind {
	case TTLMax:
		return "max " + FormatDuration(p.Max)
	case TTLPersistent:
		return "persistent"
	case TTLOptional:
		return "optional"
	}
	return "unset"
}

// Family is one key family: all keys of one pattern.
type Family struct {
	Index       int // position in Registry.Families
	Name        string
	Description string
	Pattern     *Pattern // nil only while a registry is invalid
	Version     int      // 0 when not declared
	Owner       string
	Type        string // string, hash, list, set, zset, stream, json; "" when not declared
	Encoding    string // json, msgpack, text, int, float, binary; "" when not declared
	// Kind is KindLock, KindFence or "" for an ordinary family. A lock
	// implies type string; a fence implies type string, encoding int and
	// ttl persistent.
	Kind string
	// Fencing is the name of the family of a lock's fencing counter, as
	// written (fencing:); FencingFamily is that family, resolved at load
	// when the name is a family's (nil otherwise: lint reports it, as it
	// reports a family that is not a fence).
	Fencing       string
	FencingFamily *Family
	// Groups are the consumer groups a stream must have (groups:), sorted
	// by name.
	Groups     []StreamGroup
	TTL        TTLPolicy
	TTLDefault bool // TTL came from defaults
	Schema     *Schema
	MaxBytes   int64
	MaxLen     int64
	MaxIdle    time.Duration
	Deprecated *Deprecation
	ManagedBy  string
	// Compat is the payload compatibility level: CompatBackward,
	// CompatForward, CompatFull (when not declared) or CompatNone.
	Compat string
	// CompatPolicy is PolicyLenient or PolicyStrict; when the family does
	// not declare it, the registry's CompatPolicy.
	CompatPolicy string
	Ignore       []Ignore
	// Preset is the preset the family was expanded from, or empty for a
	// family declared by hand; PresetPart is its part, such as
	// "celery-queue", which names every family the part expands into. Pos
	// and the positions of fields the preset sets are those of the preset
	// entry in keys.yaml.
	Preset      string
	PresetPart  string
	presetEntry int      // 1 + the index of its entry under presets:
	Pos         diag.Pos // the start of the family's mapping, or of its preset entry

	fieldPos    map[string]diag.Pos
	patternSrc  *scalar  // the pattern as written, for PatternPos
	lockMatcher *Matcher // of this family alone, for FenceKey; built at load for a lock with a fence
}

// Family kinds (kind: in keys.yaml).
const (
	KindLock  = "lock"  // a lock whose TTL is its lease
	KindFence = "fence" // the fencing counter of a lock: a persistent integer
)

// NoLimit is the value of a StreamGroup limit that keys.yaml does not set.
const NoLimit = -1

// StreamGroup is a consumer group that a stream family's keys must have,
// with its limits. A limit is NoLimit when not declared; 0 is a limit
// (nothing may lag, be pending or idle).
type StreamGroup struct {
	Name string
	// MaxLag bounds the entries of the stream the group has not read yet
	// (the lag field of XINFO GROUPS).
	MaxLag int64
	// MaxPending bounds the entries delivered to the group's consumers
	// and not acknowledged (its pending entries list).
	MaxPending int64
	// MaxConsumerIdle bounds how long a consumer that holds pending
	// entries may be idle.
	MaxConsumerIdle time.Duration
	Pos             diag.Pos // the group's name in keys.yaml
}

// Encodings returns the encodings the family accepts: its Encoding, split
// at "|" when keys.yaml lists several (encoding: [pickle, int]).
func (f *Family) Encodings() []string {
	if f.Encoding == "" {
		return nil
	}
	return strings.Split(f.Encoding, "|")
}

// Schema is a family's payload schema.
type Schema struct {
	Path     string             // file path as written in keys.yaml; empty for an inline schema
	File     string             // path inside the file system the registry was loaded from
	Doc      any                // the decoded schema document (JSON values)
	Compiled *jsonschema.Schema // nil when the schema failed to compile
}

// Deprecation marks a family as on its way out.
type Deprecation struct {
	Since      time.Time // zero when not given
	Sunset     time.Time // zero when not given; after it, live keys are findings
	ReplacedBy string
	Reason     string
}

// Ignore silences one rule for one family.
type Ignore struct {
	Rule   string
	Reason string
	Pos    diag.Pos
}

// PosOf returns the position of the value of a field of the family, such as
// "pattern" or "ttl", or the family's own position when the field is absent.
func (f *Family) PosOf(field string) diag.Pos {
	if p, ok := f.fieldPos[field]; ok {
		return p
	}
	return f.Pos
}

// PatternPos returns the position in keys.yaml of the bytes [off, off+n)
// of the pattern source (byte offsets, as in PatternError and Part.Offset).
// It follows the YAML quoting: escapes such as "\"" or "\u00e9", a doubled quote in a
// single-quoted pattern, folded and literal block scalars. Columns count
// characters. When the bytes cannot be placed it returns the position of
// the whole pattern.
func (f *Family) PatternPos(off, n int) diag.Pos {
	if f.patternSrc == nil {
		return f.PosOf("pattern")
	}
	return f.patternSrc.pos(off, n)
}

// Has reports whether the family sets field itself.
func (f *Family) Has(field string) bool {
	_, ok := f.fieldPos[field]
	return ok
}

// Ignored returns the ignore entry for rule, if any.
func (f *Family) Ignored(rule string) (Ignore, bool) {
	for _, ig := range f.Ignore {
		if ig.Rule == rule {
			return ig, true
		}
	}
	return Ignore{}, false
}

// PosOf returns the position of a top-level field of keys.yaml, such as
// "rules", or the document start.
func (r *Registry) PosOf(field string) diag.Pos {
	if p, ok := r.fieldPos[field]; ok {
		return p
	}
	return r.Pos
}

// KeyPos returns the position of the key of a top-level field of keys.yaml,
// such as the "families" in "families:", or the document start.
func (r *Registry) KeyPos(field string) diag.Pos {
	if p, ok := r.keyPos[field]; ok {
		return p
	}
	return r.Pos
}

// Owner returns the owner with the given name.
func (r *Registry) Owner(name string) (*Owner, bool) {
	o, ok := r.owners[name]
	return o, ok
}

// Family returns the family with the given name.
func (r *Registry) Family(name string) (*Family, bool) {
	f, ok := r.byName[name]
	return f, ok
}

// Channel modes (mode: in keys.yaml).
const (
	ModeClassic = "classic" // PUBLISH and SUBSCRIBE: on a cluster, every message goes to every node
	ModeSharded = "sharded" // SPUBLISH and SSUBSCRIBE: a message stays on its slot's shard
	ModePattern = "pattern" // PUBLISH, subscribed through PSUBSCRIBE SubscribeGlob
)

// ModeCommands returns the commands a channel of mode is published and
// subscribed with: PUBLISH, or SPUBLISH for a sharded channel; SUBSCRIBE,
// SSUBSCRIBE, or PSUBSCRIBE (of its subscribe_glob) for a pattern channel.
func ModeCommands(mode string) (publish, subscribe string) {
	switch mode {
	case ModeSharded:
		return "SPUBLISH", "SSUBSCRIBE"
	case ModePattern:
		return "PUBLISH", "PSUBSCRIBE"
	}
	return "PUBLISH", "SUBSCRIBE"
}

// Channel is one Pub/Sub channel declaration: all channels of one pattern.
// Channels are a namespace of their own, beside families: a channel
// pattern may overlap a family's, but not another channel's.
//
// A channel has a family's fields where they apply (name, description,
// pattern, owner, encoding, schema, deprecated, ignore), so it embeds a
// Family that holds them. That Family is not in Registry.Families; its
// Index is the channel's position in Registry.Channels, and its type, TTL
// and limits stay unset.
type Channel struct {
	Family
	// Mode is ModeClassic (when not declared), ModeSharded or ModePattern.
	Mode string
	// SubscribeGlob is the glob subscribers pass to PSUBSCRIBE, for
	// ModePattern; Glob is it parsed (nil otherwise).
	SubscribeGlob string
	Glob          *Glob
	// With names the sharded channels one SSUBSCRIBE takes together with
	// this one (with:), as written.
	With []ChannelRef
}

// ChannelRef names a channel in keys.yaml.
type ChannelRef struct {
	Name string
	Pos  diag.Pos
}

// Channel returns the channel with the given name.
func (r *Registry) Channel(name string) (*Channel, bool) {
	c, ok := r.channelByName[name]
	return c, ok
}

// ChannelMatcher returns a matcher of the channels' patterns: Match returns
// the embedded Family of the channel a name belongs to, whose Index is the
// channel's position in Channels. It is built once, on first use.
func (r *Registry) ChannelMatcher() *Matcher {
	r.channelOnce.Do(func() {
		fams := make([]*Family, len(r.Channels))
		for i, c := range r.Channels {
			fams[i] = &c.Family
		}
		r.channelMatcher = NewMatcher(fams, r.Separator)
	})
	return r.channelMatcher
}
