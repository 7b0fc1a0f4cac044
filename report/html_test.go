package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/keyreg/keyreg"
	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	htmlpage "github.com/keyreg/keyreg/internal/page"
	"github.com/keyreg/keyreg/registry"
)

func exampleRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(keyreg.Example, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func catalogueHTML(t *testing.T, reg *registry.Registry, o CatalogueOptions) string {
	t.Helper()
	o.Format = HTML
	files, err := Catalogue(reg, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Name != "index.html" {
		t.Fatalf("files = %v, want index.html alone", names(files))
	}
	return string(files[0].Data)
}

func names(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}

func auditHTML(t *testing.T, r *audit.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := Audit(&b, HTML, r, Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	inlineRe = regexp.MustCompile(`(?s)<(script|style)([^>]*)>(.*?)</(?:script|style)>`)
	cspRe    = regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`)
	linkRe   = regexp.MustCompile(`\s(?:src|href|xlink:href|action)="([^"]*)"`)
)

// checkPage asserts what every page must hold: one CSP that allows no
// source but the page's own inline script and style, by their hashes; no
// other script or style element; no link or source outside the page except
// under allowed.
func checkPage(t *testing.T, page string, allowed string) {
	t.Helper()
	m := cspRe.FindAllStringSubmatch(page, -1)
	if len(m) != 1 {
		t.Fatalf("%d CSP meta tags, want 1", len(m))
	}
	csp := strings.ReplaceAll(m[0][1], "&#39;", "'")
	csp = strings.ReplaceAll(csp, "&#43;", "+")
	if !strings.HasPrefix(csp, "default-src 'none';") {
		t.Errorf("CSP %q does not start with default-src 'none'", csp)
	}
	inline := inlineRe.FindAllStringSubmatch(page, -1)
	if len(inline) != 2 {
		t.Fatalf("%d inline script and style elements, want 2", len(inline))
	}
	for _, el := range inline {
		if el[2] != "" {
			t.Errorf("<%s%s>: want no attributes", el[1], el[2])
		}
		sum := sha256.Sum256([]byte(el[3]))
		want := el[1] + "-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q, the hash of the page's %s", csp, want, el[1])
		}
	}
	for _, l := range linkRe.FindAllStringSubmatch(page, -1) {
		if strings.HasPrefix(l[1], "#") || (allowed != "" && strings.HasPrefix(l[1], allowed)) {
			continue
		}
		t.Errorf("link %q leaves the page", l[1])
	}
	if strings.Contains(htmlpage.Style(), "url(") || strings.Contains(htmlpage.Style(), "@import") {
		t.Error("the page's CSS loads a resource")
	}
}

func TestHTMLAuditPage(t *testing.T) {
	page := auditHTML(t, sampleReport())
	checkPage(t, page, "")
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
	r := sampleReport()
	r.TTL = audit.TTLHistogram{}
	if p := auditHTML(t, r); !strings.Contains(p, "TTL per owner") || strings.Contains(p, "TTL distribution") {
		t.Error("a report without a TTL histogram does not chart TTLs per owner")
	}
	if strings.Contains(page, "flags are persistent") {
		t.Error("audit page shows a suppressed finding")
	}
}

func TestHTMLCatalogue(t *testing.T) {
	reg := exampleRegistry(t)
	const repo = "https://github.com/keyreg/keyreg/blob/main"
	page := catalogueHTML(t, reg, CatalogueOptions{Audit: sampleReport(), RepoURL: repo, GoPackage: "keys"})
	checkPage(t, page, repo+"/")
	for _, f := range reg.Families {
		if !strings.Contains(page, `<section id="family-`+f.Name+`" class="family"`) {
			t.Errorf("catalogue has no section for family %q", f.Name)
		}
	}
	for _, o := range reg.Owners {
		if !strings.Contains(page, `<tr id="owner-`+o.Name+`">`) {
			t.Errorf("catalogue has no row for owner %q", o.Name)
		}
	}
	for _, want := range []string{
		`<code>keys.BuildUserSession(sessionID string) (string, error)</code>`,
		`<a href="` + repo + `/keys.yaml#L`,
		`<details><summary>Raw schema</summary>`,
		`<dt>example key</dt><dd><code>&#34;v2:<wbr>user:<wbr>session:<wbr>123e4567-<wbr>e89b-<wbr>12d3-<wbr>a456-<wbr>426614174000&#34;</code></dd>`,
		`replaced by <a href="#family-user-session">user-session</a>`,
		`5242880`, // user-session's live memory, from the audit
	} {
		if !strings.Contains(page, want) {
			t.Errorf("catalogue lacks %q", want)
		}
	}
}

