package report

import (
	"bytes"
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/keyreg/keyreg/audit"
)

// Table prints an audit report as boxed tables for a terminal. It is the
// default when stdout is a TTY.
const Table Format = "table"

// tableFormat is boxed tables for a terminal.
var tableFormat = renderer{
	name:  Table,
	help:  "boxed tables for a terminal",
	audit: buffered(writeAuditTable),
}

// writeAuditTable prints the report as tables for a terminal.
func writeAuditTable(b *bytes.Buffer, r *audit.Report, c *audit.Comparison, _ Options) error {
	v := newAuditViewFor(r, c)
	writeHeader(b, v)

	sections := []section{
		{"families", v.families},
		{"owners", v.owners},
		{"unregistered: " + v.unregistered, v.groups},
	}
	sections = append(sections, v.statSections()...)
	sections = append(sections, section{v.findingsTitle + ": " + v.summary, v.findings})
	if bv := v.baseline; bv != nil {
		sections = append(sections,
			section{bv.line + "\n\nnew since baseline: " + fmt.Sprint(len(bv.added.rows)), bv.added},
			section{"resolved since baseline: " + bv.resolvedTitle, bv.resolved})
	}
	for _, s := range sections {
		fmt.Fprintf(b, "\n%s\n", s.title)
		if len(s.g.rows) == 0 {
			continue
		}
		if err := renderTable(b, s.g); err != nil {
			return err
		}
	}
	writeFooter(b, v)
	return nil
}

// renderTable draws g with tablewriter.
func renderTable(w io.Writer, g grid) error {
	align := make([]tw.Align, len(g.head))
	for i, right := range g.right {
		align[i] = tw.AlignLeft
		if right {
			align[i] = tw.AlignRight
		}
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{Global: tw.AlignLeft, PerColumn: align}),
	)
	head := make([]any, len(g.head))
	for i, h := range g.head {
		head[i] = h
	}
	t.Header(head...)
	rows := make([][]string, len(g.rows))
	for i, row := range g.rows {
		rows[i] = make([]string, len(row))
		for j, c := range row {
			rows[i][j] = exampleText(c)
		}
	}
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}
