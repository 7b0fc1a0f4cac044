// Package explain builds what keyreg explain says about one key: its
// family's facts from the registry (Explain), and, with --live or --rdb,
// the facts read and the verdict of every key rule, decided by the audit's
// own checker (Live, from audit.CheckKey's result). report renders the
// Explanation; cmd/keyreg only opens the source and probes the key.
package explain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
)

// Explanation says who owns a key and what its rules are. It is what
// `keyreg explain` prints.
type Explanation struct {
	Key     string         `json:"key"`
	Matched bool           `json:"matched"`
	Family  *FamilyFacts   `json:"family,omitempty"`
	Params  []ParamValue   `json:"params,omitempty"`
	Closest *ClosestFamily `json:"closest,omitempty"`
	Live    *LiveFacts     `json:"live,omitempty"`
	// Of is "channel" when the explanation is of a Pub/Sub channel
	// (explain --channel): Key then holds the channel's name, and Channel
	// its declaration when one matches. Empty for a key.
	Of      string        `json:"of,omitempty"`
	Channel *ChannelFacts `json:"channel,omitempty"`
}

// FamilyFacts describes the family a key belongs to.
type FamilyFacts struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Position    string         `json:"position"` // keys.yaml:line:col
	Pattern     string         `json:"pattern"`
	Glob        string         `json:"scan_glob"`
	Owner       string         `json:"owner,omitempty"`
	Contact     string         `json:"contact,omitempty"`
	Type        string         `json:"type,omitempty"`
	Kind        string         `json:"kind,omitempty"`    // lock or fence
	Fencing     string         `json:"fencing,omitempty"` // a lock's fence family
	Encoding    string         `json:"encoding,omitempty"`
	TTL         string         `json:"ttl"`
	TTLSource   string         `json:"ttl_source,omitempty"` // "family" or "defaults"
	Schema      *SchemaSummary `json:"schema,omitempty"`
	MaxBytes    int64          `json:"max_bytes,omitempty"`
	MaxLen      int64          `json:"max_len,omitempty"`
	MaxIdle     string         `json:"max_idle,omitempty"`
	ManagedBy   string         `json:"managed_by,omitempty"`
	Preset      string         `json:"preset,omitempty"` // the preset the family was expanded from; Position is its entry's
	Deprecated  *Deprecation   `json:"deprecated,omitempty"`
}

