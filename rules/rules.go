// Package rules holds every check keyreg runs, each as a value: lint rules
// check a registry, key rules check one live key, and breaking rules compare
// two registries.
//
// A rule lives in its own file (ttl_missing.go for ttl-missing) and is listed
// explicitly below; there is no init() registration. Each rule has a test
// case in testdata/<rule-id>.txtar, and a guard test fails when one lacks a
// doc or a case.
package rules

import (
	"fmt"
	"slices"

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
	// KindKey rules check one live key during an audit. A key rule without
	// a Key func (family-unused) is decided by the audit over the whole run.
	KindKey Kind = "key"
)

// Rule is one check.
type Rule struct {
	ID       string        // kebab-case, stable: users reference it in rules: and ignore:
	Doc      string        // one line, lowercase, no trailing period
	Kind     Kind          // what the rule checks
	Severity diag.Severity // default severity; keys.yaml rules: overrides it
	Lint     func(*Pass)   // KindLint: reports findings on the registry

	// Key reports whether the rule fires on one live key (KindKey). It runs
	// on every audited key, so it must not allocate.
	Key func(*KeyFacts) bool
	// Detail says, without any payload value, why the rule fired on k, such
	// as "ttl 30d". It runs only for the few example keys a report shows.
	Detail func(k *KeyFacts) string
	// Summary names what the rule counts for a family, as a plural noun
	// phrase such as "keys without a TTL (policy: max 24h)"; the audit
	// adds "N of M". f is nil for keys of no family.
	Summary func(f *registry.Family) string
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
	OwnerPrefixClaim,
	TTLPolicyMissing,
	VersionMismatch,
	PayloadSchemaTypeMismatch,
	DeprecatedReplacementUnknown,
	IgnoreWithoutReason,
	DescriptionMissing,
	PlaceholderUntyped,
}

// keyRules run on every key of a live audit, in this order.
var keyRules = []*Rule{
	UnregisteredKey,
	PlaceholderInvalid,
	TTLMissing,
	TTLExceedsMax,
	TTLUnexpected,
	TypeMismatch,
	PayloadInvalid,
	EncodingMismatch,
	ValueTooLarge,
	CollectionTooLong,
	StaleKey,
	DeprecatedLive,
	FamilyUnused,
}

// All returns every rule, load rules first, then lint rules, then key
// rules, in a stable order.
func All() []*Rule {
	return slices.Concat(loadRules, lintRules, keyRules)
}

// KeyRules returns the key rules, in the order the audit applies them.
func KeyRules() []*Rule { return slices.Clone(keyRules) }

// Lookup returns the rule with the given ID.
func Lookup(id string) (*Rule, bool) {
	for _, r := range All() {
		if r.ID == id {
			return r, true
		}
	}
	return nil, false
}

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
	}
	*p.out = append(*p.out, d)
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
	out := l[:0:0]
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
			out.Add(o.Pos, diag.Error, registry.RuleSchemaInvalid, "", "rules: unknown rule %q (see keyreg rules)", o.Rule)
		case r.Kind == KindLoad:
			out.Add(o.Pos, diag.Error, registry.RuleSchemaInvalid, "", "rules: %q makes the registry unusable and cannot be overridden", o.Rule)
		}
	}
	for _, f := range reg.Families {
		for _, ig := range f.Ignore {
			if _, ok := Lookup(ig.Rule); !ok {
				out.Add(ig.Pos, diag.Error, registry.RuleSchemaInvalid, f.Name, "ignore: unknown rule %q (see keyreg rules)", ig.Rule)
			}
		}
	}
	return out
}
