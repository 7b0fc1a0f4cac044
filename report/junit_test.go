package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/render/rendertest"
)

// junitShape is the Jenkins junit-10.xsd (the schema of the Jenkins xUnit
// plugin, src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/
// junit-10.xsd, which GitLab and Buildkite read the same way), element by
// element: its attributes exactly (required ones marked; every other one is
// refused), those of type SUREFIRE_TIME, and the children its xs:choice
// allows, in any order and number. The checker is structural: it walks the
// token stream of encoding/xml, which itself rejects characters XML 1.0
// forbids, so a report that passes would also pass schema validation for
// everything the schema says about these elements. The counts are checked
// as well (tests, failures, errors, skipped equal what an element holds),
// which the schema does not do but every consumer relies on.
var junitShape = map[string]struct {
	attrs    map[string]bool // name -> required
	times    []string        // of type SUREFIRE_TIME
	children []string        // xs:choice minOccurs=0 maxOccurs=unbounded
	text     bool            // mixed: may hold character data
}{
	"testsuites": {
		// An xs:sequence of testsuite only; no skipped or disabled.
		attrs:    map[string]bool{"name": false, "time": false, "tests": false, "failures": false, "errors": false},
		times:    []string{"time"},
		children: []string{"testsuite"},
	},
	"testsuite": {
		attrs: map[string]bool{"name": true, "tests": true, "failures": true, "errors": true, "group": false, "time": false, "skipped": false,
			"timestamp": false, "hostname": false, "id": false, "package": false, "file": false, "log": false, "url": false},
		times:    []string{"time"},
		children: []string{"testsuite", "properties", "testcase", "system-out", "system-err"},
	},
	"testcase": {
		attrs: map[string]bool{"name": true, "time": false, "classname": false, "group": false},
		children: []string{"skipped", "error", "failure", "rerunFailure", "rerunError", "flakyFailure", "flakyError",
			"system-out", "system-err"},
	},
	"properties": {children: []string{"property"}},
	"property":   {attrs: map[string]bool{"name": true, "value": true}},
	"failure":    {attrs: map[string]bool{"type": false, "message": false}, text: true},
	"error":      {attrs: map[string]bool{"type": false, "message": false}, text: true},
	"skipped":    {attrs: map[string]bool{"type": false, "message": false}, text: true},
	"system-out": {text: true},
	"system-err": {text: true},
}

// surefireTime is junit-10.xsd's SUREFIRE_TIME pattern, anchored as XML
// Schema patterns are.
var surefireTime = regexp.MustCompile(`^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$`)

// checkJUnit parses doc with encoding/xml and checks it against junitShape,
// and that every count attribute equals what the element holds.
func checkJUnit(t *testing.T, doc []byte) *junitDoc {
	t.Helper()
	if errs := junitProblems(doc); len(errs) > 0 {
		t.Fatalf("junit does not fit junit-10.xsd:\n%s\n%s", strings.Join(errs, "\n"), doc)
	}
	var d junitDoc
	if err := xml.Unmarshal(doc, &d); err != nil {
		t.Fatalf("junit does not unmarshal: %v", err)
	}
	return &d
}

