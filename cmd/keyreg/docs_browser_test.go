package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/keyreg/keyreg/internal/browsertest"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
)

// artifacts returns the directory for a test's screenshots and pages:
// $KEYREG_ARTIFACTS/<test> when set, else a temporary directory.
func artifacts(t *testing.T) string {
	t.Helper()
	base := os.Getenv("KEYREG_ARTIFACTS")
	if base == "" {
		return t.TempDir()
	}
	dir := filepath.Join(base, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runKeyreg runs one command line in-process and returns its stdout; the exit
// code must be one of codes.
func runKeyreg(t *testing.T, codes []int, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	if !slices.Contains(codes, code) {
		t.Fatalf("keyreg %s: exit %d, want one of %v\n%s", strings.Join(args, " "), code, codes, stderr.String())
	}
	return stdout.Bytes()
}

// checkQuiet asserts that the pages loaded so far logged no error, opened
// no dialog and requested nothing but files and data URLs.
func checkQuiet(t *testing.T, b *browsertest.Browser, page string) {
	t.Helper()
	rec := b.Record(t)
	for _, e := range rec.Errors {
		t.Errorf("%s: %s", page, e)
	}
	for _, d := range rec.Dialogs {
		t.Errorf("%s: a dialog opened: %s", page, d)
	}
	if len(rec.Requests) == 0 {
		t.Errorf("%s: no request seen, not even the page's own", page)
	}
	for _, u := range rec.Requests {
		if !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
			t.Errorf("%s: request to %s", page, u)
		}
	}
}

// TestDocsInBrowser loads the demo's catalogue and HTML report in headless
// Chromium: every family is there, the filter box filters, the tables sort,
// nothing is logged and nothing is requested.
func TestDocsInBrowser(t *testing.T) {
	b := browsertest.New(t)
	dir := artifacts(t)
	reg, err := registry.LoadFile("../../keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	auditJSON := filepath.Join(dir, "audit.json")
	if err := os.WriteFile(auditJSON, runKeyreg(t, []int{0, 1}, "demo", "--format", "json"), 0o644); err != nil {
		t.Fatal(err)
	}
	reportHTML := filepath.Join(dir, "report.html")
	page := runKeyreg(t, []int{0, 1}, "demo", "--format", "html")
	if len(page) >= 1<<20 {
		t.Errorf("the demo's HTML report is %d bytes, want under 1 MB", len(page))
	}
	t.Logf("demo HTML report: %d bytes", len(page))
	if err := os.WriteFile(reportHTML, page, 0o644); err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(dir, "catalogue")
	runKeyreg(t, []int{0}, "docs", "--registry", "../../keys.yaml", "--out", cat, "--audit", auditJSON, "--go-package", "keys")

	t.Run("catalogue", func(t *testing.T) {
		b.Reset()
		took, load := b.Open(t, filepath.Join(cat, "index.html"))
		t.Logf("catalogue: navigation %v, load event at %.0f ms", took, load)
		checkQuiet(t, b, "catalogue")
		var want []string
		for _, f := range reg.Families {
			want = append(want, "family-"+f.Name)
		}
		for _, c := range reg.Channels {
			want = append(want, "channel-"+c.Name) // after the families: the Channels section
		}
		if len(reg.Channels) == 0 {
			t.Error("the example registry declares no channel: the catalogue's channel sections go untested")
		}
		ids := browsertest.Eval[[]string](t, b, `Array.from(document.querySelectorAll("section.family")).map(e => e.id)`)
		if !slices.Equal(ids, want) {
			t.Errorf("family and channel sections = %v\nwant %v", ids, want)
		}
		b.Screenshot(t, filepath.Join(dir, "catalogue.png"), false)
		browsertest.Eval[bool](t, b, `(document.getElementById("family-user-session").scrollIntoView({block: "start"}), true)`)
		b.Screenshot(t, filepath.Join(dir, "catalogue-family.png"), false)

		// The filter box: typing hides the families that do not match.
		var match []string
		for _, f := range reg.Families {
			text := strings.ToLower(strings.Join([]string{f.Name, f.Pattern.Source, f.Description, f.Owner}, " "))
			if strings.Contains(text, "session") {
				match = append(match, "family-"+f.Name)
			}
		}
		if len(match) == 0 || len(match) == len(want) {
			t.Fatalf("a filter for %q matches %d of %d families: not a test of filtering", "session", len(match), len(want))
		}
		b.Do(t, chromedp.SendKeys(chromedp.CSS("#filter"), "session"))
		shown := browsertest.Eval[[]string](t, b, `Array.from(document.querySelectorAll("section.family")).filter(e => e.offsetParent !== null).map(e => e.id)`)
		if !slices.Equal(shown, match) {
			t.Errorf("after typing %q, shown = %v\nwant %v", "session", shown, match)
		}
		rows := browsertest.Eval[int](t, b, `Array.from(document.querySelectorAll("#families > .scroll > table > tbody > tr")).filter(e => e.offsetParent !== null).length`)
		if rows != len(match) {
			t.Errorf("after typing %q, %d rows of the families table shown, want %d", "session", rows, len(match))
		}
		b.Screenshot(t, filepath.Join(dir, "catalogue-filtered.png"), false)
		checkQuiet(t, b, "catalogue after filtering")
	})

	t.Run("report", func(t *testing.T) {
		b.Reset()
		took, load := b.Open(t, reportHTML)
		t.Logf("demo HTML report: navigation %v, load event at %.0f ms", took, load)
		checkQuiet(t, b, "report")
		names := browsertest.Eval[[]string](t, b, `Array.from(document.querySelectorAll("#families tbody tr")).map(r => r.cells[0].textContent)`)
		for _, f := range reg.Families {
			if !slices.Contains(names, f.Name) {
				t.Errorf("report has no row for family %q", f.Name)
			}
		}
		b.Screenshot(t, filepath.Join(dir, "report.png"), false)

		// Sorting: the keys column, ascending, then descending.
		const keys = `Array.from(document.querySelectorAll("#families tbody tr")).map(r => Number(r.cells[2].dataset.sort))`
		before := browsertest.Eval[[]float64](t, b, keys)
		b.Do(t, chromedp.Click(chromedp.CSS("#families thead th:nth-child(3) button")))
		asc := browsertest.Eval[[]float64](t, b, keys)
		b.Do(t, chromedp.Click(chromedp.CSS("#families thead th:nth-child(3) button")))
		desc := browsertest.Eval[[]float64](t, b, keys)
		sorted := slices.Sorted(slices.Values(before))
		if slices.Equal(before, sorted) {
			t.Fatalf("the families are already sorted by keys: not a test of sorting")
		}
		if !slices.Equal(asc, sorted) {
			t.Errorf("after one click, keys = %v, want ascending %v", asc, sorted)
		}
		slices.Reverse(sorted)
		if !slices.Equal(desc, sorted) {
			t.Errorf("after two clicks, keys = %v, want descending %v", desc, sorted)
		}
		if got := browsertest.Eval[string](t, b, `document.querySelector("#families thead th:nth-child(3)").getAttribute("aria-sort")`); got != "descending" {
			t.Errorf("aria-sort = %q, want descending", got)
		}
		// Each finding links its family's row, or the unregistered keys.
		bad := browsertest.Eval[[]string](t, b, `Array.from(document.querySelectorAll("#findings tbody a")).filter(function (a) {
			var id = a.getAttribute("href").slice(1), el = document.getElementById(id);
			return el === null || (id.startsWith("family-") ? el.closest("#families") === null : id !== "unregistered");
		}).map(a => a.getAttribute("href"))`)
		if links := browsertest.Eval[int](t, b, `document.querySelectorAll("#findings tbody a[href^='#family-']").length`); links == 0 {
			t.Error("no finding links a family")
		}
		if len(bad) > 0 {
			t.Errorf("finding links lead nowhere: %v", bad)
		}
		checkQuiet(t, b, "report after sorting")
	})

	t.Run("no-javascript", func(t *testing.T) {
		b.Reset()
		b.Scripts(t, false)
		defer b.Scripts(t, true)
		b.Open(t, reportHTML)
		checkQuiet(t, b, "report without javascript")
		rows := browsertest.Eval[int](t, b, `Array.from(document.querySelectorAll("#families tbody tr")).filter(e => e.offsetParent !== null).length`)
		if rows != len(reg.Families) {
			t.Errorf("without javascript, %d family rows shown, want %d", rows, len(reg.Families))
		}
		if browsertest.Eval[bool](t, b, `document.querySelector("#filter-box").offsetParent !== null`) {
			t.Error("without javascript, the filter box (which needs it) is shown")
		}
		if browsertest.Eval[int](t, b, `document.querySelectorAll("th button").length`) != 0 {
			t.Error("without javascript, sort buttons exist: the page did not run with scripts off")
		}
	})
}

// hostileRegistry is a keys.yaml whose free text is markup.
const hostileRegistry = `version: 1
owners:
  team:
    contact: "<img src=x onerror=alert(1)>"
    description: "</script><script>alert(1)</script>"
families:
  - name: evil
    description: "<script>alert(1)</script> \u202e \x01"
    pattern: "v1:<script>alert(1)</script>:{id}"
    owner: team
    type: string
    ttl: 1h
`

// TestDocsHostileInBrowser renders a registry and a keyspace whose names
// hold markup, control bytes and a 100 KB key, and checks in Chromium that
// no script of theirs runs and their text shows as text.
func TestDocsHostileInBrowser(t *testing.T) {
	b := browsertest.New(t)
	dir := artifacts(t)
	regPath := filepath.Join(dir, "keys.yaml")
	// And a family whose description is 100 KB of markup.
	huge := hostileRegistry + `  - name: huge
    description: "` + strings.Repeat("<script>alert(3)</script>", 100<<10/25) + `"
    pattern: "v1:huge:{id}"
    owner: team
    ttl: 1h
`
	if err := os.WriteFile(regPath, []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx := context.Background()
	long := strings.Repeat("<script>alert(1)</script>", 100<<10/25)
	for _, k := range []string{
		"v1:<script>alert(1)</script>:\x01\x1b[2J",
		"<script>alert(1)</script>",
		"<img src=x onerror=alert(1)>\x00",
		long,
	} {
		if err := c.Set(ctx, k, "<script>alert(2)</script>", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	reportHTML := filepath.Join(dir, "report.html")
	page := runKeyreg(t, []int{0, 1}, "audit", "--url", srv.URL(), "--registry", regPath, "--format", "html")
	if err := os.WriteFile(reportHTML, page, 0o644); err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(dir, "catalogue")
	runKeyreg(t, []int{0}, "docs", "--registry", regPath, "--out", cat)

	for _, p := range []struct{ name, path, title string }{
		{"report", reportHTML, "keyreg audit"},
		{"catalogue", filepath.Join(cat, "index.html"), "keyreg catalogue"},
	} {
		t.Run(p.name, func(t *testing.T) {
			b.Reset()
			b.Open(t, p.path)
			checkQuiet(t, b, p.name)
			if got := browsertest.Eval[string](t, b, `document.title`); got != p.title {
				t.Errorf("title = %q, want %q", got, p.title)
			}
			if n := browsertest.Eval[int](t, b, `document.scripts.length`); n != 1 {
				t.Errorf("%d script elements, want the page's own", n)
			}
			if n := browsertest.Eval[int](t, b, `document.images.length`); n != 0 {
				t.Errorf("%d img elements, want none", n)
			}
			if !browsertest.Eval[bool](t, b, `document.body.textContent.includes("<script>alert(1)</script>")`) {
				t.Error("the hostile text is not shown as text")
			}
			b.Screenshot(t, filepath.Join(dir, p.name+".png"), false)
		})
	}

	// The harness sees a dialog when one opens, and the CSP stops a script
	// that got into a page: the same report with one injected.
	t.Run("csp", func(t *testing.T) {
		plain := filepath.Join(dir, "alert.html")
		if err := os.WriteFile(plain, []byte("<!DOCTYPE html><title>x</title><script>alert(7)</script>"), 0o644); err != nil {
			t.Fatal(err)
		}
		b.Reset()
		b.Open(t, plain)
		if rec := b.Record(t); len(rec.Dialogs) != 1 {
			t.Fatalf("a page without a CSP that calls alert: dialogs = %v, want one", rec.Dialogs)
		}
		injected := filepath.Join(dir, "injected.html")
		doc := bytes.Replace(page, []byte("<main>"), []byte("<main><script>alert(8)</script>"), 1)
		if err := os.WriteFile(injected, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		b.Reset()
		b.Open(t, injected)
		rec := b.Record(t)
		if len(rec.Dialogs) != 0 {
			t.Errorf("an injected script ran: dialogs = %v", rec.Dialogs)
		}
		if len(rec.Errors) == 0 {
			t.Error("the CSP refused the injected script without an error")
		}
	})
}
