package report

import (
	"bytes"
	"cmp"
	"embed"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/page"
	"github.com/keyreg/keyreg/internal/render"
)

// HTML writes an audit report as one self-contained HTML page: its
// summary, charts and sortable tables (the catalogue of package catalogue
// has the same shell). The page makes no request: its CSS,
// its SVG charts and its script are inline, and its Content-Security-Policy
// allows nothing else. It reads well with JavaScript off; the script only
// adds sorting and the filter box.
const HTML Format = "html"

// htmlFormat is the single-file HTML page.
var htmlFormat = renderer{
	name:  HTML,
	help:  "one self-contained HTML page with charts and sortable tables",
	audit: buffered(writeAuditHTML),
}

//go:embed templates/*.html.tmpl
var htmlFiles embed.FS

// htmlTemplates is the audit page's template set: internal/page's shell
// with internal/render's table parts (shared with the catalogue),
// parts.html.tmpl (its "nav" and "body") and audit.html.tmpl (the
// sections).
var htmlTemplates = render.Parse(htmlFiles, "templates/*.html.tmpl")

// htmlAudit holds the sections of the audit page.
type htmlAudit struct {
	Memory       bool
	MultiDB      bool // several databases: the groups name theirs
	Families     []render.FamRow
	Owners       []render.OwnerRow
	Unregistered string
	Groups       []groupRow
	FindingsHead string // such as "3 errors, 1 warning, 0 info"
	Findings     []render.FindingRow
	Baseline     string
	// BaselineTables list the new and the resolved baseline entries.
	BaselineTables []htmlGrid
	Stats          []htmlGrid // keyspace statistics: largest keys, types, TTL histogram
	Scan           string
	Notes          []string
}

// htmlGrid is one of the view's statistics tables, with a sort key per
// cell read back from its text.
type htmlGrid struct {
	Title, ID string
	Note      string // a table left out, and why; then no rows
	Head      []string
	Right     []bool
	Rows      [][]htmlCell
}

type htmlCell struct {
	Text  string
	Keys  []string // quoted key names, shown as code
	Sort  string   // the numeric value of a right-aligned cell; "" for none
	Right bool
}

// sectionID is the anchor of a section: its title up to any parenthesis
// (which holds counts), lower case, words joined by "-".
func sectionID(title string) string {
	title, _, _ = strings.Cut(title, " (")
	return strings.Join(strings.Fields(strings.ToLower(title)), "-")
}

// htmlGrids converts the statistics sections of the human formats.
func htmlGrids(secs []section) []htmlGrid {
	var out []htmlGrid
	for _, sec := range secs {
		g := htmlGrid{Title: upperFirst(strings.ReplaceAll(sec.title, "ttl", "TTL")), ID: "stats-" + cmp.Or(sec.id, sectionID(sec.title)), Head: sec.g.head, Right: sec.g.right, Note: upperFirst(sec.note)}
		for _, row := range sec.g.rows {
			var cells []htmlCell
			for i, c := range row {
				hc := htmlCell{Text: c.text, Right: i < len(sec.g.right) && sec.g.right[i]}
				for _, k := range c.keys {
					hc.Keys = append(hc.Keys, render.QuoteKey(k))
				}
				if hc.Right {
					hc.Sort = sortValue(c.text)
				}
				cells = append(cells, hc)
			}
			g.Rows = append(g.Rows, cells)
		}
		out = append(out, g)
	}
	return out
}

// sortValue reads a number back from a cell as the human formats write
// it: "12", "45.0%", "1.5 KiB", "2h", "3d"; "-" and "none" sort first.
func sortValue(text string) string {
	t := strings.TrimSpace(text)
	if t == "-" || t == "none" || t == "" {
		return "-1"
	}
	units := []struct {
		suffix string
		mul    float64
	}{
		{" B", 1}, {" KiB", 1 << 10}, {" MiB", 1 << 20}, {" GiB", 1 << 30}, {" TiB", 1 << 40}, {" PiB", 1 << 50}, {" EiB", 1 << 60},
		{"%", 1}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"w", 7 * 86400},
	}
	for _, u := range units {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			if f, err := strconv.ParseFloat(num, 64); err == nil {
				return strconv.FormatFloat(f*u.mul, 'f', -1, 64)
			}
		}
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return ""
}

