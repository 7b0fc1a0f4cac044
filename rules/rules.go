// Package rules holds every check keyreg runs, each as a value: lint rules
// check a registry, key rules check one live key, and breaking rules compare
// two registries.
//
// A rule lives in its own file (ttl_missing.go for ttl-missing) and is listed
// explicitly below; there is no init() registration. Each rule has a test
// case in testdata/<rule-id>.txtar, and a guard test fails when one lacks a
// doc or a case. A key rule also declares its phase (per key, per sample,
// per run), its unit of counting and the facts it reads, so the audit runs
// and counts it without knowing it by name (docs/architecture.md, "Rule
// kinds and phases").
package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// Kind says what a rule checks.
type Kind string

// Rule kinds.
const (
	// KindLoad rules are reported by registry.Load. A registry with such a
	// finding is invalid: commands exit 2.
	KindLoad Kind = "load"
	// KindLint rules check a loaded registry.
	KindLint Kind = "lint"
	// KindKey rules check one live key during an audit, or, in PhaseRun,
	// what the audit counted for a family over the whole run.
	KindKey Kind = "key"
	// KindBreaking rules compare an old registry with a new one in
	// `keyreg breaking`.
	KindBreaking Kind = "breaking"
)

// Categories of breaking rules. keys.yaml selects breaking rules by
// category or ID under breaking: {use, except}.
const (
	// CategoryKey rules protect the key space: a family removed, or its
	// keys changed in layout, hash tag, Redis type or encoding, so that
	// readers and writers of the old and the new registry no longer meet.
	CategoryKey = "KEY"
	// CategoryPayload rules compare payload schemas under each family's
	// compat level and policy.
	CategoryPayload = "PAYLOAD"
	// CategoryOps rules report changes that affect operations (memory,
	// expiry) but not correctness.
	CategoryOps = "OPS"
	// CategoryCodegen rules report changes that break only code generated
	// by keyreg gen, such as renamed placeholders.
	CategoryCodegen = "CODEGEN"
	// CategoryOwnership rules report changes of who owns a family, so that
	// both teams review them. They never block.
	CategoryOwnership = "OWNERSHIP"
)

// Categories returns the breaking-rule categories, in documentation order.
func Categories() []string {
	return []string{CategoryKey, CategoryPayload, CategoryOps, CategoryCodegen, CategoryOwnership}
}

// Rule is one check.
type Rule struct {
	ID       string        // kebab-case, stable: users reference it in rules: and ignore:
	Doc      string        // one line, lowercase, no trailing period
	Kind     Kind          // what the rule checks
	Severity diag.Severity // default severity; keys.yaml rules: overrides it
	Lint     func(*Pass)   // KindLint: reports findings on the registry
	// Channel says the rule's findings are about channels (channels: in
	// keys.yaml): a finding's Family is then a channel's name, and the
	// channel's ignore: entries apply.
	Channel bool

	// Category groups breaking rules (KindBreaking) for breaking: use and
	// except in keys.yaml: one of Categories().
	Category string
	// Breaking reports findings on a change from an old registry to a new
	// one (KindBreaking).
	Breaking func(*BreakingPass)

	// Phase says when a key rule (KindKey) decides: on every key
	// (PhaseKey), on every key whose payload was checked (PhaseSample), or
	// once per family after the whole run (PhaseRun).
	Phase Phase
	// Unit is what a key rule's findings are counted against: the M of a
	// finding's "N of M".
	Unit Unit
	// Reads says which probe facts beyond the key's family, type and TTL
	// a key rule reads, so that a run that could not read them can say
	// which rules went unchecked.
	Reads Fact
	// Key reports whether the rule fires on one live key (PhaseKey and
	// PhaseSample). It runs on every audited key, so it must not allocate.
	// A PhaseSample rule runs only on keys whose Payload is set.
	Key func(*KeyFacts) bool
	// Run reports whether the rule fires on a family after the whole run
	// (PhaseRun).
	Run func(*RunFacts) bool
	// Detail says why the rule fired on k, such as "ttl 30d", and never
	// quotes a payload value unless k.ShowValues is set. It runs only for
	// the few example keys a report shows; the audit bounds its length.
	Detail func(k *KeyFacts) string
	// Summary names what the rule counts for a family, as a plural noun
	// phrase such as "keys without a TTL (policy: max 24h)"; the audit
	// adds "N of M" unless Unit is UnitNone. f is nil for keys of no family.
	Summary func(f *registry.Family) string
}

