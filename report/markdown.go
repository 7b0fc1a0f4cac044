package report

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
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

// mdMode says how much markdown syntax [md] lets through.
type mdMode int

const (
	// mdData is text that keyreg did not write, or that holds values it did
	// not write (key names, family names, messages quoting them, Redis
	// errors), inline: in a table cell, a heading or after other text.
	// Every character markdown reads as syntax is escaped, so the text
	// shows as typed and can neither format, link nor inject HTML.
	mdData mdMode = iota
	// mdBlock is mdData that starts a paragraph or a quote line, where a
	// leading #, -, + or "1." would also open a heading, a list or a rule;
	// that marker is escaped as well.
	mdBlock
	// mdDoc is text keyreg wrote itself, such as a rule's doc: its code
	// spans and emphasis are kept, and only what would break a table row
	// (|, line breaks) or inject HTML is escaped.
	mdDoc
)

var (
	// mdSyntax escapes markdown syntax, HTML and line breaks.
	mdSyntax = strings.NewReplacer(
		`\`, `\\`,
		"`", "\\`",
		"*", `\*`,
		"_", `\_`,
		"~", `\~`,
		"[", `\[`,
		"]", `\]`,
		"|", `\|`,
		"&", "&amp;",
		"<", "&lt;",
		">", "&gt;",
		"\r\n", "<br>",
		"\n", "<br>",
		"\r", "<br>",
	)
	// mdTable escapes only what breaks a table row or injects HTML.
	mdTable = strings.NewReplacer(
		"|", `\|`,
		"&", "&amp;",
		"<", "&lt;",
		">", "&gt;",
		"\r\n", "<br>",
		"\n", "<br>",
		"\r", "<br>",
	)
)

// md escapes s for GitHub-flavoured markdown in mode m. It is the one
// markdown escaper of keyreg; code spans of key names are [mdCode].
func md(s string, m mdMode) string {
	switch m {
	case mdDoc:
		return mdTable.Replace(s)
	case mdBlock:
		return mdLeading(mdSyntax.Replace(s))
	}
	return mdSyntax.Replace(s)
}

// mdLeading escapes a block marker at the start of s (after up to three
// spaces, as CommonMark allows): #, -, + and the "1." or "1)" of an
// ordered list. The other markers (>, *, `, ~) are escaped everywhere.
func mdLeading(s string) string {
	lead := len(s) - len(strings.TrimLeft(s, " "))
	if lead > 3 || lead == len(s) {
		return s
	}
	rest := s[lead:]
	switch rest[0] {
	case '#', '-', '+':
		return s[:lead] + `\` + rest
	}
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	if digits > 0 && digits < len(rest) && (rest[digits] == '.' || rest[digits] == ')') {
		return s[:lead+digits] + `\` + rest[digits:]
	}
	return s
}

// mdCode renders s, already free of line breaks, as a code span in a table
// cell: the fence is one backtick longer than the longest run inside, and
// | is escaped, which GitHub honours inside code spans in tables.
func mdCode(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + strings.ReplaceAll(s, "|", `\|`) + fence
}

// markdown renders a view cell: text escaped, key names quoted in code spans.
func (c cell) markdown() string {
	if c.keys == nil {
		return md(c.text, mdData)
	}
	parts := make([]string, len(c.keys))
	for i, k := range c.keys {
		parts[i] = mdCode(strconv.Quote(k))
	}
	s := strings.Join(parts, ", ")
	if c.text != "" {
		s += " (" + md(c.text, mdData) + ")"
	}
	return s
}

// writeAuditMarkdown prints the report as GitHub-flavoured markdown.
func writeAuditMarkdown(b *bytes.Buffer, r *audit.Report, c *audit.Comparison) {
	v := newAuditViewFor(r, c)
	b.WriteString("## keyreg audit\n\n")
	if v.partial != "" {
		fmt.Fprintf(b, "> [!WARNING]\n> %s\n\n", md(v.partial, mdBlock))
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
	fmt.Fprintf(b, "### Unregistered keys\n\n%s\n\n", md(v.unregistered, mdBlock))
	if len(v.groups.rows) > 0 {
		writeMDTable(b, v.groups)
	}
	for _, s := range v.statSections() {
		if s.note != "" {
			fmt.Fprintf(b, "%s\n\n", md(upperFirst(s.note), mdBlock))
			continue
		}
		fmt.Fprintf(b, "### %s\n\n", upperFirst(s.title))
		writeMDTable(b, s.g)
	}
	fmt.Fprintf(b, "### %s\n\n%s\n\n", md(upperFirst(v.findingsTitle), mdData), md(v.summary, mdBlock))
	if len(v.findings.rows) > 0 {
		writeMDTable(b, v.findings)
	}
	if bv := v.baseline; bv != nil {
		fmt.Fprintf(b, "### Baseline\n\n%s\n\n", md(bv.line, mdBlock))
		fmt.Fprintf(b, "#### New since baseline (%d)\n\n", len(bv.added.rows))
		if len(bv.added.rows) > 0 {
			writeMDTable(b, bv.added)
		} else {
			b.WriteString("None.\n\n")
		}
		if bv.resolvedNote != "" {
			fmt.Fprintf(b, "#### Resolved since baseline\n\n%s\n\n", md(upperFirst(bv.resolvedTitle), mdBlock))
		} else {
			fmt.Fprintf(b, "#### Resolved since baseline (%d)\n\n", len(bv.resolved.rows))
			if len(bv.resolved.rows) > 0 {
				writeMDTable(b, bv.resolved)
			} else {
				b.WriteString("None.\n\n")
			}
		}
	}
	fmt.Fprintf(b, "### Scan\n\n%s\n", md(strings.TrimPrefix(v.scan, "scan: "), mdBlock))
	for _, n := range v.notes {
		fmt.Fprintf(b, "\n> [!NOTE]\n> %s\n", md(n, mdBlock))
	}
}

// writeMDTable prints g as a markdown table followed by a blank line.
func writeMDTable(b *bytes.Buffer, g grid) {
	b.WriteString("|")
	for _, h := range g.head {
		fmt.Fprintf(b, " %s |", md(h, mdData))
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
	fmt.Fprintf(&b, "## %s\n\n%s\n\n", md(o.Tool.Name, mdData), md(l.Count().String(), mdBlock))
	active := l.Active()
	bySeverity(active)
	if len(active) == 0 {
		b.WriteString("No findings.\n")
	} else {
		b.WriteString("| Severity | Location | Rule | Family | Message |\n| --- | --- | --- | --- | --- |\n")
		for _, d := range active {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", d.Severity.Label(), md(slashPath(d.Pos.String()), mdData),
				md(d.Rule, mdData), mdCell(d.Family), md(d.Message, mdData))
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
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", md(slashPath(d.Pos.String()), mdData),
				md(d.Rule, mdData), mdCell(d.Family), mdCell(d.Reason))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// mdCell is md in mdData mode, with "-" for an empty cell.
func mdCell(s string) string { return md(nonEmpty(s, "-"), mdData) }
