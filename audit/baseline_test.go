package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/diag"
)

// baselineReport builds a report with a family finding, a suppressed one,
// an off one and unregistered keys in two prefix groups. scale changes
// every count, example, message and position, none of which may change a
// fingerprint.
func baselineReport(scale int64) *Report {
	ex := func(k string) []Example { return []Example{{Key: k, Detail: "no ttl"}} }
	pos := diag.Pos{File: "keys.yaml", Line: int(10 * scale), Col: 5}
	return &Report{
		Registry: "keys.yaml",
		Started:  time.Date(2026, 3, 1, 12, 0, 0, 5, time.UTC),
		Unregistered: UnregisteredReport{
			Keys: 7 * scale,
			Groups: []*Group{
				{Prefix: "tmp:x:", Keys: 5 * scale, Examples: []string{"tmp:x:" + strings.Repeat("1", int(scale))}},
				{Prefix: "\x00\xffbin", Keys: 2 * scale, Examples: []string{"\x00\xffbin9"}},
			},
		},
		Findings: []*Finding{
			{Rule: "ttl-missing", Severity: diag.Error, Family: "session", Pos: pos, Count: 3 * scale, Of: 40, Message: "m" + strings.Repeat("!", int(scale)), Examples: ex("v1:session:" + strings.Repeat("7", int(scale)))},
			{Rule: "stale-key", Severity: diag.Warn + diag.Severity(scale%2), Family: "profile", Pos: pos, Count: scale},
			{Rule: "ttl-unexpected", Severity: diag.Warn, Family: "counter", Count: 3, Suppressed: true, Reason: "legacy"},
			{Rule: "value-too-large", Severity: diag.Off, Family: "blob", Count: 3},
			{Rule: "unregistered-key", Severity: diag.Error, Count: 7 * scale, Of: 100, Examples: ex("tmp:x:1")},
		},
	}
}

func fingerprints(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Fingerprint)
	}
	return out
}

func TestFingerprintRecipe(t *testing.T) {
	// The recipe is part of the file format: changing it needs a new version.
	sum := sha256.Sum256([]byte("keyreg-baseline/v1\x00family\x00ttl-missing\x00session\x00"))
	want := "sha256:" + hex.EncodeToString(sum[:])
	e := Entry{Rule: "ttl-missing", Family: "session", Count: 12, Severity: diag.Warn}
	if got := e.fingerprint(); got != want {
		t.Errorf("fingerprint = %s, want %s", got, want)
	}
	// Every identifying field, and the kind, changes the fingerprint; a
	// group with an empty prefix is neither the family entry nor other.
	distinct := []Entry{
		{Rule: "ttl-missing", Family: "session"},
		{Rule: "ttl-missing", Family: "profile"},
		{Rule: "ttl-exceeds-max", Family: "session"},
		{Rule: "unregistered-key"},
		{Rule: "unregistered-key", Group: true},
		{Rule: "unregistered-key", Group: true, Prefix: "tmp:"},
		{Rule: "unregistered-key", Group: true, Prefix: "tmp:x:"},
		{Rule: "unregistered-key", Other: true},
	}
	seen := map[string]int{}
	for i, e := range distinct {
		fp := e.fingerprint()
		if !validFingerprint(fp) {
			t.Errorf("%+v: malformed fingerprint %q", e, fp)
		}
		if j, ok := seen[fp]; ok {
			t.Errorf("entries %d and %d share fingerprint %s", j, i, fp)
		}
		seen[fp] = i
	}
}

func TestEntriesStable(t *testing.T) {
	a, b := baselineReport(1), baselineReport(3)
	ea, eb := a.Entries(), b.Entries()
	if !reflect.DeepEqual(fingerprints(ea), fingerprints(eb)) {
		t.Errorf("fingerprints depend on counts, examples, severities or positions:\n%v\n%v", fingerprints(ea), fingerprints(eb))
	}
	// Run to run, the same report gives the same entries.
	if again := baselineReport(1).Entries(); !reflect.DeepEqual(ea, again) {
		t.Errorf("entries differ between two runs:\n%+v\n%+v", ea, again)
	}
	// Active findings only; unregistered keys give one entry per group.
	var labels []string
	for _, e := range ea {
		labels = append(labels, e.Label())
	}
	want := []string{`ttl-missing session`, `stale-key profile`, `unregistered-key "tmp:x:"`, `unregistered-key "\x00\xffbin"`}
	if !reflect.DeepEqual(labels, want) {
		t.Errorf("entries = %q, want %q", labels, want)
	}
	if ea[2].Count != 5 || ea[3].Count != 2 {
		t.Errorf("group entries count %d and %d keys, want 5 and 2", ea[2].Count, ea[3].Count)
	}
	// Keys beyond the group cap get an entry of their own.
	a.Unregistered.Other = 4
	if es := a.Entries(); len(es) != 5 || !es[4].Other || es[4].Count != 4 {
		t.Errorf("with other keys: %+v", es)
	}
}

