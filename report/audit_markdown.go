package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/audit"
)

// mdText escapes plain text for a markdown table cell or paragraph: the
// characters markdown would read as syntax, HTML, and line breaks.
var mdText = strings.NewReplacer(
	`\`, `\\`,
	"`", "\\`",
	"*", `\*`,
	"_", `\_`,
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
		return mdText.Replace(c.text)
	}
	parts := make([]string, len(c.keys))
	for i, k := range c.keys {
		parts[i] = mdCode(strconv.Quote(k))
	}
	s := strings.Join(parts, ", ")
	if c.text != "" {
		s += " (" + mdText.Replace(c.text) + ")"
	}
	return s
}

// writeAuditMarkdown prints the report as GitHub-flavoured markdown.
func writeAuditMarkdown(b *bytes.Buffer, r *audit.Report, c *audit.Comparison) {
	v := newAuditViewFor(r, c)
	b.WriteString("## keyreg audit\n\n")
	if v.partial != "" {
		fmt.Fprintf(b, "> [!WARNING]\n> %s\n\n", mdText.Replace(v.partial))
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
	fmt.Fprintf(b, "### Unregistered keys\n\n%s\n\n", mdText.Replace(v.unregistered))
	if len(v.groups.rows) > 0 {
		writeMDTable(b, v.groups)
	}
	fmt.Fprintf(b, "### %s\n\n%s\n\n", mdText.Replace(upperFirst(v.findingsTitle)), mdText.Replace(v.summary))
	if len(v.findings.rows) > 0 {
		writeMDTable(b, v.findings)
	}
	if bv := v.baseline; bv != nil {
		fmt.Fprintf(b, "### Baseline\n\n%s\n\n", mdText.Replace(bv.line))
		fmt.Fprintf(b, "#### New since baseline (%d)\n\n", len(bv.added.rows))
		if len(bv.added.rows) > 0 {
			writeMDTable(b, bv.added)
		} else {
			b.WriteString("None.\n\n")
		}
		if bv.resolvedNote != "" {
			fmt.Fprintf(b, "#### Resolved since baseline\n\n%s\n\n", mdText.Replace(upperFirst(bv.resolvedTitle)))
		} else {
			fmt.Fprintf(b, "#### Resolved since baseline (%d)\n\n", len(bv.resolved.rows))
			if len(bv.resolved.rows) > 0 {
				writeMDTable(b, bv.resolved)
			} else {
				b.WriteString("None.\n\n")
			}
		}
	}
	fmt.Fprintf(b, "### Scan\n\n%s\n", mdText.Replace(strings.TrimPrefix(v.scan, "scan: ")))
	for _, n := range v.notes {
		fmt.Fprintf(b, "\n> [!NOTE]\n> %s\n", mdText.Replace(n))
	}
}

// writeMDTable prints g as a markdown table followed by a blank line.
func writeMDTable(b *bytes.Buffer, g grid) {
	b.WriteString("|")
	for _, h := range g.head {
		fmt.Fprintf(b, " %s |", mdText.Replace(h))
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
