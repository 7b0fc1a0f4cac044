package report

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/render"
	"github.com/keyreg/keyreg/rules"
)

// JUnit prints a JUnit XML report, the shape Jenkins, GitLab and Buildkite
// read as test results: one testsuite per family (plus one for findings on
// the registry itself, and, for an audit, one for unregistered keys and one
// for the scan), one testcase per rule, and a failure for each testcase
// whose rule found something. Suppressed findings are skipped testcases.
const JUnit Format = "junit"

// junitFormat is JUnit XML.
var junitFormat = renderer{
	name:        JUnit,
	help:        "JUnit XML test results, for Jenkins, GitLab and Buildkite",
	diagnostics: writeJUnit,
	audit:       buffered(writeAuditJUnit),
}

// Checked says what a lint or breaking run checked, for the formats that
// list passing checks as well as findings (junit).
type Checked struct {
	// Families are the families checked, in registry order. Each gets a
	// testsuite, with or without findings.
	Families []string
	// Rules are the IDs of the rules run on each family, in order. Each
	// gets a testcase in every family's testsuite.
	Rules []string
}

// Names of the testsuites that hold no family, in parentheses so that no
// family (kebab-case) can take them.
const (
	junitUnregistered = "(unregistered keys)"
	junitScan         = "(scan)"
	junitChannels     = "(channels)"
)

// junitSuite is one testsuite being built: its testcases by rule, in the
// order they were added.
type junitSuite struct {
	name  string
	order []string
	cases map[string]*junitCase
}

// junitCase is one testcase: the findings of its rule in its suite.
type junitCase struct {
	active, suppressed diag.List
	errMsg             string // an error (not a finding): the scan was partial
	notChecked         string // the rule did not run on some keys: skipped, unless it found something
}

func newJUnitSuite(name string) *junitSuite {
	return &junitSuite{name: name, cases: map[string]*junitCase{}}
}

func (s *junitSuite) testcase(rule string) *junitCase {
	c, ok := s.cases[rule]
	if !ok {
		c = &junitCase{}
		s.cases[rule] = c
		s.order = append(s.order, rule)
	}
	return c
}

// junitBuilder collects suites by name, in the order they were added.
type junitBuilder struct {
	order  []*junitSuite
	byName map[string]*junitSuite
}

func (b *junitBuilder) suite(name string) *junitSuite {
	if b.byName == nil {
		b.byName = map[string]*junitSuite{}
	}
	s, ok := b.byName[name]
	if !ok {
		s = newJUnitSuite(name)
		b.byName[name] = s
		b.order = append(b.order, s)
	}
	return s
}

// add files the findings of l under their family's suite, or under
// registry (the file they point at) when they have none. l is prepared.
func (b *junitBuilder) add(l diag.List, registry string) {
	for _, d := range l {
		name := d.Family
		if name == "" {
			name = registry
			if name == "" {
				name = nonEmpty(render.SlashPath(d.Pos.File), "registry")
			}
		}
		c := b.suite(name).testcase(nonEmpty(d.Rule, "unnamed rule"))
		if d.Suppressed {
			c.suppressed = append(c.suppressed, d)
		} else {
			c.active = append(c.active, d)
		}
	}
}

// writeJUnit prints l as JUnit XML, with a passing testcase for every
// family and rule of o.Checked that found nothing.
func writeJUnit(w io.Writer, l diag.List, o Options) error {
	var b junitBuilder
	if ch := o.Checked; ch != nil {
		for _, f := range ch.Families {
			s := b.suite(f)
			for _, r := range ch.Rules {
				s.testcase(r)
			}
		}
	}
	b.add(l, "")
	var out bytes.Buffer
	writeJUnitXML(&out, o.Tool.Name, 0, b.order)
	_, err := w.Write(out.Bytes())
	return err
}

// writeAuditJUnit prints the audit as JUnit XML: a testsuite per family of
// the report with a testcase per key rule of o.Rules, one for unregistered
// keys and one for the scan, whose testcase is an error when the audit is
// partial. With a baseline, only new findings fail.
func writeAuditJUnit(out *bytes.Buffer, r *audit.Report, c *audit.Comparison, o Options) error {
	var keyRules []string
	for _, ri := range o.Rules {
		if r, ok := rules.Lookup(ri.ID); ok && r.Phase == rules.PhaseChannels {
			continue // in the channels suite
		}
		if ri.Kind == string(rules.KindKey) && ri.ID != rules.UnregisteredKey.ID {
			keyRules = append(keyRules, ri.ID)
		}
	}
	var b junitBuilder
	for _, f := range r.Families {
		s := b.suite(render.Printable(f.Name))
		for _, id := range keyRules {
			s.testcase(id)
		}
	}
	if msg := notCheckedBanner(r); msg != "" {
		for _, s := range b.order {
			for _, id := range r.Scan.NotChecked {
				if c, ok := s.cases[id]; ok {
					c.notChecked = msg
				}
			}
		}
	}
	b.suite(junitUnregistered).testcase(rules.UnregisteredKey.ID)
	shown := r
	if c != nil {
		shown = c.Filter(r)
	}
	// The channel audit has a suite of its own, a testcase per rule.
	var keyDiags, chanDiags diag.List
	for _, d := range prepare(auditDiagnostics(shown)) {
		if cr, ok := rules.Lookup(d.Rule); ok && cr.Phase == rules.PhaseChannels {
			chanDiags = append(chanDiags, d)
		} else {
			keyDiags = append(keyDiags, d)
		}
	}
	b.add(keyDiags, junitUnregistered)
	if r.Channels != nil {
		cs := b.suite(junitChannels)
		// A node not read leaves every channel rule undecided there: a
		// rule that found nothing is skipped, never passed.
		unread := ""
		if n := len(r.Channels.NotChecked); n > 0 {
			unread = render.Printable(render.Redact(fmt.Sprintf("not checked on every node: %d of %d nodes not read (%s)", n, r.Channels.Nodes, r.Channels.NotChecked[0])))
		}
		for _, cr := range rules.ChannelAuditRules() {
			cs.testcase(cr.ID).notChecked = unread
		}
		for _, d := range chanDiags {
			d.Family = junitChannels
			b.add(diag.List{d}, junitChannels)
		}
	} else {
		b.add(chanDiags, junitUnregistered)
	}
	scan := b.suite(junitScan).testcase("complete")
	if r.Partial {
		scan.errMsg = render.PartialBanner(r)
	}
	writeJUnitXML(out, o.Tool.Name, r.Scan.Duration.Seconds(), b.order)
	return nil
}

