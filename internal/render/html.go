package render

import (
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/page"
)

// FamRow is a family's live figures.
type FamRow struct {
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
	Raw       string // the family's name as the report has it
}

// MemoryText formats the row's memory: "-" when not measured, marked as
// a lower bound when only some keys were.
func (f FamRow) MemoryText() string { return MemText(f.Memory, f.MemKeys, f.Keys) }

// MemSort is the memory cell's sort value: -1, first, when not measured.
func (f FamRow) MemSort() int64 { return MemSort(f.Memory, f.MemKeys) }

// MemSort is the sort value of a memory cell: -1, first, when none of
// its keys was measured.
func MemSort(sum, measured int64) int64 {
	if measured <= 0 {
		return -1
	}
	return sum
}

// OwnerRow is an owner's live figures.
type OwnerRow struct {
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
func (o OwnerRow) MemoryText() string { return MemText(o.Memory, o.MemKeys, o.Keys) }

// MemSort is the memory cell's sort value: -1, first, when not measured.
func (o OwnerRow) MemSort() int64 { return MemSort(o.Memory, o.MemKeys) }

// FindingRow is one finding of an audit, as the pages' tables show it.
type FindingRow struct {
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

// FamilyAnchor is the id of a family's row or section. Family names are
// kebab-case in a valid registry; a report read from elsewhere may hold any
// bytes, so the name is made printable and spaces become underscores (an
// id has none), and html/template escapes the rest.
func FamilyAnchor(name string) string { return "family-" + anchorText(name) }

// ChannelAnchor is the id of a Pub/Sub channel's section: channels and
// families are separate namespaces, so they have separate anchors.
func ChannelAnchor(name string) string { return "channel-" + anchorText(name) }

// OwnerAnchor is the id of an owner's row.
func OwnerAnchor(name string) string { return "owner-" + anchorText(name) }

func anchorText(s string) string {
	return strings.ReplaceAll(Printable(s[:min(len(s), 256)]), " ", "_")
}

// SearchText is what the filter box matches: the lower-cased texts,
// bounded so that a 100 KB name does not bloat every attribute.
func SearchText(parts ...string) string {
	const max = 4096
	for i, p := range parts {
		parts[i] = Printable(p[:min(len(p), max)])
	}
	s := strings.ToLower(strings.Join(parts, " "))
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "")
	}
	return s
}

// FamRows returns the live figures of r's families, in registry order.
func FamRows(r *audit.Report) []FamRow {
	var rows []FamRow
	for _, f := range r.Families {
		if f == nil {
			continue
		}
		rows = append(rows, FamRow{
			Name: Printable(f.Name), Anchor: FamilyAnchor(f.Name), Owner: OrDash(Printable(f.Owner)),
			Keys: f.Keys, HasMemory: f.MemoryKeys > 0, MemCol: r.MemoryMeasured(), Memory: f.Memory, MemKeys: f.MemoryKeys,
			TTL: Pct(f.WithTTL, f.Keys), TTLText: TTLPercent(f.WithTTL, f.Keys), Findings: f.Findings,
			Search: SearchText(f.Name, f.Owner), Raw: f.Name,
		})
	}
	return rows
}

// FindingRows returns the active findings, most severe first; with family
// set, only that family's.
func FindingRows(fs []*audit.Finding, family string) []FindingRow {
	var rows []FindingRow
	for _, f := range SortedFindings(fs) {
		if f.Suppressed || (family != "" && f.Family != family) {
			continue
		}
		row := FindingRow{
			Severity: f.Severity.Label(), Level: int(f.Severity), Rule: Printable(f.Rule),
			Count: f.Count, CountTxt: strconv.FormatInt(f.Count, 10), Message: Printable(Redact(f.Message)),
		}
		// A finding on keys of no family links the audit page's section of
		// them.
		row.Anchor, row.Family = "unregistered", "unregistered keys"
		if f.Channel != "" {
			row.Anchor, row.Family = "stats-channels", "channel "+Printable(f.Channel)
		} else if f.Family != "" {
			row.Anchor, row.Family = FamilyAnchor(f.Family), Printable(f.Family)
		}
		if f.Of > 0 {
			row.CountTxt += "/" + strconv.FormatInt(f.Of, 10)
		}
		if len(f.Examples) > 0 {
			row.Example = QuoteKey(f.Examples[0].Key)
			row.Detail = Printable(f.Examples[0].Detail)
		}
		row.Search = SearchText(f.Rule, f.Family, row.Message, row.Example)
		rows = append(rows, row)
	}
	return rows
}