// TestHTMLDeterministic renders the catalogue and the audit page twice, the
// registry loaded anew, and wants the same bytes.
func TestHTMLDeterministic(t *testing.T) {
	o := CatalogueOptions{Audit: sampleReport(), GoPackage: "keys"}
	a := catalogueHTML(t, exampleRegistry(t), o)
	b := catalogueHTML(t, exampleRegistry(t), o)
	if a != b {
		t.Error("two renderings of the catalogue differ")
	}
	for _, f := range []Format{HTML, Markdown} {
		o.Format = f
		x, err := Catalogue(exampleRegistry(t), o)
		if err != nil {
			t.Fatal(err)
		}
		y, _ := Catalogue(exampleRegistry(t), o)
		if len(x) != len(y) {
			t.Fatalf("%s: %d files, then %d", f, len(x), len(y))
		}
		for i := range x {
			if x[i].Name != y[i].Name || !bytes.Equal(x[i].Data, y[i].Data) {
				t.Errorf("%s: file %s differs between renderings", f, x[i].Name)
			}
		}
	}
	var pages [2]string
	for i := range pages {
		pages[i] = auditHTML(t, sampleReport())
	}
	if pages[0] != pages[1] {
		t.Error("two renderings of the audit page differ")
	}
}

const hostileYAML = `version: 1
owners:
  team:
    contact: "<img src=x onerror=alert(1)>"
    description: "</script><script>alert(1)</script>"
families:
  - name: evil
    description: "<script>alert(1)</script> and \u202e and \x01"
    pattern: "v1:<script>:{id}"
    owner: team
    type: string
    encoding: json
    ttl: 1h
    schema:
      type: object
      properties:
        "<b>x</b>": {type: string, description: "<script>alert(2)</script>"}
  - name: old
    pattern: "v1:old:{id}"
    owner: team
    ttl: 1h
    deprecated: {since: 2026-01-01, sunset: 2026-02-01, replaced_by: evil, reason: "<script>alert(3)</script>"}
`

// hostileReport is an audit whose names hold markup, control bytes and a
// 100 KB key.
func hostileReport() *audit.Report {
	long := strings.Repeat("<script>alert(1)</script>", 100<<10/25)
	return &audit.Report{
		Version: audit.ReportVersion, Target: "redis://x/<script>alert(1)</script>", Started: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		Partial: true, PartialReason: "<script>alert(1)</script>",
		Totals:   audit.Totals{Keys: 3, Registered: 1, Unregistered: 2},
		Families: []*audit.FamilyReport{{Name: "evil", Owner: "team", Keys: 1}, {Name: "<script>alert(1)</script>\x00\x1b[2J", Owner: "<b>", Keys: 1}},
		Owners:   []*audit.OwnerReport{{Name: "team", Contact: "<img src=x onerror=alert(1)>", Families: []string{"evil"}, Keys: 1}},
		Unregistered: audit.UnregisteredReport{Keys: 2, Groups: []*audit.Group{
			{Prefix: "<script>alert(1)</script>:", Keys: 1, Examples: []string{long, "\x00\x07\xff"}},
		}},
		Findings: []*audit.Finding{{Rule: "unregistered-key", Severity: diag.Error, Count: 2, Of: 3,
			Message: "<script>alert(1)</script>", Examples: []audit.Example{{Key: long, Detail: "</td><script>"}}}},
	}
}

// checkInert asserts that no markup from the input survived as markup and
// that no control byte reached the page.
func checkInert(t *testing.T, name, page string) {
	t.Helper()
	for _, bad := range []string{"<script>alert", "<img", "<b>", "</script><script>", "onerror=alert(1)>"} {
		if strings.Contains(page, bad) {
			i := strings.Index(page, bad)
			t.Errorf("%s: %q survived: %q", name, bad, page[max(0, i-60):min(len(page), i+60)])
		}
	}
	for i := 0; i < len(page); i++ {
		if c := page[i]; c < 0x20 && c != '\n' && c != '\t' {
			t.Fatalf("%s: control byte %#x at %d: %q", name, c, i, page[max(0, i-40):min(len(page), i+40)])
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("%s: the hostile text is not shown escaped", name)
	}
}

func hostileRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(hostileYAML)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestHTMLHostile(t *testing.T) {
	reg := hostileRegistry(t)
	page := catalogueHTML(t, reg, CatalogueOptions{Audit: hostileReport()})
	checkPage(t, page, "")
	checkInert(t, "catalogue", page)
	if !strings.Contains(page, `\u202e`) || !strings.Contains(page, `\x01`) {
		t.Error("catalogue: invisible characters of a description are not shown as escapes")
	}
	ap := auditHTML(t, hostileReport())
	checkPage(t, ap, "")
	checkInert(t, "audit", ap)
	if len(ap) > 1<<20 {
		t.Errorf("audit page of a 100 KB key name is %d bytes", len(ap))
	}

	files, err := Catalogue(reg, CatalogueOptions{Format: Markdown, Audit: hostileReport()})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		// Code spans and fenced blocks show their text as typed.
		s := stripCode(string(f.Data))
		for _, bad := range []string{"<script", "<img", "<b>"} {
			if strings.Contains(s, bad) {
				t.Errorf("markdown %s: %q survived", f.Name, bad)
			}
		}
	}
}

