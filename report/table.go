package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/internal/render"
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

// writeAuditTable prints the report as tables for a terminal, every line
// within Options.Width display columns when it is set.
func writeAuditTable(b *bytes.Buffer, r *audit.Report, c *audit.Comparison, o Options) error {
	v := newAuditViewFor(r, c)
	var head bytes.Buffer
	writeHeader(&head, v)
	writeWrapped(b, head.String(), o.Width)

	sections := []section{
		{title: "families", g: v.families},
		{title: "owners", g: v.owners},
		{title: "unregistered: " + v.unregistered, g: v.groups},
	}
	sections = append(sections, v.statSections()...)
	sections = append(sections, section{title: v.findingsTitle + ": " + v.summary, g: v.findings})
	if bv := v.baseline; bv != nil {
		sections = append(sections,
			section{title: bv.line + "\n\nnew since baseline: " + fmt.Sprint(len(bv.added.rows)), g: bv.added},
			section{title: "resolved since baseline: " + bv.resolvedTitle, g: bv.resolved})
	}
	for _, s := range sections {
		if s.note != "" {
			writeWrapped(b, "\n"+s.note+"\n", o.Width)
			continue
		}
		writeWrapped(b, "\n"+s.title+"\n", o.Width)
		if len(s.g.rows) == 0 {
			continue
		}
		if err := renderTable(b, s.g, o); err != nil {
			return err
		}
	}
	var foot bytes.Buffer
	writeFooter(&foot, v)
	writeWrapped(b, foot.String(), o.Width)
	return nil
}

// minColumn is the narrowest a text column is wrapped to.
const minColumn = 10

// renderTable draws g with tablewriter, fitted to o.Width: text columns
// wrap (numbers never do), and when even their narrowest widths do not fit,
// each row is printed as a block of "column  value" lines instead.
func renderTable(w io.Writer, g grid, o Options) error {
	cells := make([][]string, len(g.rows))
	flex := make([]bool, len(g.head)) // key and message columns: narrowed first
	prose := make([]bool, len(g.head))
	for j, h := range g.head {
		flex[j] = h == "message"
		prose[j] = proseColumn(h)
	}
	for i, row := range g.rows {
		cells[i] = make([]string, len(row))
		for j, c := range row {
			cells[i][j] = tableText(c, o.Width > 0)
			flex[j] = flex[j] || c.keys != nil
		}
	}
	head := append([]string{}, g.head...)
	if o.Width > 0 {
		widths := fitColumns(head, cells, g.right, flex, o.Width)
		if widths == nil {
			writeVertical(w, g, cells, o)
			return nil
		}
		for j := range head {
			head[j] = wrapText(head[j], widths[j])
			for i := range cells {
				cells[i][j] = fitCell(cells[i][j], widths[j], prose[j])
			}
		}
	}
	for i := range cells {
		for j := range cells[i] {
			cells[i][j] = colorize(g.head[j], cells[i][j], o.Color)
		}
	}
	align := make([]tw.Align, len(g.head))
	for i, right := range g.right {
		align[i] = tw.AlignLeft
		if right {
			align[i] = tw.AlignRight
		}
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{Global: tw.AlignLeft, PerColumn: align}),
	)
	hs := make([]any, len(head))
	for i, h := range head {
		hs[i] = h
	}
	t.Header(hs...)
	if err := t.Bulk(cells); err != nil {
		return err
	}
	return t.Render()
}

// tableText is a cell as the table shows it: with a width to fit, the
// keys of a list one per line.
func tableText(c cell, fit bool) string {
	if !fit || len(c.keys) < 2 {
		return exampleText(c)
	}
	q := make([]string, len(c.keys))
	for i, k := range c.keys {
		q[i] = render.QuoteKey(k)
	}
	return strings.Join(q, "\n")
}

// flexFloor is the narrowest a key or message column may get in a boxed
// table: below it, the rows are printed as blocks of lines instead.
const flexFloor = 14

