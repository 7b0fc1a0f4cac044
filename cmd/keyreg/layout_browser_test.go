package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/keyreg/keyreg/internal/browsertest"
)

// overflowJS lists the elements whose box reaches past the viewport's
// width (or left of it), and the page's own horizontal scroll. An element
// inside a container that scrolls or clips horizontally (a table's card,
// a pre) is left to that container, which is checked itself.
const overflowJS = `(function () {
  var w = document.documentElement.clientWidth, bad = [];
  function inScroller(el) {
    for (var p = el.parentElement; p && p !== document.body && p !== document.documentElement; p = p.parentElement) {
      var x = getComputedStyle(p).overflowX;
      if (x === "auto" || x === "scroll" || x === "hidden") return true;
    }
    return false;
  }
  document.querySelectorAll("body, body *").forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return;
    if (r.right <= w + 0.5 && r.left >= -0.5) return;
    if (inScroller(el)) return;
    var name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (typeof el.className === "string" && el.className ? "." + el.className : "");
    bad.push(name + " spans " + Math.round(r.left) + ".." + Math.round(r.right));
  });
  var sw = document.documentElement.scrollWidth;
  if (sw > w) bad.push("the page is " + sw + " px wide");
  return [String(w)].concat(bad.slice(0, 15));
})()`

// TestLayoutFitsViewport opens the demo's HTML report and its catalogue in
// Chromium on a 390x844 phone and a 1280x900 laptop: no element may reach
// past the viewport's width, so the page never scrolls sideways (tables
// scroll inside their cards, charts scale). Screenshots of each go to
// $KEYREG_ARTIFACTS (CI uploads them).
func TestLayoutFitsViewport(t *testing.T) {
	b := browsertest.New(t)
	dir := artifacts(t)
	auditJSON := filepath.Join(dir, "audit.json")
	if err := os.WriteFile(auditJSON, runKeyreg(t, []int{0, 1}, "demo", "--format", "json"), 0o644); err != nil {
		t.Fatal(err)
	}
	reportHTML := filepath.Join(dir, "report.html")
	if err := os.WriteFile(reportHTML, runKeyreg(t, []int{0, 1}, "demo", "--format", "html"), 0o644); err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(dir, "catalogue")
	runKeyreg(t, []int{0}, "docs", "--registry", "../../keys.yaml", "--out", cat, "--audit", auditJSON, "--go-package", "keys")

	for _, size := range []struct{ w, h int64 }{{390, 844}, {1280, 900}} {
		for _, p := range []struct{ name, path string }{
			{"report", reportHTML},
			{"catalogue", filepath.Join(cat, "index.html")},
		} {
			t.Run(fmt.Sprintf("%s-%dx%d", p.name, size.w, size.h), func(t *testing.T) {
				b.Do(t, chromedp.EmulateViewport(size.w, size.h))
				b.Open(t, p.path)
				got := browsertest.Eval[[]string](t, b, overflowJS)
				if len(got) == 0 || got[0] != fmt.Sprint(size.w) {
					t.Fatalf("viewport is %v wide, want %d", got, size.w)
				}
				for _, bad := range got[1:] {
					t.Errorf("overflows the %d px viewport: %s", size.w, bad)
				}
				// The first screen as a reader sees it, and the whole page.
				b.Screenshot(t, filepath.Join(dir, fmt.Sprintf("%s-%dx%d.png", p.name, size.w, size.h)), false)
				b.Screenshot(t, filepath.Join(dir, fmt.Sprintf("%s-%dx%d-full.png", p.name, size.w, size.h)), true)
			})
		}
	}
}
