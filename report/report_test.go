package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/diag"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// mixed returns findings of every severity, a suppressed and an off one, and
// messages that need escaping in every format.
func mixed() diag.List {
	return diag.List{
		{
			Pos:      diag.Pos{File: "keys.yaml", Line: 30, Col: 5, EndLine: 30, EndCol: 40},
			Severity: diag.Warn, Rule: "ttl-missing", Family: "cart",
			Message: `family "cart" has no ttl: 100% of keys live forever, say "ttl: 30m"`,
		},
		{
			Pos:      diag.Pos{File: "keys.yaml", Line: 12, Col: 5, EndLine: 12, EndCol: 30},
			Severity: diag.Error, Rule: "pattern-overlap", Family: "user-session",
			Message: `pattern "v2:user:{id}" overlaps family "user-session"`,
		},
		{
			Pos:      diag.Pos{File: "keys.yaml"},
			Severity: diag.Error, Rule: "version-missing",
			Message: "registry has no version\nadd \"version: 1\"\r\nthen rerun",
		},
		{
			Pos:      diag.Pos{File: "keys.yaml", Line: 20, Col: 3},
			Severity: diag.Info, Rule: "description-missing", Family: "user-profile",
			Message: `family "user-profile" has no description | pipes & <tags>`,
		},
		{
			Pos:      diag.Pos{File: "keys.yaml", Line: 40, Col: 9, EndLine: 40, EndCol: 30},
			Severity: diag.Error, Rule: "payload-backward", Family: "user-session",
			Pointer: "/properties/plan/enum",
			Message: `enum value "pro" removed, 2% of readers break`,
		},
		{
			Pos:      diag.Pos{File: "keys.yaml", Line: 44, Col: 7},
			Severity: diag.Error, Rule: "ttl-missing", Family: "legacy",
			Message:    `family "legacy" has no ttl`,
			Suppressed: true, Reason: "legacy writer, fixed in ticket 123",
		},
		{
			Pos:      diag.Pos{File: "keys.yaml", Line: 50, Col: 1},
			Severity: diag.Off, Rule: "owner-missing", Family: "orphan",
			Message: "OFF-MUST-NOT-APPEAR",
		},
		{
			Pos:      diag.Pos{File: `.\config\keys,v1.yaml`, Line: 3, Col: 1, EndLine: 4, EndCol: 2},
			Severity: diag.Warn, Rule: "owner-unknown", Family: "a:b",
			Message: `owner "x,y" is not declared`,
		},
	}
}

func testOptions() Options {
	return Options{
		Tool: Tool{Name: "keyreg", Version: "1.2.0", InformationURI: "https://github.com/keyreg/keyreg"},
		Rules: []RuleInfo{
			{ID: "pattern-overlap", Kind: "lint", Doc: "patterns of two families must not match the same key", Default: diag.Error},
			{ID: "ttl-missing", Kind: "lint", Doc: "every family declares a ttl policy", Default: diag.Warn},
			{ID: "description-missing", Kind: "lint", Doc: "every family has a description", Default: diag.Info},
			{ID: "unused-rule", Kind: "lint", Doc: "listed but not found", Default: diag.Warn},
		},
		Automation: "keyreg/lint/",
		Checked: &Checked{
			Families: []string{"user-session", "cart", "user-profile"},
			Rules:    []string{"pattern-overlap", "ttl-missing", "description-missing"},
		},
	}
}

// renderDiag runs Diagnostics and returns stdout, the summary and the step summary.
func renderDiag(t *testing.T, f Format, l diag.List, o Options) (out, summary, step string) {
	t.Helper()
	var stdout, sum, stepSum bytes.Buffer
	o.Summary = &sum
	o.StepSummary = &stepSum
	if err := Diagnostics(&stdout, f, l, o); err != nil {
		t.Fatalf("Diagnostics(%s): %v", f, err)
	}
	return stdout.String(), sum.String(), stepSum.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s is stale (run go test ./report -update)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		list diag.List
	}{
		{"mixed", mixed()},
		{"empty", nil},
	} {
		for _, f := range allFormats {
			t.Run(tc.name+"/"+string(f), func(t *testing.T) {
				out, summary, step := renderDiag(t, f, tc.list, testOptions())
				golden(t, fmt.Sprintf("%s.%s.golden", tc.name, f), out)
				switch f {
				case Text:
					golden(t, tc.name+".text-summary.golden", summary)
				case GitHub:
					golden(t, tc.name+".github-step-summary.golden", step)
				}
				if strings.Contains(out+summary+step, "OFF-MUST-NOT-APPEAR") {
					t.Errorf("%s output contains a diagnostic that is off", f)
				}
				if f != GitHub && step != "" {
					t.Errorf("%s wrote a step summary: %q", f, step)
				}
				if f != Text && summary != "" {
					t.Errorf("%s wrote a summary: %q", f, summary)
				}
			})
		}
	}
}

