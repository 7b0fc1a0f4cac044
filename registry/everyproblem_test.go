package registry

import (
	"strings"
	"testing"
)

// TestLoadReportsEveryProblem: a registry the schema rejects is still
// decoded, so one run reports its unbalanced brace, its missing schema
// file and its duplicate name with the schema's findings (issue 23 item
// 17: they appeared only once the schema errors were fixed), and a value
// the schema rejected is reported once, not again by the decoder.
func TestLoadReportsEveryProblem(t *testing.T) {
	src := `version: 1
separator: ab
families:
  - name: a
    pattern: "v1:a:{id"
    typ: string
    ttl: 3 days
  - name: b
    pattern: "v1:b:{id}"
    type: strin
    schema: nope.json
    encoding: jsn
  - name: b
    pattern: "v1:c:{id}"
  - {pattern: "v1:d:{id}"}
  - {pattern: "v1:e:{id}"}
  - 7
presets:
  - {use: celery, owner: 5, with: {queues: [a]}}
  - {use: rq, owner: w, with: {queus: [a]}}
rules: {descripton-missing: error}
`
	got := diagnostics(t, src)
	for _, want := range []string{
		`keys.yaml:2:12: error: separator: maxLength: got 2, want 1 (schema-invalid)`,
		`keys.yaml:5:20: error: pattern "v1:a:{id": unbalanced "{"`,
		`keys.yaml:6:5: error: families[0]: unknown field "typ"; did you mean "type"? (schema-invalid)`,
		`keys.yaml:7:10: error: families[0].ttl: bad ttl`,
		`keys.yaml:10:11: error: families[1].type: value must be one of 'string', 'hash', 'list', 'set', 'zset', 'stream', 'json'; did you mean "string"? (schema-invalid)`,
		`keys.yaml:11:13: error: schema file "nope.json" not found`,
		`keys.yaml:12:15: error: families[1].encoding: value matches none of the allowed forms; did you mean "json"? (schema-invalid)`,
		`keys.yaml:13:11: error: family name "b" is already used at line 8 (duplicate-name)`,
		`keys.yaml:15:5: error: families[3]: missing required field "name" (schema-invalid)`,
		`keys.yaml:16:5: error: families[4]: missing required field "name" (schema-invalid)`,
		`keys.yaml:19:26: error: presets[0].owner: got number, want string (schema-invalid)`,
		`keys.yaml:20:32: error: preset rq has no parameter "queus"`,
	} {
		wantDiag(t, got, want)
	}
	if n := strings.Count(got, "\n") + 1; n != 13 {
		t.Errorf("%d diagnostics, want 13 (each problem once):\n%s", n, got)
	}
	// The rejected celery entry is not expanded: nothing about its families.
	if strings.Contains(got, "celery-") {
		t.Errorf("a rejected presets: entry was expanded:\n%s", got)
	}
	if strings.Count(got, "keys.yaml:7:10:") != 1 {
		t.Errorf("the bad ttl is reported more than once:\n%s", got)
	}
}

// TestLoadSuggestsNearest: typos of a field or an enum value get the
// nearest name within edit distance 2, and nothing when none is near.
func TestLoadSuggestsNearest(t *testing.T) {
	for _, tc := range []struct{ field, want string }{
		{"typ: string", `unknown field "typ"; did you mean "type"?`},
		{"ownr: x", `unknown field "ownr"; did you mean "owner"?`},
		{"max_byts: 5", `unknown field "max_byts"; did you mean "max_bytes"?`},
		{"colour: red", `unknown field "colour" (schema-invalid)`},
		{"type: strin", `did you mean "string"?`},
		{"type: zet", `did you mean "set"?`},
		{"kind: lok", `did you mean "lock"?`},
		{"compat: FULLL", `did you mean "FULL"?`},
		{"encoding: msgpak", `did you mean "msgpack"?`},
		{"type: blob", `'json' (schema-invalid)`},
	} {
		got := diagnostics(t, "version: 1\nfamilies:\n  - name: a\n    pattern: \"v1:a:{id}\"\n    "+tc.field+"\n")
		wantDiag(t, got, tc.want)
	}
	got := diagnostics(t, "version: 1\nfamilis: []\n")
	wantDiag(t, got, `keys.yaml:2:1: error: unknown field "familis"; did you mean "families"? (schema-invalid)`)
}

// TestLoadBadNamesAndLimits covers issue 22 item 29: an empty group name
// was reported at 1:1 without its path, and a max_len of 10^26 was
// accepted and clamped to the largest int64.
func TestLoadBadNamesAndLimits(t *testing.T) {
	got := diagnostics(t, `version: 1
owners:
  "Bad Team": {contact: x}
defaults: {max_len: 9223372036854775808}
families:
  - name: events
    pattern: "v1:events"
    type: stream
    max_len: 100000000000000000000000000
    max_bytes: 1e3
    version: 99999999999999999999
    groups:
      "": {max_lag: 5}
`)
	for _, want := range []string{
		`keys.yaml:3:3: error: owners: bad name "Bad Team": 'Bad Team' does not match pattern`,
		`keys.yaml:4:21: error: defaults.max_len: 9223372036854775808 is more than the maximum, 9223372036854775807 (schema-invalid)`,
		`keys.yaml:9:14: error: families[0].max_len: 100000000000000000000000000 is more than the maximum, 9223372036854775807 (schema-invalid)`,
		`keys.yaml:10:16: error: bad limit "1e3" (want an integer from 1 to 9223372036854775807) (schema-invalid)`,
		`keys.yaml:11:14: error: families[0].version: 99999999999999999999 is more than the maximum, 9223372036854775807 (schema-invalid)`,
		`keys.yaml:13:7: error: families[0].groups: bad name "": a name must not be empty (schema-invalid)`,
	} {
		wantDiag(t, got, want)
	}
	if strings.Contains(got, ":1:1:") {
		t.Errorf("a finding without its position:\n%s", got)
	}
}

// TestLoadLeavesMatcherLazy: Load does not build the registry's matcher,
// which lint, breaking and gen never use and which was most of the memory
// of linting 30,000 families (BenchmarkLint30000 in rules); the first
// Matcher call builds it.
func TestLoadLeavesMatcherLazy(t *testing.T) {
	r, err := load(t, "version: 1\nfamilies:\n  - {name: a, pattern: \"v1:a:{id:int}\"}\n")
	if err != nil {
		t.Fatal(err)
	}
	if r.matcher != nil {
		t.Fatal("Load built the matcher")
	}
	if f := r.Matcher().Match("v1:a:7"); f == nil || f.Name != "a" {
		t.Fatalf("Match = %v, want family a", f)
	}
}
