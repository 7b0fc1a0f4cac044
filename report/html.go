package report

import (
	"bytes"
	"embed"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/page"
)

// HTML writes one self-contained HTML page: for an audit report, its
// summary, charts and sortable tables; for the catalogue (see [Catalogue]),
// the registry's owners and families. The page makes no request: its CSS,
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

// htmlTemplates is the template set of the audit page and the catalogue:
// internal/page's shell, with parts.html.tmpl (its "nav" and "body", and
// the table parts both documents share) and the sections of each,
// audit.html.tmpl and catalogue.html.tmpl.
var htmlTemplates = page.Parse(htmlFiles, "templates/*.html.tmpl")

// htmlBody is the page's document: an audit or a catalogue.
type htmlBody struct {
	Audit *htmlAudit
	Cat   *htmlCatalogue
}

// htmlAudit holds the sections of the audit page.
type htmlAudit struct {
	Memory       bool
	MultiDB      bool // several databases: the groups name theirs
	Families     []famRow
	Owners       []ownerRow
	Unregistered string
	Groups       []groupRow
	FindingsHead string // such as "3 errors, 1 warning, 0 info"
	Findings     []findingRow
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
		g := htmlGrid{Title: upperFirst(strings.ReplaceAll(sec.title, "ttl", "TTL")), ID: "stats-" + sectionID(sec.title), Head: sec.g.head, Right: sec.g.right, Note: upperFirst(sec.note)}
		for _, row := range sec.g.rows {
			var cells []htmlCell
			for i, c := range row {
				hc := htmlCell{Text: c.text, Right: i < len(sec.g.right) && sec.g.right[i]}
				for _, k := range c.keys {
					hc.Keys = append(hc.Keys, quoteKey(k))
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

// famRow is a family's live figures.
type famRow struct {
	Name      string
	Anchor    string // the id of the family's row or section
	Owner     string
	Keys      int64
	HasMemory bool // the memory of some keys was measured
	MemCol    bool // the table has a memory column: every row has the cell
	Memory    int64
	MemKeys   int64   // keys whose memory was measured
	TTL       float64 // % of keys with a TTL
	TTLText   string
	Findings  int64
	Search    string
	raw       string // the family's name as the report has it
}

// MemoryText formats the row's memory: "-" when not measured, marked as
// a lower bound when only some keys were.
func (f famRow) MemoryText() string { return memText(f.Memory, f.MemKeys, f.Keys) }

// MemSort is the memory cell's sort value: -1, first, when not measured.
func (f famRow) MemSort() int64 { return memSort(f.Memory, f.MemKeys) }

func memSort(sum, measured int64) int64 {
	if measured <= 0 {
		return -1
	}
	return sum
}

type ownerRow struct {
	Name     string
	Anchor   string
	Contact  string
	Families int
	Keys     int64
	Memory   int64
	MemKeys  int64 // keys whose memory was measured
	TTL      float64
	TTLText  string
	Findings int64
}

// MemoryText formats the owner's memory: "-" when not measured, marked
// as a lower bound when only some keys were.
func (o ownerRow) MemoryText() string { return memText(o.Memory, o.MemKeys, o.Keys) }

// MemSort is the memory cell's sort value: -1, first, when not measured.
func (o ownerRow) MemSort() int64 { return memSort(o.Memory, o.MemKeys) }

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

type findingRow struct {
	Severity string
	Level    int // for sorting: 3 error, 2 warn, 1 info
	Rule     string
	Family   string
	Anchor   string // the family's anchor, or that of the unregistered keys
	Count    int64
	CountTxt string
	Message  string
	Example  string
	Detail   string
	Search   string
}

// familyAnchor is the id of a family's row or section. Family names are
// kebab-case in a valid registry; a report read from elsewhere may hold any
// bytes, so the name is made printable and spaces become underscores (an
// id has none), and html/template escapes the rest.
func familyAnchor(name string) string { return "family-" + anchorText(name) }

// ownerAnchor is the id of an owner's row.
func ownerAnchor(name string) string { return "owner-" + anchorText(name) }

func anchorText(s string) string {
	return strings.ReplaceAll(printable(s[:min(len(s), 256)]), " ", "_")
}

// searchText is what the filter box matches: the lower-cased texts,
// bounded so that a 100 KB name does not bloat every attribute.
func searchText(parts ...string) string {
	const max = 4096
	for i, p := range parts {
		parts[i] = printable(p[:min(len(p), max)])
	}
	s := strings.ToLower(strings.Join(parts, " "))
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "")
	}
	return s
}

// writeAuditHTML renders r as one page.
func writeAuditHTML(b *bytes.Buffer, r *audit.Report, c *audit.Comparison, o Options) error {
	v := newAuditViewFor(r, c)
	p := page.New("keyreg audit")
	p.Version = printable(o.Tool.Version)
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
	a.Families = famRows(r)
	for _, o := range r.Owners {
		a.Owners = append(a.Owners, ownerRow{
			Name: printable(o.Name), Anchor: ownerAnchor(o.Name), Contact: orDash(printable(redact(o.Contact))),
			Families: len(o.Families), Keys: o.Keys, Memory: o.Memory, MemKeys: o.MemoryKeys,
			TTL: pct(o.WithTTL, o.Keys), TTLText: ttlPercent(o.WithTTL, o.Keys), Findings: o.Findings,
		})
	}
	for _, g := range r.Unregistered.Groups {
		ex := g.Examples[:min(len(g.Examples), 3)]
		row := groupRow{Prefix: quoteKey(g.Prefix), Keys: g.Keys, TTL: pct(g.WithTTL, g.Keys), TTLText: ttlPercent(g.WithTTL, g.Keys),
			MemoryText: memText(g.Memory, g.MemoryKeys, g.Keys), Share: memShare(g.Memory, g.MemoryKeys, r.Totals.Memory),
			MemSort: memSort(g.Memory, g.MemoryKeys), DBs: dbList(g.DBs)}
		for _, k := range ex {
			row.Examples = append(row.Examples, quoteKey(k))
		}
		row.Search = searchText(row.Prefix)
		a.Groups = append(a.Groups, row)
	}
	shown := r
	if c != nil {
		shown = c.Filter(r)
	}
	a.Findings = findingRows(shown.Findings, "")
	a.Stats = htmlGrids(v.statSections())
	p.Body = htmlBody{Audit: a}
	p.Charts = auditCharts(r)
	if c != nil {
		p.Charts = append(p.Charts, baselineChart(c))
	}
	return p.Render(b, htmlTemplates)
}

// famRows returns the live figures of r's families, in registry order.
func famRows(r *audit.Report) []famRow {
	var rows []famRow
	for _, f := range r.Families {
		if f == nil {
			continue
		}
		rows = append(rows, famRow{
			Name: printable(f.Name), Anchor: familyAnchor(f.Name), Owner: orDash(printable(f.Owner)),
			Keys: f.Keys, HasMemory: f.MemoryKeys > 0, MemCol: r.MemoryMeasured(), Memory: f.Memory, MemKeys: f.MemoryKeys,
			TTL: pct(f.WithTTL, f.Keys), TTLText: ttlPercent(f.WithTTL, f.Keys), Findings: f.Findings,
			Search: searchText(f.Name, f.Owner), raw: f.Name,
		})
	}
	return rows
}

// findingRows returns the active findings, most severe first; with family
// set, only that family's.
func findingRows(fs []*audit.Finding, family string) []findingRow {
	var rows []findingRow
	for _, f := range sortedFindings(fs) {
		if f.Suppressed || (family != "" && f.Family != family) {
			continue
		}
		row := findingRow{
			Severity: f.Severity.Label(), Level: int(f.Severity), Rule: printable(f.Rule),
			Count: f.Count, CountTxt: strconv.FormatInt(f.Count, 10), Message: printable(redact(f.Message)),
		}
		// A finding on keys of no family links the audit page's section of
		// them.
		row.Anchor, row.Family = "unregistered", "unregistered keys"
		if f.Family != "" {
			row.Anchor, row.Family = familyAnchor(f.Family), printable(f.Family)
		}
		if f.Of > 0 {
			row.CountTxt += "/" + strconv.FormatInt(f.Of, 10)
		}
		if len(f.Examples) > 0 {
			row.Example = quoteKey(f.Examples[0].Key)
			row.Detail = printable(f.Examples[0].Detail)
		}
		row.Search = searchText(f.Rule, f.Family, row.Message, row.Example)
		rows = append(rows, row)
	}
	return rows
}

func pct(n, of int64) float64 {
	if of <= 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func keyCount(n int64) string {
	return diag.Count(n, "key")
}

// auditCharts draws the charts of a report: memory (or keys) per owner and
// per family, the TTL histogram of all keys (or, for a report without one,
// keys with and without a TTL per owner), and the share of unregistered
// keys and, when measured, of their memory.
func auditCharts(r *audit.Report) []page.Chart {
	memory := false
	for _, f := range r.Families {
		if f != nil && f.MemoryKeys > 0 {
			memory = true
		}
	}
	what, format, note := "Keys", keyCount, ""
	if memory {
		what, format = "Memory", humanBytes
		if t := r.Totals; t.MemoryKeys < t.Keys {
			// Never a bar of 0 B for memory not measured: what was not
			// measured is left out, and a partial sum says so.
			note = fmt.Sprintf("measured keys only: %d of %d (--memory measures every key)", t.MemoryKeys, t.Keys)
		}
	}
	// memBar is the bar of memory summed over measured of keys keys; ok
	// is false when none was measured.
	memBar := func(label string, sum, measured, keys int64) (page.Bar, bool) {
		b := page.Bar{Label: label, Values: []int64{sum}}
		if measured < keys {
			b.Text = "≥ " + humanBytes(sum)
		}
		return b, measured > 0
	}
	var owners, ttl []page.Bar
	for _, o := range r.Owners {
		b := page.Bar{Label: printable(o.Name), Values: []int64{o.Keys}}
		ok := true
		if memory {
			b, ok = memBar(b.Label, o.Memory, o.MemoryKeys, o.Keys)
		}
		if ok {
			owners = append(owners, b)
		}
		ttl = append(ttl, page.Bar{Label: printable(o.Name), Values: []int64{o.WithTTL, o.Keys - o.WithTTL},
			Text: ttlPercent(o.WithTTL, o.Keys) + " with TTL"})
	}
	var fams []page.Bar
	for _, f := range r.Families {
		if f == nil {
			continue
		}
		b := page.Bar{Label: printable(f.Name), Values: []int64{f.Keys}}
		ok := true
		if memory {
			b, ok = memBar(b.Label, f.Memory, f.MemoryKeys, f.Keys)
		}
		if ok {
			fams = append(fams, b)
		}
	}
	var out []page.Chart
	if len(owners) > 0 {
		out = append(out, page.NewChart(what+" per owner", note, owners, []string{"c1"}, nil, format))
	}
	if len(fams) > 0 {
		out = append(out, page.NewChart(what+" per family", note, fams, []string{"c2"}, nil, format))
	}
	if h := r.TTL; h.Total() > 0 {
		var buckets []page.Bar
		for i, n := range h {
			buckets = append(buckets, page.Bar{Label: "TTL " + audit.TTLBuckets[i], Values: []int64{n}})
		}
		out = append(out, page.LayoutChart("TTL distribution", "every key audited, by TTL", buckets, []string{"c3"}, nil, keyCount))
		if mt := r.TTLMemory; mt.Total() > 0 && r.Totals.MemoryKeys > 0 {
			var mem []page.Bar
			for i, n := range mt {
				mem = append(mem, page.Bar{Label: "TTL " + audit.TTLBuckets[i], Values: []int64{n}})
			}
			note := "the memory measured, by TTL"
			if r.Totals.MemoryKeys < r.Totals.Keys {
				note = fmt.Sprintf("the memory of the %d keys measured, of %d, by TTL", r.Totals.MemoryKeys, r.Totals.Keys)
			}
			out = append(out, page.LayoutChart("Memory per TTL bucket", note, mem, []string{"c4"}, nil, humanBytes))
		}
	} else if len(ttl) > 0 {
		out = append(out, page.NewChart("TTL per owner", "keys with a TTL, and without", ttl, []string{"c3", "c4"}, []string{"with TTL", "without TTL"}, keyCount))
	}
	// Memory by type, from the per-type sums of what was measured.
	var types []page.Bar
	partialTypes := false
	for _, ts := range r.Types {
		if ts == nil || ts.BytesDist.Count() == 0 {
			continue
		}
		b := page.Bar{Label: printable(ts.Type), Values: []int64{ts.Bytes}}
		if ts.BytesDist.Count() < ts.Keys {
			b.Text, partialTypes = "≥ "+humanBytes(ts.Bytes), true
		}
		types = append(types, b)
	}
	if len(types) > 0 {
		typeNote := ""
		if partialTypes {
			typeNote = fmt.Sprintf("measured keys only: %d of %d (--memory measures every key)", r.Totals.MemoryKeys, r.Totals.Keys)
		}
		out = append(out, page.NewChart("Memory by type", typeNote, types, []string{"c4"}, nil, humanBytes))
	}
	t, u := r.Totals, r.Unregistered
	share := []page.Bar{shareBar("keys", t.Keys-u.Keys, u.Keys)}
	if memory && u.MemoryKeys > 0 {
		label := "memory"
		if t.MemoryKeys < t.Keys {
			label = "measured memory"
		}
		share = append(share, shareBar(label, t.Memory-u.Memory, u.Memory))
	}
	out = append(out, page.LayoutChart("Unregistered share", "of a family, and of none", share, []string{"c1", "c5"}, []string{"registered", "unregistered"}, keyCount))
	return out
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

// shareBar is a row of a share chart: the two parts in thousandths of the
// whole, so that rows of different units (keys, bytes) compare.
func shareBar(label string, registered, unregistered int64) page.Bar {
	registered = max(registered, 0)
	total := registered + unregistered
	b := page.Bar{Label: label, Values: []int64{0, 0}, Text: "no " + label}
	if total > 0 {
		b.Values = []int64{registered * 1000 / total, unregistered * 1000 / total}
		b.Text = fmt.Sprintf("%.1f%% unregistered", pct(unregistered, total))
	}
	return b
}

// stamp formats a time for the page, or "" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