func TestMarkdownCatalogue(t *testing.T) {
	reg := exampleRegistry(t)
	files, err := Catalogue(reg, CatalogueOptions{Format: Markdown, Audit: sampleReport(), GoPackage: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	for _, f := range files {
		byName[f.Name] = string(f.Data)
	}
	idx, ok := byName["index.md"]
	if !ok {
		t.Fatalf("files %v: no index.md", names(files))
	}
	if len(files) != 1+len(reg.Owners) {
		t.Errorf("%d files, want index.md and one per owner (%d)", len(files), len(reg.Owners))
	}
	for _, o := range reg.Owners {
		file := "owner-" + o.Name + ".md"
		page, ok := byName[file]
		if !ok {
			t.Errorf("no %s", file)
			continue
		}
		if !strings.Contains(idx, "]("+file+")") {
			t.Errorf("index.md does not link %s", file)
		}
		for _, f := range reg.Families {
			if f.Owner == o.Name && !strings.Contains(page, "## "+md(f.Name, mdData)+"\n") {
				t.Errorf("%s has no section for %q", file, f.Name)
			}
		}
	}
	if !strings.Contains(byName["owner-identity.md"], "`keys.BuildUserSession(sessionID string) (string, error)`") {
		t.Error("owner-identity.md does not name user-session's builder")
	}
}

func TestCatalogueRejectsBadRepoURL(t *testing.T) {
	for _, u := range []string{"javascript:alert(1)", "file:///etc", "github.com/x"} {
		if _, err := Catalogue(exampleRegistry(t), CatalogueOptions{RepoURL: u}); err == nil {
			t.Errorf("RepoURL %q accepted", u)
		}
	}
}

// stripCode removes markdown code spans and fenced blocks, whose text
// shows as typed: a run of N backticks up to the next run of exactly N.
func stripCode(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return b.String() + s
		}
		b.WriteString(s[:i])
		n := i
		for n < len(s) && s[n] == '`' {
			n++
		}
		fence := s[i:n]
		rest := s[n:]
		for {
			j := strings.Index(rest, fence)
			if j < 0 {
				return b.String() + s[i:] // unclosed: keep it, so the check sees it
			}
			k := j + len(fence)
			if k < len(rest) && rest[k] == '`' {
				for k < len(rest) && rest[k] == '`' {
					k++
				}
				rest = rest[k:]
				continue
			}
			s = rest[k:]
			break
		}
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
	r := sampleReport()
	c := audit.Compare(r, audit.NewBaseline(emptyReport()))
	var b bytes.Buffer
	if err := AuditBaseline(&b, HTML, r, c, Options{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	checkPage(t, page, "")
	for _, want := range []string{`<p class="baseline">baseline`, `<h3 id="stats-new-since-baseline">New since baseline</h3>`, "<dt>new findings</dt>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Against itself, nothing is new and the findings table is empty.
	c = audit.Compare(r, audit.NewBaseline(sampleReport()))
	b.Reset()
	if err := AuditBaseline(&b, HTML, r, c, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `<table class="sortable findings">`) || strings.Contains(b.String(), "New since baseline") {
		t.Error("a report compared with itself shows new findings")
	}
}

func BenchmarkAuditHTML(b *testing.B) {
	r := sampleReport()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := Audit(&buf, HTML, r, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

func BenchmarkCatalogueHTML(b *testing.B) {
	reg, err := registry.Load(keyreg.Example, "keys.yaml")
	if err != nil {
		b.Fatal(err)
	}
	o := CatalogueOptions{Audit: sampleReport(), GoPackage: "keys"}
	var n int
	for b.Loop() {
		files, err := Catalogue(reg, o)
		if err != nil {
			b.Fatal(err)
		}
		n = len(files[0].Data)
	}
	b.SetBytes(int64(n))
}

// TestCatSchema flattens nested objects and arrays of objects, and bounds
// a schema with very many properties.
func TestCatSchema(t *testing.T) {
	doc := map[string]any{
		"type":     "object",
		"required": []any{"id"},
		"properties": map[string]any{
			"id": map[string]any{"type": "integer", "minimum": 1.0, "description": "the id"},
			"address": map[string]any{"type": "object", "properties": map[string]any{
				"city": map[string]any{"type": []any{"string", "null"}},
			}},
			"items": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
				"sku": map[string]any{"$ref": "#/$defs/sku"},
			}}},
		},
	}
	cs := newCatSchema(&registry.Schema{Path: "s.json", Doc: doc})
	var got []string
	for _, p := range cs.Props {
		got = append(got, p.Path+" "+p.Type)
	}
	want := []string{"address object", "address.city string | null", "id integer", "items array of object", "items[].sku $ref #/$defs/sku"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("rows = %q\nwant %q", got, want)
	}
	if !cs.Props[2].Required || cs.Props[2].Constraints != "minimum 1" || cs.Props[2].Description != "the id" {
		t.Errorf("id row = %+v", cs.Props[2])
	}

	big := map[string]any{}
	for i := range 10000 {
		big[strconv.Itoa(i)] = map[string]any{"type": "string"}
	}
	cs = newCatSchema(&registry.Schema{Doc: map[string]any{"type": "object", "properties": big}})
	if len(cs.Props) != maxSchemaRows || !cs.Truncated {
		t.Errorf("%d rows, truncated %v; want %d, true", len(cs.Props), cs.Truncated, maxSchemaRows)
	}
	if len(cs.Raw) > maxSchemaRaw+8 {
		t.Errorf("raw schema of %d bytes kept", len(cs.Raw))
	}
}

var (
	tableRe = regexp.MustCompile(`(?s)<table[^>]*>(.*?)</table>`)
	headRe  = regexp.MustCompile(`(?s)<thead>(.*?)</thead>`)
	bodyRe  = regexp.MustCompile(`(?s)<tbody>(.*?)</tbody>`)
	rowRe   = regexp.MustCompile(`(?s)<tr[^>]*>(.*?)</tr>`)
	cellRe  = regexp.MustCompile(`<t[dh][ >]`)
)

// checkCells fails when a row of a table of page has more or fewer cells
// than its head has columns: a cell left out slides the rest under the
// wrong heading.
func checkCells(t *testing.T, name, page string) {
	t.Helper()
	tables := tableRe.FindAllStringSubmatch(page, -1)
	if len(tables) == 0 {
		t.Fatalf("%s: no table", name)
	}
	for i, tb := range tables {
		head := headRe.FindStringSubmatch(tb[1])
		body := bodyRe.FindStringSubmatch(tb[1])
		if head == nil || body == nil {
			t.Errorf("%s: table %d has no thead or tbody", name, i)
			continue
		}
		cols := len(cellRe.FindAllString(head[1], -1))
		for _, row := range rowRe.FindAllStringSubmatch(body[1], -1) {
			if n := len(cellRe.FindAllString(row[1], -1)); n != cols {
				t.Errorf("%s: table %d: a row has %d cells under %d headings: %.300s", name, i, n, cols, row[0])
			}
		}
	}
}

// TestHTMLEveryRowEveryCell: a family (or group, or owner) whose memory
// was not measured keeps its memory cell, "-", in the audit page and in
// the catalogue; the unregistered groups have memory and % memory
// columns, as text, markdown and json have; the footer names keyreg's
// version.
func TestHTMLEveryRowEveryCell(t *testing.T) {
	r := sampleReport() // feature-flags and the group tmp|x: are not measured
	var b bytes.Buffer
	if err := Audit(&b, HTML, r, Options{Tool: Tool{Name: "keyreg", Version: "1.2.0"}}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	checkCells(t, "audit page", page)
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
	cat := catalogueHTML(t, exampleRegistry(t), CatalogueOptions{Audit: r, Version: "1.2.0"})
	checkCells(t, "catalogue", cat)
	if !strings.Contains(cat, `<footer><p>Generated by keyreg 1.2.0.</p></footer>`) {
		t.Error("the catalogue's footer does not name the version")
	}
}

// TestHTMLChartsBeyondOwners: the audit page draws memory by type (with
// what was measured) and, against a baseline, the change: new, unchanged
// and resolved entries, plurals right.
func TestHTMLChartsBeyondOwners(t *testing.T) {
	r := sampleReport()
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

// TestCatalogueSchemaAndSunset: a hash's schema (a map of fields to
// values) lists its field names and the properties of every value, not
// only "(value) object"; a sunset before CatalogueOptions.Now is marked
// passed without an audit, and not when Now is before it.
func TestCatalogueSchemaAndSunset(t *testing.T) {
	reg := exampleRegistry(t)
	page := catalogueHTML(t, reg, CatalogueOptions{Now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
	for _, want := range []string{
		`<code>(field name)</code>`,
		`<code>(any field).<wbr>qty</code></td><td>integer</td><td>yes</td>`,
		` (passed)</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("catalogue lacks %s", want)
		}
	}
	if page := catalogueHTML(t, reg, CatalogueOptions{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}); strings.Contains(page, "(passed)") {
		t.Error("a sunset still ahead is marked passed")
	}
	if page := catalogueHTML(t, reg, CatalogueOptions{}); strings.Contains(page, "(passed)") {
		t.Error("without a date, a sunset is marked passed")
	}
}