// junitProblems lists how doc departs from junitShape.
func junitProblems(doc []byte) []string {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	type open struct {
		name     string
		children []string
		counts   map[string]int
		attrs    map[string]string
	}
	var stack []*open
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return append(errs, "does not parse: "+err.Error())
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			name := tok.Name.Local
			spec, ok := junitShape[name]
			if !ok {
				fail("unknown element <%s>", name) // and checked as one without attributes or children
			}
			if len(stack) == 0 && name != "testsuites" {
				fail("root is <%s>, want <testsuites>", name)
			}
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				if !slices.Contains(junitShape[top.name].children, name) {
					fail("<%s> may not hold <%s>", top.name, name)
				}
				top.children = append(top.children, name)
			}
			attrs := map[string]string{}
			for _, a := range tok.Attr {
				if _, ok := spec.attrs[a.Name.Local]; !ok {
					fail("<%s> has attribute %q, which junit-10.xsd does not allow", name, a.Name.Local)
				}
				attrs[a.Name.Local] = a.Value
			}
			for a, req := range spec.attrs {
				if _, ok := attrs[a]; req && !ok {
					fail("<%s> lacks required attribute %q", name, a)
				}
			}
			for _, a := range spec.times {
				if v, ok := attrs[a]; ok && !surefireTime.MatchString(v) {
					fail("<%s %s=%q>: not a SUREFIRE_TIME", name, a, v)
				}
			}
			for _, a := range []string{"tests", "failures", "errors", "skipped"} {
				if v, ok := attrs[a]; ok {
					if n, err := strconv.Atoi(v); err != nil || n < 0 {
						fail("<%s %s=%q>: not a count", name, a, v)
					}
				}
			}
			stack = append(stack, &open{name: name, attrs: attrs, counts: map[string]int{}})
		case xml.CharData:
			if len(stack) > 0 && !junitShape[stack[len(stack)-1].name].text && strings.TrimSpace(string(tok)) != "" {
				fail("<%s> holds text %q", stack[len(stack)-1].name, tok)
			}
		case xml.EndElement:
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			switch top.name {
			case "testcase":
				if len(stack) > 0 {
					parent := stack[len(stack)-1]
					parent.counts["tests"]++
					for _, c := range []string{"failure", "error", "skipped"} {
						if slices.Contains(top.children, c) {
							parent.counts[c]++
						}
					}
				}
			case "testsuite":
				for attr, child := range map[string]string{"tests": "tests", "failures": "failure", "errors": "error", "skipped": "skipped"} {
					if v, ok := top.attrs[attr]; ok && v != strconv.Itoa(top.counts[child]) {
						fail("testsuite %q: %s=%s, holds %d", top.attrs["name"], attr, v, top.counts[child])
					}
				}
				if len(stack) > 0 {
					for k, v := range top.counts {
						stack[len(stack)-1].counts[k] += v
					}
				}
			case "testsuites":
				for attr, child := range map[string]string{"tests": "tests", "failures": "failure", "errors": "error", "skipped": "skipped"} {
					if v, ok := top.attrs[attr]; ok && v != strconv.Itoa(top.counts[child]) {
						fail("testsuites: %s=%s, holds %d", attr, v, top.counts[child])
					}
				}
			}
		}
	}
	return errs
}