// Phase says when a key rule decides.
type Phase string

// Phases of key rules.
const (
	// PhaseKey rules decide on every key, from its probe: type, TTL,
	// idle time, memory, length, and its family or shape.
	PhaseKey Phase = "key"
	// PhaseSample rules decide on every key whose payload was read and
	// checked (KeyFacts.Payload set): at most --sample keys per family.
	PhaseSample Phase = "sample"
	// PhaseRun rules decide once per family, after a run over the whole
	// keyspace, from what the run counted (RunFacts).
	PhaseRun Phase = "run"
)

// Unit is what a key rule's findings are counted against: the M of a
// finding's "N of M".
type Unit string

// Units of key rules.
const (
	// UnitKeys counts the keys that match the family.
	UnitKeys Unit = "keys"
	// UnitFamilyKeys counts the keys of the family: those that match it
	// and those with only its shape (placeholder-invalid).
	UnitFamilyKeys Unit = "family keys"
	// UnitSamples counts the family's keys whose payload was checked.
	UnitSamples Unit = "sampled keys"
	// UnitAllKeys counts every key audited, of any family or none.
	UnitAllKeys Unit = "all keys"
	// UnitNone is for PhaseRun rules, which count no keys: the finding's
	// message is the summary alone.
	UnitNone Unit = "none"
)

// Fact is a set of the facts a probe or a sample reads about a key.
type Fact uint8

// Facts a key rule may read.
const (
	FactIdle    Fact = 1 << iota // OBJECT IDLETIME: KeyFacts.Idle
	FactMemory                   // MEMORY USAGE: KeyFacts.Memory
	FactLen                      // the collection's length: KeyFacts.Len
	FactPayload                  // the sampled value: KeyFacts.Payload
	FactGroups                   // a stream's consumer groups (XINFO): KeyFacts.Groups
)

// Reading returns the IDs of the key rules that read any of facts, in
// the order the audit applies them.
func Reading(facts Fact) []string {
	var out []string
	for _, r := range keyRules {
		if r.Reads&facts != 0 {
			out = append(out, r.ID)
		}
	}
	return out
}

// RunFacts is what an audit counted for one family over the whole run,
// when the PhaseRun rules decide on it.
type RunFacts struct {
	Family *registry.Family
	// Keys counts the family's keys, those with only its shape included;
	// Sampled those whose payload was checked.
	Keys, Sampled int64
	// Complete says the run covered the whole keyspace: it was not
	// interrupted or cut short, and no --match narrowed it.
	Complete bool
}

// loadRules are reported by registry.Load; they are listed for docs,
// severities and ignore: validation.
var loadRules = []*Rule{
	{ID: registry.RuleSchemaInvalid, Kind: KindLoad, Severity: diag.Error, Doc: "keys.yaml is not valid YAML or breaks its JSON Schema (schemas/keys.v1.schema.json)"},
	{ID: registry.RuleDuplicateName, Kind: KindLoad, Severity: diag.Error, Doc: "two families share a name"},
	{ID: registry.RulePatternInvalid, Kind: KindLoad, Severity: diag.Error, Doc: "a pattern does not parse: unbalanced braces, a bad placeholder name or type, adjacent placeholders"},
	{ID: registry.RulePayloadSchemaInvalid, Kind: KindLoad, Severity: diag.Error, Doc: "a payload schema file is missing or the schema does not compile"},
}

