// Package page is the shell of keyreg's self-contained HTML pages, shared
// by the audit page (report's html format) and the catalogue: the layout,
// the inline style and script with the Content-Security-Policy that allows
// exactly them by their hashes, the escaping of keys so that they wrap at
// their separators, and the SVG bar charts.
//
// A page's document fills the shell through two templates it defines in
// the set that [Parse] returns: "nav", the links after the charts', and
// "body", the sections; both are executed with [Page.Body].
package page

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"io"
	"io/fs"
	"strconv"
	"strings"
)

//go:embed templates/page.html.tmpl templates/page.css templates/page.js
var files embed.FS

// The page's style and script are inline; the CSP allows exactly these by
// their hashes, so an injected script or style would not run even if it
// slipped past the escaping.
var (
	pageCSS = mustRead("templates/page.css")
	pageJS  = mustRead("templates/page.js")
)

// shell is the layout and the chart, which Parse extends.
var shell = template.Must(template.New("").Funcs(template.FuncMap{
	"percent": func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"brk":     Breakable,
}).ParseFS(files, "templates/page.html.tmpl"))

func mustRead(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Style is the page's inline style sheet.
func Style() string { return pageCSS }

// Parse returns the shell's template set with the templates of fsys that
// match patterns added: they define "nav" and "body", and may use the
// shell's functions, brk ([Breakable]) and percent (a float with one
// decimal). It panics on a template that does not parse, as
// template.Must does: the templates are embedded.
func Parse(fsys fs.FS, patterns ...string) *template.Template {
	return template.Must(template.Must(shell.Clone()).ParseFS(fsys, patterns...))
}

// Page is what the shell renders: the layout's fields, then Body, the
// document that the set's "nav" and "body" templates show.
type Page struct {
	Title   string
	CSP     string
	CSS     template.CSS
	JS      template.JS
	Partial string
	Version string      // keyreg's, in the footer; empty for none
	Summary [][2]string // label and value, at the top
	Filter  string      // the filter box's placeholder; empty for none
	Charts  []Chart
	Body    any
}

// New returns a page with the layout's inline parts and their CSP.
func New(title string) *Page {
	return &Page{
		Title: title,
		CSP: "default-src 'none'; style-src " + cspHash(pageCSS) + "; script-src " + cspHash(pageJS) +
			"; img-src data:; base-uri 'none'; form-action 'none'",
		CSS: template.CSS(pageCSS),
		JS:  template.JS(pageJS),
	}
}

// Render executes the page with t, a set that Parse returned, into w.
func (p *Page) Render(w io.Writer, t *template.Template) error {
	return t.ExecuteTemplate(w, "page", p)
}

// cspHash is the CSP source expression that allows an inline element whose
// text is s.
func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// Breakable escapes s for HTML text and lets it break only after a run of
// separators (: / . - _ @ | , }), with <wbr>, so that a key, a
// prefix or an address wraps at its parts and never mid-word (the style
// sheet sets no overflow-wrap: anywhere). A part longer than the cell
// makes its table scroll inside its card.
func Breakable(s string) template.HTML {
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