// writeJUnitXML prints the suites as a testsuites document. The classname
// of a testcase is its suite's name, which is how GitLab and Buildkite
// group them; positions go in the failure text, since junit-10.xsd has no
// attribute for them.
func writeJUnitXML(b *bytes.Buffer, tool string, seconds float64, suites []*junitSuite) {
	var tests, failures, errors int
	for _, s := range suites {
		t, f, e, _ := s.counts()
		tests, failures, errors = tests+t, failures+f, errors+e
	}
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	// junit-10.xsd gives testsuites no skipped attribute (each testsuite has one).
	fmt.Fprintf(b, `<testsuites name="%s" tests="%d" failures="%d" errors="%d" time="%s">`+"\n",
		xmlAttr(tool), tests, failures, errors, junitTime(seconds))
	for i, s := range suites {
		t, f, e, sk := s.counts()
		fmt.Fprintf(b, `  <testsuite name="%s" id="%d" tests="%d" failures="%d" errors="%d" skipped="%d" time="0">`+"\n",
			xmlAttr(s.name), i, t, f, e, sk)
		for _, rule := range s.order {
			c := s.cases[rule]
			fmt.Fprintf(b, `    <testcase name="%s" classname="%s" time="0"`, xmlAttr(rule), xmlAttr(s.name))
			switch {
			case c.errMsg != "":
				fmt.Fprintf(b, ">\n      <error message=\"%s\" type=\"partial\">%s</error>\n    </testcase>\n", xmlAttr(c.errMsg), xmlText(c.errMsg))
			case len(c.active) > 0:
				// One failure per testcase: consumers show only the first.
				msg := c.active[0].Message
				if n := len(c.active); n > 1 {
					msg = fmt.Sprintf("%d findings, first: %s", n, msg)
				}
				var body strings.Builder
				for _, d := range c.active {
					body.WriteString(d.String())
					body.WriteByte('\n')
				}
				fmt.Fprintf(b, ">\n      <failure message=\"%s\" type=\"%s\">%s</failure>\n    </testcase>\n",
					xmlAttr(msg), xmlAttr(maxSeverity(c.active).Label()), xmlText(body.String()))
			case c.notChecked != "":
				fmt.Fprintf(b, ">\n      <skipped message=\"%s\"></skipped>\n    </testcase>\n", xmlAttr(c.notChecked))
			case len(c.suppressed) > 0:
				d := c.suppressed[0]
				fmt.Fprintf(b, ">\n      <skipped message=\"%s\"></skipped>\n    </testcase>\n",
					xmlAttr("suppressed: "+nonEmpty(d.Reason, d.Message)))
			default:
				b.WriteString("></testcase>\n")
			}
		}
		b.WriteString("  </testsuite>\n")
	}
	b.WriteString("</testsuites>\n")
}

// counts returns the suite's tests, failures, errors and skipped.
func (s *junitSuite) counts() (tests, failures, errors, skipped int) {
	for _, c := range s.cases {
		tests++
		switch {
		case c.errMsg != "":
			errors++
		case len(c.active) > 0:
			failures++
		case c.notChecked != "" || len(c.suppressed) > 0:
			skipped++
		}
	}
	return
}

func maxSeverity(l diag.List) diag.Severity {
	return slices.MaxFunc(l, func(a, b diag.Diagnostic) int { return int(a.Severity) - int(b.Severity) }).Severity
}

// junitTime formats seconds as JUnit's decimal time, never negative.
func junitTime(seconds float64) string {
	return strconv.FormatFloat(max(0, seconds), 'f', 3, 64)
}

// xmlText escapes s for XML 1.0 character data. Besides the markup
// characters, it rewrites what XML 1.0 forbids in a document whatever the
// escaping (control bytes other than tab, newline and carriage return,
// invalid UTF-8, U+FFFE and U+FFFF) as visible Go-style escapes, since a
// parser rejects the whole report at the first such byte and
// encoding/xml's EscapeText passes them through.
func xmlText(s string) string { return xmlEscape(s, false) }

// xmlAttr is xmlText for an attribute value in double quotes: quotes are
// escaped, and tab and line breaks become character references, which
// attribute normalisation would otherwise turn into spaces.
func xmlAttr(s string) string { return xmlEscape(s, true) }

func xmlEscape(s string, attr bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"' && attr:
			b.WriteString("&quot;")
		case (r == '\t' || r == '\n' || r == '\r') && attr:
			fmt.Fprintf(&b, "&#%d;", r)
		case r == '\r':
			// A parser turns a raw CR into a newline; keep it as written.
			b.WriteString("&#13;")
		case r == '\t' || r == '\n':
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0xFFFE || r == 0xFFFF:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