// lintRules run on every loaded registry, in this order.
var lintRules = []*Rule{
	PatternOverlap,
	OwnerMissing,
	OwnerUnknown,
	OwnerPlaceholder,
	OwnerPrefixClaim,
	OwnerClaimConflict,
	TTLPolicyMissing,
	LockLeaseMissing,
	FencingInvalid,
	FencingSlot,
	StreamUnbounded,
	VersionMismatch,
	VersionMissing,
	PayloadSchemaTypeMismatch,
	DeprecatedReplacementUnknown,
	IgnoreWithoutReason,
	DescriptionMissing,
	PlaceholderUntyped,
	ChannelOverlap,
	ChannelShardedSlot,
	ChannelGlobMismatch,
	ChannelClassicCluster,
	ChannelReplacementUnknown,
}

// keyRules run on every key of a live audit, in this order.
var keyRules = []*Rule{
	UnregisteredKey,
	PlaceholderInvalid,
	TTLMissing,
	TTLExceedsMax,
	TTLUnexpected,
	TypeMismatch,
	FenceMissing,
	FenceInvalid,
	PayloadInvalid,
	EncodingMismatch,
	ValueTooLarge,
	CollectionTooLong,
	StreamGroupMissing,
	StreamGroupLag,
	StreamPending,
	StreamConsumerIdle,
	StaleKey,
	DeprecatedLive,
	FamilyUnused,
}

// breakingRules compare two registries in keyreg breaking, in this order.
var breakingRules = []*Rule{
	FamilyRemoved,
	PatternChanged,
	VersionChanged,
	HashTagChanged,
	TypeChanged,
	FencingChanged,
	EncodingChanged,
	PayloadIncompatible,
	TTLPolicyChanged,
	PlaceholderRenamed,
	OwnerChanged,
}

// All returns every rule, load rules first, then lint, key and breaking
// rules, in a stable order.
func All() []*Rule {
	return slices.Concat(loadRules, lintRules, keyRules, channelAuditRules, breakingRules)
}

// KeyRules returns the key rules, in the order the audit applies them.
func KeyRules() []*Rule { return slices.Clone(keyRules) }

// Lookup returns the rule with the given ID.
func Lookup(id string) (*Rule, bool) {
	r, ok := byID()[id]
	return r, ok
}

// byID indexes All by ID once: Lookup runs for every finding a run
// reports, and building All there allocated the whole list each time.
var byID = sync.OnceValue(func() map[string]*Rule {
	m := map[string]*Rule{}
	for _, r := range All() {
		m[r.ID] = r
	}
	return m
})

// IsFatal reports whether d makes the registry unusable (exit 2).
func IsFatal(d diag.Diagnostic) bool {
	r, ok := Lookup(d.Rule)
	return ok && r.Kind == KindLoad && !d.Suppressed && d.Severity == diag.Error
}

// Pass is the state of one lint rule over one registry.
type Pass struct {
	Reg  *registry.Registry
	rule *Rule
	out  *diag.List
}

// Reportf reports a finding about family f (nil for the registry as a whole)
// at pos.
func (p *Pass) Reportf(f *registry.Family, pos diag.Pos, format string, args ...any) {
	d := diag.Diagnostic{Pos: pos, Severity: p.rule.Severity, Rule: p.rule.ID, Message: fmt.Sprintf(format, args...)}
	if f != nil {
		d.Family = f.Name
		d.Message = NameFamily(f.Name, d.Message)
	}
	*p.out = append(*p.out, d)
}

// ReportChannel reports a finding about channel c at pos; the message
// starts with the channel: `channel "room-events": msg`.
func (p *Pass) ReportChannel(c *registry.Channel, pos diag.Pos, format string, args ...any) {
	d := diag.Diagnostic{Pos: pos, Severity: p.rule.Severity, Rule: p.rule.ID, Message: fmt.Sprintf(format, args...)}
	if c != nil {
		d.Family = c.Name
		d.Message = NameChannel(c.Name, d.Message)
	}
	*p.out = append(*p.out, d)
}