// fitColumns returns the width of each column such that the boxed table
// (three columns of padding and border per column, plus one) fits width,
// or nil when it cannot: numeric columns keep their natural width, text
// columns shrink, the widest first, down to minColumn; a flex column (key
// names, messages) no further than flexFloor.
func fitColumns(head []string, cells [][]string, right, flex []bool, width int) []int {
	n := len(head)
	natural := make([]int, n)
	floor := make([]int, n)
	for j := range head {
		natural[j] = textWidth(head[j])
		for i := range cells {
			natural[j] = max(natural[j], textWidth(cells[i][j]))
		}
		floor[j] = natural[j]
		if !right[j] {
			floor[j] = min(natural[j], minColumn)
		}
	}
	avail := width - (3*n + 1)
	sum := func(level int) int {
		s := 0
		for j := range natural {
			s += max(floor[j], min(natural[j], level))
		}
		return s
	}
	if sum(0) > avail {
		return nil
	}
	// The largest level at which the columns, each capped at it, fit.
	lo, hi := 0, 0
	for _, w := range natural {
		hi = max(hi, w)
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if sum(mid) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	out := make([]int, n)
	for j := range natural {
		out[j] = max(floor[j], min(natural[j], lo))
		if flex[j] && out[j] < min(natural[j], flexFloor) {
			return nil
		}
	}
	return out
}

// writeVertical prints each row of g as lines of "column  value", values
// wrapped to what the width leaves, rows apart by a blank line.
func writeVertical(w io.Writer, g grid, cells [][]string, o Options) {
	label := 0
	for _, h := range g.head {
		label = max(label, textWidth(h))
	}
	value := max(o.Width-label-2, minColumn)
	var b strings.Builder
	for i, row := range cells {
		if i > 0 {
			b.WriteString("\n")
		}
		for j, c := range row {
			pad := strings.Repeat(" ", label-textWidth(g.head[j])+2)
			for k, line := range strings.Split(fitCell(render.OrDash(c), value, proseColumn(g.head[j])), "\n") {
				if k == 0 {
					b.WriteString(g.head[j] + pad)
				} else {
					b.WriteString(strings.Repeat(" ", label+2))
				}
				b.WriteString(colorize(g.head[j], line, o.Color) + "\n")
			}
		}
	}
	io.WriteString(w, b.String())
}

// writeWrapped writes text with each line wrapped to width (0: as is);
// continuation lines are indented by two spaces.
func writeWrapped(b *bytes.Buffer, text string, width int) {
	if width <= 0 {
		b.WriteString(text)
		return
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if i > 0 {
			b.WriteString("\n")
		}
		if textWidth(line) <= width {
			b.WriteString(line)
			continue
		}
		wrapped := strings.Split(wrapText(line, width-2), "\n")
		b.WriteString(wrapped[0])
		for _, l := range wrapped[1:] {
			b.WriteString("\n  " + l)
		}
	}
}

// proseColumn reports whether a column holds sentences, which wrap at
// spaces (a finding's example is a quoted key and its detail: the detail
// wraps, the key, one word, is cut with "…" when wider than the line);
// every other holds identifiers and keys (names, rules, prefixes,
// contacts, lists of keys), which never wrap.
func proseColumn(head string) bool { return head == "message" || head == "example" }

// fitCell fits a cell's lines to width: prose wraps (wrapText), and each
// line of an identifier or a key is cut to the width with "…", never
// broken across lines, where a double-click would copy half a key.
func fitCell(s string, width int, prose bool) string {
	if prose {
		return wrapText(s, width)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = clipWidth(l, width)
	}
	return strings.Join(lines, "\n")
}

// clipWidth cuts s to at most width display columns, the last being "…"
// when anything was cut.
func clipWidth(s string, width int) string {
	if textWidth(s) <= width {
		return s
	}
	width = max(width, 1)
	var b strings.Builder
	w := 0
	for _, r := range s {
		rw := textWidth(string(r))
		if w+rw > width-1 {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	return b.String() + "…"
}

// wrapText breaks s into lines of at most width display columns, at
// spaces; a word wider than a line (a long key name in a message) is cut
// to the line with "…" rather than broken across two.
func wrapText(s string, width int) string {
	width = max(width, 1)
	var out []string
	for _, para := range strings.Split(s, "\n") {
		var line strings.Builder
		lw := 0
		flush := func() {
			out = append(out, strings.TrimRight(line.String(), " "))
			line.Reset()
			lw = 0
		}
		for _, word := range strings.SplitAfter(para, " ") {
			ww := textWidth(strings.TrimRight(word, " "))
			if lw > 0 && lw+ww > width {
				flush()
			}
			if textWidth(strings.TrimRight(word, " ")) > width-lw {
				// A word wider than the line: cut, never continued on
				// the next line.
				word = clipWidth(strings.TrimRight(word, " "), width-lw) + " "
			}
			line.WriteString(word)
			lw += textWidth(word)
		}
		flush()
	}
	return strings.Join(out, "\n")
}

// textWidth is the display width of s, ANSI escapes not counted.
func textWidth(s string) int { return twwidth.Width(s) }

// severityColors are the ANSI colours of severities: error red, warning
// yellow, info cyan.
var severityColors = map[string]string{"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}

// colorize colours the value of a severity column when color is on.
func colorize(column, value string, color bool) string {
	if !color || column != "severity" {
		return value
	}
	if c, ok := severityColors[strings.TrimSpace(value)]; ok {
		return c + value + "\033[0m"
	}
	return value
}
