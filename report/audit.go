package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/render"
)

// auditAutomation is the SARIF automationDetails.id of audit runs, unless
// Options.Automation names another.
const auditAutomation = "keyreg/audit/"

// Audit writes the audit report r to w in format f:
//
//   - [Table]: a header block, then tables of families, owners, the largest
//     unregistered prefix groups and findings, then the scan statistics.
//   - [Text]: the same content as aligned plain lines, with the findings as
//     gcc-style lines pointing at keys.yaml; the one-line summary goes to
//     Options.Summary, as for [Diagnostics].
//   - [JSON]: the versioned document described in docs/audit-report.md.
//   - [Markdown]: headings and tables for $GITHUB_STEP_SUMMARY.
//   - [HTML]: one self-contained page with charts and sortable tables
//     (docs/catalogue.md).
//   - [GitHub]: one annotation per finding on its family's line of keys.yaml;
//     Options.StepSummary, when set, receives the markdown report.
//   - [SARIF]: a SARIF 2.1.0 log whose automationDetails.id defaults to
//     "keyreg/audit/".
//   - [Prometheus]: gauges for the node_exporter textfile collector.
//
// Every human format shows a banner when r.Partial is set. Key names are
// binary-safe: they are printed with Go escapes (strconv.Quote) wherever a
// control character or an invalid UTF-8 byte could reach a terminal or a
// document. The report never holds payload values, and URLs with a password
// in the free-text fields are redacted once more.
//
// The output is built in memory and written with one call, except for the
// github format, which also writes the step summary.
func Audit(w io.Writer, f Format, r *audit.Report, o Options) error {
	return AuditBaseline(w, f, r, nil, o)
}

// AuditBaseline writes r like [Audit], compared with a baseline by c (from
// audit.Compare on r); a nil c is [Audit]. The human formats and github
// show only the findings new since the baseline, then sections listing the
// new and the resolved baseline entries; json marks each finding and group
// "new" and adds a "baseline" object; sarif sets every result's
// baselineState to "new" or "unchanged" and lists resolved fingerprints in
// the run's properties; prometheus adds keyreg_baseline_* gauges.
func AuditBaseline(w io.Writer, f Format, r *audit.Report, c *audit.Comparison, o Options) error {
	if r == nil {
		return fmt.Errorf("writing %s report: no audit report", f)
	}
	rd, err := lookup(f, DocAudit)
	if err != nil {
		return err
	}
	if o.Tool.Name == "" {
		o.Tool.Name = "keyreg"
	}
	if err := rd.audit(w, r, c, o); err != nil {
		return fmt.Errorf("writing %s report: %w", f, err)
	}
	return nil
}

// buffered adapts an audit renderer that builds its output in memory, so
// that it reaches w in one write.
func buffered(write func(b *bytes.Buffer, r *audit.Report, c *audit.Comparison, o Options) error) func(io.Writer, *audit.Report, *audit.Comparison, Options) error {
	return func(w io.Writer, r *audit.Report, c *audit.Comparison, o Options) error {
		var b bytes.Buffer
		if err := write(&b, r, c, o); err != nil {
			return err
		}
		_, err := w.Write(b.Bytes())
		return err
	}
}