// TestJUnitChecker shows that the checker rejects what junit-10.xsd does.
func TestJUnitChecker(t *testing.T) {
	for name, doc := range map[string]string{
		"control byte":           "<testsuites><testsuite name=\"a\x01\" tests=\"0\" failures=\"0\" errors=\"0\"></testsuite></testsuites>",
		"testcase file":          `<testsuites><testsuite name="a" tests="1" failures="0" errors="0"><testcase name="x" file="k"></testcase></testsuite></testsuites>`,
		"testcase assertions":    `<testsuites><testsuite name="a" tests="1" failures="0" errors="0"><testcase name="x" assertions="1"></testcase></testsuite></testsuites>`,
		"testsuites skipped":     `<testsuites skipped="0"></testsuites>`,
		"testsuites disabled":    `<testsuites disabled="0"></testsuites>`,
		"testsuite disabled":     `<testsuites><testsuite name="a" tests="0" failures="0" errors="0" disabled="0"></testsuite></testsuites>`,
		"missing name":           `<testsuites><testsuite tests="0" failures="0" errors="0"></testsuite></testsuites>`,
		"missing failures":       `<testsuites><testsuite name="a" tests="0" errors="0"></testsuite></testsuites>`,
		"missing errors":         `<testsuites><testsuite name="a" tests="0" failures="0"></testsuite></testsuites>`,
		"property without value": `<testsuites><testsuite name="a" tests="0" failures="0" errors="0"><properties><property name="n"></property></properties></testsuite></testsuites>`,
		"child not allowed":      `<testsuites><testsuite name="a" tests="1" failures="0" errors="0"><testcase name="x"><properties></properties></testcase></testsuite></testsuites>`,
		"testcase under root":    `<testsuites><testcase name="x"></testcase></testsuites>`,
		"count":                  `<testsuites tests="2"><testsuite name="a" tests="1" failures="1" errors="0"><testcase name="x"></testcase></testsuite></testsuites>`,
		"bad time":               `<testsuites time="1e3"></testsuites>`,
		"negative time":          `<testsuites><testsuite name="a" tests="0" failures="0" errors="0" time="-1"></testsuite></testsuites>`,
		"root":                   `<testsuite name="a" tests="0" failures="0" errors="0"></testsuite>`,
		"text in testcase":       `<testsuites><testsuite name="a" tests="1" failures="0" errors="0"><testcase name="x">boom</testcase></testsuite></testsuites>`,
		"unknown element":        `<testsuites><testsuite name="a" tests="1" failures="0" errors="0"><testcase name="x"><warning></warning></testcase></testsuite></testsuites>`,
	} {
		if errs := junitProblems([]byte(doc)); len(errs) == 0 {
			t.Errorf("%s: accepted %s", name, doc)
		}
	}
	// What the schema allows: its choices in any order, times with
	// thousands separators, properties, and the testsuite attributes the
	// testsuites element lacks.
	for _, ok := range []string{
		`<testsuites tests="1" failures="1"><testsuite name="a" tests="1" failures="1" errors="0"><testcase name="x"><failure message="m">t</failure></testcase></testsuite></testsuites>`,
		`<testsuites time="1,234.5"><testsuite name="a" tests="1" failures="1" errors="0" skipped="1" time="0"><properties><property name="n" value="v"></property></properties><testcase name="x" group="g"><failure type="error"></failure><skipped type="s"></skipped><system-out>o</system-out></testcase></testsuite></testsuites>`,
	} {
		if errs := junitProblems([]byte(ok)); len(errs) > 0 {
			t.Errorf("rejected a valid document: %v\n%s", errs, ok)
		}
	}
}

type junitDoc struct {
	Name   string `xml:"name,attr"`
	Suites []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func (d *junitDoc) suiteNames() []string {
	var out []string
	for _, s := range d.Suites {
		out = append(out, s.Name)
	}
	return out
}

// auditRules is what keyreg passes as Options.Rules: every rule, of
// every kind; the audit's junit takes the key rules.
func auditRules() []RuleInfo {
	return []RuleInfo{
		{ID: "pattern-overlap", Kind: "lint"},
		{ID: "ttl-missing", Kind: "key"},
		{ID: "ttl-exceeds", Kind: "key"},
		{ID: "payload-schema", Kind: "key"},
		{ID: "unregistered-key", Kind: "key"},
		{ID: "family-removed", Kind: "breaking"},
	}
}

func TestJUnitAuditSuites(t *testing.T) {
	for _, tc := range auditCases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.report()
			var b bytes.Buffer
			if err := Audit(&b, JUnit, r, Options{Rules: auditRules()}); err != nil {
				t.Fatal(err)
			}
			d := checkJUnit(t, b.Bytes())
			var want []string
			for _, f := range r.Families {
				want = append(want, f.Name)
			}
			want = append(want, junitUnregistered)
			if r.Channels != nil {
				want = append(want, junitChannels) // the channel audit's own suite
			}
			want = append(want, junitScan)
			// sampleReport's unregistered finding is filed under the
			// unregistered suite, not a suite of its own.
			if got := d.suiteNames(); !slices.Equal(got, want) {
				t.Fatalf("suites = %q, want %q", got, want)
			}
			for _, s := range d.Suites[:len(r.Families)] {
				var names []string
				for _, c := range s.Cases {
					names = append(names, c.Name)
					if c.Classname != s.Name {
						t.Errorf("%s/%s: classname %q", s.Name, c.Name, c.Classname)
					}
				}
				// Every key rule but unregistered-key, then rules with
				// findings that Rules did not list.
				if len(names) < 3 || !slices.Equal(names[:3], []string{"ttl-missing", "ttl-exceeds", "payload-schema"}) {
					t.Errorf("suite %s: testcases %q", s.Name, names)
				}
			}
			scan := d.Suites[len(d.Suites)-1].Cases[0]
			if got, want := scan.Error != nil, r.Partial; got != want {
				t.Errorf("scan testcase is an error: %v, want %v", got, want)
			}
		})
	}
	// The findings of sampleReport, by suite and testcase.
	var b bytes.Buffer
	if err := Audit(&b, JUnit, rendertest.SampleReport(), Options{Rules: auditRules()}); err != nil {
		t.Fatal(err)
	}
	d := checkJUnit(t, b.Bytes())
	state := map[string]string{}
	for _, s := range d.Suites {
		for _, c := range s.Cases {
			switch {
			case c.Failure != nil:
				state[s.Name+"/"+c.Name] = "failure " + c.Failure.Type
			case c.Skipped != nil:
				state[s.Name+"/"+c.Name] = "skipped"
			}
		}
	}
	want := map[string]string{
		"user-session/payload-schema":          "failure error",
		"cart/ttl-exceeds":                     "failure warning",
		"cart/ttl-missing":                     "failure warning",
		"feature-flags/ttl-missing":            "skipped",
		"(unregistered keys)/key-unregistered": "failure info",
	}
	if fmt.Sprint(state) != fmt.Sprint(want) {
		t.Errorf("testcase states = %v, want %v", state, want)
	}
}

