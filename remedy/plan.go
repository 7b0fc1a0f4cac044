// Package remedy acts on an audit's findings: it plans which keys to
// delete (prune) or give a TTL (expire), backs them up into an RDB file,
// deletes them with one check-and-UNLINK script per key, and restores a
// backup. It is the only package of keyreg that writes to Redis; the plan
// step reads only, through the same sources as the audit.
//
// Plans and backups come from people: every reader here bounds what it
// allocates and validates every field before it acts on one.
package remedy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// Plan kinds.
const (
	KindPrune  = "prune"
	KindExpire = "expire"
)

// Reasons a key is selected.
const (
	ReasonUnregistered = "unregistered" // matches no family
	ReasonDeprecated   = "deprecated"   // its family is past its sunset
	ReasonStale        = "stale"        // idle over max_idle or --idle-over
	ReasonTTLMissing   = "ttl-missing"  // no TTL where the family has a max (expire)
)

var reasons = []string{ReasonUnregistered, ReasonDeprecated, ReasonStale, ReasonTTLMissing}

// PlanVersion is the version of the plan document this package writes.
const PlanVersion = 1

// Bounds of a plan read from a file.
const (
	MaxPlanBytes  = 1 << 30 // the whole document
	MaxPlanKeys   = 10_000_000
	MaxKeyName    = 1 << 20 // bytes of one key name
	MaxDB         = 1 << 16
	maxNameField  = 4096 // family, group, owner, server strings
	maxIdle       = 100 * 365 * 24 * time.Hour
	maxTTLMillis  = int64(100 * 365 * 24 * time.Hour / time.Millisecond)
	maxSizeFields = int64(1) << 40
)

// Plan is the document `keyreg prune --plan` writes and `--apply` reads.
type Plan struct {
	Version int       `json:"version"`
	Kind    string    `json:"kind"`
	Created time.Time `json:"created"`
	// Finished is when the scan ended, rounded up to the second: every
	// key's idle time was read before it, so at apply an untouched key is
	// idle at least its planned idle time plus the time since Finished.
	Finished time.Time `json:"finished"`
	// Server is what was read: a live target (password hidden) or an
	// rdb: snapshot, which apply re-checks live.
	Server Server `json:"server"`
	// Selection is the options that chose the keys.
	Selection Selection `json:"selection"`
	// Partial says the scan that made the plan did not cover the keyspace.
	Partial bool  `json:"partial,omitempty"`
	Keys    []Key `json:"keys"`
	// Digest is the SHA-256 of the document with Digest empty: apply
	// refuses a plan whose digest does not match (edited by hand, or cut).
	Digest string `json:"digest"`
}

// Server says where a plan's keys were read.
type Server struct {
	Target string `json:"target"`
	Mode   string `json:"mode"` // standalone, cluster, sentinel or snapshot
}

// Selection is what chose the keys of a plan.
type Selection struct {
	Unregistered bool     `json:"unregistered,omitempty"`
	Group        string   `json:"group,omitempty"` // one prefix group of unregistered keys
	Deprecated   bool     `json:"deprecated,omitempty"`
	Stale        bool     `json:"stale,omitempty"`
	IdleOverSec  int64    `json:"idle_over_s,omitempty"`
	Families     []string `json:"families,omitempty"`
	IncludeLive  bool     `json:"include_live,omitempty"`
	TTLMissing   bool     `json:"ttl_missing,omitempty"`
	TTLSec       int64    `json:"ttl_s,omitempty"`      // expire: --ttl
	SpreadPct    int      `json:"spread_pct,omitempty"` // expire: --spread
}

// Key is one planned key.
type Key struct {
	// Name is the key when it is valid UTF-8; NameB64 otherwise.
	Name    string `json:"key,omitempty"`
	NameB64 string `json:"key_base64,omitempty"`
	DB      int    `json:"db"`
	Reason  string `json:"reason"`
	Family  string `json:"family,omitempty"`
	Group   string `json:"group,omitempty"` // prefix group of an unregistered key
	Owner   string `json:"owner,omitempty"`
	Type    string `json:"type"`
	// Size is MEMORY USAGE in bytes (an estimate for a snapshot); -1 when
	// not measured.
	Size int64 `json:"size"`
	// TTLMillis is the TTL left when planned, -1 for none.
	TTLMillis int64 `json:"ttl_ms"`
	// IdleSec is the idle time when planned, -1 when not measured.
	IdleSec int64 `json:"idle_s"`
	// TTLSet is, for expire, the TTL to set in milliseconds (jitter included).
	TTLSet int64 `json:"ttl_set_ms,omitempty"`

	key string // decoded
}