func TestDoesNotMutateInput(t *testing.T) {
	l := mixed()
	before := slices.Clone(l)
	for _, f := range allFormats {
		renderDiag(t, f, l, testOptions())
	}
	if !slices.Equal(l, before) {
		t.Errorf("Diagnostics reordered or changed the caller's list")
	}
}

func TestText(t *testing.T) {
	out, summary, _ := renderDiag(t, Text, mixed(), testOptions())
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := []string{
		`.\config\keys,v1.yaml:3:1: warning: owner "x,y" is not declared (owner-unknown)`,
		"keys.yaml:1:1: error: registry has no version",
		"\tadd \"version: 1\"",
		"\tthen rerun (version-missing)",
		`keys.yaml:12:5: error: pattern "v2:user:{id}" overlaps family "user-session" (pattern-overlap)`,
	}
	if !slices.Equal(lines[:len(want)], want) {
		t.Errorf("first lines:\n%s\nwant:\n%s", strings.Join(lines[:len(want)], "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(out, "legacy") {
		t.Errorf("suppressed finding printed:\n%s", out)
	}
	if want := "3 errors, 2 warnings, 1 info, 1 suppressed\n"; summary != want {
		t.Errorf("summary = %q, want %q", summary, want)
	}
}

func TestTextClean(t *testing.T) {
	l := diag.List{
		{Pos: diag.Pos{File: "keys.yaml", Line: 2}, Severity: diag.Error, Rule: "r", Message: "m", Suppressed: true, Reason: "why"},
		{Pos: diag.Pos{File: "keys.yaml", Line: 3}, Severity: diag.Off, Rule: "r", Message: "m"},
	}
	out, summary, _ := renderDiag(t, Text, l, Options{})
	if out != "" {
		t.Errorf("stdout = %q, want nothing when clean", out)
	}
	if want := "0 errors, 0 warnings, 0 info, 1 suppressed\n"; summary != want {
		t.Errorf("summary = %q, want %q", summary, want)
	}
	// A nil Summary writer is allowed.
	if err := Diagnostics(&bytes.Buffer{}, Text, l, Options{}); err != nil {
		t.Errorf("nil Summary: %v", err)
	}
}

type jsonOut struct {
	Version string            `json:"version"`
	Tool    map[string]string `json:"tool"`
	Summary map[string]int    `json:"summary"`
	// Findings is decoded generically, to see which keys are present.
	Findings []map[string]any `json:"findings"`
}

func TestJSON(t *testing.T) {
	out, _, _ := renderDiag(t, JSON, mixed(), testOptions())
	var doc jsonOut
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("json output does not parse: %v\n%s", err, out)
	}
	if doc.Version != "1" || doc.Tool["name"] != "keyreg" || doc.Tool["version"] != "1.2.0" {
		t.Errorf("header = %q %v", doc.Version, doc.Tool)
	}
	wantSummary := map[string]int{"error": 3, "warn": 2, "info": 1, "suppressed": 1}
	if fmt.Sprint(doc.Summary) != fmt.Sprint(wantSummary) {
		t.Errorf("summary = %v, want %v", doc.Summary, wantSummary)
	}
	if len(doc.Findings) != 7 {
		t.Fatalf("got %d findings, want 7 (suppressed included, off left out)", len(doc.Findings))
	}
	var suppressed, pointers int
	for _, f := range doc.Findings {
		for _, k := range []string{"rule_id", "severity", "family", "path", "start_line", "start_column", "end_line", "end_column", "message", "fingerprint"} {
			if _, ok := f[k]; !ok {
				t.Errorf("finding %v lacks %q", f["rule_id"], k)
			}
		}
		if f["start_line"].(float64) < 1 || f["start_column"].(float64) < 1 {
			t.Errorf("finding %v has a position below 1", f["rule_id"])
		}
		if fp, _ := f["fingerprint"].(string); !strings.HasPrefix(fp, "sha256:") || len(fp) != len("sha256:")+64 {
			t.Errorf("fingerprint = %q", fp)
		}
		if strings.Contains(f["path"].(string), `\`) {
			t.Errorf("path %q has a backslash", f["path"])
		}
		if _, ok := f["json_pointer"]; ok {
			pointers++
		}
		if f["suppressed"] == true {
			suppressed++
			if f["reason"] != "legacy writer, fixed in ticket 123" {
				t.Errorf("reason = %v", f["reason"])
			}
		} else if _, ok := f["suppressed"]; ok {
			t.Errorf("suppressed:false should be omitted, got it in %v", f["rule_id"])
		}
	}
	if suppressed != 1 || pointers != 1 {
		t.Errorf("got %d suppressed and %d json_pointer, want 1 and 1", suppressed, pointers)
	}
}

func TestJSONEmpty(t *testing.T) {
	out, _, _ := renderDiag(t, JSON, nil, Options{})
	if !strings.Contains(out, `"findings": []`) {
		t.Errorf("empty findings not printed as []:\n%s", out)
	}
	var doc jsonOut
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Findings == nil || len(doc.Findings) != 0 {
		t.Errorf("findings = %#v, want []", doc.Findings)
	}
	if doc.Tool["name"] != "keyreg" {
		t.Errorf("tool name = %q, want the default keyreg", doc.Tool["name"])
	}
}

func TestGitHubEscaping(t *testing.T) {
	l := diag.List{{
		Pos:      diag.Pos{File: "dir,x/keys:1.yaml", Line: 7, Col: 2, EndLine: 7, EndCol: 9},
		Severity: diag.Warn, Rule: "rule:a,b",
		Message: "50% done: a,b\r\nnext line",
	}}
	out, _, _ := renderDiag(t, GitHub, l, Options{})
	want := "::warning file=dir%2Cx/keys%3A1.yaml,line=7,col=2,endLine=7,endColumn=9,title=rule%3Aa%2Cb::50%25 done: a,b%0D%0Anext line\n"
	if out != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
}

func TestGitHubLevelsAndOrder(t *testing.T) {
	out, _, step := renderDiag(t, GitHub, mixed(), testOptions())
	var levels []string
	for line := range strings.Lines(out) {
		levels = append(levels, strings.SplitN(strings.TrimPrefix(line, "::"), " ", 2)[0])
	}
	want := []string{"error", "error", "error", "warning", "warning", "notice"}
	if !slices.Equal(levels, want) {
		t.Errorf("levels = %v, want %v\n%s", levels, want, out)
	}
	if strings.Contains(out, "legacy") || strings.Contains(step, "legacy") {
		t.Errorf("suppressed finding annotated or tabulated")
	}
	// Unknown positions print as 1; unknown ends are left out.
	if !strings.Contains(out, "::error file=keys.yaml,line=1,col=1,title=version-missing::") {
		t.Errorf("missing position not printed as line 1:\n%s", out)
	}
	if !strings.Contains(step, `has no description \| pipes &amp; &lt;tags&gt;`) ||
		!strings.Contains(step, "no version<br>add") {
		t.Errorf("step summary cells not escaped:\n%s", step)
	}
}

// many returns n findings of severity s, one per line from line 100*s.
func many(n int, s diag.Severity) diag.List {
	var l diag.List
	for i := range n {
		l.Add(diag.Pos{File: "keys.yaml", Line: 100*int(s) + i, Col: 1}, s, "r", "f", "finding %d", i)
	}
	return l
}

func TestGitHubCap(t *testing.T) {
	for _, tc := range []struct {
		name                string
		errs, warns, notes  int
		max                 int
		wantE, wantW, wantN int
		wantMore            string
		noStepSummary       bool
	}{
		{name: "default cap", errs: 15, warns: 12, notes: 3, wantE: 10, wantW: 10, wantN: 3, wantMore: "::notice::7 more findings, see job summary"},
		{name: "notices make room", errs: 11, warns: 0, notes: 10, wantE: 10, wantN: 9, wantMore: "::notice::2 more findings, see job summary"},
		{name: "under cap", errs: 10, warns: 10, notes: 10, wantE: 10, wantW: 10, wantN: 10},
		{name: "custom cap", errs: 3, warns: 3, notes: 0, max: 2, wantE: 2, wantW: 2, wantMore: "::notice::2 more findings, see job summary"},
		{name: "one more", errs: 3, max: 2, wantE: 2, wantMore: "::notice::1 more finding, not annotated", noStepSummary: true},
		{name: "no cap", errs: 30, warns: 30, notes: 30, max: -1, wantE: 30, wantW: 30, wantN: 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := slices.Concat(many(tc.notes, diag.Info), many(tc.errs, diag.Error), many(tc.warns, diag.Warn))
			var out, step bytes.Buffer
			o := Options{MaxAnnotations: tc.max, StepSummary: &step}
			if tc.noStepSummary {
				o.StepSummary = nil
			}
			if err := Diagnostics(&out, GitHub, l, o); err != nil {
				t.Fatal(err)
			}
			var e, w, n int
			var more []string
			for line := range strings.Lines(out.String()) {
				switch {
				case strings.HasPrefix(line, "::error "):
					e++
				case strings.HasPrefix(line, "::warning "):
					w++
				case strings.HasPrefix(line, "::notice "):
					n++
				case strings.HasPrefix(line, "::notice::"):
					more = append(more, strings.TrimSuffix(line, "\n"))
				default:
					t.Errorf("unexpected line %q", line)
				}
			}
			if e != tc.wantE || w != tc.wantW || n != tc.wantN {
				t.Errorf("annotations error/warning/notice = %d/%d/%d, want %d/%d/%d", e, w, n, tc.wantE, tc.wantW, tc.wantN)
			}
			if tc.wantMore == "" && len(more) > 0 || tc.wantMore != "" && !slices.Equal(more, []string{tc.wantMore}) {
				t.Errorf("summary notices = %q, want %q", more, tc.wantMore)
			}
			if !strings.HasSuffix(out.String(), tc.wantMore+"\n") {
				t.Errorf("the summary notice is not the last line")
			}
			if capN := cmp.Or(tc.max, 10); capN > 0 && n+len(more) > capN {
				t.Errorf("%d notice lines exceed the cap of %d", n+len(more), capN)
			}
			if !tc.noStepSummary {
				rows := strings.Count(step.String(), "\n| ") - 2 // minus the header and separator rows
				if total := tc.errs + tc.warns + tc.notes; rows != total {
					t.Errorf("step summary has %d rows, want all %d findings", rows, total)
				}
			}
		})
	}
}

// sarifDoc decodes SARIF generically, for structural checks.
type sarifDoc = map[string]any

func decodeSARIF(t *testing.T, out string) sarifDoc {
	t.Helper()
	var doc sarifDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("sarif does not parse: %v\n%s", err, out)
	}
	return doc
}

func sarifResults(t *testing.T, doc sarifDoc) []any {
	t.Helper()
	runs, _ := doc["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("got %d runs, want 1", len(runs))
	}
	results, ok := runs[0].(map[string]any)["results"].([]any)
	if !ok {
		t.Fatalf("run has no results array")
	}
	return results
}

// get walks a decoded JSON value along keys (strings) and indexes (ints).
func get(v any, path ...any) any {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[p]
		case int:
			a, _ := v.([]any)
			if p >= len(a) {
				return nil
			}
			v = a[p]
		}
	}
	return v
}

// validateSARIF checks what SARIF 2.1.0 and GitHub code scanning require.
func validateSARIF(t *testing.T, doc sarifDoc) {
	t.Helper()
	if doc["version"] != "2.1.0" {
		t.Errorf("version = %v", doc["version"])
	}
	if s, _ := doc["$schema"].(string); !strings.Contains(s, "sarif-2.1.0") {
		t.Errorf("$schema = %q", s)
	}
	run := get(doc, "runs", 0)
	if name, _ := get(run, "tool", "driver", "name").(string); name == "" {
		t.Errorf("tool.driver.name missing")
	}
	rules, ok := get(run, "tool", "driver", "rules").([]any)
	if !ok {
		t.Fatalf("tool.driver.rules missing")
	}
	seen := map[string]bool{}
	for i, r := range rules {
		id, _ := get(r, "id").(string)
		if id == "" || seen[id] {
			t.Errorf("rule %d: id %q empty or repeated", i, id)
		}
		seen[id] = true
		if name, _ := get(r, "name").(string); name == "" || strings.ContainsAny(name, "-_ ") {
			t.Errorf("rule %s: name %q", id, name)
		}
		if text, _ := get(r, "shortDescription", "text").(string); text == "" {
			t.Errorf("rule %s: shortDescription.text missing", id)
		}
		if lvl := get(r, "defaultConfiguration", "level"); lvl != nil && !slices.Contains([]any{"none", "note", "warning", "error"}, lvl) {
			t.Errorf("rule %s: defaultConfiguration.level %v", id, lvl)
		}
		tags, _ := get(r, "properties", "tags").([]any)
		if len(tags) == 0 || tags[0] != "keyreg" || len(tags) > 20 {
			t.Errorf("rule %s: tags %v", id, tags)
		}
	}
	for i, res := range sarifResults(t, doc) {
		ruleID, _ := get(res, "ruleId").(string)
		idx, ok := get(res, "ruleIndex").(float64)
		if !ok || int(idx) >= len(rules) || get(rules, int(idx), "id") != ruleID {
			t.Errorf("result %d: ruleIndex %v does not point at rule %q", i, get(res, "ruleIndex"), ruleID)
		}
		if lvl := get(res, "level"); !slices.Contains([]any{"note", "warning", "error"}, lvl) {
			t.Errorf("result %d: level %v", i, lvl)
		}
		if text, _ := get(res, "message", "text").(string); text == "" {
			t.Errorf("result %d: message.text missing", i)
		}
		locs, _ := get(res, "locations").([]any)
		if len(locs) != 1 {
			t.Fatalf("result %d: %d locations, want 1", i, len(locs))
		}
		phys := get(locs[0], "physicalLocation")
		uri, _ := get(phys, "artifactLocation", "uri").(string)
		if uri == "" || strings.HasPrefix(uri, "/") || strings.Contains(uri, `\`) || strings.HasPrefix(uri, "./") {
			t.Errorf("result %d: uri %q is not relative with forward slashes", i, uri)
		}
		if get(phys, "artifactLocation", "uriBaseId") != "%SRCROOT%" {
			t.Errorf("result %d: uriBaseId %v", i, get(phys, "artifactLocation", "uriBaseId"))
		}
		if line, _ := get(phys, "region", "startLine").(float64); line < 1 {
			t.Errorf("result %d: region.startLine = %v, want >= 1", i, get(phys, "region", "startLine"))
		}
		if col, ok := get(phys, "region", "startColumn").(float64); ok && col < 1 {
			t.Errorf("result %d: region.startColumn = %v", i, col)
		}
		if fp, _ := get(res, "partialFingerprints", "keyregFindingHash/v1").(string); len(fp) != 64 {
			t.Errorf("result %d: fingerprint %q", i, fp)
		}
		if sup, ok := get(res, "suppressions").([]any); ok {
			if k := get(sup, 0, "kind"); k != "inSource" && k != "external" {
				t.Errorf("result %d: suppression kind %v", i, k)
			}
		}
	}
}

func TestSARIF(t *testing.T) {
	out, _, _ := renderDiag(t, SARIF, mixed(), testOptions())
	doc := decodeSARIF(t, out)
	validateSARIF(t, doc)

	run := get(doc, "runs", 0)
	if id := get(run, "automationDetails", "id"); id != "keyreg/lint/" {
		t.Errorf("automationDetails.id = %v", id)
	}
	if v := get(run, "tool", "driver", "semanticVersion"); v != "1.2.0" {
		t.Errorf("semanticVersion = %v", v)
	}
	// Listed rules keep their order; rules found but not listed follow.
	var ids []string
	for _, r := range get(run, "tool", "driver", "rules").([]any) {
		ids = append(ids, get(r, "id").(string))
	}
	wantIDs := []string{"pattern-overlap", "ttl-missing", "description-missing", "unused-rule", "owner-unknown", "version-missing", "payload-backward"}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("rule ids = %v, want %v", ids, wantIDs)
	}
	if name := get(run, "tool", "driver", "rules", 0, "name"); name != "PatternOverlap" {
		t.Errorf("rule name = %v, want PatternOverlap", name)
	}
	if tags := fmt.Sprint(get(run, "tool", "driver", "rules", 0, "properties", "tags")); tags != "[keyreg lint]" {
		t.Errorf("tags = %s", tags)
	}

	results := sarifResults(t, doc)
	if len(results) != 7 {
		t.Fatalf("got %d results, want 7 (suppressed included, off left out)", len(results))
	}
	var suppressed int
	for _, r := range results {
		if sup := get(r, "suppressions", 0); sup != nil {
			suppressed++
			if get(sup, "justification") != "legacy writer, fixed in ticket 123" {
				t.Errorf("justification = %v", get(sup, "justification"))
			}
		}
		if get(r, "ruleId") == "owner-unknown" {
			if uri := get(r, "locations", 0, "physicalLocation", "artifactLocation", "uri"); uri != "config/keys,v1.yaml" {
				t.Errorf("uri = %v, want config/keys,v1.yaml", uri)
			}
			if fam := get(r, "locations", 0, "logicalLocations", 0); fmt.Sprint(fam) != "map[kind:module name:a:b]" {
				t.Errorf("logical location = %v", fam)
			}
		}
		if get(r, "ruleId") == "version-missing" && get(r, "locations", 0, "logicalLocations") != nil {
			t.Errorf("logicalLocations set for a finding without a family")
		}
	}
	if suppressed != 1 {
		t.Errorf("got %d suppressed results, want 1", suppressed)
	}
}

func TestSARIFEmpty(t *testing.T) {
	out, _, _ := renderDiag(t, SARIF, nil, Options{Tool: Tool{Version: "dev"}})
	doc := decodeSARIF(t, out)
	validateSARIF(t, doc)
	if n := len(sarifResults(t, doc)); n != 0 {
		t.Errorf("got %d results", n)
	}
	if v := get(doc, "runs", 0, "tool", "driver", "semanticVersion"); v != nil {
		t.Errorf("semanticVersion = %v for a version that is not semver", v)
	}
	if !strings.Contains(out, `"rules": []`) {
		t.Errorf("rules not printed as []:\n%s", out)
	}
}

// sarifFingerprints renders l and returns each result's fingerprint by message.
func sarifFingerprints(t *testing.T, l diag.List) map[string]string {
	t.Helper()
	out, _, _ := renderDiag(t, SARIF, l, Options{})
	fps := map[string]string{}
	for _, r := range sarifResults(t, decodeSARIF(t, out)) {
		fps[get(r, "message", "text").(string)] = get(r, "partialFingerprints", "keyregFindingHash/v1").(string)
	}
	return fps
}

func TestSARIFFingerprints(t *testing.T) {
	l := mixed()
	base := sarifFingerprints(t, l)
	if len(base) != 7 {
		t.Fatalf("got %d fingerprints, want 7", len(base))
	}

	// Moving every finding to other lines and columns changes nothing.
	moved := mixed()
	for i := range moved {
		moved[i].Pos.Line = 1000 - 10*i
		moved[i].Pos.Col += 3
		moved[i].Pos.EndLine = moved[i].Pos.Line
	}
	if got := sarifFingerprints(t, moved); fmt.Sprint(got) != fmt.Sprint(base) {
		t.Errorf("fingerprints changed with line numbers:\n got %v\nwant %v", got, base)
	}

	// A different family gives a different fingerprint.
	renamed := mixed()
	renamed[1].Family = "user-session-v3"
	msg := renamed[1].Message
	if got := sarifFingerprints(t, renamed)[msg]; got == base[msg] {
		t.Errorf("fingerprint did not change with the family")
	}

	// So does a different pointer.
	repointed := mixed()
	repointed[4].Pointer = "/properties/plan"
	msg = repointed[4].Message
	if got := sarifFingerprints(t, repointed)[msg]; got == base[msg] {
		t.Errorf("fingerprint did not change with the pointer")
	}

	// Findings of one rule on one family and pointer stay distinct, and do
	// not swap when their lines swap.
	twins := diag.List{
		{Pos: diag.Pos{File: "keys.yaml", Line: 5}, Severity: diag.Warn, Rule: "r", Family: "f", Message: "first"},
		{Pos: diag.Pos{File: "keys.yaml", Line: 9}, Severity: diag.Warn, Rule: "r", Family: "f", Message: "second"},
	}
	a := sarifFingerprints(t, twins)
	if a["first"] == a["second"] {
		t.Errorf("identical rule/family/pointer share a fingerprint")
	}
	twins[0].Pos.Line, twins[1].Pos.Line = twins[1].Pos.Line, twins[0].Pos.Line
	if b := sarifFingerprints(t, twins); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("fingerprints swapped with lines: %v vs %v", a, b)
	}

	// json and sarif agree.
	out, _, _ := renderDiag(t, JSON, l, Options{})
	var doc jsonOut
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range doc.Findings {
		if want := "sha256:" + base[f["message"].(string)]; f["fingerprint"] != want {
			t.Errorf("json fingerprint %v, want %s", f["fingerprint"], want)
		}
	}
}

func TestSARIFStartLineAtLeast1(t *testing.T) {
	l := diag.List{
		{Pos: diag.Pos{File: "keys.yaml"}, Severity: diag.Error, Rule: "a", Message: "no position"},
		{Pos: diag.Pos{File: "keys.yaml", Line: -3, Col: -1}, Severity: diag.Warn, Rule: "b", Message: "negative"},
		{Pos: diag.Pos{File: "keys.yaml", Line: 4}, Severity: diag.Info, Rule: "c", Message: "no column"},
	}
	out, _, _ := renderDiag(t, SARIF, l, Options{})
	doc := decodeSARIF(t, out)
	validateSARIF(t, doc)
	for i, r := range sarifResults(t, doc) {
		region := get(r, "locations", 0, "physicalLocation", "region")
		if get(region, "startLine").(float64) < 1 || get(region, "startColumn").(float64) < 1 {
			t.Errorf("result %d: region %v", i, region)
		}
		if get(region, "endLine") != nil {
			t.Errorf("result %d: unknown end printed: %v", i, region)
		}
	}
}

func TestArtifactURI(t *testing.T) {
	for in, want := range map[string]string{
		"keys.yaml":              "keys.yaml",
		"./keys.yaml":            "keys.yaml",
		`deploy\redis\keys.yaml`: "deploy/redis/keys.yaml",
		"my dir/keys.yaml":       "my%20dir/keys.yaml",
		"c:keys.yaml":            "./c:keys.yaml",
		"config/keys,v1.yaml":    "config/keys,v1.yaml",
		"config/100%/keys.yaml":  "config/100%25/keys.yaml",
	} {
		if got := artifactURI(in); got != want {
			t.Errorf("artifactURI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCamelCase(t *testing.T) {
	for in, want := range map[string]string{
		"pattern-overlap": "PatternOverlap",
		"ttl-missing":     "TtlMissing",
		"x":               "X",
		"a_b.c-d":         "ABCD",
	} {
		if got := camelCase(in); got != want {
			t.Errorf("camelCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		in      string
		allowed []Format
		want    Format
		wantErr string
	}{
		{in: "text", want: Text},
		{in: "JSON", want: JSON},
		{in: "github-actions", want: GitHub},
		{in: " sarif ", want: SARIF},
		{in: "xml", wantErr: `unsupported format "xml" (want text, json, markdown, github, sarif, junit or gitlab)`},
		{in: "code-quality", want: GitLab},
		{in: "JUnit", want: JUnit},
		{in: "sarif", allowed: []Format{Text, JSON}, wantErr: `unsupported format "sarif" (want text or json)`},
		{in: "", allowed: []Format{Text}, wantErr: `unsupported format "" (want text)`},
		{in: "json", allowed: []Format{Text, JSON}, want: JSON},
	} {
		got, err := ParseFormat(tc.in, tc.allowed...)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("ParseFormat(%q, %v) error = %v, want %q", tc.in, tc.allowed, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseFormat(%q, %v) = %q, %v; want %q", tc.in, tc.allowed, got, err, tc.want)
		}
	}
}

func TestUnknownFormat(t *testing.T) {
	var out bytes.Buffer
	err := Diagnostics(&out, "xml", mixed(), Options{})
	if err == nil || !strings.Contains(err.Error(), `unsupported format "xml"`) {
		t.Errorf("err = %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("wrote %q for an unknown format", out.String())
	}
}

type failWriter struct{}

var errWrite = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestWriteErrors(t *testing.T) {
	for _, f := range allFormats {
		if err := Diagnostics(failWriter{}, f, mixed(), Options{}); !errors.Is(err, errWrite) {
			t.Errorf("%s: err = %v, want %v", f, err, errWrite)
		}
	}
	if err := Diagnostics(&bytes.Buffer{}, Text, nil, Options{Summary: failWriter{}}); !errors.Is(err, errWrite) {
		t.Errorf("summary: err = %v", err)
	}
	if err := Diagnostics(&bytes.Buffer{}, GitHub, nil, Options{StepSummary: failWriter{}}); !errors.Is(err, errWrite) {
		t.Errorf("step summary: err = %v", err)
	}
}
