package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/internal/render/rendertest"
)

func auditHTML(t *testing.T, r *audit.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := Audit(&b, HTML, r, Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHTMLAuditPage(t *testing.T) {
	page := auditHTML(t, rendertest.SampleReport())
	rendertest.CheckPage(t, page, "")
	for _, want := range []string{
		`<tr id="family-user-session"`, `<tr id="family-cart"`, `<tr id="family-feature-flags"`,
		`<a href="#family-cart">cart</a>`,                                            // a finding links its family
		"redis://:<wbr>xxxxx@<wbr>cache.<wbr>internal:<wbr>6379/<wbr>0 (standalone)", // breakable only at separators
		`<code>&#34;\x00\xffbin&#34;</code>`,                                         // binary keys are quoted
		"Memory per owner", "Memory per family", "TTL distribution", "Unregistered share",
		`<title>TTL none: `, // the histogram's first bucket
		`<h3 id="stats-largest-keys-by-bytes">Largest keys by bytes (of `,
		`<h3 id="stats-ttl-histogram">TTL histogram</h3>`,
		"1 error, 2 warnings, 1 info, 1 suppressed", // the findings summary
	} {
		if !strings.Contains(page, want) {
			t.Errorf("audit page lacks %q", want)
		}
	}
	// A report without statistics (read from an older json) still has a
	// TTL chart.
	r := rendertest.SampleReport()
	r.TTL = audit.TTLHistogram{}
	if p := auditHTML(t, r); !strings.Contains(p, "TTL per owner") || strings.Contains(p, "TTL distribution") {
		t.Error("a report without a TTL histogram does not chart TTLs per owner")
	}
	if strings.Contains(page, "flags are persistent") {
		t.Error("audit page shows a suppressed finding")
	}
}

// TestHTMLDeterministic renders the audit page twice and wants the same
// bytes (the catalogue's test is in package catalogue).
func TestHTMLDeterministic(t *testing.T) {
	var pages [2]string
	for i := range pages {
		pages[i] = auditHTML(t, rendertest.SampleReport())
	}
	if pages[0] != pages[1] {
		t.Error("two renderings of the audit page differ")
	}
}

func TestHTMLHostile(t *testing.T) {
	ap := auditHTML(t, rendertest.HostileReport())
	rendertest.CheckPage(t, ap, "")
	rendertest.CheckInert(t, "audit", ap)
	if len(ap) > 1<<20 {
		t.Errorf("audit page of a 100 KB key name is %d bytes", len(ap))
	}
}

func TestSortValue(t *testing.T) {
	for in, want := range map[string]string{
		"12": "12", "45.5%": "45.5", "1.5 KiB": "1536", "512 B": "512", "2h": "7200", "3d": "259200",
		"45s": "45", "-": "-1", "none": "-1", "(unregistered)": "",
	} {
		if got := sortValue(in); got != want {
			t.Errorf("sortValue(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHTMLBaseline renders a report compared with a baseline: the new
// findings, the baseline line and the tables of new and resolved entries.
func TestHTMLBaseline(t *testing.T) {
	r := rendertest.SampleReport()
	c := audit.Compare(r, audit.NewBaseline(emptyReport()))
	var b bytes.Buffer
	if err := AuditBaseline(&b, HTML, r, c, Options{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	rendertest.CheckPage(t, page, "")
	for _, want := range []string{`<p class="baseline">baseline`, `<h3 id="stats-new-since-baseline">New since baseline</h3>`, "<dt>new findings</dt>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Against itself, nothing is new and the findings table is empty.
	c = audit.Compare(r, audit.NewBaseline(rendertest.SampleReport()))
	b.Reset()
	if err := AuditBaseline(&b, HTML, r, c, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `<table class="sortable findings">`) || strings.Contains(b.String(), "New since baseline") {
		t.Error("a report compared with itself shows new findings")
	}
}

func BenchmarkAuditHTML(b *testing.B) {
	r := rendertest.SampleReport()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := Audit(&buf, HTML, r, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

// TestHTMLEveryRowEveryCell: a family (or group, or owner) whose memory
// was not measured keeps its memory cell, "-", in the audit page and in
// the catalogue; the unregistered groups have memory and % memory
// columns, as text, markdown and json have; the footer names keyreg's
// version.
func TestHTMLEveryRowEveryCell(t *testing.T) {
	r := rendertest.SampleReport() // feature-flags and the group tmp|x: are not measured
	var b bytes.Buffer
	if err := Audit(&b, HTML, r, Options{Tool: Tool{Name: "keyreg", Version: "1.2.0"}}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	rendertest.CheckCells(t, "audit page", page)
	for _, want := range []string{
		`<tr id="family-feature-flags" data-search="feature-flags platform"><td>feature-flags</td><td>platform</td><td data-sort="340" class="num">340</td><td data-sort="-1" class="num">-</td>`,
		`<th scope="col">prefix</th><th scope="col">db</th><th scope="col">keys</th><th scope="col">memory</th><th scope="col">% memory</th>`,
		`<td><code>&#34;tmp|<wbr>x:&#34;</code></td><td>0, 3</td>`, // the databases of a group
		`<td data-sort="65536" class="num">64.0 KiB</td><td data-sort="65536" class="num">1.0%</td>`,
		`<td data-sort="30" class="num">30</td><td data-sort="-1" class="num">-</td><td data-sort="-1" class="num">-</td>`,
		`<footer><p>Generated by keyreg 1.2.0.</p></footer>`,
		`<td>platform@<wbr>example.<wbr>com</td>`, // an address breaks at its separators only
	} {
		if !strings.Contains(page, want) {
			t.Errorf("audit page lacks %s", want)
		}
	}
}

// TestHTMLChartsBeyondOwners: the audit page draws memory by type (with
// what was measured) and, against a baseline, the change: new, unchanged
// and resolved entries, plurals right.
func TestHTMLChartsBeyondOwners(t *testing.T) {
	r := rendertest.SampleReport()
	var b bytes.Buffer
	if err := AuditBaseline(&b, HTML, r, audit.Compare(r, audit.NewBaseline(emptyReport())), Options{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<figcaption>Memory by type",
		"<title>string: ≥ 1.0 MiB</title>", // 4 of 10500 keys measured: a lower bound
		"<figcaption>Change against the baseline",
		"<title>new: ",
		"<title>resolved: ",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("audit page lacks %s", want)
		}
	}
	if strings.Contains(page, "entrys") || strings.Contains(page, ": 1 entries<") {
		t.Error("a plural is wrong")
	}
}
