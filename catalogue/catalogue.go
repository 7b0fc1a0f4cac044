// Package catalogue renders a browsable catalogue of a registry (keyreg
// docs): one self-contained HTML page, or markdown files, with every
// owner, deprecation and family, optionally an audit's live figures and
// charts, and the key builders of each codegen language it is given. It is,
// apart from cmd/keyreg, the only package that imports codegen, for the
// builders; its page shares internal/page's shell and internal/render's
// parts with the audit page of report.
package catalogue

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/internal/page"
	"github.com/keyreg/keyreg/internal/render"
	"github.com/keyreg/keyreg/registry"
)

// Format is the catalogue's format.
type Format string

// The formats of the catalogue.
const (
	HTML     Format = "html"     // one self-contained page, index.html
	Markdown Format = "markdown" // index.md and one file per owner
)

// Language is a codegen language whose key builders the catalogue shows,
// one row per family: Name labels the row ("go" gives "go builder") and
// Builders holds each family's builder signature by family name, as the
// backend's codegen.Documenter returns them ([Builders]). Channels holds
// each channel's builder, publisher and subscriber by channel name, when
// the backend is a codegen.ChannelDocumenter.
type Language struct {
	Name     string
	Builders map[string]string
	Channels map[string]codegen.ChannelFuncs
}

// Builders asks d for the builder signatures of every family of req, and,
// when d is a codegen.ChannelDocumenter, for what it writes for every
// channel, for the language named name.
func Builders(name string, d codegen.Documenter, req *codegen.Request) (Language, error) {
	b, err := d.Builders(req)
	if err != nil {
		return Language{}, fmt.Errorf("naming the generated %s builders: %w", name, err)
	}
	l := Language{Name: name, Builders: b}
	if cd, ok := d.(codegen.ChannelDocumenter); ok && len(req.Channels) > 0 {
		if l.Channels, err = cd.ChannelFuncs(req); err != nil {
			return Language{}, fmt.Errorf("naming the generated %s publishers: %w", name, err)
		}
	}
	return l, nil
}

// Options configures [Catalogue].
type Options struct {
	// Format is HTML (one page, index.html) or Markdown (index.md and one
	// file per owner).
	Format Format
	// Audit, when set, adds each family's live figures and findings, and the
	// audit's charts to the index.
	Audit *audit.Report
	// RepoURL, when set, links each family's keys.yaml position: the link is
	// RepoURL/<file>#L<line>, such as
	// https://github.com/acme/infra/blob/main/keys.yaml#L12. It must be an
	// http or https URL.
	RepoURL string
	// Languages are the codegen languages whose key builders each family
	// shows, in this order, such as Go's
	// keys.BuildUserSession(sessionID string) (string, error).
	Languages []Language
	// Version is keyreg's version, named in the page's footer.
	Version string
	// Now, when set, is the date a sunset is compared with to mark it
	// passed; the audit's start when there is an audit. The package reads
	// no clock: the caller passes it (keyreg docs, the time it runs).
	Now time.Time
}

//go:embed templates/*.html.tmpl
var htmlFiles embed.FS

// htmlTemplates is the catalogue's template set: internal/page's shell
// with internal/render's table parts (shared with the audit page) and
// catalogue.html.tmpl, its "nav", "body" and sections.
var htmlTemplates = render.Parse(htmlFiles, "templates/*.html.tmpl")

// File is one file of a generated catalogue, its Name relative to the
// output directory.
type File struct {
	Name string
	Data []byte
}