// KeyName returns the key's bytes.
func (k *Key) KeyName() string { return k.key }

func newKey(name string) Key {
	k := Key{key: name}
	if utf8.ValidString(name) {
		k.Name = name
	} else {
		k.NameB64 = base64.StdEncoding.EncodeToString([]byte(name))
	}
	return k
}

// Options choose the keys of a plan.
type Options struct {
	Selection
	// IdleOver is the idle time over which an unregistered key is stale.
	IdleOver time.Duration
	// TTL caps the TTL set by expire; 0 for the policy's max.
	TTL time.Duration
	// Now is the time sunsets are compared with, and the plan's date.
	Now time.Time
	// Rand draws the jitter of expire, in [0, 1); nil for none.
	Rand func() float64
}

// Scanner is what a plan reads keys from: audit.Source's scan.
type Scanner interface {
	ScanKeys(ctx context.Context, plan source.Planner, fn func(batch []source.KeyInfo) error) (source.Stats, error)
}

// Check validates the options: a reason must be given, --include-live
// needs --family, and every --family must name a family.
func (o *Options) Check(reg *registry.Registry, kind string) error {
	if kind == KindPrune && !o.Unregistered && !o.Deprecated && !o.Stale {
		return errors.New("give at least one reason: --unregistered, --deprecated or --stale")
	}
	if o.IncludeLive && len(o.Families) == 0 {
		return errors.New("--include-live needs the families named with --family")
	}
	if o.Group != "" && !o.Unregistered {
		return errors.New("--group limits --unregistered, which is not given")
	}
	for _, f := range o.Families {
		if familyByName(reg, f) == nil {
			return fmt.Errorf("--family %q names no family of the registry", f)
		}
	}
	if o.IdleOver < 0 || o.TTL < 0 {
		return errors.New("durations must not be negative")
	}
	if o.SpreadPct < 0 || o.SpreadPct > 100 {
		return errors.New("--spread is a percentage between 0 and 100")
	}
	return nil
}

