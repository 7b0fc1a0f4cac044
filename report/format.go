package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/explain"
)

// Format names an output format.
type Format string

// Document is a kind of document that a format can render.
type Document int

// The documents keyreg renders.
const (
	// DocDiagnostics is a diag.List: the findings of lint and breaking.
	DocDiagnostics Document = iota
	// DocAudit is an audit.Report, optionally compared with a baseline.
	DocAudit
	// DocExplain is an Explanation of one key.
	DocExplain
	// DocRules is the list of rules (keyreg rules).
	DocRules
	// DocPresets is the list of framework presets (keyreg presets).
	DocPresets
)

// renderer is one output format: its name, a short description for --help
// and shell completion, and one function per document it can render. A nil
// function means the format cannot render that document. Each format
// declares its renderer in its own file (text.go, json.go, …) and is listed
// once in formats; nothing else in keyreg enumerates formats.
type renderer struct {
	name    Format
	aliases []string // other accepted spellings, such as "github-actions"
	help    string   // lowercase phrase, such as "gcc-style lines, summary on stderr"

	diagnostics func(w io.Writer, l diag.List, o Options) error
	audit       func(w io.Writer, r *audit.Report, c *audit.Comparison, o Options) error
	explain     func(w io.Writer, e *explain.Explanation) error
	rules       func(w io.Writer, rules []RuleInfo) error
	presets     func(w io.Writer, presets []PresetInfo) error
}

// formats is the registry of output formats, in the order --help lists
// them. Adding a format means one file declaring its renderer, one entry
// here, and its golden files in testdata (TestFormatGoldens fails until
// they exist).
var formats = []*renderer{
	&tableFormat,
	&textFormat,
	&jsonFormat,
	&markdownFormat,
	&htmlFormat,
	&githubFormat,
	&sarifFormat,
	&junitFormat,
	&gitlabFormat,
	&prometheusFormat,
}

// renders reports whether r can render documents of kind d.
func (r *renderer) renders(d Document) bool {
	switch d {
	case DocDiagnostics:
		return r.diagnostics != nil
	case DocAudit:
		return r.audit != nil
	case DocExplain:
		return r.explain != nil
	case DocRules:
		return r.rules != nil
	case DocPresets:
		return r.presets != nil
	}
	return false
}

// Formats lists the formats that can render documents of kind d, in the
// order --help shows them.
func Formats(d Document) []Format {
	var out []Format
	for _, r := range formats {
		if r.renders(d) {
			out = append(out, r.name)
		}
	}
	return out
}

// FormatList returns the names of the formats for d as "a, b or c", for a
// --format flag's usage text.
func FormatList(d Document) string { return orList(Formats(d)) }

// FormatCompletions returns the formats for d as shell completions, each
// "name\tdescription", as cobra's flag completion functions return them.
func FormatCompletions(d Document) []string {
	var out []string
	for _, r := range formats {
		if r.renders(d) {
			out = append(out, string(r.name)+"\t"+r.help)
		}
	}
	return out
}

// FormatHelp describes the formats for d in one sentence, such as
// "Formats: text (gcc-style lines), json (…) and sarif (…).", wrapped at
// width columns for a command's long help.
func FormatHelp(d Document, width int) string {
	var parts []string
	for _, r := range formats {
		if r.renders(d) {
			parts = append(parts, fmt.Sprintf("%s (%s)", r.name, r.help))
		}
	}
	s := "Formats: " + join(parts, "and") + "."
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		switch {
		case i == 0:
		case n+1+len(word) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}

// allFormats lists the formats for diagnostics, which ParseFormat accepts
// when given no list.
var allFormats = Formats(DocDiagnostics)

// AuditFormats lists the audit output formats.
var AuditFormats = Formats(DocAudit)

// ParseFormat parses a format name, case-insensitively, aliases included
// ("github-actions" is "github"). When allowed is empty every diagnostics
// format is allowed; otherwise s must name one of allowed, and the error
// lists them.
func ParseFormat(s string, allowed ...Format) (Format, error) {
	if len(allowed) == 0 {
		allowed = allFormats
	}
	name := strings.ToLower(strings.TrimSpace(s))
	for _, r := range formats {
		if name == string(r.name) || slices.Contains(r.aliases, name) {
			if slices.Contains(allowed, r.name) {
				return r.name, nil
			}
			break
		}
	}
	return "", fmt.Errorf("unsupported format %q (want %s)", s, orList(allowed))
}

// lookup returns the renderer of f if it renders documents of kind d.
func lookup(f Format, d Document) (*renderer, error) {
	for _, r := range formats {
		if r.name == f && r.renders(d) {
			return r, nil
		}
	}
	return nil, fmt.Errorf("unsupported format %q (want %s)", f, FormatList(d))
}

// orList joins formats as "a, b or c".
func orList(fs []Format) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return join(names, "or")
}

// join joins words as "a, b or c" (conj "or") or "a, b and c".
func join(words []string, conj string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
