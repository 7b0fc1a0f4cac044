package report

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/render"
)

// Markdown prints findings (lint, breaking) and audit reports as
// GitHub-flavoured markdown, for $GITHUB_STEP_SUMMARY or a pull-request or
// merge-request comment, and the rule list as the table of docs/rules.md.
const Markdown Format = "markdown"

// markdownFormat is GitHub-flavoured markdown.
var markdownFormat = renderer{
	name:        Markdown,
	help:        "GitHub-flavoured markdown, for $GITHUB_STEP_SUMMARY",
	diagnostics: writeMarkdown,
	audit: buffered(func(b *bytes.Buffer, r *audit.Report, c *audit.Comparison, _ Options) error {
		writeAuditMarkdown(b, r, c)
		return nil
	}),
	rules:   writeRulesMarkdown,
	presets: writePresetsMarkdown,
}

// markdown renders a view cell: text escaped, key names quoted in code spans.
func (c cell) markdown() string {
	if c.keys == nil {
		return render.MD(c.text, render.MDData)
	}
	parts := make([]string, len(c.keys))
	for i, k := range c.keys {
		parts[i] = render.MDCode(strconv.Quote(k))
	}
	s := strings.Join(parts, ", ")
	if c.text != "" {
		s += " (" + render.MD(c.text, render.MDData) + ")"
	}
	return s
}

// writeAuditMarkdown prints the report as GitHub-flavoured markdown.
func writeAuditMarkdown(b *bytes.Buffer, r *audit.Report, c *audit.Comparison) {
	v := newAuditViewFor(r, c)
	b.WriteString("## keyreg audit\n\n")
	if v.partial != "" {
		fmt.Fprintf(b, "> [!WARNING]\n> %s\n\n", render.MD(v.partial, render.MDBlock))
	}
	head := grid{}
	var row []cell
	for _, h := range v.header {
		head.head = append(head.head, h[0])
		head.right = append(head.right, false)
		row = append(row, cell{text: h[1]})
	}
	head.rows = [][]cell{row}
	writeMDTable(b, head)

	b.WriteString("### Families\n\n")
	writeMDTable(b, v.families)
	if len(v.owners.rows) > 0 {
		b.WriteString("### Owners\n\n")
		writeMDTable(b, v.owners)
	}
	fmt.Fprintf(b, "### Unregistered keys\n\n%s\n\n", render.MD(v.unregistered, render.MDBlock))
	if len(v.groups.rows) > 0 {
		writeMDTable(b, v.groups)
	}
	for _, s := range v.statSections() {
		if s.note != "" {
			fmt.Fprintf(b, "%s\n\n", render.MD(upperFirst(s.note), render.MDBlock))
			continue
		}
		fmt.Fprintf(b, "### %s\n\n", upperFirst(s.title))
		writeMDTable(b, s.g)
	}
	fmt.Fprintf(b, "### %s\n\n%s\n\n", render.MD(upperFirst(v.findingsTitle), render.MDData), render.MD(v.summary, render.MDBlock))
	if len(v.findings.rows) > 0 {
		writeMDTable(b, v.findings)
	}
	if bv := v.baseline; bv != nil {
		fmt.Fprintf(b, "### Baseline\n\n%s\n\n", render.MD(bv.line, render.MDBlock))
		fmt.Fprintf(b, "#### New since baseline (%d)\n\n", len(bv.added.rows))
		if len(bv.added.rows) > 0 {
			writeMDTable(b, bv.added)
		} else {
			b.WriteString("None.\n\n")
		}
		if bv.resolvedNote != "" {
			fmt.Fprintf(b, "#### Resolved since baseline\n\n%s\n\n", render.MD(upperFirst(bv.resolvedTitle), render.MDBlock))
		} else {
			fmt.Fprintf(b, "#### Resolved since baseline (%d)\n\n", len(bv.resolved.rows))
			if len(bv.resolved.rows) > 0 {
				writeMDTable(b, bv.resolved)
			} else {
				b.WriteString("None.\n\n")
			}
		}
	}
	fmt.Fprintf(b, "### Scan\n\n%s\n", render.MD(strings.TrimPrefix(v.scan, "scan: "), render.MDBlock))
	for _, n := range v.notes {
		fmt.Fprintf(b, "\n> [!NOTE]\n> %s\n", render.MD(n, render.MDBlock))
	}
}

// writeMDTable prints g as a markdown table followed by a blank line.
func writeMDTable(b *bytes.Buffer, g grid) {
	b.WriteString("|")
	for _, h := range g.head {
		fmt.Fprintf(b, " %s |", render.MD(h, render.MDData))
	}
	b.WriteString("\n|")
	for _, right := range g.right {
		if right {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, row := range g.rows {
		b.WriteString("|")
		for _, c := range row {
			s := c.markdown()
			if s == "" {
				s = "-"
			}
			fmt.Fprintf(b, " %s |", s)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// writeMarkdown prints l as a heading with the counts, a table of the
// active findings, most severe first, and a table of the suppressed ones
// with their reasons. Every field is escaped as data.
func writeMarkdown(w io.Writer, l diag.List, o Options) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "## %s\n\n%s\n\n", render.MD(o.Tool.Name, render.MDData), render.MD(l.Count().String(), render.MDBlock))
	active := l.Active()
	bySeverity(active)
	if len(active) == 0 {
		b.WriteString("No findings.\n")
	} else {
		b.WriteString("| Severity | Location | Rule | Family | Message |\n| --- | --- | --- | --- | --- |\n")
		for _, d := range active {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", d.Severity.Label(), render.MD(render.SlashPath(d.Pos.String()), render.MDData),
				render.MD(d.Rule, render.MDData), mdCell(d.Family), render.MD(d.Message, render.MDData))
		}
	}
	var suppressed diag.List
	for _, d := range l {
		if d.Suppressed {
			suppressed = append(suppressed, d)
		}
	}
	if len(suppressed) > 0 {
		fmt.Fprintf(&b, "\n### Suppressed (%d)\n\n| Location | Rule | Family | Reason |\n| --- | --- | --- | --- |\n", len(suppressed))
		for _, d := range suppressed {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", render.MD(render.SlashPath(d.Pos.String()), render.MDData),
				render.MD(d.Rule, render.MDData), mdCell(d.Family), mdCell(d.Reason))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// mdCell is render.MD in MDData mode, with "-" for an empty cell.
func mdCell(s string) string { return render.MD(nonEmpty(s, "-"), render.MDData) }