// Catalogue renders a browsable catalogue of reg: an index of owners,
// their contacts and families, the deprecations with their sunsets, and
// per family its description, pattern and placeholders, an example key,
// type, encoding, TTL policy, limits, preset origin, deprecation, keys.yaml
// position and payload schema. The HTML catalogue is one self-contained
// page with a filter box (index.html); the markdown catalogue is index.md
// and one file per owner. The output is deterministic: the same registry
// and options give the same bytes.
func Catalogue(reg *registry.Registry, o Options) ([]File, error) {
	if reg == nil {
		return nil, fmt.Errorf("writing catalogue: no registry")
	}
	if o.RepoURL != "" {
		u, err := url.Parse(o.RepoURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("bad repository URL %q (want an http or https URL)", o.RepoURL)
		}
	}
	c, err := newCatalogue(reg, o)
	if err != nil {
		return nil, err
	}
	switch o.Format {
	case HTML, "":
		p := page.New("keyreg catalogue")
		p.Version = render.Printable(o.Version)
		p.Filter = "filter by family name, pattern or description"
		p.Summary = c.Summary
		if o.Audit != nil {
			p.Partial = c.Partial
			p.Charts = render.AuditCharts(o.Audit)
		}
		p.Body = c
		var b bytes.Buffer
		if err := p.Render(&b, htmlTemplates()); err != nil {
			return nil, fmt.Errorf("writing html catalogue: %w", err)
		}
		return []File{{Name: "index.html", Data: b.Bytes()}}, nil
	case Markdown:
		return markdownCatalogue(c), nil
	}
	return nil, fmt.Errorf("unsupported catalogue format %q (want html or markdown)", o.Format)
}

// htmlCatalogue is the catalogue's view: what both formats print.
type htmlCatalogue struct {
	Summary      [][2]string
	Partial      string
	Live         bool
	Memory       bool
	Owners       []*catOwner
	Deprecations []catDeprecation
	Families     []*catFamily
	Channels     []*catChannel
}

type catOwner struct {
	Name        string
	Anchor      string
	File        string // the owner's markdown file
	Contact     string
	Description string
	Prefixes    []string
	Families    []*catFamily
	Channels    []*catChannel
	Live        *render.OwnerRow
}

type catDeprecation struct {
	Family, Anchor, Since, Sunset, ReplacedBy, ReplacedAnchor, Reason string
	Past                                                              bool // the sunset is before the audit, or Options.Now
	Channel                                                           bool // Family names a Pub/Sub channel
}

// catChannel is a Pub/Sub channel: the facts it shares with a family, and
// its own.
type catChannel struct {
	*catFamily
	Mode          string
	Publish       string // the command publishers use
	Subscribe     string // the command subscribers use, with the glob of a pattern channel
	SubscribeGlob string
	With          []string
	Funcs         []catChannelFuncs // one per language of Options.Languages that names them
	Live          *audit.ChannelDeclReport
}

// catChannelFuncs is what one codegen language writes for a channel.
type catChannelFuncs struct {
	Lang, Build, Publish, Subscribe string
}

type catFamily struct {
	Name         string
	Anchor       string
	Owner        string
	OwnerAnchor  string
	OwnerFile    string
	Description  string
	Pattern      string
	Placeholders []catPlaceholder
	Example      string
	Type         string
	Encoding     string
	TTL          string
	Limits       []string
	Preset       string
	ManagedBy    string
	Compat       string
	Deprecation  *catDeprecation
	Position     string
	PositionURL  string
	Builders     []catBuilder // one per language of Options.Languages that names one
	Schema       *catSchema
	Search       string
	Live         *render.FamRow
	Findings     []render.FindingRow
}

// catBuilder is a family's key builder in one codegen language.
type catBuilder struct {
	Lang, Signature string
}

type catPlaceholder struct {
	Name, Type string
	HashTag    bool
}

type catSchema struct {
	Source    string // the file, or "inline"
	Props     []schemaProp
	Truncated bool // more properties than maxSchemaRows
	Raw       string
}

type schemaProp struct {
	Path, Type, Description, Constraints string
	Required                             bool
}

// Bounds of a schema's rendering: a hostile schema cannot make the page
// huge.
const (
	maxSchemaRows  = 300
	maxSchemaDepth = 8
	maxSchemaRaw   = 64 << 10
)