// Pct is n as a percentage of of, or 0 when of is not positive.
func Pct(n, of int64) float64 {
	if of <= 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// KeyCount writes n keys, singular or plural.
func KeyCount(n int64) string {
	return diag.Count(n, "key")
}

// AuditCharts draws the charts of a report: memory (or keys) per owner and
// per family, the TTL histogram of all keys (or, for a report without one,
// keys with and without a TTL per owner), and the share of unregistered
// keys and, when measured, of their memory.
func AuditCharts(r *audit.Report) []page.Chart {
	memory := false
	for _, f := range r.Families {
		if f != nil && f.MemoryKeys > 0 {
			memory = true
		}
	}
	what, format, note := "Keys", KeyCount, ""
	if memory {
		what, format = "Memory", HumanBytes
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
			b.Text = "≥ " + HumanBytes(sum)
		}
		return b, measured > 0
	}
	var owners, ttl []page.Bar
	for _, o := range r.Owners {
		b := page.Bar{Label: Printable(o.Name), Values: []int64{o.Keys}}
		ok := true
		if memory {
			b, ok = memBar(b.Label, o.Memory, o.MemoryKeys, o.Keys)
		}
		if ok {
			owners = append(owners, b)
		}
		ttl = append(ttl, page.Bar{Label: Printable(o.Name), Values: []int64{o.WithTTL, o.Keys - o.WithTTL},
			Text: TTLPercent(o.WithTTL, o.Keys) + " with TTL"})
	}
	var fams []page.Bar
	for _, f := range r.Families {
		if f == nil {
			continue
		}
		b := page.Bar{Label: Printable(f.Name), Values: []int64{f.Keys}}
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
		out = append(out, page.LayoutChart("TTL distribution", "every key audited, by TTL", buckets, []string{"c3"}, nil, KeyCount))
		if mt := r.TTLMemory; mt.Total() > 0 && r.Totals.MemoryKeys > 0 {
			var mem []page.Bar
			for i, n := range mt {
				mem = append(mem, page.Bar{Label: "TTL " + audit.TTLBuckets[i], Values: []int64{n}})
			}
			note := "the memory measured, by TTL"
			if r.Totals.MemoryKeys < r.Totals.Keys {
				note = fmt.Sprintf("the memory of the %d keys measured, of %d, by TTL", r.Totals.MemoryKeys, r.Totals.Keys)
			}
			out = append(out, page.LayoutChart("Memory per TTL bucket", note, mem, []string{"c4"}, nil, HumanBytes))
		}
	} else if len(ttl) > 0 {
		out = append(out, page.NewChart("TTL per owner", "keys with a TTL, and without", ttl, []string{"c3", "c4"}, []string{"with TTL", "without TTL"}, KeyCount))
	}
	// Memory by type, from the per-type sums of what was measured.
	var types []page.Bar
	partialTypes := false
	for _, ts := range r.Types {
		if ts == nil || ts.BytesDist.Count() == 0 {
			continue
		}
		b := page.Bar{Label: Printable(ts.Type), Values: []int64{ts.Bytes}}
		if ts.BytesDist.Count() < ts.Keys {
			b.Text, partialTypes = "≥ "+HumanBytes(ts.Bytes), true
		}
		types = append(types, b)
	}
	if len(types) > 0 {
		typeNote := ""
		if partialTypes {
			typeNote = fmt.Sprintf("measured keys only: %d of %d (--memory measures every key)", r.Totals.MemoryKeys, r.Totals.Keys)
		}
		out = append(out, page.NewChart("Memory by type", typeNote, types, []string{"c4"}, nil, HumanBytes))
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
	out = append(out, page.LayoutChart("Unregistered share", "of a family, and of none", share, []string{"c1", "c5"}, []string{"registered", "unregistered"}, KeyCount))
	return out
}

// shareBar is a row of a share chart: the two parts in thousandths of the
// whole, so that rows of different units (keys, bytes) compare.
func shareBar(label string, registered, unregistered int64) page.Bar {
	registered = max(registered, 0)
	total := registered + unregistered
	b := page.Bar{Label: label, Values: []int64{0, 0}, Text: "no " + label}
	if total > 0 {
		b.Values = []int64{registered * 1000 / total, unregistered * 1000 / total}
		b.Text = fmt.Sprintf("%.1f%% unregistered", Pct(unregistered, total))
	}
	return b
}

// Stamp formats a time for the page, or "" for the zero time.
func Stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

//go:embed templates/parts.html.tmpl
var parts embed.FS

// shared is internal/page's shell with the table parts both pages use:
// "famhead", "famcells" and "findings".
var shared = sync.OnceValue(func() *template.Template { return page.Parse(parts, "templates/parts.html.tmpl") })

// Parse returns the shell of internal/page with the shared table parts and
// the templates of fsys that match patterns, which define the page's "nav"
// and "body", parsed on the first call of the function it returns: every
// keyreg process links the pages, few render one. It panics on a template
// that does not parse: the templates are embedded.
func Parse(fsys fs.FS, patterns ...string) func() *template.Template {
	return sync.OnceValue(func() *template.Template {
		return template.Must(template.Must(shared().Clone()).ParseFS(fsys, patterns...))
	})
}
