// Package diag defines the one finding type that every layer of keyreg reports
// through: a Diagnostic with a rule ID, a severity and a position in keys.yaml.
//
// Parse errors, lint findings, breaking changes and live-audit findings all
// use it, so every output format prints them the same way.
package diag

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity ranks a finding. The zero value is Off.
type Severity int

// Severities, from least to most severe.
const (
	Off Severity = iota
	Info
	Warn
	Error
)

var severityNames = [...]string{"off", "info", "warn", "error"}

// String returns "off", "info", "warn" or "error".
func (s Severity) String() string {
	if s < Off || s > Error {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// ParseSeverity parses "off", "info", "warn" (or "warning") and "error".
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(s) {
	case "off", "none":
		return Off, nil
	case "info", "note", "notice":
		return Info, nil
	case "warn", "warning":
		return Warn, nil
	case "error":
		return Error, nil
	}
	return Off, fmt.Errorf("unknown severity %q (want off, info, warn or error)", s)
}

// Label names s as gcc and editor problem matchers expect: "error",
// "warning" or "info".
func (s Severity) Label() string {
	if s == Warn {
		return "warning"
	}
	return s.String()
}

// MarshalText implements encoding.TextMarshaler.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Pos is a 1-based position range in a file. Zero line or column means unknown.
type Pos struct {
	File    string `json:"path"`
	Line    int    `json:"start_line"`
	Col     int    `json:"start_column"`
	EndLine int    `json:"end_line"`
	EndCol  int    `json:"end_column"`
}

// String formats p as file:line:col, printing unknown parts as 1.
func (p Pos) String() string {
	return fmt.Sprintf("%s:%d:%d", p.File, atLeast1(p.Line), atLeast1(p.Col))
}

// IsValid reports whether p names a line.
func (p Pos) IsValid() bool { return p.Line > 0 }

// Start returns the start line and column, with unknown parts as 1.
func (p Pos) Start() (line, col int) { return atLeast1(p.Line), atLeast1(p.Col) }

// End returns the end line and column, defaulting to the start.
func (p Pos) End() (line, col int) {
	line, col = p.Start()
	if p.EndLine >= line {
		line = p.EndLine
		if p.EndCol > 0 {
			col = p.EndCol
		}
	}
	return line, col
}

func atLeast1(n int) int { return max(n, 1) }

// Diagnostic is one finding.
type Diagnostic struct {
	Pos      Pos
	Severity Severity
	Rule     string // kebab-case rule ID
	Family   string // family name, empty when the finding is not about one family
	Pointer  string // JSON pointer into a payload schema or value, when relevant
	Message  string // lowercase, no trailing period
	// Suppressed is set when a family's ignore: entry silences the finding;
	// Reason then holds the justification given there.
	Suppressed bool
	Reason     string
}

// String formats d gcc-style: file:line:col: severity: message (rule).
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s (%s)", d.Pos, d.Severity.Label(), d.Message, d.Rule)
}

// List is a list of diagnostics.
type List []Diagnostic

// Add appends a diagnostic built from a format string.
func (l *List) Add(pos Pos, sev Severity, rule, family, format string, args ...any) {
	*l = append(*l, Diagnostic{Pos: pos, Severity: sev, Rule: rule, Family: family, Message: fmt.Sprintf(format, args...)})
}

// Sort orders l by file, line, column, rule and message, so output is stable.
func (l List) Sort() {
	slices.SortStableFunc(l, func(a, b Diagnostic) int {
		return cmp.Or(
			cmp.Compare(a.Pos.File, b.Pos.File),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Col, b.Pos.Col),
			cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

// Active returns the diagnostics that are neither suppressed nor off.
func (l List) Active() List {
	var out List
	for _, d := range l {
		if !d.Suppressed && d.Severity > Off {
			out = append(out, d)
		}
	}
	return out
}

// Counts tallies active diagnostics by severity, and suppressed ones apart.
type Counts struct {
	Error, Warn, Info, Suppressed int
}

// Count tallies l.
func (l List) Count() Counts {
	var c Counts
	for _, d := range l {
		switch {
		case d.Suppressed:
			c.Suppressed++
		case d.Severity == Error:
			c.Error++
		case d.Severity == Warn:
			c.Warn++
		case d.Severity == Info:
			c.Info++
		}
	}
	return c
}

// String returns a summary such as "3 errors, 1 warning, 2 suppressed".
func (c Counts) String() string {
	parts := []string{Count(c.Error, "error"), Count(c.Warn, "warning"), Count(c.Info, "info")}
	if c.Suppressed > 0 {
		parts = append(parts, fmt.Sprintf("%d suppressed", c.Suppressed))
	}
	return strings.Join(parts, ", ")
}

// Plural returns word for n == 1 and its plural otherwise: a "y" after a
// consonant becomes "ies" (family, families); "info" stays "info".
func Plural(n int64, word string) string {
	if n == 1 || word == "info" {
		return word
	}
	if l := len(word); l > 1 && word[l-1] == 'y' && !strings.ContainsRune("aeiou", rune(word[l-2])) {
		return word[:l-1] + "ies"
	}
	return word + "s"
}

// Count returns n and word in its form for n: "1 key", "2 keys".
func Count[N ~int | ~int64](n N, word string) string {
	return fmt.Sprintf("%d %s", n, Plural(int64(n), word))
}

// Max returns the highest severity among active diagnostics, or Off.
func (l List) Max() Severity {
	m := Off
	for _, d := range l {
		if !d.Suppressed && d.Severity > m {
			m = d.Severity
		}
	}
	return m
}

// ListError is an error that carries diagnostics, such as an invalid
// keys.yaml. Commands print the diagnostics and exit 2.
type ListError struct {
	List List
}

// Error returns the first diagnostic and a count of the rest.
func (e *ListError) Error() string {
	switch len(e.List) {
	case 0:
		return "invalid input"
	case 1:
		return e.List[0].String()
	}
	return fmt.Sprintf("%s (and %d more)", e.List[0], len(e.List)-1)
}
