package rules

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

func loadYAML(t *testing.T, src string) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(src)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestBreakingSelection checks that the new registry's breaking: use and
// except, and its rules: overrides, decide which breaking findings appear
// and how severe they are.
func TestBreakingSelection(t *testing.T) {
	old := loadYAML(t, `version: 1
owners: {a: {contact: a}, b: {contact: b}}
families:
  - {name: x, pattern: "v1:x:{id}", owner: a, ttl: 1h, type: string}
  - {name: gone, pattern: "v1:gone:{id}"}
`)
	const fams = `families:
  - {name: x, pattern: "v1:x:{uid}", owner: b, ttl: 2h, type: hash}
`
	const owners = "owners: {a: {contact: a}, b: {contact: b}}\n"
	for _, tc := range []struct {
		name, head string
		want       []string // rule:severity, sorted by rule
	}{
		{"default runs every rule", "", []string{"family-removed:error", "owner-changed:info", "placeholder-renamed:warn", "ttl-policy-changed:warn", "type-changed:error"}},
		{"use a category", "breaking: {use: [KEY]}\n", []string{"family-removed:error", "type-changed:error"}},
		{"use a category and a rule", "breaking: {use: [OPS, owner-changed]}\n", []string{"owner-changed:info", "ttl-policy-changed:warn"}},
		{"except a category and a rule", "breaking: {except: [CODEGEN, OWNERSHIP, type-changed]}\n", []string{"family-removed:error", "ttl-policy-changed:warn"}},
		{"use and except", "breaking: {use: [KEY], except: [family-removed]}\n", []string{"type-changed:error"}},
		{"rules overrides", "rules: {type-changed: warn, family-removed: off}\nbreaking: {use: [KEY]}\n", []string{"type-changed:warn"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := loadYAML(t, "version: 1\n"+tc.head+owners+fams)
			var got []string
			for _, d := range Breaking(old, reg, breakingNow) {
				got = append(got, d.Rule+":"+d.Severity.String())
			}
			slices.Sort(got)
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBreakingBadRefs checks that names under breaking: that are neither a
// category nor a breaking rule are fatal schema-invalid findings, from
// both Breaking and Lint.
func TestBreakingBadRefs(t *testing.T) {
	reg := loadYAML(t, "version: 1\nbreaking: {use: [KEYS, ttl-missing], except: [no-such-rule]}\nfamilies: []\n")
	want := []string{
		`keys.yaml:2:18: error: breaking.use: unknown category "KEYS"; did you mean "KEY"? (want KEY, PAYLOAD, OPS, CODEGEN, OWNERSHIP) (schema-invalid)`,
		`keys.yaml:2:24: error: breaking.use: "ttl-missing" is a key rule, not a breaking rule (schema-invalid)`,
		`keys.yaml:2:47: error: breaking.except: unknown rule "no-such-rule" (see keyreg rules) (schema-invalid)`,
	}
	for name, l := range map[string]diag.List{"Breaking": Breaking(reg, reg, breakingNow), "Lint": Lint(reg)} {
		var got []string
		for _, d := range l {
			if d.Rule == registry.RuleSchemaInvalid {
				got = append(got, d.String())
				if !IsFatal(d) {
					t.Errorf("%s: %v is not fatal", name, d)
				}
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func TestHashTag(t *testing.T) {
	for src, want := range map[string]string{
		"v1:cart:{{user_id:int}}:items": "{{user_id:int}}",
		"v1:cart:{user_id}:items":       "",
		`v1:\{x\}:{{id}}`:               `{x}`,
		`v1:\{\}:{{id}}`:                "",
		`v1:\{a{id}b\}`:                 "{a{id}b}",
		`v1:\{open:{id}`:                "",
	} {
		p, err := registry.ParsePattern(src, ':')
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := hashTag(p); got != want {
			t.Errorf("hashTag(%q) = %q, want %q", src, got, want)
		}
	}
}