func TestBaselineFileRoundTrip(t *testing.T) {
	r := baselineReport(1)
	r.Unregistered.Other = 1
	b := NewBaseline(r)
	if b.Version != "1" || !b.Created.Equal(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) || b.Registry != "keys.yaml" {
		t.Errorf("header: %+v", b)
	}
	path := filepath.Join(t.TempDir(), "baseline.json")
	if err := WriteBaseline(path, b); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	// No key name beyond prefixes, no detail, no message.
	for _, leak := range []string{"v1:session:7", "tmp:x:1", "bin9", "no ttl", `"m!"`} {
		if strings.Contains(text, leak) {
			t.Errorf("baseline file holds %q:\n%s", leak, text)
		}
	}
	for _, want := range []string{`"version": "1"`, `"created": "2026-03-01T12:00:00Z"`, `"prefix": "tmp:x:"`, `"prefix_base64": "AP9iaW4="`, `"other": true`, `"fingerprint": "sha256:`} {
		if !strings.Contains(text, want) {
			t.Errorf("baseline file lacks %s:\n%s", want, text)
		}
	}
	got, err := LoadBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Path != path {
		t.Errorf("Path = %q", got.Path)
	}
	got.Path = ""
	if !reflect.DeepEqual(got, b) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, b)
	}
	// Sorted by rule, family, then prefix: stable diffs.
	var rules []string
	for _, e := range got.Findings {
		rules = append(rules, e.Rule)
	}
	if want := []string{"stale-key", "ttl-missing", "unregistered-key", "unregistered-key", "unregistered-key"}; !reflect.DeepEqual(rules, want) {
		t.Errorf("order: %v", rules)
	}
}