func familyByName(reg *registry.Registry, name string) *registry.Family {
	for _, f := range reg.Families {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Live reports whether f is a live family: not deprecated past its sunset.
func Live(f *registry.Family, now time.Time) bool {
	return f.Deprecated == nil || f.Deprecated.Sunset.IsZero() || now.Before(f.Deprecated.Sunset)
}

// Select decides the reason a key is planned for, "" for none. It is the
// whole selection policy, kept apart from the scan so that it is a pure
// unit.
func (o *Options) Select(kind string, reg *registry.Registry, k *source.KeyInfo, f *registry.Family) string {
	named := f != nil && slices.Contains(o.Families, f.Name)
	if kind == KindExpire {
		if f == nil || f.TTL.Kind != registry.TTLMax || k.PTTL != source.NoExpiry {
			return ""
		}
		if len(o.Families) > 0 && !named {
			return ""
		}
		return ReasonTTLMissing
	}
	if f == nil {
		if o.Unregistered && (o.Group == "" || audit.InferPrefix(k.Key, reg.Separator) == o.Group) {
			return ReasonUnregistered
		}
		if o.Stale && o.IdleOver > 0 && k.HasIdle && k.Idle > o.IdleOver {
			return ReasonStale
		}
		return ""
	}
	if len(o.Families) > 0 && !named {
		return ""
	}
	if !Live(f, o.Now) {
		if o.Deprecated {
			return ReasonDeprecated
		}
		if o.Stale && stale(f, k, o.IdleOver) {
			return ReasonStale
		}
		return ""
	}
	// A live family: never without --family and --include-live.
	if !named || !o.IncludeLive {
		return ""
	}
	if o.Stale && stale(f, k, o.IdleOver) {
		return ReasonStale
	}
	return ""
}

func stale(f *registry.Family, k *source.KeyInfo, over time.Duration) bool {
	limit := f.MaxIdle
	if limit == 0 {
		limit = over
	}
	return limit > 0 && k.HasIdle && k.Idle > limit
}

// Build scans src and returns the plan of the keys o selects. A scan that
// did not cover the keyspace returns the plan of what it saw, Partial set,
// with the scan's error.
func Build(ctx context.Context, src Scanner, reg *registry.Registry, kind string, o Options, server Server) (*Plan, error) {
	if err := o.Check(reg, kind); err != nil {
		return nil, err
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	m := reg.Matcher()
	plan := func(key string) source.Plan {
		p := source.Plan{Idle: true, Memory: true, Family: source.NoFamily}
		if f := m.Match(key); f != nil {
			p.Family = source.FamilyAt(f.Index)
		}
		return p
	}
	p := &Plan{Version: PlanVersion, Kind: kind, Created: o.Now.UTC().Truncate(time.Second), Server: server, Selection: o.Selection}
	if o.IdleOver > 0 {
		p.Selection.IdleOverSec = int64(o.IdleOver / time.Second)
	}
	if o.TTL > 0 {
		p.Selection.TTLSec = int64(o.TTL / time.Second)
	}
	if kind == KindExpire {
		p.Selection.TTLMissing = true
	}
	stats, err := src.ScanKeys(ctx, plan, func(batch []source.KeyInfo) error {
		for i := range batch {
			k := &batch[i]
			var f *registry.Family
			if idx, ok := k.Family.Index(); ok && idx < len(reg.Families) {
				f = reg.Families[idx]
			}
			why := o.Select(kind, reg, k, f)
			if why == "" {
				continue
			}
			if len(p.Keys) >= MaxPlanKeys {
				return fmt.Errorf("the plan holds %d keys, the limit: narrow the selection", MaxPlanKeys)
			}
			pk := newKey(k.Key)
			pk.DB, pk.Reason, pk.Type = k.DB, why, k.Type
			pk.Size, pk.TTLMillis, pk.IdleSec = -1, -1, -1
			if k.HasMemory {
				pk.Size = k.Memory
			}
			if k.PTTL >= 0 {
				pk.TTLMillis = k.PTTL.Milliseconds()
			}
			if k.HasIdle {
				pk.IdleSec = int64(k.Idle / time.Second)
			}
			if f != nil {
				pk.Family, pk.Owner, pk.Group = f.Name, f.Owner, f.Name
			} else {
				pk.Group = string(bytes.Clone([]byte(audit.InferPrefix(k.Key, reg.Separator))))
			}
			if kind == KindExpire {
				pk.TTLSet = expireTTL(f.TTL.Max, o.TTL, o.SpreadPct, o.Rand)
			}
			p.Keys = append(p.Keys, pk)
		}
		return nil
	})
	p.Partial = stats.Partial || err != nil
	p.Finished = time.Now().UTC().Add(time.Second - 1).Truncate(time.Second)
	if p.Finished.Before(p.Created) {
		p.Finished = p.Created
	}
	slices.SortFunc(p.Keys, func(a, b Key) int {
		if a.DB != b.DB {
			return a.DB - b.DB
		}
		return cmpString(a.key, b.key)
	})
	p.Digest = p.digest()
	return p, err
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// expireTTL is the TTL expire sets: the policy's max, or ttl when shorter,
// minus a jitter of up to spread percent, so that keys planned together do
// not expire in the same second. It is never below one second.
func expireTTL(policy, ttl time.Duration, spread int, rnd func() float64) int64 {
	d := policy
	if ttl > 0 && ttl < d {
		d = ttl
	}
	if rnd != nil && spread > 0 {
		d -= time.Duration(float64(d) * float64(spread) / 100 * rnd())
	}
	return max(d.Milliseconds(), 1000)
}

// digest is the SHA-256 of the plan's JSON with Digest empty.
func (p *Plan) digest() string {
	c := *p
	c.Digest = ""
	b, err := json.Marshal(&c)
	if err != nil {
		return ""
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Write writes the plan as indented JSON.
func (p *Plan) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false)
	return enc.Encode(p)
}

// ErrStale is returned by Plan.Fresh for a plan older than the limit.
var ErrStale = errors.New("the plan is stale")

// Fresh refuses a plan created more than maxAge before now, or after it.
func (p *Plan) Fresh(now time.Time, maxAge time.Duration) error {
	age := now.Sub(p.Created)
	if age > maxAge {
		return fmt.Errorf("%w: created %s, %s ago, over --max-plan-age %s; plan again", ErrStale, p.Created.Format(time.RFC3339), age.Round(time.Second), maxAge)
	}
	if age < -time.Minute {
		return fmt.Errorf("the plan's creation time %s is in the future", p.Created.Format(time.RFC3339))
	}
	return nil
}

// ReadPlan reads and validates a plan: size bounds, every field, and the
// digest. The error says which key is wrong.
func ReadPlan(r io.Reader) (*Plan, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPlanBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxPlanBytes {
		return nil, fmt.Errorf("the plan is over %d bytes", MaxPlanBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("reading the plan: %w", err)
	}
	if dec.More() {
		return nil, errors.New("reading the plan: data after the document")
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	if got := p.digest(); got != p.Digest {
		return nil, fmt.Errorf("the plan's digest does not match its content (want %s): it was edited or cut; plan again", clipText(got))
	}
	return &p, nil
}

func clipText(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func (p *Plan) validate() error {
	if p.Version != PlanVersion {
		return fmt.Errorf("plan version %d: this keyreg reads version %d", p.Version, PlanVersion)
	}
	if p.Kind != KindPrune && p.Kind != KindExpire {
		return fmt.Errorf("plan kind %q: want prune or expire", clipText(p.Kind))
	}
	if p.Created.IsZero() {
		return errors.New("the plan has no creation time")
	}
	if p.Finished.Before(p.Created) || p.Finished.Sub(p.Created) > 30*24*time.Hour {
		return errors.New("the plan's finish time is before its creation time, or a month after it")
	}
	if len(p.Keys) > MaxPlanKeys {
		return fmt.Errorf("the plan holds %d keys, over the limit of %d", len(p.Keys), MaxPlanKeys)
	}
	for _, s := range append([]string{p.Server.Target, p.Server.Mode, p.Selection.Group}, p.Selection.Families...) {
		if len(s) > maxNameField || !utf8.ValidString(s) {
			return errors.New("the plan's server or selection holds an over-long or invalid string")
		}
	}
	if len(p.Selection.Families) > 10_000 {
		return errors.New("the plan's selection names too many families")
	}
	seen := make(map[dbKey]struct{}, len(p.Keys))
	for i := range p.Keys {
		k := &p.Keys[i]
		if err := k.validate(p.Kind); err != nil {
			return fmt.Errorf("plan key %d: %w", i, err)
		}
		dk := dbKey{k.DB, k.key}
		if _, dup := seen[dk]; dup {
			return fmt.Errorf("plan key %d: listed twice", i)
		}
		seen[dk] = struct{}{}
	}
	return nil
}

type dbKey struct {
	db  int
	key string
}

var types = []string{"string", "list", "set", "zset", "hash", "stream"}

func (k *Key) validate(kind string) error {
	switch {
	case k.Name != "" && k.NameB64 != "":
		return errors.New("both key and key_base64")
	case k.NameB64 != "":
		if base64.StdEncoding.DecodedLen(len(k.NameB64)) > MaxKeyName {
			return fmt.Errorf("key over %d bytes", MaxKeyName)
		}
		b, err := base64.StdEncoding.DecodeString(k.NameB64)
		if err != nil {
			return errors.New("key_base64 is not base64")
		}
		if utf8.Valid(b) {
			return errors.New("key_base64 holds valid UTF-8: write it as key")
		}
		k.key = string(b)
	default:
		if len(k.Name) > MaxKeyName {
			return fmt.Errorf("key over %d bytes", MaxKeyName)
		}
		if !utf8.ValidString(k.Name) {
			return errors.New("key is not valid UTF-8")
		}
		k.key = k.Name
	}
	if k.DB < 0 || k.DB >= MaxDB {
		return fmt.Errorf("database %d out of range", k.DB)
	}
	if !slices.Contains(reasons, k.Reason) {
		return fmt.Errorf("unknown reason %q", clipText(k.Reason))
	}
	if (kind == KindExpire) != (k.Reason == ReasonTTLMissing) {
		return fmt.Errorf("reason %s in a %s plan", k.Reason, kind)
	}
	if !slices.Contains(types, k.Type) && !validModuleType(k.Type) {
		return fmt.Errorf("unknown type %q", clipText(k.Type))
	}
	for _, s := range []string{k.Family, k.Group, k.Owner} {
		if len(s) > maxNameField || !utf8.ValidString(s) {
			return errors.New("family, group or owner over-long or not UTF-8")
		}
	}
	if k.Size < -1 || k.Size > maxSizeFields {
		return fmt.Errorf("size %d out of range", k.Size)
	}
	if k.TTLMillis < -1 || k.TTLMillis > maxTTLMillis {
		return fmt.Errorf("ttl_ms %d out of range", k.TTLMillis)
	}
	if k.IdleSec < -1 || k.IdleSec > int64(maxIdle/time.Second) {
		return fmt.Errorf("idle_s %d out of range", k.IdleSec)
	}
	if kind == KindExpire {
		if k.TTLSet < 1000 || k.TTLSet > maxTTLMillis {
			return fmt.Errorf("ttl_set_ms %d out of range", k.TTLSet)
		}
		if k.TTLMillis != -1 {
			return errors.New("an expire plan's key has a TTL already")
		}
	} else if k.TTLSet != 0 {
		return errors.New("ttl_set_ms in a prune plan")
	}
	return nil
}

// validModuleType accepts a module type name (9 characters of A-Z a-z 0-9
// - _), as TYPE reports it.
func validModuleType(t string) bool {
	if len(t) != 9 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
