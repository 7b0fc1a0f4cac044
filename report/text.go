package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/keyreg/keyreg/diag"
)

// textFormat is plain text: gcc-style findings, aligned audit lines, the
// explanation and the rule list as columns.
var textFormat = renderer{
	name:        Text,
	help:        "plain lines, findings gcc-style",
	diagnostics: writeText,
	audit:       buffered(writeAuditText),
	explain:     writeExplanationText,
	rules:       writeRulesText,
	presets:     writePresetsText,
}

// textIndent indents continuation lines of a multi-line message, so that
// problem matchers do not read them as findings of their own.
var textIndent = strings.NewReplacer("\r\n", "\n\t", "\n", "\n\t", "\r", "\n\t")

// writeText prints active findings gcc-style to w and the counts to o.Summary.
func writeText(w io.Writer, l diag.List, o Options) error {
	var b bytes.Buffer
	for _, d := range l {
		if d.Suppressed {
			continue
		}
		fmt.Fprintf(&b, "%s: %s: %s (%s)\n", d.Pos, d.Severity.Label(), textIndent.Replace(d.Message), d.Rule)
	}
	if b.Len() > 0 {
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
	}
	if o.Summary != nil {
		if _, err := fmt.Fprintln(o.Summary, l.Count()); err != nil {
			return fmt.Errorf("writing summary: %w", err)
		}
	}
	return nil
}
