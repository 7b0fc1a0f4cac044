// Package report renders keyreg findings for people and for CI systems.
//
// [Diagnostics] writes a [diag.List] in one of four formats: gcc-style
// [Text], a versioned [JSON] document, [GitHub] Actions workflow commands and
// [SARIF] 2.1.0 for GitHub code scanning. Output is deterministic: the list is
// sorted first (on a copy), and the same input always yields the same bytes.
// Diagnostics with severity [diag.Off] are never printed or counted.
//
// [Audit] renders an audit report as a table, text, JSON, markdown, one
// self-contained HTML page, GitHub annotations, SARIF or a Prometheus
// textfile; [Explain] and [WriteExplanation] describe one key;
// [Rules] lists the rules, and is what docs/rules.md is generated from.
// The registry's catalogue is package catalogue's; what the two share
// (the markdown escaper, the audit's rows and charts, the HTML parts) is
// internal/render's.
//
// Every format is one renderer, declared in its own file and listed once in
// the table of formats (format.go); [Formats], [FormatList],
// [FormatCompletions] and [FormatHelp] give a command the names, usage text,
// completions and help of the formats for a [Document], and [ParseFormat]
// validates against them.
//
// The package never writes to os.Stdout or os.Stderr: every destination is an
// [io.Writer] passed in by the caller.
package report

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"

	"github.com/keyreg/keyreg/diag"
)

// The formats of diagnostics; the audit adds its own (see audit.go).
const (
	// Text prints one gcc-style line per active finding, such as
	// keys.yaml:12:5: error: message (rule-id), and a summary line to
	// Options.Summary.
	Text Format = "text"
	// JSON prints one versioned JSON document with every finding, suppressed
	// ones included.
	JSON Format = "json"
	// GitHub prints GitHub Actions workflow commands (::error file=…::message),
	// which GitHub shows as annotations.
	GitHub Format = "github"
	// SARIF prints a SARIF 2.1.0 log for GitHub code scanning.
	SARIF Format = "sarif"
)

// Tool identifies the program that produced the findings.
type Tool struct {
	Name           string // defaults to "keyreg"
	Version        string // such as "1.2.0"; SARIF semanticVersion is set only when it is semver
	InformationURI string // project home page, for SARIF
}

// RuleInfo describes a rule for SARIF tool.driver.rules.
type RuleInfo struct {
	ID      string        // kebab-case rule ID
	Kind    string        // lint, key or breaking; becomes a SARIF tag
	Doc     string        // one line
	Default diag.Severity // the rule's default severity
}

// Options configures Diagnostics. The zero value is usable.
type Options struct {
	Tool Tool
	// Rules is the metadata for SARIF tool.driver.rules, in this order.
	// Results reference rules by index; a rule that a finding names but that
	// is not listed here is appended with minimal metadata.
	Rules []RuleInfo
	// Automation is SARIF runs[].automationDetails.id, such as "keyreg/lint/".
	// It keeps lint, breaking and audit uploads apart. Empty omits it.
	Automation string
	// Summary receives the text format's one-line summary, such as
	// "3 errors, 1 warning, 0 info, 2 suppressed" (normally stderr). Nil
	// means no summary.
	Summary io.Writer
	// StepSummary receives, for the github format, a markdown table of every
	// active finding (normally the file named by $GITHUB_STEP_SUMMARY). Nil
	// means none.
	StepSummary io.Writer
	// MaxAnnotations caps, for the github format, the annotations printed per
	// level (error, warning, notice). Zero means 10, which is what GitHub
	// shows per step; a negative value means no cap. Findings over the cap
	// are counted in one final ::notice:: line.
	MaxAnnotations int
	// Checked, for the junit format, lists the families and rules a lint
	// or breaking run checked, so that the checks that found nothing are
	// passing testcases. Nil lists only what has findings. An audit's
	// junit takes the families from the report and the key rules from
	// Rules.
	Checked *Checked
	// Width is the terminal width the table format fits its lines to, in
	// display columns: long cells wrap, and a table that cannot fit is
	// printed as one block of "column  value" lines per row. 0 means no
	// limit. Library code never looks at the terminal: the caller passes
	// what it found.
	Width int
	// Color lets the table format colour severities with ANSI escapes.
	Color bool

	// invocation, when set, is the SARIF run's one invocation: the audit
	// says there whether it covered the whole keyspace.
	invocation *sarifInvocation
}

// Diagnostics writes l to w in format f. It sorts a copy of l, so the
// caller's slice is left alone, and drops diagnostics whose severity is
// diag.Off. Suppressed diagnostics are counted, and appear in the json and
// sarif formats marked as suppressed, but are never shown as active findings.
func Diagnostics(w io.Writer, f Format, l diag.List, o Options) error {
	r, err := lookup(f, DocDiagnostics)
	if err != nil {
		return err
	}
	if err := renderList(w, r.diagnostics, l, o); err != nil {
		return fmt.Errorf("writing %s report: %w", f, err)
	}
	return nil
}

// renderList runs a diagnostics renderer on a prepared copy of l, with the
// tool name defaulted. Renderers of other documents that print findings
// (the audit's text, github and sarif) call it directly.
func renderList(w io.Writer, write func(io.Writer, diag.List, Options) error, l diag.List, o Options) error {
	if o.Tool.Name == "" {
		o.Tool.Name = "keyreg"
	}
	return write(w, prepare(l), o)
}

// prepare returns a sorted copy of l without diagnostics that are off.
func prepare(l diag.List) diag.List {
	out := make(diag.List, 0, len(l))
	for _, d := range l {
		if d.Severity > diag.Off {
			out = append(out, d)
		}
	}
	out.Sort()
	return out
}

// bySeverity orders l by descending severity, keeping the position order
// within a severity.
func bySeverity(l diag.List) {
	slices.SortStableFunc(l, func(a, b diag.Diagnostic) int { return cmp.Compare(b.Severity, a.Severity) })
}

// fingerprints returns, for each diagnostic of l, the hex SHA-256 of
// "rule|family|pointer|n", where n counts earlier diagnostics with the same
// rule, family and pointer (ordered by message, then position). The line and
// column are deliberately left out, so that reordering keys.yaml does not
// change fingerprints, while two findings of one rule on one family and
// pointer stay distinct.
func fingerprints(l diag.List) []string {
	type key struct{ rule, family, pointer string }
	groups := make(map[key][]int)
	for i, d := range l {
		k := key{d.Rule, d.Family, d.Pointer}
		groups[k] = append(groups[k], i)
	}
	out := make([]string, len(l))
	for k, idx := range groups {
		// idx is in position order; a stable sort by message keeps it as the tiebreak.
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(l[a].Message, l[b].Message) })
		for n, i := range idx {
			sum := sha256.Sum256(fmt.Appendf(nil, "%s|%s|%s|%d", k.rule, k.family, k.pointer, n))
			out[i] = hex.EncodeToString(sum[:])
		}
	}
	return out
}
