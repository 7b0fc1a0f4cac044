package report

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
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

//go:embed templates/*.tmpl templates/page.css templates/page.js
var htmlFiles embed.FS

// The page's style and script are inline; the CSP allows exactly these by
// their hashes, so an injected script or style would not run even if it
// slipped past the escaping.
var (
	pageCSS = mustRead("templates/page.css")
	pageJS  = mustRead("templates/page.js")
)

// htmlTemplates is the one template set of the audit page and the
// catalogue (page.html.tmpl holds the layout, the other files its parts).
var htmlTemplates = template.Must(template.New("").Funcs(template.FuncMap{
	"percent": func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"brk":     breakable,
}).ParseFS(htmlFiles, "templates/*.html.tmpl"))

func mustRead(name string) string {
	b, err := htmlFiles.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// cspHash is the CSP source expression that allows an inline element whose
// text is s.
func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// htmlPage is what page.html.tmpl renders: the layout's fields, then
// either an audit or a catalogue.
type htmlPage struct {
	Title   string
	CSP     string
	CSS     template.CSS
	JS      template.JS
	Partial string
	Version string      // keyreg's, in the footer; empty for none
	Summary [][2]string // label and value, at the top
	Filter  string      // the filter box's placeholder; empty for none
	Charts  []chart
	Audit   *htmlAudit
	Cat     *htmlCatalogue
}

// newPage returns a page with the layout's inline parts and their CSP.
func newPage(title string) *htmlPage {
	return &htmlPage{
		Title: title,
		CSP: "default-src 'none'; style-src " + cspHash(pageCSS) + "; script-src " + cspHash(pageJS) +
			"; img-src data:; base-uri 'none'; form-action 'none'",
		CSS: template.CSS(pageCSS),
		JS:  template.JS(pageJS),
	}
}

// render executes the page template into b.
func (p *htmlPage) render(b *bytes.Buffer) error {
	return htmlTemplates.ExecuteTemplate(b, "page", p)
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
	p := newPage("keyreg audit")
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
	p.Audit = a
	p.Charts = auditCharts(r)
	if c != nil {
		p.Charts = append(p.Charts, baselineChart(c))
	}
	return p.render(b)
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

// chart is a horizontal bar chart, drawn as inline SVG by the template.
type chart struct {
	Title  string
	Note   string
	Width  int
	Height int
	Rows   []chartRow
	Legend []legend
}

type chartRow struct {
	Label  string // clipped for the axis
	Full   string // the whole label, in the row's <title>
	Y, TY  int    // the bar's top and the text baseline
	Segs   []seg
	Value  string
	ValueX int
}

type seg struct {
	X, W  int
	Class string
}

type legend struct{ Class, Text string }

// Chart geometry, in SVG user units.
const (
	chartLabelW = 150
	chartBarW   = 250
	chartValueW = 130
	chartRowH   = 18
	chartGap    = 6
	chartRows   = 12 // rows shown; the rest are summed into one
)

// bar is one row of a chart before layout: its label and the values of
// its segments.
type bar struct {
	label  string
	values []int64
	text   string
}

// newChart lays out bars (at most chartRows of them, the largest first;
// the rest summed into one "others" row) with one CSS class per segment.
func newChart(title, note string, bars []bar, classes []string, legends []string, format func(int64) string) chart {
	slices.SortStableFunc(bars, func(a, b bar) int { return cmp.Compare(sum(b.values), sum(a.values)) })
	return layoutChart(title, note, bars, classes, legends, format)
}

// layoutChart is newChart that keeps the bars in their order (a
// histogram's buckets).
func layoutChart(title, note string, bars []bar, classes []string, legends []string, format func(int64) string) chart {
	if len(bars) > chartRows {
		rest := bar{values: make([]int64, len(classes))}
		for _, b := range bars[chartRows-1:] {
			for i, v := range b.values {
				rest.values[i] += v
			}
		}
		rest.label = fmt.Sprintf("%d others", len(bars)-chartRows+1)
		bars = append(bars[:chartRows-1:chartRows-1], rest)
	}
	var top int64
	for _, b := range bars {
		top = max(top, sum(b.values))
	}
	c := chart{Title: title, Note: note, Width: chartLabelW + chartBarW + chartValueW}
	for i, b := range bars {
		y := i * (chartRowH + chartGap)
		row := chartRow{Label: clipLabel(b.label), Full: b.label, Y: y, TY: y + chartRowH - 5}
		x := chartLabelW
		for j, v := range b.values {
			w := 0
			if top > 0 {
				w = int(float64(v) / float64(top) * chartBarW)
			}
			if v > 0 && w == 0 {
				w = 1
			}
			row.Segs = append(row.Segs, seg{X: x, W: w, Class: classes[j]})
			x += w
		}
		row.Value, row.ValueX = cmp.Or(b.text, format(sum(b.values))), x+6
		c.Rows = append(c.Rows, row)
	}
	c.Height = max(len(bars)*(chartRowH+chartGap), chartRowH)
	if len(legends) > 1 {
		for i, l := range legends {
			c.Legend = append(c.Legend, legend{Class: classes[i], Text: l})
		}
	}
	return c
}

func sum(vs []int64) int64 {
	var n int64
	for _, v := range vs {
		n += v
	}
	return n
}

// clipLabel shortens a label for the chart's axis, on a rune boundary.
func clipLabel(s string) string {
	const max = 22
	if len([]rune(s)) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

func keyCount(n int64) string {
	return diag.Count(n, "key")
}

// auditCharts draws the charts of a report: memory (or keys) per owner and
// per family, the TTL histogram of all keys (or, for a report without one,
// keys with and without a TTL per owner), and the share of unregistered
// keys and, when measured, of their memory.
func auditCharts(r *audit.Report) []chart {
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
	memBar := func(label string, sum, measured, keys int64) (bar, bool) {
		b := bar{label: label, values: []int64{sum}}
		if measured < keys {
			b.text = "≥ " + humanBytes(sum)
		}
		return b, measured > 0
	}
	var owners, ttl []bar
	for _, o := range r.Owners {
		b := bar{label: printable(o.Name), values: []int64{o.Keys}}
		ok := true
		if memory {
			b, ok = memBar(b.label, o.Memory, o.MemoryKeys, o.Keys)
		}
		if ok {
			owners = append(owners, b)
		}
		ttl = append(ttl, bar{label: printable(o.Name), values: []int64{o.WithTTL, o.Keys - o.WithTTL},
			text: ttlPercent(o.WithTTL, o.Keys) + " with TTL"})
	}
	var fams []bar
	for _, f := range r.Families {
		if f == nil {
			continue
		}
		b := bar{label: printable(f.Name), values: []int64{f.Keys}}
		ok := true
		if memory {
			b, ok = memBar(b.label, f.Memory, f.MemoryKeys, f.Keys)
		}
		if ok {
			fams = append(fams, b)
		}
	}
	var out []chart
	if len(owners) > 0 {
		out = append(out, newChart(what+" per owner", note, owners, []string{"c1"}, nil, format))
	}
	if len(fams) > 0 {
		out = append(out, newChart(what+" per family", note, fams, []string{"c2"}, nil, format))
	}
	if h := r.TTL; h.Total() > 0 {
		var buckets []bar
		for i, n := range h {
			buckets = append(buckets, bar{label: "TTL " + audit.TTLBuckets[i], values: []int64{n}})
		}
		out = append(out, layoutChart("TTL distribution", "every key audited, by TTL", buckets, []string{"c3"}, nil, keyCount))
		if mt := r.TTLMemory; mt.Total() > 0 && r.Totals.MemoryKeys > 0 {
			var mem []bar
			for i, n := range mt {
				mem = append(mem, bar{label: "TTL " + audit.TTLBuckets[i], values: []int64{n}})
			}
			note := "the memory measured, by TTL"
			if r.Totals.MemoryKeys < r.Totals.Keys {
				note = fmt.Sprintf("the memory of the %d keys measured, of %d, by TTL", r.Totals.MemoryKeys, r.Totals.Keys)
			}
			out = append(out, layoutChart("Memory per TTL bucket", note, mem, []string{"c4"}, nil, humanBytes))
		}
	} else if len(ttl) > 0 {
		out = append(out, newChart("TTL per owner", "keys with a TTL, and without", ttl, []string{"c3", "c4"}, []string{"with TTL", "without TTL"}, keyCount))
	}
	// Memory by type, from the per-type sums of what was measured.
	var types []bar
	partialTypes := false
	for _, ts := range r.Types {
		if ts == nil || ts.BytesDist.Count() == 0 {
			continue
		}
		b := bar{label: printable(ts.Type), values: []int64{ts.Bytes}}
		if ts.BytesDist.Count() < ts.Keys {
			b.text, partialTypes = "≥ "+humanBytes(ts.Bytes), true
		}
		types = append(types, b)
	}
	if len(types) > 0 {
		typeNote := ""
		if partialTypes {
			typeNote = fmt.Sprintf("measured keys only: %d of %d (--memory measures every key)", r.Totals.MemoryKeys, r.Totals.Keys)
		}
		out = append(out, newChart("Memory by type", typeNote, types, []string{"c4"}, nil, humanBytes))
	}
	t, u := r.Totals, r.Unregistered
	share := []bar{shareBar("keys", t.Keys-u.Keys, u.Keys)}
	if memory && u.MemoryKeys > 0 {
		label := "memory"
		if t.MemoryKeys < t.Keys {
			label = "measured memory"
		}
		share = append(share, shareBar(label, t.Memory-u.Memory, u.Memory))
	}
	out = append(out, layoutChart("Unregistered share", "of a family, and of none", share, []string{"c1", "c5"}, []string{"registered", "unregistered"}, keyCount))
	return out
}

// baselineChart draws the change against the baseline: the findings new
// since it, those resolved and those unchanged.
func baselineChart(c *audit.Comparison) chart {
	n := func(es []audit.Entry) int64 { return int64(len(es)) }
	bars := []bar{{label: "new", values: []int64{n(c.New)}}, {label: "unchanged", values: []int64{n(c.Unchanged)}}}
	if c.ResolvedNote == "" {
		bars = append(bars, bar{label: "resolved", values: []int64{n(c.Resolved)}})
	}
	entries := func(v int64) string {
		return diag.Count(v, "entry")
	}
	return layoutChart("Change against the baseline", "findings by rule and family (or prefix)", bars, []string{"c5"}, nil, entries)
}

// shareBar is a row of a share chart: the two parts in thousandths of the
// whole, so that rows of different units (keys, bytes) compare.
func shareBar(label string, registered, unregistered int64) bar {
	registered = max(registered, 0)
	total := registered + unregistered
	b := bar{label: label, values: []int64{0, 0}, text: "no " + label}
	if total > 0 {
		b.values = []int64{registered * 1000 / total, unregistered * 1000 / total}
		b.text = fmt.Sprintf("%.1f%% unregistered", pct(unregistered, total))
	}
	return b
}

// breakable escapes s for HTML text and lets it break only after a run of
// separators (: / . - _ @ | , }), with <wbr>, so that a key, a
// prefix or an address wraps at its parts and never mid-word (the style
// sheet sets no overflow-wrap: anywhere). A part longer than the cell
// makes its table scroll inside its card.
func breakable(s string) template.HTML {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	sep := func(c byte) bool { return strings.IndexByte(":/.-_@|,}", c) >= 0 }
	start := 0
	for i := 0; i+1 < len(s); i++ {
		// No break before the closing quote of a quoted key, nor inside
		// a number (1.5, 12,500).
		digit := func(c byte) bool { return '0' <= c && c <= '9' }
		number := (s[i] == '.' || s[i] == ',') && i > 0 && digit(s[i-1]) && digit(s[i+1])
		if sep(s[i]) && !sep(s[i+1]) && s[i+1:] != `"` && !number {
			b.WriteString(template.HTMLEscapeString(s[start : i+1]))
			b.WriteString("<wbr>")
			start = i + 1
		}
	}
	b.WriteString(template.HTMLEscapeString(s[start:]))
	return template.HTML(b.String())
}

// stamp formats a time for the page, or "" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