// exampleValue is the value an example key uses for a placeholder.
func exampleValue(p registry.Part) string {
	switch p.Type {
	case registry.Int:
		return "42"
	case registry.UUID:
		return "123e4567-e89b-12d3-a456-426614174000"
	case registry.Hex:
		return "c0ffee"
	case registry.ULID:
		return "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	}
	return p.Name
}

// exampleKey builds a key of the pattern, or returns "" when the example
// values do not fit.
func exampleKey(p *registry.Pattern) string {
	vals := map[string]string{}
	for _, pt := range p.Placeholders() {
		vals[pt.Name] = exampleValue(pt)
	}
	k, err := p.Build(vals)
	if err != nil {
		return ""
	}
	return k
}

func newCatalogue(reg *registry.Registry, o Options) (*htmlCatalogue, error) {
	c := &htmlCatalogue{}
	live := map[string]render.FamRow{}
	var liveOwners map[string]render.OwnerRow
	if r := o.Audit; r != nil {
		c.Live = true
		c.Memory = r.MemoryMeasured()
		for _, f := range render.FamRows(r) {
			live[f.Raw] = f
		}
		liveOwners = map[string]render.OwnerRow{}
		for _, ow := range r.Owners {
			liveOwners[ow.Name] = render.OwnerRow{Name: render.Printable(ow.Name), Keys: ow.Keys, Memory: ow.Memory, MemKeys: ow.MemoryKeys,
				TTL: render.Pct(ow.WithTTL, ow.Keys), TTLText: render.TTLPercent(ow.WithTTL, ow.Keys), Findings: ow.Findings}
		}
		if r.Partial {
			c.Partial = render.PartialBanner(r)
		}
	}
	files := ownerFiles(reg)
	owners := map[string]*catOwner{}
	for _, ow := range reg.Owners {
		co := &catOwner{Name: render.Printable(ow.Name), Anchor: render.OwnerAnchor(ow.Name), File: files[ow.Name],
			Contact: render.Printable(render.Redact(ow.Contact)), Description: render.ClipText(render.Printable(ow.Description))}
		for _, p := range ow.Prefixes {
			co.Prefixes = append(co.Prefixes, render.QuoteKey(p.Glob))
		}
		if lo, ok := liveOwners[ow.Name]; ok {
			co.Live = &lo
		}
		owners[ow.Name] = co
		c.Owners = append(c.Owners, co)
	}
	for _, f := range reg.Families {
		cf := newCatFamily(reg, f, o)
		if r, ok := live[f.Name]; ok {
			cf.Live = &r
			cf.Findings = render.FindingRows(o.Audit.Findings, f.Name)
		}
		c.Families = append(c.Families, cf)
		co := c.owner(f.Owner, owners, files)
		cf.OwnerAnchor, cf.OwnerFile = co.Anchor, co.File
		co.Families = append(co.Families, cf)
		if cf.Deprecation != nil {
			c.Deprecations = append(c.Deprecations, *cf.Deprecation)
		}
	}
	c.addChannels(reg, o, owners, files)
	slices.SortStableFunc(c.Deprecations, func(a, b catDeprecation) int {
		// Sunsets first, soonest first; those without one last.
		return cmp.Or(cmp.Compare(b2i(a.Sunset == ""), b2i(b.Sunset == "")), cmp.Compare(a.Sunset, b.Sunset))
	})
	now := o.Now
	if o.Audit != nil && !o.Audit.Started.IsZero() {
		now = o.Audit.Started
	}
	if !now.IsZero() {
		for i := range c.Deprecations {
			d := &c.Deprecations[i]
			d.Past = d.Sunset != "" && d.Sunset < now.UTC().Format(time.DateOnly)
		}
	}
	c.Summary = [][2]string{
		{"registry", render.Printable(reg.File)},
		{"owners", strconv.Itoa(len(c.Owners))},
		{"families", strconv.Itoa(len(c.Families))},
		{"deprecated", strconv.Itoa(len(c.Deprecations))},
	}
	if len(c.Channels) > 0 {
		c.Summary = slices.Insert(c.Summary, 3, [2]string{"channels", strconv.Itoa(len(c.Channels))})
	}
	if r := o.Audit; r != nil {
		c.Summary = append(c.Summary, [2]string{"audit", render.Printable(r.DisplayTarget()) + cmp.Or(" at "+render.Stamp(r.Started), "")},
			[2]string{"keys", render.KeyCounts(r)})
	}
	return c, nil
}

func newCatFamily(reg *registry.Registry, f *registry.Family, o Options) *catFamily {
	cf := &catFamily{
		Name: render.Printable(f.Name), Anchor: render.FamilyAnchor(f.Name), Owner: render.OrDash(render.Printable(f.Owner)),
		Description: render.ClipText(render.Printable(f.Description)),
		Type:        render.OrDash(render.Printable(f.Type)), Encoding: render.OrDash(render.Printable(strings.ReplaceAll(f.Encoding, "|", ", "))),
		TTL: f.TTL.String(), ManagedBy: render.Printable(f.ManagedBy), Compat: render.Printable(f.Compat),
	}
	if f.TTLDefault {
		cf.TTL += " (default)"
	}
	if f.Pattern != nil {
		cf.Pattern = render.Printable(f.Pattern.Source)
		for _, pt := range f.Pattern.Placeholders() {
			cf.Placeholders = append(cf.Placeholders, catPlaceholder{Name: render.Printable(pt.Name), Type: pt.Type.String(), HashTag: pt.HashTag})
		}
		if k := exampleKey(f.Pattern); k != "" {
			cf.Example = render.QuoteKey(k)
		}
	}
	if f.MaxBytes > 0 {
		cf.Limits = append(cf.Limits, "max_bytes "+strconv.FormatInt(f.MaxBytes, 10))
	}
	if f.MaxLen > 0 {
		cf.Limits = append(cf.Limits, "max_len "+strconv.FormatInt(f.MaxLen, 10))
	}
	if f.MaxIdle > 0 {
		cf.Limits = append(cf.Limits, "max_idle "+registry.FormatDuration(f.MaxIdle))
	}
	if f.Preset != "" {
		cf.Preset = render.Printable(f.Preset)
		if f.PresetPart != "" {
			cf.Preset += " (part " + render.Printable(f.PresetPart) + ")"
		}
	}
	if d := f.Deprecated; d != nil {
		cd := &catDeprecation{Family: cf.Name, Anchor: cf.Anchor, Since: render.Date(d.Since), Sunset: render.Date(d.Sunset),
			ReplacedBy: render.Printable(d.ReplacedBy), Reason: render.ClipText(render.Printable(d.Reason))}
		if _, ok := reg.Family(d.ReplacedBy); ok {
			cd.ReplacedAnchor = render.FamilyAnchor(d.ReplacedBy)
		}
		cf.Deprecation = cd
	}
	if f.Pos.File != "" {
		cf.Position = render.Printable(render.SlashPath(f.Pos.String()))
		if o.RepoURL != "" {
			line, _ := f.Pos.Start()
			cf.PositionURL = strings.TrimRight(o.RepoURL, "/") + "/" + pathEscape(render.SlashPath(f.Pos.File)) + "#L" + strconv.Itoa(line)
		}
	}
	for _, l := range o.Languages {
		if sig, ok := l.Builders[f.Name]; ok {
			cf.Builders = append(cf.Builders, catBuilder{Lang: render.ClipText(render.Printable(l.Name)), Signature: render.ClipText(render.Printable(sig))})
		}
	}
	if f.Schema != nil && f.Schema.Doc != nil {
		cf.Schema = newCatSchema(f.Schema)
	}
	cf.Search = render.SearchText(f.Name, cf.Pattern, f.Description, f.Owner)
	return cf
}

// owner returns the owner named name; a family or channel of an
// undeclared owner (lint reports it) still shows under its owner's name.
func (c *htmlCatalogue) owner(name string, owners map[string]*catOwner, files map[string]string) *catOwner {
	co, ok := owners[name]
	if !ok {
		co = &catOwner{Name: render.Printable(name), Anchor: render.OwnerAnchor(name), File: files[name]}
		owners[name] = co
		c.Owners = append(c.Owners, co)
	}
	return co
}

// addChannels adds the registry's Pub/Sub channels: each with its owner,
// its deprecation, what the languages generate for it, and, with an audit
// that read the channels, its live channels, subscribers and findings.
func (c *htmlCatalogue) addChannels(reg *registry.Registry, o Options, owners map[string]*catOwner, files map[string]string) {
	live := map[string]*audit.ChannelDeclReport{}
	if o.Audit != nil && o.Audit.Channels != nil {
		for _, d := range o.Audit.Channels.Declared {
			live[d.Name] = d
		}
	}
	for _, ch := range reg.Channels {
		cf := newCatFamily(reg, &ch.Family, o)
		cf.Anchor = render.ChannelAnchor(ch.Name)
		cf.Builders = nil // a family's; a channel's are in Funcs
		cc := &catChannel{catFamily: cf, Mode: render.Printable(ch.Mode), SubscribeGlob: render.Printable(ch.SubscribeGlob), Live: live[ch.Name]}
		cc.Publish, cc.Subscribe = registry.ModeCommands(ch.Mode)
		for _, w := range ch.With {
			cc.With = append(cc.With, render.Printable(w.Name))
		}
		for _, l := range o.Languages {
			if fs, ok := l.Channels[ch.Name]; ok {
				pr := func(s string) string { return render.ClipText(render.Printable(s)) }
				cc.Funcs = append(cc.Funcs, catChannelFuncs{Lang: pr(l.Name), Build: pr(fs.Build), Publish: pr(fs.Publish), Subscribe: pr(fs.Subscribe)})
			}
		}
		if o.Audit != nil {
			var fs []*audit.Finding
			for _, f := range o.Audit.Findings {
				if f.Channel == ch.Name && f.Rule != audit.RuleChannelUnregistered {
					fs = append(fs, f)
				}
			}
			for _, fr := range render.FindingRows(fs, "") {
				fr.Anchor = cf.Anchor
				cf.Findings = append(cf.Findings, fr)
			}
		}
		cf.Search = render.SearchText(ch.Name, cf.Pattern, ch.Description, ch.Owner, "channel", ch.Mode)
		c.Channels = append(c.Channels, cc)
		co := c.owner(ch.Owner, owners, files)
		cf.OwnerAnchor, cf.OwnerFile = co.Anchor, co.File
		co.Channels = append(co.Channels, cc)
		if d := cf.Deprecation; d != nil {
			d.Channel, d.Anchor = true, cf.Anchor
			d.ReplacedAnchor = ""
			if _, ok := reg.Channel(ch.Deprecated.ReplacedBy); ok {
				d.ReplacedAnchor = render.ChannelAnchor(ch.Deprecated.ReplacedBy)
			} else if _, ok := reg.Family(ch.Deprecated.ReplacedBy); ok {
				d.ReplacedAnchor = render.FamilyAnchor(ch.Deprecated.ReplacedBy)
			}
			c.Deprecations = append(c.Deprecations, *d)
		}
	}
}

// pathEscape escapes each segment of a slash-separated path for a URL.
func pathEscape(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// ownerFiles names each owner's markdown file, owner-<name>.md with any
// byte outside [a-z0-9_-] replaced, and a number added where two names
// would collide.
func ownerFiles(reg *registry.Registry) map[string]string {
	names := []string{}
	seen := map[string]bool{}
	for _, o := range reg.Owners {
		if !seen[o.Name] {
			seen[o.Name] = true
			names = append(names, o.Name)
		}
	}
	for _, f := range reg.Families {
		if !seen[f.Owner] {
			seen[f.Owner] = true
			names = append(names, f.Owner)
		}
	}
	for _, c := range reg.Channels {
		if !seen[c.Owner] {
			seen[c.Owner] = true
			names = append(names, c.Owner)
		}
	}
	out := map[string]string{}
	taken := map[string]bool{"index": true}
	for _, n := range names {
		var b strings.Builder
		for i := 0; i < len(n) && b.Len() < 64; i++ {
			c := n[i]
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
				b.WriteByte(c)
			case 'A' <= c && c <= 'Z':
				b.WriteByte(c + 'a' - 'A')
			default:
				b.WriteByte('_')
			}
		}
		base := "owner-" + cmp.Or(b.String(), "_")
		name := base
		for i := 2; taken[name]; i++ {
			name = base + "-" + strconv.Itoa(i)
		}
		taken[name] = true
		out[n] = name + ".md"
	}
	return out
}

// newCatSchema flattens a schema's properties into rows and keeps its raw
// text, both bounded.
func newCatSchema(s *registry.Schema) *catSchema {
	cs := &catSchema{Source: cmp.Or(render.Printable(s.Path), "inline")}
	raw, err := json.MarshalIndent(s.Doc, "", "  ")
	if err == nil {
		if len(raw) > maxSchemaRaw {
			raw = append(bytes.ToValidUTF8(raw[:maxSchemaRaw], nil), "\n…"...)
		}
		cs.Raw = string(raw)
	}
	if m, ok := s.Doc.(map[string]any); ok {
		values, _ := m["additionalProperties"].(map[string]any)
		switch _, props := m["properties"]; {
		case props:
			cs.walk("", m, 0)
		case values != nil:
			// A map, as a hash's schema is: its field names (propertyNames)
			// and the schema of every field's value, walked like an object.
			names, _ := m["propertyNames"].(map[string]any)
			if names == nil {
				names = map[string]any{"type": "string"}
			} else if _, ok := names["type"]; !ok {
				names = maps.Clone(names)
				names["type"] = "string"
			}
			cs.add("(field name)", names, true)
			cs.add("(any field)", values, true)
			if _, ok := values["properties"]; ok {
				cs.walk("(any field).", values, 1)
			}
		default:
			cs.add("(value)", m, true)
		}
	}
	return cs
}

// walk adds a row per property of the object schema m, and of the objects
// nested in it (directly or as array items), at most maxSchemaDepth deep.
func (cs *catSchema) walk(prefix string, m map[string]any, depth int) {
	props, _ := m["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if len(cs.Props) >= maxSchemaRows {
			cs.Truncated = true
			return
		}
		p, _ := props[n].(map[string]any)
		path := prefix + render.Printable(n)
		cs.add(path, p, required[n])
		if p == nil || depth+1 >= maxSchemaDepth {
			continue
		}
		if _, ok := p["properties"]; ok {
			cs.walk(path+".", p, depth+1)
		} else if items, ok := p["items"].(map[string]any); ok {
			if _, ok := items["properties"]; ok {
				cs.walk(path+"[].", items, depth+1)
			}
		}
	}
}