// Deprecation is a family's deprecation, with dates as YYYY-MM-DD.
type Deprecation struct {
	Since      string `json:"since,omitempty"`
	Sunset     string `json:"sunset,omitempty"`
	ReplacedBy string `json:"replaced_by,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// SchemaSummary is a short account of a payload schema's top level.
type SchemaSummary struct {
	Path       string     `json:"path,omitempty"` // empty for an inline schema
	Type       string     `json:"type,omitempty"`
	Properties []Property `json:"properties,omitempty"`
}

// Property is one top-level property of a payload schema.
type Property struct {
	Name     string `json:"name"`
	Type     string `json:"type,omitempty"`
	Required bool   `json:"required"`
}

// ParamValue is a placeholder bound by the key.
type ParamValue struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// ClosestFamily is the family a key that matches none comes closest to.
type ClosestFamily struct {
	Name     string `json:"name"`
	Pattern  string `json:"pattern"`
	Position string `json:"position"`
	Reason   string `json:"reason"`
}

// LiveFacts are what a live Redis says about one key.
type LiveFacts struct {
	// Source is empty for a live Redis, or the snapshot the facts come
	// from ("rdb:dump.rdb"): TTLs are then as of its creation time, and
	// memory is an estimate of MEMORY USAGE from the decoded value.
	Source   string `json:"source,omitempty"`
	Exists   bool   `json:"exists"`
	DB       int    `json:"db"` // the logical database read
	Type     string `json:"type,omitempty"`
	TTL      string `json:"ttl,omitempty"` // "none" when the key does not expire
	Memory   int64  `json:"memory_bytes,omitempty"`
	Idle     string `json:"idle,omitempty"`
	Len      *int64 `json:"length,omitempty"` // collection length, when read (families with max_len)
	Encoding string `json:"detected_encoding,omitempty"`
	// Lease is what is left of a lock's lease, such as "24s of 30s".
	Lease string `json:"lease_left,omitempty"`
	// Token is the shape of a lock holder's token, such as "uuid" or
	// "text 20 bytes"; the token itself follows only with --show-values.
	Token string     `json:"token,omitempty"`
	Fence *LiveFence `json:"fence,omitempty"`
	// Groups are a stream's declared consumer groups as read, in
	// keys.yaml's order (by name); GroupsNote says why they were not read.
	Groups     []LiveGroup `json:"groups,omitempty"`
	GroupsNote string      `json:"groups_note,omitempty"`
	// Verdict sums the key up, always one of the Verdict* values.
	Verdict string `json:"verdict"`
	// Verdicts are the findings of the key rules, one line each; empty
	// when none fired.
	Verdicts []string `json:"verdicts"`
	// NotChecked lists the checks that did not run, and why: never
	// empty when Verdict is VerdictIncomplete.
	NotChecked []NotChecked `json:"not_checked"`
	// Touched counts the keys whose LRU/LFU state reading this one reset
	// (a primary before Redis 7.2, without --no-touch): 0 or 1, and 2
	// for a lock whose fence was read as well.
	Touched int64 `json:"touched_keys"`
}

// The values of LiveFacts.Verdict: a fixed set.
const (
	// VerdictOK: the key exists, every check its family declares ran, and
	// no rule fired (findings ignored in keys.yaml aside).
	VerdictOK = "ok"
	// VerdictFindings: at least one rule fired; NotChecked may still list
	// checks that did not run.
	VerdictFindings = "findings"
	// VerdictIncomplete: no rule fired, but some checks did not run
	// (NotChecked says which and why): the key is not known to be fine.
	VerdictIncomplete = "incomplete"
	// VerdictAbsent: the key does not exist (in the database or snapshot
	// read), so nothing was checked.
	VerdictAbsent = "absent"
)

// Verdicts lists every value LiveFacts.Verdict takes.
var Verdicts = []string{VerdictOK, VerdictFindings, VerdictIncomplete, VerdictAbsent}

// The values of NotChecked.Reason.
const (
	// ReasonTouch: reading would reset the key's LRU/LFU state on a
	// primary before Redis 7.2, and --no-touch was given.
	ReasonTouch = "touch"
	// ReasonTooLarge: the value is larger than the sampling limit.
	ReasonTooLarge = "too-large"
	// ReasonUnavailable: the server or the file did not give the fact
	// (no idle time under an LFU policy, a refused MEMORY USAGE, an idle
	// time a snapshot did not save).
	ReasonUnavailable = "unavailable"
	// ReasonSnapshot: a snapshot cannot tell (a lock's fence key may be
	// anywhere in the file).
	ReasonSnapshot = "snapshot"
)

// NotChecked is one check explain did not run on the key.
type NotChecked struct {
	// Fact is what was not read: "value", "length", "idle", "memory",
	// "groups" or "fence".
	Fact string `json:"fact"`
	// Rules are the key rules that read it and so were not decided.
	Rules []string `json:"rules"`
	// Reason is one of the Reason* values; Detail says it in words.
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// LiveFence is the fence of a lock (its fencing: family's key for the
// lock's placeholder values), or, for a fence, the fence itself.
type LiveFence struct {
	Key    string `json:"key"`
	Exists *bool  `json:"exists,omitempty"` // nil when not read (a snapshot, or a fence in another cluster slot)
	Value  string `json:"value,omitempty"`  // the integer, or why there is none
}

// LiveGroup is one declared consumer group of a live stream.
type LiveGroup struct {
	Name      string `json:"name"`
	Exists    bool   `json:"exists"`
	Consumers int64  `json:"consumers"`
	Pending   int64  `json:"pending"`
	// Lag is nil when Redis cannot tell it (before 7.0, or after entries
	// were deleted from the middle of the stream): not measurable.
	Lag *int64 `json:"lag"`
	// IdleConsumer and Idle are the idlest consumer that holds pending
	// entries, read for groups with max_consumer_idle.
	IdleConsumer string `json:"idle_consumer,omitempty"`
	Idle         string `json:"idle,omitempty"`
}

// NotCheckedOf lists the checks family f declares that did not run on the
// key kc checked: the facts not read, the rules that read them, and why.
// touchWhy says why reads would touch a primary's keys ("redis 7.0.15 has
// no CLIENT NO-TOUCH"), empty when they were not refused for that reason;
// snapshot says the facts come from a snapshot. f may be nil (no family:
// no declared check).
func NotCheckedOf(kc *audit.KeyCheck, f *registry.Family, touchWhy string, snapshot bool) []NotChecked {
	out := []NotChecked{}
	ki := kc.Info
	if f == nil || ki.Vanished {
		return out
	}
	touch := func(fact string, rules []string) {
		out = append(out, NotChecked{Fact: fact, Rules: rules, Reason: ReasonTouch,
			Detail: "not read: it would reset the key's LRU/LFU state on a primary (" + touchWhy + "); run without --no-touch, or use --replica"})
	}
	unavailable := func(fact string, rules []string, detail string) {
		out = append(out, NotChecked{Fact: fact, Rules: rules, Reason: ReasonUnavailable, Detail: detail})
	}
	typed := f.Type == "" || ki.Type == f.Type
	if typed && (f.Encoding != "" || f.Schema != nil) {
		var rules []string
		if f.Encoding != "" {
			rules = append(rules, "encoding-mismatch")
		}
		if f.Schema != nil {
			rules = append(rules, "payload-invalid")
		}
		switch {
		case kc.NotTouched:
			touch("value", rules)
		case kc.Skipped:
			out = append(out, NotChecked{Fact: "value", Rules: rules, Reason: ReasonTooLarge,
				Detail: "not read: the value is larger than the sampling limit"})
		}
	}
	if f.MaxLen > 0 && f.Type != "" && ki.Type == f.Type && !ki.HasLen {
		if touchWhy != "" {
			touch("length", []string{"collection-too-long"})
		} else {
			unavailable("length", []string{"collection-too-long"}, "the length was not read")
		}
	}
	if f.MaxIdle > 0 && !ki.HasIdle {
		detail := "the server gave no idle time (an LFU maxmemory-policy, or OBJECT IDLETIME refused)"
		if snapshot {
			detail = "the snapshot holds no idle time (saved without an LRU maxmemory-policy)"
		}
		unavailable("idle", []string{"stale-key"}, detail)
	}
	if f.MaxBytes > 0 && !ki.HasMemory {
		unavailable("memory", []string{"value-too-large"}, "the memory the key uses was not measured (MEMORY USAGE refused or failed)")
	}
	if len(f.Groups) > 0 && ki.Type == "stream" && !ki.HasGroups {
		rules := rules.Reading(rules.FactGroups)
		if touchWhy != "" {
			touch("groups", rules)
		} else {
			unavailable("groups", rules, "the consumer groups were not read")
		}
	}
	if f.Kind == registry.KindLock && f.FencingFamily != nil && !ki.HasFence {
		if snapshot {
			out = append(out, NotChecked{Fact: "fence", Rules: []string{"fence-missing"}, Reason: ReasonSnapshot,
				Detail: "a snapshot cannot tell whether the fence exists: it may come anywhere in the file"})
		} else {
			unavailable("fence", []string{"fence-missing"}, "whether the fence exists was not read (it may be in another cluster slot)")
		}
	}
	return out
}

// Verdict sums up findings and the checks that did not run: one of the
// Verdict* values. Findings ignored in keys.yaml do not count.
func Verdict(exists bool, findings []audit.KeyFinding, notChecked []NotChecked) string {
	if !exists {
		return VerdictAbsent
	}
	for _, f := range findings {
		if !f.Suppressed {
			return VerdictFindings
		}
	}
	if len(notChecked) > 0 {
		return VerdictIncomplete
	}
	return VerdictOK
}

// Explain looks key up in reg.
func Explain(reg *registry.Registry, key string) *Explanation {
	e := &Explanation{Key: key}
	f, params := reg.Match(key)
	if f == nil {
		if c, reason := reg.Matcher().Closest(key); c != nil {
			e.Closest = &ClosestFamily{Name: c.Name, Pattern: c.Pattern.Source, Position: c.Pos.String(), Reason: reason}
		}
		return e
	}
	e.Matched = true
	e.Family = familyFacts(reg, f)
	types := map[string]string{}
	for _, ph := range f.Pattern.Placeholders() {
		types[ph.Name] = ph.Type.String()
	}
	for _, p := range params {
		e.Params = append(e.Params, ParamValue{Name: p.Name, Type: types[p.Name], Value: p.Value})
	}
	return e
}

func familyFacts(reg *registry.Registry, f *registry.Family) *FamilyFacts {
	ff := &FamilyFacts{
		Name:        f.Name,
		Description: f.Description,
		Position:    f.Pos.String(),
		Pattern:     f.Pattern.Source,
		Glob:        f.Pattern.Glob(),
		Owner:       f.Owner,
		Type:        f.Type,
		Kind:        f.Kind,
		Fencing:     f.Fencing,
		Encoding:    f.Encoding,
		TTL:         f.TTL.String(),
		MaxBytes:    f.MaxBytes,
		MaxLen:      f.MaxLen,
		ManagedBy:   f.ManagedBy,
		Preset:      f.Preset,
	}
	if o, ok := reg.Owner(f.Owner); ok {
		ff.Contact = o.Contact
	}
	if f.TTL.Kind != registry.TTLUnset {
		ff.TTLSource = "family"
		if f.TTLDefault {
			ff.TTLSource = "defaults"
		}
	}
	if f.MaxIdle > 0 {
		ff.MaxIdle = registry.FormatDuration(f.MaxIdle)
	}
	if d := f.Deprecated; d != nil {
		ff.Deprecated = &Deprecation{Since: date(d.Since), Sunset: date(d.Sunset), ReplacedBy: d.ReplacedBy, Reason: d.Reason}
	}
	if f.Schema != nil {
		ff.Schema = summarizeSchema(f.Schema)
	}
	return ff
}

func summarizeSchema(s *registry.Schema) *SchemaSummary {
	sum := &SchemaSummary{Path: s.Path}
	doc, _ := s.Doc.(map[string]any)
	sum.Type = typeOf(doc)
	props, _ := doc["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := doc["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	for name, p := range props {
		pm, _ := p.(map[string]any)
		sum.Properties = append(sum.Properties, Property{Name: name, Type: typeOf(pm), Required: required[name]})
	}
	slices.SortFunc(sum.Properties, func(a, b Property) int { return strings.Compare(a.Name, b.Name) })
	return sum
}

// typeOf renders a schema's "type" keyword, or "$ref" and "enum" hints.
func typeOf(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		var parts []string
		for _, p := range t {
			parts = append(parts, fmt.Sprint(p))
		}
		return strings.Join(parts, "|")
	}
	switch {
	case m["$ref"] != nil:
		return "$ref"
	case m["enum"] != nil:
		return "enum"
	case m["const"] != nil:
		return "const"
	}
	return ""
}

// date is t as YYYY-MM-DD, or "" for the zero time.
func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.DateOnly)
}