// writeAuditGitHub prints annotations through the github renderer and the
// markdown report to o.StepSummary.
func writeAuditGitHub(w io.Writer, r *audit.Report, c *audit.Comparison, o Options) error {
	if r.Partial {
		// A file-less warning, so the run page says the counts are incomplete.
		line := fmt.Sprintf("::warning title=%s::%s\n", ghProperty.Replace("partial audit"), ghData.Replace(render.PartialBanner(r)))
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	if msg := notCheckedBanner(r); msg != "" {
		line := fmt.Sprintf("::warning title=%s::%s\n", ghProperty.Replace("rules not checked"), ghData.Replace(msg))
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	step := o.StepSummary
	if step != nil {
		// The renderer's own findings table is replaced by the audit report;
		// a non-nil writer keeps its "see job summary" hint.
		o.StepSummary = io.Discard
	}
	shown := r
	if c != nil {
		// Only new findings are annotated; one notice sums up the rest.
		shown = c.Filter(r)
		line := fmt.Sprintf("::notice title=%s::%s\n", ghProperty.Replace("keyreg baseline"), ghData.Replace(baselineLine(c)))
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	if err := renderList(w, writeGitHub, auditDiagnostics(shown), o); err != nil {
		return err
	}
	if step != nil {
		var mdBuf bytes.Buffer
		writeAuditMarkdown(&mdBuf, r, c)
		if _, err := step.Write(mdBuf.Bytes()); err != nil {
			return fmt.Errorf("writing step summary: %w", err)
		}
	}
	return nil
}

// writeAuditSARIF prints r as a SARIF log whose automationDetails.id
// defaults to auditAutomation, with one invocation saying whether the audit
// covered the whole keyspace.
func writeAuditSARIF(w io.Writer, r *audit.Report, c *audit.Comparison, o Options) error {
	if o.Automation == "" {
		o.Automation = auditAutomation
	}
	o.invocation = auditInvocation(r)
	if c != nil {
		return writeAuditSARIFBaseline(w, r, c, o)
	}
	return renderList(w, writeSARIF, auditDiagnostics(r), o)
}

// auditView is the content that the table, text and markdown formats share,
// already escaped for plain text. Key names and prefixes are kept apart in
// cell.keys, so that markdown can put them in code spans.
type auditView struct {
	header   [][2]string // label, value
	partial  string      // banner, empty when the audit is complete
	memory   bool        // some family's memory was measured
	families grid
	owners   grid
	// unregistered describes the unregistered keys in one line; groups is
	// empty when there are none.
	unregistered string
	groups       grid
	findings     grid // active findings, most severe first
	suppressed   int
	summary      string // such as "2 errors, 1 warning, 1 info, 1 suppressed"
	// findingsTitle heads the findings: "findings", or "findings new since
	// baseline" when compared with one.
	findingsTitle string
	// baseline is set when the report was compared with a baseline.
	baseline *baselineView
	// byDB splits the families by database; empty unless several
	// databases were audited.
	byDB grid
	// channels, channelGroups and channelNote are the channel audit:
	// per declaration, unregistered channel groups, and its summary line
	// (empty when the channels were not audited).
	channels      grid
	channelGroups grid
	channelNote   string
	// fanOut is the fan-out estimate of classic Pub/Sub, one row, titled
	// fanOutTitle; fanOutNote says why there is none.
	fanOut      grid
	fanOutTitle string
	fanOutNote  string
	// topBytes and topElements list the largest keys, types the
	// per-type sizes and ttl the TTL histograms, overall and per family.
	topBytes grid
	// topBytesTitle and topElementsTitle say what the lists cover: how
	// many keys' memory was measured, or length read, when not all. A
	// list of none is left out, and its note says why in one line.
	topBytesTitle    string
	topElementsTitle string
	topBytesNote     string
	topElementsNote  string
	topElements      grid
	types            grid
	ttl              grid
	scan             string
	notes            []string
}

// grid is a table: head names the columns, right marks numeric ones.
type grid struct {
	head  []string
	right []bool
	rows  [][]cell
}

// cell is one table cell: plain text, or a list of key names.
type cell struct {
	text string
	keys []string // raw key names, when the cell lists keys
}

// plain returns the cell as plain text, keys quoted.
func (c cell) plain() string {
	if c.keys == nil {
		return c.text
	}
	q := make([]string, len(c.keys))
	for i, k := range c.keys {
		q[i] = render.QuoteKey(k)
	}
	return strings.Join(q, ", ")
}

func txt(format string, args ...any) cell { return cell{text: fmt.Sprintf(format, args...)} }

// newAuditView prepares r for the human formats.
func newAuditView(r *audit.Report) *auditView {
	v := &auditView{findingsTitle: "findings", memory: r.MemoryMeasured()}
	v.summary = prepare(auditDiagnostics(r)).Count().String()
	if len(r.Scan.NotChecked) > 0 {
		// The counts do not cover these rules: never a bare "0 errors".
		ids := make([]string, len(r.Scan.NotChecked))
		for i, id := range r.Scan.NotChecked {
			ids[i] = render.Printable(id)
		}
		v.summary += "; not checked: " + strings.Join(ids, ", ")
	}

	target := render.Printable(r.DisplayTarget())
	if target == "" {
		target = "(unknown)"
	}
	if r.Mode != "" {
		target += " (" + render.Printable(r.Mode) + ")"
	}
	v.header = append(v.header, [2]string{"target", target})
	if r.Registry != "" {
		v.header = append(v.header, [2]string{"registry", render.Printable(r.Registry)})
	}
	if !r.Started.IsZero() {
		v.header = append(v.header, [2]string{"started", r.Started.UTC().Format(time.RFC3339)})
	}
	v.header = append(v.header, [2]string{"keys", render.KeyCounts(r)})
	if r.KeyBytes > 0 {
		v.header = append(v.header, [2]string{"key names", render.HumanBytes(r.KeyBytes)})
	}
	v.header = append(v.header, [2]string{"findings", v.summary})
	if r.Partial {
		v.partial = render.PartialBanner(r)
	}

	// Families, in registry order.
	v.families.head = []string{"family", "owner", "keys"}
	v.families.right = []bool{false, false, true}
	if v.memory {
		v.families.head = append(v.families.head, "memory")
		v.families.right = append(v.families.right, true)
	}
	v.families.head = append(v.families.head, "% ttl", "keys with findings")
	v.families.right = append(v.families.right, true, true)
	for _, f := range r.Families {
		row := []cell{{text: render.Printable(f.Name)}, {text: render.OrDash(render.Printable(f.Owner))}, txt("%d", f.Keys)}
		if v.memory {
			row = append(row, cell{text: render.MemText(f.Memory, f.MemoryKeys, f.Keys)})
		}
		row = append(row, cell{text: render.TTLPercent(f.WithTTL, f.Keys)}, txt("%d", f.Findings))
		v.families.rows = append(v.families.rows, row)
	}

	// Owners, sorted by name by the audit.
	v.owners.head = []string{"owner", "contact", "families", "keys"}
	v.owners.right = []bool{false, false, true, true}
	if v.memory {
		v.owners.head = append(v.owners.head, "memory")
		v.owners.right = append(v.owners.right, true)
	}
	v.owners.head = append(v.owners.head, "% ttl", "keys with findings")
	v.owners.right = append(v.owners.right, true, true)
	for _, o := range r.Owners {
		row := []cell{{text: render.Printable(o.Name)}, {text: render.OrDash(render.Printable(render.Redact(o.Contact)))}, txt("%d", len(o.Families)), txt("%d", o.Keys)}
		if v.memory {
			row = append(row, cell{text: render.MemText(o.Memory, o.MemoryKeys, o.Keys)})
		}
		row = append(row, cell{text: render.TTLPercent(o.WithTTL, o.Keys)}, txt("%d", o.Findings))
		v.owners.rows = append(v.owners.rows, row)
	}

	// Unregistered keys, largest group first as the audit sorted them.
	u := r.Unregistered
	v.unregistered = diag.Count(u.Keys, "key")
	if len(u.Groups) > 0 {
		v.unregistered += " in " + diag.Count(len(u.Groups), "prefix group")
	}
	if u.Other > 0 {
		v.unregistered += fmt.Sprintf(", %d more under other prefixes", u.Other)
	}
	v.groups.head = []string{"prefix", "keys"}
	v.groups.right = []bool{false, true}
	if r.MultiDB() {
		v.groups.head = slices.Insert(v.groups.head, 1, "db")
		v.groups.right = slices.Insert(v.groups.right, 1, false)
	}
	if v.memory {
		v.groups.head = append(v.groups.head, "memory", "% memory")
		v.groups.right = append(v.groups.right, true, true)
	}
	v.groups.head = append(v.groups.head, "% ttl", "examples")
	v.groups.right = append(v.groups.right, true, false)
	for _, g := range u.Groups {
		ex := g.Examples
		if len(ex) > 3 {
			ex = ex[:3]
		}
		row := []cell{{keys: []string{g.Prefix}}, txt("%d", g.Keys)}
		if r.MultiDB() {
			row = slices.Insert(row, 1, cell{text: dbList(g.DBs)})
		}
		if v.memory {
			row = append(row, cell{text: render.MemText(g.Memory, g.MemoryKeys, g.Keys)}, cell{text: memShare(g.Memory, g.MemoryKeys, r.Totals.Memory)})
		}
		row = append(row, cell{text: render.TTLPercent(g.WithTTL, g.Keys)}, cell{keys: append([]string{}, ex...)})
		v.groups.rows = append(v.groups.rows, row)
	}
	v.stats(r)

	// Findings: active ones, most severe first.
	v.findings.head = []string{"severity", "rule", "family", "keys", "message", "example"}
	v.findings.right = []bool{false, false, false, true, false, false}
	for _, f := range render.SortedFindings(r.Findings) {
		if f.Suppressed {
			v.suppressed++
			continue
		}
		count := fmt.Sprintf("%d", f.Count)
		if f.Of > 0 {
			count += fmt.Sprintf("/%d", f.Of)
		}
		example := cell{}
		if len(f.Examples) > 0 {
			e := f.Examples[0]
			example.keys = []string{e.Key}
			var parts []string
			if e.Instance != "" { // a merged report: the instance it comes from
				parts = append(parts, "on "+render.Printable(render.Redact(e.Instance)))
			}
			if r.MultiDB() {
				parts = append(parts, fmt.Sprintf("db %d", e.DB))
			}
			if e.Detail != "" {
				parts = append(parts, render.Printable(e.Detail))
			}
			example.text = strings.Join(parts, ", ")
		}
		v.findings.rows = append(v.findings.rows, []cell{
			{text: f.Severity.Label()}, {text: render.Printable(f.Rule)}, {text: render.OrDash(render.Printable(findingSubject(f)))},
			{text: count}, {text: render.Printable(f.Message)}, example,
		})
	}

	v.channelView(r.Channels)
	s := r.Scan
	v.scan = fmt.Sprintf("scan: %d %s, %d %s, %s keys/s, %s, %d vanished, %d duplicates, %d skipped, %d sampled",
		s.Nodes, diag.Plural(int64(s.Nodes), "node"), s.Keys, diag.Plural(s.Keys, "key"), strconv.FormatFloat(finite(s.KeysPerSec), 'f', 0, 64),
		s.Duration.Round(time.Millisecond), s.Vanished, s.Duplicates, s.Skipped, s.Sampled)
	for _, n := range s.Notes {
		v.notes = append(v.notes, render.Printable(render.Redact(n)))
	}
	return v
}

// stats fills the keyspace statistics of the view.
func (v *auditView) stats(r *audit.Report) {
	if r.MultiDB() {
		v.byDB.head = []string{"family", "db", "keys", "% ttl"}
		v.byDB.right = []bool{false, true, true, true}
		if v.memory {
			v.byDB.head = append(v.byDB.head, "memory")
			v.byDB.right = append(v.byDB.right, true)
		}
		for _, f := range r.Families {
			for _, d := range f.DBs {
				row := []cell{{text: render.Printable(f.Name)}, txt("%d", d.DB), txt("%d", d.Keys), {text: render.TTLPercent(d.WithTTL, d.Keys)}}
				if v.memory {
					row = append(row, cell{text: render.MemText(d.Memory, d.MemoryKeys, d.Keys)})
				}
				v.byDB.rows = append(v.byDB.rows, row)
			}
		}
	}

	topGrid := func(keys []*audit.TopKey, by func(*audit.TopKey) int64) grid {
		g := grid{
			head:  []string{"key", "family", "type", "bytes", "elements", "ttl"},
			right: []bool{false, false, false, true, true, true},
		}
		if r.MultiDB() {
			g.head = slices.Insert(g.head, 1, "db")
			g.right = slices.Insert(g.right, 1, true)
		}
		for _, t := range keys {
			// A key whose measure was not taken is not among the largest.
			if t == nil || by(t) <= 0 {
				continue
			}
			fam := render.Printable(t.Family)
			if fam == "" {
				fam = "(unregistered)"
			}
			row := []cell{{keys: []string{t.Key}}, {text: fam}, {text: render.OrDash(render.Printable(t.Type))},
				{text: sizeOrDash(t.Bytes, render.HumanBytes)}, {text: sizeOrDash(t.Elements, count)},
				{text: ttlText(t.TTL)}}
			if r.MultiDB() {
				row = slices.Insert(row, 1, txt("%d", t.DB))
			}
			g.rows = append(g.rows, row)
		}
		return g
	}
	v.topBytes = topGrid(r.TopKeys.ByBytes, func(t *audit.TopKey) int64 { return t.Bytes })
	v.topElements = topGrid(r.TopKeys.ByElements, func(t *audit.TopKey) int64 { return t.Elements })
	// A live audit measures memory only for families with max_bytes unless
	// --memory, and reads lengths only for families with max_len: the
	// titles say among how many keys the largest were found.
	var measured, lengths, collections int64
	for _, t := range r.Types {
		if t == nil {
			continue
		}
		measured += t.BytesDist.Count()
		lengths += t.ElementsDist.Count()
		if t.Type != "string" {
			collections += t.Keys
		}
	}
	v.topBytesTitle = "largest keys by bytes"
	if measured < r.Totals.Keys {
		v.topBytesTitle = fmt.Sprintf("largest keys by bytes (of %d measured; --memory: all %d)", measured, r.Totals.Keys)
	}
	if len(v.topBytes.rows) == 0 && r.Totals.Keys > 0 {
		v.topBytesNote = "largest keys by bytes: no key's memory was measured (--memory measures every key)"
	}
	v.topElementsTitle = "largest keys by elements"
	if lengths < collections {
		v.topElementsTitle = fmt.Sprintf("largest keys by elements (of %d %s whose length was read, of %d)", lengths, diag.Plural(lengths, "collection"), collections)
	}
	if len(v.topElements.rows) == 0 && collections > 0 {
		v.topElementsNote = "largest keys by elements: no collection's length was read (a live audit reads the lengths of families with max_len)"
	}

	// The keys column counts the type's keys; measured, those the
	// percentiles come from.
	v.types.head = []string{"type", "keys", "size of", "measured", "p50", "p90", "p99", "max", "encodings"}
	v.types.right = []bool{false, true, false, true, true, true, true, true, false}
	for _, t := range r.Types {
		if t == nil {
			continue
		}
		for _, d := range []struct {
			what string
			s    *audit.Sketch
			f    func(int64) string
		}{{"bytes", &t.BytesDist, render.HumanBytes}, {"elements", &t.ElementsDist, count}} {
			// A measure none of the type's keys had is left out; a
			// type with neither keeps its bytes row, of dashes.
			if d.s.Count() == 0 && (d.what == "elements" || t.ElementsDist.Count() > 0) {
				continue
			}
			row := []cell{{text: render.Printable(t.Type)}, txt("%d", t.Keys), {text: d.what}, txt("%d", d.s.Count())}
			for _, q := range []float64{0.5, 0.9, 0.99} {
				row = append(row, cell{text: quantile(d.s, q, d.f)})
			}
			row = append(row, cell{text: quantile(d.s, 1, d.f)}, cell{text: encodingsText(t.Encodings)})
			v.types.rows = append(v.types.rows, row)
		}
	}

	v.ttl.head = append([]string{"ttl", "keys"}, audit.TTLBuckets[:]...)
	v.ttl.right = []bool{false, true}
	for range audit.TTLBuckets {
		v.ttl.right = append(v.ttl.right, true)
	}
	add := func(name string, h *audit.TTLHistogram) {
		row := []cell{{text: name}, txt("%d", h.Total())}
		for _, n := range h {
			row = append(row, txt("%d", n))
		}
		v.ttl.rows = append(v.ttl.rows, row)
	}
	if r.TTL.Total() > 0 {
		add("all keys", &r.TTL)
		// The memory of the measured keys per bucket: what expires soon,
		// and what never does.
		if t := r.TTLMemory.Total(); t > 0 && r.Totals.MemoryKeys > 0 {
			name := "memory"
			if r.Totals.MemoryKeys < r.Totals.Keys {
				name = fmt.Sprintf("memory (%d measured)", r.Totals.MemoryKeys)
			}
			row := []cell{{text: name}, {text: render.HumanBytes(t)}}
			for i, n := range r.TTLMemory {
				text := "-" // no key in the bucket
				if r.TTL[i] > 0 {
					text = render.HumanBytes(n)
				}
				row = append(row, cell{text: text})
			}
			v.ttl.rows = append(v.ttl.rows, row)
		}
		for _, f := range r.Families {
			if f.TTL.Total() > 0 {
				add(render.Printable(f.Name), &f.TTL)
			}
		}
		if r.Unregistered.TTL.Total() > 0 {
			add("(unregistered)", &r.Unregistered.TTL)
		}
	}
}

// section is a titled table of the view. A section with a note and no
// rows stands for a table left out: the note says why, in one line.
type section struct {
	title string
	g     grid
	note  string
	id    string // the HTML id's part after "stats-"; from the title when empty
}

// statSections returns the statistics tables that have rows, and the
// notes of those left out, in the order every human format prints them.
func (v *auditView) statSections() []section {
	var out []section
	for _, s := range []section{
		{title: "families by database", g: v.byDB},
		{title: v.topBytesTitle, g: v.topBytes, note: v.topBytesNote},
		{title: v.topElementsTitle, g: v.topElements, note: v.topElementsNote},
		{title: "types", g: v.types},
		{title: "TTL histogram", g: v.ttl},
		{title: v.channelNote, g: v.channels, note: v.channelNote, id: "channels"},
		{title: "unregistered channels", g: v.channelGroups},
		{title: v.fanOutTitle, g: v.fanOut, note: v.fanOutNote, id: "fan-out"},
	} {
		if len(s.g.rows) > 0 {
			s.note = ""
			out = append(out, s)
		} else if s.note != "" {
			out = append(out, s)
		}
	}
	return out
}

// quantile formats the q-quantile of s (its exact max for q = 1), or "-"
// when s is empty.
func quantile(s *audit.Sketch, q float64, f func(int64) string) string {
	if s.Count() == 0 {
		return "-"
	}
	if q == 1 {
		return f(s.Max())
	}
	return f(s.Quantile(q))
}

func count(n int64) string { return strconv.FormatInt(n, 10) }

func sizeOrDash(n int64, f func(int64) string) string {
	if n <= 0 {
		return "-"
	}
	return f(n)
}

// ttlText formats a TTL compactly: "none", "45s", "2h", "3d".
func ttlText(d time.Duration) string {
	switch {
	case d < 0:
		return "none"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int64(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int64(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int64(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int64(d/(24*time.Hour)))
}

// encodingsText lists the encodings seen, "embstr 9000, int 1500", or
// "-" when none was read.
func encodingsText(es []audit.EncodingCount) string {
	if len(es) == 0 {
		return "-"
	}
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = render.Printable(e.Encoding) + " " + strconv.FormatInt(e.Keys, 10)
	}
	return strings.Join(s, ", ")
}

// dbList formats the databases of a group, "0, 3", or "-" when unknown
// (a report of keyreg before groups had them).
func dbList(dbs []int) string {
	if len(dbs) == 0 {
		return "-"
	}
	s := make([]string, len(dbs))
	for i, db := range dbs {
		s[i] = strconv.Itoa(db)
	}
	return strings.Join(s, ", ")
}

// memShare is memory as a share of the measured total, or "-" when none
// of its keys was measured.
func memShare(sum, measured, total int64) string {
	if measured <= 0 {
		return "-"
	}
	return sharePercent(sum, total)
}

// sharePercent formats n as a share of total, or "-" when total is 0.
func sharePercent(n, total int64) string {
	if total <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(total))
}

// exampleText renders a findings example cell as plain text: the quoted key
// and its detail.
func exampleText(c cell) string {
	if len(c.keys) == 0 {
		return render.OrDash(c.text)
	}
	if c.text == "" {
		return c.plain()
	}
	return c.plain() + " (" + c.text + ")"
}

// auditDiagnostics returns r's findings as diagnostics on keys.yaml, with
// any control character or invalid UTF-8 byte in their text escaped.
func auditDiagnostics(r *audit.Report) diag.List {
	l := r.Diagnostics()
	for i := range l {
		d := &l[i]
		d.Rule, d.Family = render.Printable(d.Rule), render.Printable(d.Family)
		d.Message, d.Reason = render.Printable(render.Redact(d.Message)), render.Printable(render.Redact(d.Reason))
	}
	return l
}

// auditInvocation is the SARIF invocation of an audit: successful when it
// covered the whole keyspace, else unsuccessful with the partial banner as
// an error notification, so that code scanning does not read a partial
// audit's results as complete.
//
// Rules left unchecked on some keys (Scan.NotChecked) add a warning
// notification, so that code scanning does not read their absence of
// results as a pass.
func auditInvocation(r *audit.Report) *sarifInvocation {
	inv := &sarifInvocation{ExecutionSuccessful: !r.Partial}
	if r.Partial {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
			sarifNotification{Level: "error", Message: sarifText{Text: render.PartialBanner(r)}})
	}
	if msg := notCheckedBanner(r); msg != "" {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications,
			sarifNotification{Level: "warning", Message: sarifText{Text: msg}})
	}
	return inv
}

// notCheckedBanner says which key rules the audit left unchecked on some
// keys, or "" when it checked them all.
func notCheckedBanner(r *audit.Report) string {
	if len(r.Scan.NotChecked) == 0 {
		return ""
	}
	ids := make([]string, len(r.Scan.NotChecked))
	for i, id := range r.Scan.NotChecked {
		ids[i] = render.Printable(id)
	}
	return "NOT CHECKED: " + strings.Join(ids, ", ") + " did not run on some keys, whose values or lengths were not read; the findings do not cover them (see the audit's notes)"
}

// finite returns f, or 0 when f is NaN or infinite.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// findingSubject is what a finding is about: its family, or the channel
// (declaration or prefix group) of a channel audit finding.
func findingSubject(f *audit.Finding) string {
	if f.Channel != "" {
		return "channel " + f.Channel
	}
	return f.Family
}

// channelView fills the channel sections from the report's channel audit.
func (v *auditView) channelView(c *audit.ChannelsReport) {
	if c == nil {
		return
	}
	// Nodes counts the nodes asked; those not read are not "read".
	read := strconv.Itoa(c.Nodes)
	if n := len(c.NotChecked); n > 0 {
		read = fmt.Sprintf("%d of %d", max(c.Nodes-n, 0), c.Nodes)
	}
	note := fmt.Sprintf("channels: %s %s read, %d pattern %s", read, diag.Plural(int64(c.Nodes), "node"),
		c.PatternSubscriptions, diag.Plural(c.PatternSubscriptions, "subscription"))
	if len(c.NotChecked) > 0 {
		var nc []string
		for _, n := range c.NotChecked {
			nc = append(nc, render.Printable(render.Redact(n)))
		}
		note += "; NOT CHECKED on " + strings.Join(nc, "; ")
	}
	for _, m := range c.Misplaced {
		note += "; " + render.Printable(m)
	}
	v.channels.head = []string{"channel", "mode", "owner", "live", "subscribers", "nodes"}
	v.channels.right = []bool{false, false, false, true, true, true}
	for _, d := range c.Declared {
		v.channels.rows = append(v.channels.rows, []cell{
			{text: render.Printable(d.Name)}, {text: render.Printable(d.Mode)}, {text: render.OrDash(render.Printable(d.Owner))},
			{text: strconv.Itoa(d.Live)}, {text: count(d.Subscribers)}, {text: strconv.Itoa(d.Nodes)},
		})
	}
	v.channelGroups.head = []string{"prefix", "channels", "subscribers", "examples"}
	v.channelGroups.right = []bool{false, true, true, false}
	for _, g := range c.Unregistered {
		v.channelGroups.rows = append(v.channelGroups.rows, []cell{
			{keys: []string{g.Prefix}}, {text: strconv.Itoa(g.Channels)}, {text: count(g.Subscribers)}, {keys: g.Examples},
		})
	}
	v.channelNote = note
	v.fanOutView(c.FanOut)
}

// fanOutView fills the fan-out section: the estimate as one row, or the
// note saying why there is none (never a row of zeros).
func (v *auditView) fanOutView(f *audit.FanOutReport) {
	if f == nil {
		return
	}
	e := f.Estimate
	if e == nil {
		reason := render.Printable(render.Redact(f.Reason))
		if rest, ok := strings.CutPrefix(reason, "fan-out "); ok {
			v.fanOutNote = "classic Pub/Sub fan-out " + rest // "fan-out unknown: ..."
		} else {
			v.fanOutNote = "classic Pub/Sub fan-out: " + reason
		}
		return
	}
	window := "merged"
	if f.WindowStart != "" {
		window = strconv.FormatFloat(f.WindowSeconds, 'f', 1, 64) + "s"
		if f.WaitedSeconds > 0 {
			window += " (" + strconv.FormatFloat(f.WaitedSeconds, 'f', 1, 64) + "s waited)"
		}
	}
	v.fanOutTitle = fmt.Sprintf("classic Pub/Sub fan-out, an estimate (bus bytes: at least a %d-byte header and 8 bytes of lengths per bus message; channel names and payloads not counted)", e.BusHeaderBytes)
	v.fanOut.head = []string{"window", "nodes", "published/s", "bus messages/s", "bus bytes/s (at least)"}
	v.fanOut.right = []bool{false, true, true, true, true}
	v.fanOut.rows = [][]cell{{
		{text: window}, {text: strconv.Itoa(e.Nodes)}, {text: audit.Rate(e.PublishedPerSecond)},
		{text: audit.Rate(e.BusMessagesPerSecond)}, {text: audit.ByteRate(e.BusBytesPerSecondMin)},
	}}
}
