package report

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/keyreg/keyreg/audit"
)

// writeAuditText prints the report as plain aligned lines: no box drawing,
// stable for golden tests and grep. Findings are gcc-style lines from the
// text renderer, which also writes the summary to o.Summary.
func writeAuditText(b *bytes.Buffer, r *audit.Report, c *audit.Comparison, o Options) error {
	v := newAuditViewFor(r, c)
	writeHeader(b, v)

	b.WriteString("\nfamilies:\n")
	writeTabbed(b, v.families)
	if len(v.owners.rows) > 0 {
		b.WriteString("\nowners:\n")
		writeTabbed(b, v.owners)
	}
	fmt.Fprintf(b, "\nunregistered: %s\n", v.unregistered)
	if len(v.groups.rows) > 0 {
		writeTabbed(b, v.groups)
	}
	for _, s := range v.statSections() {
		if s.note != "" {
			fmt.Fprintf(b, "\n%s\n", s.note)
			continue
		}
		fmt.Fprintf(b, "\n%s:\n", s.title)
		writeTabbed(b, s.g)
	}
	fmt.Fprintf(b, "\n%s: %s\n", v.findingsTitle, v.summary)
	shown := r
	if c != nil {
		shown = c.Filter(r)
	}
	// The summary line says when the audit is partial: in CI it may be
	// the only line a reader sees.
	summary := o.Summary
	o.Summary = nil
	if err := renderList(b, writeText, auditDiagnostics(shown), o); err != nil {
		return err
	}
	if summary != nil {
		line := prepare(auditDiagnostics(shown)).Count().String()
		if r.Partial {
			line += " (partial audit)"
		}
		if len(r.Scan.NotChecked) > 0 {
			// The counts do not cover these rules: never a bare "0 errors".
			line += "; not checked: " + strings.Join(r.Scan.NotChecked, ", ") + " (see the notes)"
		}
		if _, err := fmt.Fprintln(summary, line); err != nil {
			return fmt.Errorf("writing summary: %w", err)
		}
	}
	if bv := v.baseline; bv != nil {
		fmt.Fprintf(b, "\n%s\n", bv.line)
		fmt.Fprintf(b, "\nnew since baseline: %d\n", len(bv.added.rows))
		if len(bv.added.rows) > 0 {
			writeTabbed(b, bv.added)
		}
		fmt.Fprintf(b, "\nresolved since baseline: %s\n", bv.resolvedTitle)
		if len(bv.resolved.rows) > 0 {
			writeTabbed(b, bv.resolved)
		}
	}
	writeFooter(b, v)
	return nil
}

// writeHeader prints the header block and the partial banner.
func writeHeader(b *bytes.Buffer, v *auditView) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, h := range v.header {
		fmt.Fprintf(tw, "%s\t%s\n", h[0], h[1])
	}
	tw.Flush()
	if v.partial != "" {
		fmt.Fprintf(b, "\n%s\n", v.partial)
	}
}

// writeFooter prints the scan statistics, notes, and the partial banner
// once more, where a terminal user's eye lands.
func writeFooter(b *bytes.Buffer, v *auditView) {
	fmt.Fprintf(b, "\n%s\n", v.scan)
	for _, n := range v.notes {
		fmt.Fprintf(b, "note: %s\n", n)
	}
	if v.partial != "" {
		fmt.Fprintf(b, "%s\n", v.partial)
	}
}

// writeTabbed prints g as space-aligned columns with a header line.
func writeTabbed(b *bytes.Buffer, g grid) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(g.head, "\t"))
	for _, row := range g.rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = exampleText(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}