// NameChannel is NameFamily for a channel: `channel "room-events": msg`.
func NameChannel(name, msg string) string {
	q := "channel " + strconv.Quote(name)
	if name == "" || strings.HasPrefix(msg, q) {
		return msg
	}
	return q + ": " + msg
}

// NameFamily returns msg, a finding's message about family name, starting
// with the family: `family "cart": msg`, unless msg already starts with
// `family "cart"`. A finding's position is a keys.yaml line, which does not
// say which family it is about when it lands on a shared key such as
// families:, or when only the message is shown (an annotation's text).
func NameFamily(name, msg string) string {
	q := "family " + strconv.Quote(name)
	if name == "" || strings.HasPrefix(msg, q) {
		return msg
	}
	return q + ": " + msg
}

// Lint runs every lint rule on reg and applies the registry's severity
// overrides and the families' ignore: entries. Overrides or ignores that
// name an unknown rule are schema-invalid findings.
func Lint(reg *registry.Registry) diag.List {
	var out diag.List
	for _, r := range lintRules {
		r.Lint(&Pass{Reg: reg, rule: r, out: &out})
	}
	out = append(out, checkRuleRefs(reg)...)
	out = Apply(reg, out)
	out.Sort()
	return out
}

// Apply applies reg's severity overrides (rules:) and its families' ignore:
// entries to l. Findings turned off are dropped; ignored ones are marked
// suppressed with their reason. Load rules cannot be overridden.
func Apply(reg *registry.Registry, l diag.List) diag.List {
	out := make(diag.List, 0, len(l))
	for _, d := range l {
		if r, ok := Lookup(d.Rule); ok {
			d.Severity, d.Suppressed, d.Reason = Effective(reg, r, d.Family, d.Severity)
		}
		if d.Severity == diag.Off {
			continue
		}
		out = append(out, d)
	}
	return out
}

// Effective returns the severity of rule r for the named family (empty for
// none) after reg's rules: overrides, and whether the family's ignore:
// silences it, with the reason given there. sev is the severity before
// overrides. Load rules are never changed.
func Effective(reg *registry.Registry, r *Rule, family string, sev diag.Severity) (_ diag.Severity, suppressed bool, reason string) {
	if r.Kind == KindLoad {
		return sev, false, ""
	}
	for _, o := range reg.Rules {
		if o.Rule == r.ID {
			sev = o.Severity
		}
	}
	if r.Channel {
		if c, ok := reg.Channel(family); ok {
			if ig, ok := c.Ignored(r.ID); ok {
				return sev, true, ig.Reason
			}
		}
		return sev, false, ""
	}
	if f, ok := reg.Family(family); ok {
		if ig, ok := f.Ignored(r.ID); ok {
			return sev, true, ig.Reason
		}
	}
	return sev, false, ""
}

func checkRuleRefs(reg *registry.Registry) diag.List {
	var out diag.List
	for _, o := range reg.Rules {
		r, ok := Lookup(o.Rule)
		switch {
		case !ok:
			out.Add(o.Pos, diag.Error, registry.RuleSchemaInvalid, "", "rules: unknown rule %q%s (see keyreg rules)", o.Rule, diag.DidYouMean(o.Rule, ruleIDs(All())))
		case r.Kind == KindLoad:
			out.Add(o.Pos, diag.Error, registry.RuleSchemaInvalid, "", "rules: %q makes the registry unusable and cannot be overridden", o.Rule)
		}
	}
	for _, f := range reg.Families {
		for _, ig := range f.Ignore {
			if _, ok := Lookup(ig.Rule); !ok {
				out.Add(ig.Pos, diag.Error, registry.RuleSchemaInvalid, f.Name, "ignore: unknown rule %q%s (see keyreg rules)", ig.Rule, diag.DidYouMean(ig.Rule, ruleIDs(All())))
			}
		}
	}
	return append(out, checkBreakingRefs(reg)...)
}