type groupRow struct {
	Prefix     string
	Keys       int64
	MemoryText string // "-" when not measured
	Share      string // % of the measured memory
	MemSort    int64  // -1 when not measured
	DBs        string // the databases of its keys, "0, 3"
	TTL        float64
	TTLText    string
	Examples   []string
	Search     string
}

// writeAuditHTML renders r as one page.
func writeAuditHTML(b *bytes.Buffer, r *audit.Report, c *audit.Comparison, o Options) error {
	v := newAuditViewFor(r, c)
	p := page.New("keyreg audit")
	p.Version = render.Printable(o.Tool.Version)
	p.Partial = v.partial
	p.Summary = v.header
	p.Filter = "filter families, prefixes and findings"
	a := &htmlAudit{Memory: v.memory, MultiDB: r.MultiDB(), Unregistered: v.unregistered, FindingsHead: v.summary, Scan: v.scan, Notes: v.notes}
	if bv := v.baseline; bv != nil {
		a.Baseline = bv.line
		secs := []section{{title: "new since baseline", g: bv.added}}
		if bv.resolvedNote == "" {
			secs = append(secs, section{title: "resolved since baseline", g: bv.resolved})
		} else {
			a.Baseline += "; resolved entries " + bv.resolvedTitle
		}
		for _, sec := range secs {
			if len(sec.g.rows) > 0 {
				a.BaselineTables = append(a.BaselineTables, htmlGrids([]section{sec})...)
			}
		}
	}
	a.Families = render.FamRows(r)
	for _, o := range r.Owners {
		a.Owners = append(a.Owners, render.OwnerRow{
			Name: render.Printable(o.Name), Anchor: render.OwnerAnchor(o.Name), Contact: render.OrDash(render.Printable(render.Redact(o.Contact))),
			Families: len(o.Families), Keys: o.Keys, Memory: o.Memory, MemKeys: o.MemoryKeys,
			TTL: render.Pct(o.WithTTL, o.Keys), TTLText: render.TTLPercent(o.WithTTL, o.Keys), Findings: o.Findings,
		})
	}
	for _, g := range r.Unregistered.Groups {
		ex := g.Examples[:min(len(g.Examples), 3)]
		row := groupRow{Prefix: render.QuoteKey(g.Prefix), Keys: g.Keys, TTL: render.Pct(g.WithTTL, g.Keys), TTLText: render.TTLPercent(g.WithTTL, g.Keys),
			MemoryText: render.MemText(g.Memory, g.MemoryKeys, g.Keys), Share: memShare(g.Memory, g.MemoryKeys, r.Totals.Memory),
			MemSort: render.MemSort(g.Memory, g.MemoryKeys), DBs: dbList(g.DBs)}
		for _, k := range ex {
			row.Examples = append(row.Examples, render.QuoteKey(k))
		}
		row.Search = render.SearchText(row.Prefix)
		a.Groups = append(a.Groups, row)
	}
	shown := r
	if c != nil {
		shown = c.Filter(r)
	}
	a.Findings = render.FindingRows(shown.Findings, "")
	a.Stats = htmlGrids(v.statSections())
	p.Body = a
	p.Charts = render.AuditCharts(r)
	if c != nil {
		p.Charts = append(p.Charts, baselineChart(c))
	}
	return p.Render(b, htmlTemplates())
}

// baselineChart draws the change against the baseline: the findings new
// since it, those resolved and those unchanged.
func baselineChart(c *audit.Comparison) page.Chart {
	n := func(es []audit.Entry) int64 { return int64(len(es)) }
	bars := []page.Bar{{Label: "new", Values: []int64{n(c.New)}}, {Label: "unchanged", Values: []int64{n(c.Unchanged)}}}
	if c.ResolvedNote == "" {
		bars = append(bars, page.Bar{Label: "resolved", Values: []int64{n(c.Resolved)}})
	}
	entries := func(v int64) string {
		return diag.Count(v, "entry")
	}
	return page.LayoutChart("Change against the baseline", "findings by rule and family (or prefix)", bars, []string{"c5"}, nil, entries)
}