// add appends one row for the property p.
func (cs *catSchema) add(path string, p map[string]any, required bool) {
	row := schemaProp{Path: render.ClipText(path), Required: required}
	if p != nil {
		row.Type = render.ClipText(render.Printable(schemaType(p)))
		if d, ok := p["description"].(string); ok {
			row.Description = render.ClipText(render.Printable(d))
		}
		var cons []string
		for _, k := range []string{"format", "enum", "const", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems", "default"} {
			if v, ok := p[k]; ok {
				b, err := json.Marshal(v)
				if err == nil {
					cons = append(cons, k+" "+string(b))
				}
			}
		}
		row.Constraints = render.ClipText(render.Printable(strings.Join(cons, "; ")))
	}
	cs.Props = append(cs.Props, row)
}

// schemaType names a property's type: its type (or types), $ref, or the
// item type of an array.
func schemaType(p map[string]any) string {
	var t string
	switch v := p["type"].(type) {
	case string:
		t = v
	case []any:
		var ts []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				ts = append(ts, s)
			}
		}
		t = strings.Join(ts, " | ")
	}
	if ref, ok := p["$ref"].(string); ok {
		t = cmp.Or(t, "$ref "+ref)
	}
	if t == "array" {
		if items, ok := p["items"].(map[string]any); ok {
			if it := schemaType(items); it != "" {
				t = "array of " + it
			}
		}
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if _, ok := p[k]; ok && t == "" {
			t = k
		}
	}
	return t
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