// checkBreakingRefs reports names under breaking: use and except that are
// neither a category nor a breaking rule.
func checkBreakingRefs(reg *registry.Registry) diag.List {
	var out diag.List
	check := func(field string, refs []registry.RuleRef) {
		for _, ref := range refs {
			if slices.Contains(Categories(), ref.Name) {
				continue
			}
			r, ok := Lookup(ref.Name)
			switch {
			case ok && r.Kind == KindBreaking:
			case ok:
				out.Add(ref.Pos, diag.Error, registry.RuleSchemaInvalid, "", "breaking.%s: %q is a %s rule, not a breaking rule", field, ref.Name, r.Kind)
			case strings.ToUpper(ref.Name) == ref.Name:
				out.Add(ref.Pos, diag.Error, registry.RuleSchemaInvalid, "", "breaking.%s: unknown category %q%s (want %s)", field, ref.Name, diag.DidYouMean(ref.Name, Categories()), strings.Join(Categories(), ", "))
			default:
				out.Add(ref.Pos, diag.Error, registry.RuleSchemaInvalid, "", "breaking.%s: unknown rule %q%s (see keyreg rules)", field, ref.Name, diag.DidYouMean(ref.Name, ruleIDs(breakingRules)))
			}
		}
	}
	check("use", reg.Breaking.Use)
	check("except", reg.Breaking.Except)
	return out
}

// ruleIDs returns the IDs of rs, for a "did you mean".
func ruleIDs(rs []*Rule) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
}

// selected reports whether the breaking: block of reg runs rule r: r is
// named by use (by ID or category), or use is empty, and r is not named
// by except.
func selected(reg *registry.Registry, r *Rule) bool {
	names := func(refs []registry.RuleRef) bool {
		return slices.ContainsFunc(refs, func(ref registry.RuleRef) bool {
			return ref.Name == r.ID || ref.Name == r.Category
		})
	}
	use := reg.Breaking.Use
	return (len(use) == 0 || names(use)) && !names(reg.Breaking.Except)
}

// BreakingPass is the state of one breaking rule over one change from an
// old registry to a new one.
type BreakingPass struct {
	Old, New *registry.Registry
	// Now is the time of the check, for deprecation sunsets.
	Now  time.Time
	rule *Rule
	out  *diag.List
}

// Reportf reports a finding about family f at pos, which should be in the
// new registry so that CI annotations land on the changed file. f may be
// a family of either registry, or nil.
func (p *BreakingPass) Reportf(f *registry.Family, pos diag.Pos, format string, args ...any) {
	p.Report(diag.Diagnostic{Pos: pos, Family: familyName(f), Message: fmt.Sprintf(format, args...)})
}

// Report reports d, filling in its rule, and its severity when d has none
// (the rule's default). Use it for findings with a JSON pointer.
func (p *BreakingPass) Report(d diag.Diagnostic) {
	d.Rule = p.rule.ID
	d.Message = NameFamily(d.Family, d.Message)
	if d.Severity == diag.Off {
		d.Severity = p.rule.Severity
	}
	*p.out = append(*p.out, d)
}

// Pairs calls fn for every family declared in both registries, by name,
// in the new registry's order.
func (p *BreakingPass) Pairs(fn func(old, new *registry.Family)) {
	for _, nf := range p.New.Families {
		if of, ok := p.Old.Family(nf.Name); ok {
			fn(of, nf)
		}
	}
}

func familyName(f *registry.Family) string {
	if f == nil {
		return ""
	}
	return f.Name
}

// Breaking compares an old registry with a new one and reports changes
// that break readers or writers of the old one. It runs the breaking rules
// that the new registry's breaking: block selects, then applies the new
// registry's rules: overrides and its families' ignore: entries (findings
// turned off are dropped). Unknown names under breaking: are
// schema-invalid findings. now decides whether deprecated families are
// past their sunset.
func Breaking(old, new *registry.Registry, now time.Time) diag.List {
	out := checkBreakingRefs(new)
	for _, r := range breakingRules {
		if selected(new, r) {
			r.Breaking(&BreakingPass{Old: old, New: new, Now: now, rule: r, out: &out})
		}
	}
	out = Apply(new, out)
	out.Sort()
	return out
}
