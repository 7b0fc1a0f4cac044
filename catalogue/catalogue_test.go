package catalogue

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/keyreg/keyreg"
	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/codegen/golang"
	"github.com/keyreg/keyreg/internal/render"
	"github.com/keyreg/keyreg/internal/render/rendertest"
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

// goLanguage is the Go backend's builders for reg, as keyreg docs
// --go-package keys shows them.
func goLanguage(tb testing.TB, reg *registry.Registry) []Language {
	tb.Helper()
	req, err := codegen.NewRequest(reg, codegen.Scope{IncludePresets: true})
	if err != nil {
		tb.Fatal(err)
	}
	l, err := Builders("go", golang.Generator{Package: "keys"}, req)
	if err != nil {
		tb.Fatal(err)
	}
	return []Language{l}
}

func catalogueHTML(t *testing.T, reg *registry.Registry, o Options) string {
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

func TestHTMLCatalogue(t *testing.T) {
	reg := exampleRegistry(t)
	const repo = "https://github.com/keyreg/keyreg/blob/main"
	page := catalogueHTML(t, reg, Options{Audit: rendertest.SampleReport(), RepoURL: repo, Languages: goLanguage(t, reg)})
	rendertest.CheckPage(t, page, repo+"/")
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

func hostileRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(hostileYAML)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestMarkdownCatalogue(t *testing.T) {
	reg := exampleRegistry(t)
	files, err := Catalogue(reg, Options{Format: Markdown, Audit: rendertest.SampleReport(), Languages: goLanguage(t, reg)})
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
			if f.Owner == o.Name && !strings.Contains(page, "## "+render.MD(f.Name, render.MDData)+"\n") {
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
		if _, err := Catalogue(exampleRegistry(t), Options{RepoURL: u}); err == nil {
			t.Errorf("RepoURL %q accepted", u)
		}
	}
}

func BenchmarkCatalogueHTML(b *testing.B) {
	reg, err := registry.Load(keyreg.Example, "keys.yaml")
	if err != nil {
		b.Fatal(err)
	}
	o := Options{Audit: rendertest.SampleReport(), Languages: goLanguage(b, reg)}
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

// TestCatalogueSchemaAndSunset: a hash's schema (a map of fields to
// values) lists its field names and the properties of every value, not
// only "(value) object"; a sunset before Options.Now is marked
// passed without an audit, and not when Now is before it.
func TestCatalogueSchemaAndSunset(t *testing.T) {
	reg := exampleRegistry(t)
	page := catalogueHTML(t, reg, Options{Now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
	for _, want := range []string{
		`<code>(field name)</code>`,
		`<code>(any field).<wbr>qty</code></td><td>integer</td><td>yes</td>`,
		` (passed)</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("catalogue lacks %s", want)
		}
	}
	if page := catalogueHTML(t, reg, Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}); strings.Contains(page, "(passed)") {
		t.Error("a sunset still ahead is marked passed")
	}
	if page := catalogueHTML(t, reg, Options{}); strings.Contains(page, "(passed)") {
		t.Error("without a render.Date, a sunset is marked passed")
	}
}

// TestDeterministic renders the catalogue twice, the registry loaded
// anew, and wants the same bytes.
func TestDeterministic(t *testing.T) {
	// Each rendering loads the registry and names its builders anew.
	cat := func(f Format) []File {
		reg := exampleRegistry(t)
		files, err := Catalogue(reg, Options{Format: f, Audit: rendertest.SampleReport(), Languages: goLanguage(t, reg)})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	for _, f := range []Format{HTML, Markdown} {
		x, y := cat(f), cat(f)
		if len(x) != len(y) {
			t.Fatalf("%s: %d files, then %d", f, len(x), len(y))
		}
		for i := range x {
			if x[i].Name != y[i].Name || !bytes.Equal(x[i].Data, y[i].Data) {
				t.Errorf("%s: file %s differs between renderings", f, x[i].Name)
			}
		}
	}
}

func TestHostile(t *testing.T) {
	reg := hostileRegistry(t)
	page := catalogueHTML(t, reg, Options{Audit: rendertest.HostileReport()})
	rendertest.CheckPage(t, page, "")
	rendertest.CheckInert(t, "catalogue", page)
	if !strings.Contains(page, `\u202e`) || !strings.Contains(page, `\x01`) {
		t.Error("catalogue: invisible characters of a description are not shown as escapes")
	}
	files, err := Catalogue(reg, Options{Format: Markdown, Audit: rendertest.HostileReport()})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		// Code spans and fenced blocks show their text as typed.
		s := rendertest.StripCode(string(f.Data))
		for _, bad := range []string{"<script", "<img", "<b>"} {
			if strings.Contains(s, bad) {
				t.Errorf("markdown %s: %q survived", f.Name, bad)
			}
		}
	}
}

// TestEveryRowEveryCell: a family whose memory was not measured keeps its
// memory cell, "-", in the catalogue; the footer names keyreg's version.
func TestEveryRowEveryCell(t *testing.T) {
	r := rendertest.SampleReport() // feature-flags is not measured
	cat := catalogueHTML(t, exampleRegistry(t), Options{Audit: r, Version: "1.2.0"})
	rendertest.CheckCells(t, "catalogue", cat)
	if !strings.Contains(cat, `<footer><p>Generated by keyreg 1.2.0.</p></footer>`) {
		t.Error("the catalogue's footer does not name the version")
	}
}

// TestLanguages: each language given shows one builder row per family
// that it names, in order, in HTML and in markdown, its text escaped.
func TestLanguages(t *testing.T) {
	reg := exampleRegistry(t)
	langs := append(goLanguage(t, reg), Language{Name: "python", Builders: map[string]string{
		"user-session": "keys.build_user_session(session_id: str) -> str",
		"cart-items":   "keys.build_cart(<script>alert(1)</script>) -> str",
	}})
	page := catalogueHTML(t, reg, Options{Languages: langs})
	for _, want := range []string{
		`<dt>go builder</dt><dd><code>keys.BuildUserSession(sessionID string) (string, error)</code></dd><dt>python builder</dt><dd><code>keys.build_user_session(session_id: str) -&gt; str</code></dd>`,
		`<dt>python builder</dt><dd><code>keys.build_cart(&lt;script&gt;alert(1)&lt;/script&gt;) -&gt; str</code></dd>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("catalogue lacks %s", want)
		}
	}
	if n := strings.Count(page, "<dt>python builder</dt>"); n != 2 {
		t.Errorf("%d python builder rows, want 2 (the families it names)", n)
	}
	files, err := Catalogue(reg, Options{Format: Markdown, Languages: langs})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, f := range files {
		all.Write(f.Data)
	}
	for _, want := range []string{
		"| go builder | `keys.BuildUserSession(sessionID string) (string, error)` |\n| python builder | `keys.build_user_session(session_id: str) -> str` |\n",
	} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("markdown catalogue lacks %q", want)
		}
	}
	if page := catalogueHTML(t, reg, Options{}); strings.Contains(page, " builder</dt>") {
		t.Error("a catalogue without languages shows a builder")
	}
}