func TestJUnitAuditBaseline(t *testing.T) {
	r := rendertest.SampleReport()
	c := audit.Compare(r, audit.NewBaseline(rendertest.SampleReport()))
	var b bytes.Buffer
	if err := AuditBaseline(&b, JUnit, r, c, Options{Rules: auditRules()}); err != nil {
		t.Fatal(err)
	}
	d := checkJUnit(t, b.Bytes())
	for _, s := range d.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				t.Errorf("%s/%s fails, but nothing is new since the baseline", s.Name, c.Name)
			}
		}
	}
}

func TestJUnitDiagnostics(t *testing.T) {
	var b bytes.Buffer
	o := testOptions()
	if err := Diagnostics(&b, JUnit, mixed(), o); err != nil {
		t.Fatal(err)
	}
	d := checkJUnit(t, b.Bytes())
	names := d.suiteNames()
	// The checked families first, in registry order; then families and
	// files that only findings name.
	if !slices.Equal(names[:3], o.Checked.Families) {
		t.Errorf("suites = %q, want %q first", names, o.Checked.Families)
	}
	for _, want := range []string{"a:b", "keys.yaml", "legacy"} {
		if !slices.Contains(names, want) {
			t.Errorf("no suite %q in %q", want, names)
		}
	}
	cases := 0
	for _, s := range d.Suites {
		cases += len(s.Cases)
	}
	if cases != 13 {
		t.Errorf("%d testcases, want 13 (3 families x 3 rules, plus 4 other findings)", cases)
	}
	// Without Checked, only what has findings.
	b.Reset()
	if err := Diagnostics(&b, JUnit, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if d := checkJUnit(t, b.Bytes()); len(d.Suites) != 0 {
		t.Errorf("clean run without Checked has suites %q", d.suiteNames())
	}
}

func TestJUnitEscapesHostileText(t *testing.T) {
	hostile := "a\x00b\x1b[31mc\xff\xfed\uFFFEe\r\n]]><x y=\"'&\t"
	l := diag.List{{
		Pos: diag.Pos{File: "keys.yaml", Line: 3, Col: 1}, Severity: diag.Error,
		Rule: "rule\x01" + hostile, Family: "fam" + hostile, Message: hostile, Reason: hostile,
	}, {
		Pos: diag.Pos{File: "keys.yaml", Line: 4, Col: 1}, Severity: diag.Error,
		Rule: "r", Family: "f", Message: hostile, Suppressed: true, Reason: hostile,
	}}
	var b bytes.Buffer
	if err := Diagnostics(&b, JUnit, l, Options{Tool: Tool{Name: hostile}}); err != nil {
		t.Fatal(err)
	}
	d := checkJUnit(t, b.Bytes())
	f := d.Suites[0].Cases[0].Failure
	if f == nil {
		t.Fatalf("no failure:\n%s", b.String())
	}
	const shown = `a\x00b\x1b[31mc\xff\xfed\ufffee` + "\r\n]]><x y=\"'&\t"
	if f.Message != shown {
		t.Errorf("message = %q, want %q", f.Message, shown)
	}
	if !strings.Contains(f.Text, shown) {
		t.Errorf("failure text %q lacks %q", f.Text, shown)
	}
	if d.Name != shown || d.Suites[0].Name != "fam"+shown {
		t.Errorf("names = %q, %q", d.Name, d.Suites[0].Name)
	}
	if s := d.Suites[1].Cases[0].Skipped; s == nil || s.Message != "suppressed: "+shown {
		t.Errorf("skipped = %+v", s)
	}
}

func TestXMLEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain":             "plain",
		"<&>\"":             "&lt;&amp;&gt;\"",
		"\x00\x08\x0b":      `\x00\x08\x0b`,
		"\t\n":              "\t\n",
		"\r":                "&#13;",
		"\xc3(":             `\xc3(`,
		"é\u2028\U0001F600": "é\u2028\U0001F600",
		"\uffff":            `\uffff`,
	} {
		if got := xmlText(in); got != want {
			t.Errorf("xmlText(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := xmlAttr("a\"\t\n\rb"), "a&quot;&#9;&#10;&#13;b"; got != want {
		t.Errorf("xmlAttr = %q, want %q", got, want)
	}
}

func TestGitLabCodeQuality(t *testing.T) {
	var b bytes.Buffer
	o := testOptions()
	if err := Diagnostics(&b, GitLab, mixed(), o); err != nil {
		t.Fatal(err)
	}
	var issues []map[string]any
	if err := json.Unmarshal(b.Bytes(), &issues); err != nil {
		t.Fatalf("gitlab does not parse: %v\n%s", err, b.String())
	}
	// Active findings only: mixed has 8, one off and one suppressed.
	if len(issues) != 6 {
		t.Fatalf("%d issues, want 6:\n%s", len(issues), b.String())
	}
	var out bytes.Buffer
	if err := Diagnostics(&out, SARIF, mixed(), o); err != nil {
		t.Fatal(err)
	}
	sarifFP := map[string]bool{}
	doc := decodeSARIF(t, out.String())
	for i := 0; ; i++ {
		fp, ok := get(doc, "runs", 0, "results", i, "partialFingerprints", fingerprintKey).(string)
		if !ok {
			break
		}
		sarifFP[fp] = true
	}
	seen := map[string]bool{}
	for _, is := range issues {
		for _, field := range []string{"description", "check_name", "fingerprint", "severity"} {
			if s, _ := is[field].(string); s == "" {
				t.Errorf("issue %v: no %s", is, field)
			}
		}
		if sev := is["severity"].(string); !slices.Contains([]string{"info", "minor", "major", "critical", "blocker"}, sev) {
			t.Errorf("severity %q is not one of Code Quality's", sev)
		}
		path, _ := get(is, "location", "path").(string)
		begin, _ := get(is, "location", "lines", "begin").(float64)
		if path == "" || begin < 1 {
			t.Errorf("issue %v: location %q line %v", is, path, begin)
		}
		fp := is["fingerprint"].(string)
		if !sarifFP[fp] {
			t.Errorf("fingerprint %s is not a SARIF one", fp)
		}
		if seen[fp] {
			t.Errorf("fingerprint %s twice", fp)
		}
		seen[fp] = true
	}
	// Empty: an empty array, which GitLab reads as no issues.
	b.Reset()
	if err := Diagnostics(&b, GitLab, nil, o); err != nil || b.String() != "[]\n" {
		t.Errorf("empty = %q, %v", b.String(), err)
	}
}