func TestParseBaselineErrors(t *testing.T) {
	good := (&Entry{Rule: "ttl-missing", Family: "session"}).fingerprint()
	for _, tc := range []struct{ name, doc, want string }{
		{"empty", "  \n", "the file is empty"},
		{"not json", "fingerprints: []", "parsing: invalid character"},
		{"trailing", `{"version":"1","findings":[]} {}`, "data after the JSON object"},
		{"no version", `{"findings":[]}`, "no version"},
		{"version", `{"version":"2","findings":[]}`, `unsupported baseline version "2"`},
		{"no findings", `{"version":"1"}`, "no findings list"},
		{"no rule", `{"version":"1","findings":[{"fingerprint":"` + good + `"}]}`, "entry without a rule"},
		{"malformed", `{"version":"1","findings":[{"rule":"ttl-missing","family":"session","fingerprint":"abc"}]}`, `fingerprint "abc" is not`},
		{"mismatch", `{"version":"1","findings":[{"rule":"ttl-missing","family":"profile","fingerprint":"` + good + `"}]}`, "does not match its rule, family and prefix"},
		{"severity", `{"version":"1","findings":[{"rule":"ttl-missing","family":"session","severity":"fatal","fingerprint":"` + good + `"}]}`, "fatal"},
		{"base64", `{"version":"1","findings":[{"rule":"unregistered-key","prefix_base64":"!!","fingerprint":"` + good + `"}]}`, "bad prefix_base64"},
	} {
		_, err := ParseBaseline([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := LoadBaseline(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "reading baseline") {
		t.Errorf("missing file: %v", err)
	}
	// Unknown fields are ignored: fields may be added within a version.
	b, err := ParseBaseline([]byte(`{"version":"1","future":1,"findings":[{"rule":"ttl-missing","family":"session","fingerprint":"` + good + `","x":2}]}`))
	if err != nil || len(b.Findings) != 1 {
		t.Errorf("unknown fields: %v %+v", err, b)
	}
}

func TestCompare(t *testing.T) {
	base := NewBaseline(baselineReport(1))
	base.Path = "base.json"

	// Same findings, other counts: nothing new, nothing resolved.
	c := Compare(baselineReport(2), base)
	if len(c.New) != 0 || len(c.Resolved) != 0 || len(c.Unchanged) != 4 || c.File != "base.json" {
		t.Errorf("unchanged keyspace: new %v resolved %v unchanged %d", c.New, c.Resolved, len(c.Unchanged))
	}

	// One new family finding, one new prefix, one resolved finding.
	r := baselineReport(1)
	r.Findings = append(r.Findings[:1], r.Findings[2:]...) // stale-key resolved
	r.Findings = append(r.Findings, &Finding{Rule: "type-mismatch", Severity: diag.Error, Family: "cart", Count: 1})
	r.Unregistered.Groups = append(r.Unregistered.Groups, &Group{Prefix: "jobs:", Keys: 4, Examples: []string{"jobs:1", "jobs:2"}})
	c = Compare(r, base)
	var labels []string
	for _, e := range c.New {
		labels = append(labels, e.Label())
	}
	if want := []string{`unregistered-key "jobs:"`, `type-mismatch cart`}; !reflect.DeepEqual(labels, want) {
		t.Errorf("new = %q, want %q", labels, want)
	}
	if len(c.Resolved) != 1 || c.Resolved[0].Label() != "stale-key profile" {
		t.Errorf("resolved = %+v", c.Resolved)
	}
	if c.IsNew(r.Findings[0]) || !c.IsNew(r.Findings[4]) || !c.IsNew(r.Findings[3]) {
		t.Errorf("IsNew wrong")
	}
	if c.IsNewGroup(r.Unregistered.Groups[0]) || !c.IsNewGroup(r.Unregistered.Groups[2]) {
		t.Errorf("IsNewGroup wrong")
	}

	// Filter keeps new, suppressed and off findings; unregistered keys are
	// narrowed to the new prefix.
	f := c.Filter(r)
	var kept []string
	for _, fd := range f.Findings {
		kept = append(kept, fd.Rule)
	}
	if want := []string{"ttl-unexpected", "value-too-large", "unregistered-key", "type-mismatch"}; !reflect.DeepEqual(kept, want) {
		t.Errorf("filtered findings = %v, want %v", kept, want)
	}
	u := f.Findings[2]
	if u.Count != 4 || !strings.Contains(u.Message, `new prefixes: "jobs:" (4)`) || len(u.Examples) != 1 || u.Examples[0].Key != "jobs:1" {
		t.Errorf("narrowed finding: %+v", u)
	}
	if r.Findings[3].Count != 7 || len(r.Findings) != 5 {
		t.Errorf("Filter changed the report")
	}
	if got := f.Diagnostics().Max(); got != diag.Error {
		t.Errorf("filtered max severity %v", got)
	}
	// Without anything new, the filtered report fails nothing.
	if c := Compare(baselineReport(1), base); c.Filter(baselineReport(1)).Diagnostics().Max() != diag.Off {
		t.Errorf("unchanged: filtered report still has active findings")
	}

	// A partial audit lists nothing as resolved.
	r.Partial = true
	if c := Compare(r, base); len(c.Resolved) != 0 || c.ResolvedNote == "" {
		t.Errorf("partial: resolved %+v note %q", c.Resolved, c.ResolvedNote)
	}
}

// TestBaselineDocExample checks that the baseline example in docs/audit.md
// parses, so its fingerprints follow the recipe.
func TestBaselineDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "audit.md"))
	if err != nil {
		t.Fatal(err)
	}
	var found int
	parts := strings.Split(string(doc), "```")
	for i := 1; i < len(parts); i += 2 {
		info, body, _ := strings.Cut(parts[i], "\n")
		if info != "json" || !strings.Contains(body, `"fingerprint"`) {
			continue
		}
		found++
		b, err := ParseBaseline([]byte(body))
		if err != nil {
			t.Errorf("docs/audit.md baseline example: %v", err)
		} else if len(b.Findings) == 0 {
			t.Errorf("docs/audit.md baseline example has no findings")
		}
	}
	if found != 1 {
		t.Errorf("docs/audit.md has %d baseline examples, want 1", found)
	}
}

// TestLoadBaselineBounded refuses a file larger than MaxBaselineBytes
// without reading it whole, /dev/zero included.
func TestLoadBaselineBounded(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, append([]byte(`{"version":"1","findings":[`), bytes.Repeat([]byte(" "), MaxBaselineBytes)...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{big, "/dev/zero"} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		_, err := LoadBaseline(p)
		if err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
			t.Errorf("LoadBaseline(%s) = %v, want a size error", p, err)
		}
	}
}
