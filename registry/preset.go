package registry

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/keyreg/keyreg/diag"
	"go.yaml.in/yaml/v3"
)

// Presets are data: one YAML definition per preset in presets/, embedded
// here and expanded by Load into ordinary families (docs/presets.md). A
// definition names the library and the versions its layout was tested
// against, its parameters with their defaults, and one template per part:
// the fields of a family in keys.yaml syntax, where ${param} stands for a
// parameter's value (escaped as a pattern literal inside pattern:).

//go:embed presets/*.yaml
var presetFiles embed.FS

// Bounds on what a preset entry in keys.yaml may ask for.
const (
	// MaxPresetValues bounds the values of one list parameter.
	MaxPresetValues = 64
	// MaxPresetValueLen bounds the bytes of one parameter value.
	MaxPresetValueLen = 256
	// MaxPresetFamilies bounds the families one preset entry expands into.
	MaxPresetFamilies = 1024
	// MaxPresetFamiliesTotal bounds the families all presets: entries of
	// a registry expand into, so that many small entries cannot make a
	// small file into a huge registry (every preset with its defaults is
	// about 150).
	MaxPresetFamiliesTotal = 10_000
)

// Parameter kinds of a preset.
const (
	ParamString   = "string"   // one string
	ParamStrings  = "strings"  // a list of strings
	ParamInts     = "ints"     // a list of integers, or any integer when unset
	ParamDuration = "duration" // one duration, such as 1d
)

// Preset is a built-in preset definition.
type Preset struct {
	Name string // as written after use:
	// FamilyPrefix starts every expanded family name: Name, made
	// kebab-case ("socket-io-streams" for "socket.io-streams").
	FamilyPrefix string
	Summary      string   // one line
	Library      string   // what the expanded families say under managed_by
	Tested       []string // library versions the layout was tested against
	Sources      []string // the library source files the layout was read from
	Notes        string   // what a user should know, in markdown
	// Coexists names presets whose families may share keys with this one's,
	// such as bull and bullmq on one prefix: lint does not report their
	// overlaps, and a key goes to the first declared.
	Coexists []string
	Params   []PresetParam
	Parts    []PresetPart
	// Channels are the Pub/Sub channels the library publishes on, written
	// as families are (under channels:), with a channel's mode and
	// subscribe_glob; they expand into the registry's channels.
	Channels []PresetPart
}

// PresetParam is one parameter of a preset.
type PresetParam struct {
	Name    string
	Kind    string // ParamString, ParamStrings, ParamInts or ParamDuration
	Doc     string
	Default []string // nil for an ints parameter that means "any integer"
	// Any is the pattern text that stands for an unset ints parameter,
	// such as "{version:int}".
	Any string
	// Suffix is written after a value that is not empty, such as the ":"
	// after a redis-namespace: namespace myapp gives "myapp:queues",
	// no namespace "queues".
	Suffix string
}

// PresetPart is one part of a preset: the template of the families it
// expands into, one per combination of the values of its Each parameters.
type PresetPart struct {
	Name  string   // the part: the family is named <FamilyPrefix>-<Name>
	Each  []string // list parameters iterated, in order
	Notes string   // TTL behaviour and other facts, for docs/presets.md
	// Probe is a pattern template that reads a parameter's values off the
	// part's keys where its own pattern has a placeholder (a Celery queue
	// from its _kombu.binding.<queue> set), with values that are not the
	// parameter's (kombu's own exchanges) in ProbeIgnore. keyreg init only.
	Probe       string
	ProbeIgnore []string
	node        *yaml.Node
}

// Template returns the template's fields in keys.yaml syntax, with
// ${param} references, for documentation.
func (p PresetPart) Template() map[string]string {
	out := map[string]string{}
	for k, v := range pairs(p.node) {
		switch k.Value {
		case "part", "each", "notes", "probe":
			continue
		}
		out[k.Value] = scalarOrFlow(v)
	}
	return out
}

func scalarOrFlow(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	c := *n
	c.Style = yaml.FlowStyle
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	_ = e.Encode(&c)
	_ = e.Close()
	return strings.TrimSpace(b.String())
}

// Param returns the parameter with the given name.
func (p *Preset) Param(name string) (PresetParam, bool) {
	for _, q := range p.Params {
		if q.Name == name {
			return q, true
		}
	}
	return PresetParam{}, false
}

// Presets returns every built-in preset, sorted by name. The definitions
// are parsed once; a definition that does not parse is a bug of keyreg's,
// caught by its tests, and panics.
func Presets() []*Preset { return presetTable().list }

// LookupPreset returns the built-in preset with the given name.
func LookupPreset(name string) (*Preset, bool) {
	p, ok := presetTable().byName[name]
	return p, ok
}

type presets struct {
	list   []*Preset
	byName map[string]*Preset
}

var presetTable = sync.OnceValue(func() presets {
	t := presets{byName: map[string]*Preset{}}
	files, err := fs.Glob(presetFiles, "presets/*.yaml")
	if err != nil {
		panic(err)
	}
	for _, name := range files {
		data, err := presetFiles.ReadFile(name)
		if err != nil {
			panic(err)
		}
		p, err := parsePreset(data)
		if err != nil {
			panic(fmt.Sprintf("registry/%s: %v", name, err))
		}
		if want := strings.TrimSuffix(path.Base(name), ".yaml"); p.Name != want {
			panic(fmt.Sprintf("registry/%s: preset is named %q", name, p.Name))
		}
		t.list = append(t.list, p)
		t.byName[p.Name] = p
	}
	slices.SortFunc(t.list, func(a, b *Preset) int { return strings.Compare(a.Name, b.Name) })
	return t
})

// parsePreset reads one preset definition.
func parsePreset(data []byte) (*Preset, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("want one mapping")
	}
	p := &Preset{}
	for k, v := range pairs(doc.Content[0]) {
		var err error
		switch k.Value {
		case "name":
			p.Name = v.Value
		case "family_prefix":
			p.FamilyPrefix = v.Value
		case "summary":
			p.Summary = v.Value
		case "library":
			p.Library = v.Value
		case "notes":
			p.Notes = v.Value
		case "tested":
			err = v.Decode(&p.Tested)
		case "sources":
			err = v.Decode(&p.Sources)
		case "coexists":
			err = v.Decode(&p.Coexists)
		case "params":
			for _, pn := range v.Content {
				var q struct {
					Name    string    `yaml:"name"`
					Kind    string    `yaml:"kind"`
					Doc     string    `yaml:"doc"`
					Default yaml.Node `yaml:"default"`
					Any     string    `yaml:"any"`
					Suffix  string    `yaml:"suffix"`
				}
				if err := pn.Decode(&q); err != nil {
					return nil, err
				}
				param := PresetParam{Name: q.Name, Kind: q.Kind, Doc: q.Doc, Any: q.Any, Suffix: q.Suffix}
				if q.Default.Kind != 0 && q.Default.ShortTag() != "!!null" {
					vals, msg := paramValues(param, &q.Default)
					if msg != "" {
						return nil, fmt.Errorf("param %s: default: %s", q.Name, msg)
					}
					param.Default = vals
				} else if q.Kind != ParamInts || q.Any == "" {
					return nil, fmt.Errorf("param %s: no default", q.Name)
				}
				p.Params = append(p.Params, param)
			}
		case "families", "channels":
			for _, fn := range v.Content {
				part, perr := p.parsePart(fn)
				if perr != nil {
					return nil, perr
				}
				if k.Value == "channels" {
					p.Channels = append(p.Channels, part)
				} else {
					p.Parts = append(p.Parts, part)
				}
			}
		default:
			return nil, fmt.Errorf("unknown field %q", k.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k.Value, err)
		}
	}
	if p.FamilyPrefix == "" {
		p.FamilyPrefix = p.Name
	}
	if p.Name == "" || p.Library == "" || len(p.Parts)+len(p.Channels) == 0 {
		return nil, errors.New("name, library and families or channels are required")
	}
	return p, nil
}

// parsePart reads one part (of families: or channels:) of a preset.
func (p *Preset) parsePart(fn *yaml.Node) (PresetPart, error) {
	part := PresetPart{node: fn}
	var err error
	for fk, fv := range pairs(fn) {
		switch fk.Value {
		case "part":
			part.Name = fv.Value
		case "each":
			err = fv.Decode(&part.Each)
		case "notes":
			part.Notes = fv.Value
		case "probe":
			var pr struct {
				Pattern string   `yaml:"pattern"`
				Ignore  []string `yaml:"ignore"`
			}
			err = fv.Decode(&pr)
			part.Probe, part.ProbeIgnore = pr.Pattern, pr.Ignore
		}
		if err != nil {
			return part, err
		}
	}
	for _, e := range part.Each {
		if q, ok := p.Param(e); !ok || (q.Kind != ParamStrings && q.Kind != ParamInts) {
			return part, fmt.Errorf("part %s: each names %q, not a list parameter", part.Name, e)
		}
	}
	return part, nil
}

// paramValues reads the value of a parameter from n, checking its kind
// and its bounds. msg says what is wrong, or is empty.
func paramValues(p PresetParam, n *yaml.Node) (vals []string, msg string) {
	scalar := func(n *yaml.Node) (string, string) {
		if n.Kind != yaml.ScalarNode {
			return "", "want a single value"
		}
		if len(n.Value) > MaxPresetValueLen {
			return "", fmt.Sprintf("value is %d bytes, more than the %d-byte limit", len(n.Value), MaxPresetValueLen)
		}
		return n.Value, ""
	}
	switch p.Kind {
	case ParamString, ParamDuration:
		if n.Kind != yaml.ScalarNode {
			return nil, "want " + kindWant(p.Kind)
		}
		v, msg := scalar(n)
		if msg != "" {
			return nil, msg
		}
		if p.Kind == ParamDuration {
			if _, err := ParseDuration(v); err != nil {
				return nil, err.Error()
			}
		}
		return []string{v}, ""
	case ParamStrings, ParamInts:
		items := []*yaml.Node{n}
		if n.Kind == yaml.SequenceNode {
			items = n.Content
		}
		if len(items) == 0 {
			return nil, "want at least one value"
		}
		if len(items) > MaxPresetValues {
			return nil, fmt.Sprintf("%d values, more than the limit of %d", len(items), MaxPresetValues)
		}
		for _, it := range items {
			if it.Kind == yaml.AliasNode {
				it = it.Alias
			}
			v, msg := scalar(it)
			if msg != "" {
				return nil, msg + " in each item (want " + kindWant(p.Kind) + ")"
			}
			if p.Kind == ParamInts {
				if _, err := strconv.ParseInt(v, 10, 64); err != nil {
					return nil, fmt.Sprintf("%s is not an integer (want %s)", quoteShort(v), kindWant(p.Kind))
				}
			}
			if slices.Contains(vals, v) {
				return nil, fmt.Sprintf("%s is listed twice", quoteShort(v))
			}
			vals = append(vals, v)
		}
		return vals, ""
	}
	return nil, "unknown parameter kind " + p.Kind
}

// EscapeLiteral writes s as pattern text that matches exactly s: braces and
// backslashes escaped; control bytes, bytes that are not UTF-8, and the
// characters that make text read other than it is (C1 controls, bidi
// overrides and isolates, line and paragraph separators, zero-width
// marks) as \xHH bytes, so that a reviewer sees what the pattern matches.
func EscapeLiteral(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch c := s[i]; {
		case c == '{' || c == '}' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case isControl(c) || (r == utf8.RuneError && n == 1) || deceptive(r):
			for _, x := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, `\x%02x`, x)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// deceptive reports whether r is invisible or changes how the text around
// it is shown.
func deceptive(r rune) bool {
	return (r >= 0x80 && r < 0xa0) || r == 0x200b || r == 0x200c || r == 0x200d || r == 0x200e || r == 0x200f ||
		(r >= 0x2028 && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0xfeff
}

// presetUse is one entry of presets: in keys.yaml while it expands.
type presetUse struct {
	preset  *Preset
	prefix  string   // of its family names: name:, or the preset's FamilyPrefix
	index   int      // 1 + its index under presets:
	pos     diag.Pos // the entry
	ptr     string   // its JSON pointer
	owner   *yaml.Node
	values  map[string][]string // parameter values
	given   map[string]bool     // parameters set under with:
	over    map[string]*yaml.Node
	overKey map[string]*yaml.Node
	bad     bool // a parameter is wrong (reported): only the override names are checked, with defaults
}

// presets expands the presets: entries of keys.yaml into families, which it
// appends to r.Families after the families declared by hand.
func (l *loader) presets(r *Registry, list *yaml.Node) {
	if list == nil {
		return
	}
	if l.lenient && (list.Kind != yaml.SequenceNode || slices.Contains(l.badPtrs, "/presets")) {
		return
	}
	used := map[string]diag.Pos{}
	for j, n := range list.Content {
		if l.lenient && l.rejected("/presets/"+strconv.Itoa(j)) {
			continue // the schema reported what is wrong with the entry
		}
		u := l.presetUse(n, "/presets/"+strconv.Itoa(j))
		if u == nil {
			continue
		}
		u.index = j + 1
		if prev, dup := used[u.prefix]; dup {
			l.errorf(u.pos, RuleSchemaInvalid, "", "families named %s-* are already expanded by the entry at line %d: give this entry its own name: (its families are then named <name>-<part>), or list more values under one entry's with:", u.prefix, prev.Line)
			continue
		}
		used[u.prefix] = u.pos
		if r.Separator != ':' {
			l.errorf(u.pos, RuleSchemaInvalid, "", "presets assume the separator \":\", and this registry's is %q", string(r.Separator))
			continue
		}
		l.expand(r, u)
	}
}

// presetUse reads one entry: the preset, its parameters and its overrides.
func (l *loader) presetUse(n *yaml.Node, ptr string) *presetUse {
	u := &presetUse{pos: l.nodePos(n), ptr: ptr, values: map[string][]string{}, given: map[string]bool{}, over: map[string]*yaml.Node{}, overKey: map[string]*yaml.Node{}}
	var with, fams *yaml.Node
	for k, v := range pairs(n) {
		switch k.Value {
		case "use":
			p, ok := LookupPreset(v.Value)
			if !ok {
				names := make([]string, 0, len(Presets()))
				for _, p := range Presets() {
					names = append(names, p.Name)
				}
				l.errorf(l.nodePos(v), RuleSchemaInvalid, "", "unknown preset %s%s (keyreg presets lists them: %s)", quoteShort(v.Value), diag.DidYouMean(v.Value, names), strings.Join(names, ", "))
				return nil
			}
			u.preset = p
		case "owner":
			u.owner = v
		case "name":
			u.prefix = v.Value
		case "with":
			with = v
		case "families":
			fams = v
		}
	}
	ok := true
	for k, v := range pairs(with) {
		q, found := u.preset.Param(k.Value)
		if !found {
			names := make([]string, 0, len(u.preset.Params))
			for _, q := range u.preset.Params {
				names = append(names, q.Name)
			}
			l.errorf(l.nodePos(k), RuleSchemaInvalid, "", "preset %s has no parameter %s%s (it has: %s)", u.preset.Name, quoteShort(k.Value), diag.DidYouMean(k.Value, names), orNone(names))
			ok = false
			continue
		}
		vals, msg := paramValues(q, v)
		if msg != "" {
			l.errorf(l.nodePos(v), RuleSchemaInvalid, "", "preset %s, parameter %s: %s", u.preset.Name, q.Name, msg)
			ok = false
			continue
		}
		u.values[q.Name], u.given[q.Name] = vals, true
	}
	for _, q := range u.preset.Params {
		if !u.given[q.Name] {
			u.values[q.Name] = q.Default
		}
	}
	for k, v := range pairs(fams) {
		u.over[k.Value], u.overKey[k.Value] = v, k
	}
	if u.prefix == "" {
		u.prefix = u.preset.FamilyPrefix
	}
	u.bad = !ok
	return u
}

func kindWant(kind string) string {
	switch kind {
	case ParamStrings:
		return "a list of strings"
	case ParamInts:
		return "a list of integers"
	case ParamDuration:
		return "a duration such as 1d"
	}
	return "a string"
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// expansion is one family a part expands into.
type expansion struct {
	name   string
	part   string // <prefix>-<part>
	values map[string]string
}

// expansions lists the families of preset p with the given parameter
// values (defaults for those missing), as the names Load gives them under
// the name prefix.
func (p *Preset) expansions(values map[string][]string, prefix string) []expansion {
	return p.expansionsOf(p.Parts, values, prefix)
}

// expansionsOf lists the expansions of parts (p.Parts or p.Channels).
func (p *Preset) expansionsOf(parts []PresetPart, values map[string][]string, prefix string) []expansion {
	var out []expansion
	for _, part := range parts {
		base := prefix + "-" + part.Name
		combos := []map[string]string{{}}
		for _, e := range part.Each {
			vals := values[e]
			if vals == nil { // ints left as "any": one family
				continue
			}
			var next []map[string]string
			for _, c := range combos {
				for _, v := range vals {
					m := make(map[string]string, len(c)+1)
					for k, x := range c {
						m[k] = x
					}
					m[e] = v
					next = append(next, m)
				}
			}
			combos = next
			if len(combos) > MaxPresetFamilies {
				break
			}
		}
		for _, c := range combos {
			name := base
			for _, e := range part.Each {
				v, ok := c[e]
				if !ok {
					continue
				}
				q, _ := p.Param(e)
				if len(q.Default) == 1 && q.Default[0] == v {
					continue // the default value keeps the plain name
				}
				name += "-" + slug(v, slices.Index(values[e], v)+1)
			}
			out = append(out, expansion{name: name, part: base, values: c})
		}
	}
	return out
}

// slug makes a parameter value part of a family name: lower case letters
// and digits, other runs of bytes as one "-", and "minus" for a leading
// "-" (versions -1 and 1). A value with no letter or digit is named by its
// 1-based index in its list.
func slug(v string, index int) string {
	var b strings.Builder
	if strings.HasPrefix(v, "-") {
		b.WriteString("minus") // -1 and 1 must not both be "1"
	}
	dash := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if ('a' <= c && c <= 'z') || isDigit(c) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteByte(c)
			dash = false
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return strconv.Itoa(index)
	}
	return b.String()
}

// expand appends the families of one preset entry to r.
func (l *loader) expand(r *Registry, u *presetUse) {
	p := u.preset
	exps := p.expansions(u.values, u.prefix)
	chans := p.expansionsOf(p.Channels, u.values, u.prefix)
	if len(chans) > MaxPresetFamilies {
		l.errorf(u.pos, RuleSchemaInvalid, "", "preset %s expands into %d channels with these parameters, more than the limit of %d", p.Name, len(chans), MaxPresetFamilies)
		return
	}
	if len(exps) > MaxPresetFamilies {
		l.errorf(u.pos, RuleSchemaInvalid, "", "preset %s expands into %d families with these parameters, more than the limit of %d", p.Name, len(exps), MaxPresetFamilies)
		return
	}
	if l.presetFamilies += len(exps) + len(chans); l.presetFamilies > MaxPresetFamiliesTotal {
		l.errorf(u.pos, RuleSchemaInvalid, "", "the presets: entries up to this one expand into %d families, more than the limit of %d", l.presetFamilies, MaxPresetFamiliesTotal)
		return
	}
	known := map[string]bool{}
	var names []string
	for _, e := range append(slices.Clip(exps), chans...) {
		for _, n := range []string{e.part, e.name} {
			if !known[n] {
				known[n] = true
				names = append(names, n)
			}
		}
	}
	for name, k := range u.overKey {
		if !known[name] {
			l.errorf(l.nodePos(k), RuleSchemaInvalid, "", "preset %s has no family %s%s (`keyreg presets show %s` lists them)", p.Name, quoteShort(name), diag.DidYouMean(name, names), p.Name)
		}
	}
	if u.bad {
		return
	}
	parts := map[string]PresetPart{}
	for _, part := range p.Parts {
		parts[u.prefix+"-"+part.Name] = part
	}
	for _, e := range exps {
		part := parts[e.part]
		n := l.instantiate(u, part, e)
		f := l.family(r, n, "")
		f.Preset, f.PresetPart, f.presetEntry = p.Name, e.part, u.index
		f.Index = len(r.Families)
		if prev, dup := r.byName[f.Name]; dup {
			l.errorf(u.pos, RuleDuplicateName, f.Name, "preset %s expands into family %q, which is already declared at line %d (rename that family, or drop it for the preset's)", p.Name, f.Name, prev.Pos.Line)
			continue
		}
		r.byName[f.Name] = f
		r.Families = append(r.Families, f)
	}
	for _, part := range p.Channels {
		parts[u.prefix+"-"+part.Name] = part
	}
	for _, e := range chans {
		n := l.instantiate(u, parts[e.part], e)
		c, dup := l.channel(r, n, "")
		f := &c.Family
		f.Preset, f.PresetPart, f.presetEntry = p.Name, e.part, u.index
		if dup != nil {
			l.errorf(u.pos, RuleDuplicateName, f.Name, "preset %s expands into channel %q, which is already declared at line %d", p.Name, f.Name, dup.Pos.Line)
			continue
		}
		r.channelByName[f.Name] = c
		r.Channels = append(r.Channels, c)
	}
}

// instantiate builds the keys.yaml mapping of one expanded family: the
// part's template with parameters substituted, at the position of the
// preset entry, then the entry's owner and overrides (part-wide first,
// then the family's own), which keep their own positions.
func (l *loader) instantiate(u *presetUse, part PresetPart, e expansion) *yaml.Node {
	at := func(n *yaml.Node) *yaml.Node {
		n.Line, n.Column = u.pos.Line, u.pos.Col
		return n
	}
	str := func(s string) *yaml.Node {
		return at(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
	}
	m := at(&yaml.Node{Kind: yaml.MappingNode})
	set := func(k string, v *yaml.Node) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == k {
				m.Content[i+1] = v
				return
			}
		}
		m.Content = append(m.Content, str(k), v)
	}
	del := func(k string) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == k {
				m.Content = append(m.Content[:i], m.Content[i+2:]...)
				return
			}
		}
	}
	set("name", str(e.name))
	for k, v := range pairs(part.node) {
		switch k.Value {
		case "part", "each", "notes", "probe":
			continue
		}
		set(k.Value, at(l.substitute(v, u, e, escaperFor(k.Value))))
	}
	set("owner", u.owner)
	set("managed_by", str(u.preset.Library))
	names := []string{e.part}
	if e.name != e.part {
		names = append(names, e.name)
	}
	for _, name := range names {
		for k, v := range pairs(u.over[name]) {
			if k.Value == "schema" && v.ShortTag() == "!!null" {
				del("schema") // schema: null drops the preset's schema
				continue
			}
			set(k.Value, v)
			if k.Value == "schema" && v.Kind != yaml.ScalarNode {
				l.jsonPtr[v] = u.ptr + "/families/" + escapePointer(name) + "/schema"
			}
		}
	}
	return m
}

// escaperFor returns how a parameter value is written into a template
// field: as a pattern literal in pattern, a glob literal in a channel's
// subscribe_glob (a namespace "/a*b" must not become a wildcard), as it is
// elsewhere.
func escaperFor(field string) func(string) string {
	switch field {
	case "pattern":
		return EscapeLiteral
	case "subscribe_glob":
		return EscapeGlob
	}
	return func(v string) string { return v }
}

// substitute copies a template node, replacing ${param} in its scalars
// with the parameter's value: escaped as a pattern literal when pattern
// is set, or the ints parameter's Any text when it is unset.
func (l *loader) substitute(n *yaml.Node, u *presetUse, e expansion, esc func(string) string) *yaml.Node {
	c := *n
	c.Line, c.Column = u.pos.Line, u.pos.Col
	if n.Kind == yaml.ScalarNode {
		c.Value = expandRefs(n.Value, func(name string) string {
			v, ok := e.values[name]
			if !ok {
				vals := u.values[name]
				if vals == nil {
					q, _ := u.preset.Param(name)
					return q.Any
				}
				v = vals[0]
			}
			if q, _ := u.preset.Param(name); v != "" {
				v += q.Suffix
			}
			return esc(v)
		})
		return &c
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = l.substitute(x, u, e, esc)
	}
	return &c
}

// expandRefs replaces each ${name} in s.
func expandRefs(s string, value func(string) string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteString(value(s[i+2 : i+j]))
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

// FromPreset reports whether the family was expanded from a preset.
func (f *Family) FromPreset() bool { return f.Preset != "" }

// SharesKeysWith reports whether f and g are families of presets that are
// designed to share keys, so that lint does not report their overlaps: a
// key both match goes to the family with the most literal bytes, as the
// matcher decides every overlap.
//
//   - The families of one presets: entry: a BullMQ job id "meta" and the
//     queue's meta hash.
//   - Families of two different presets, when their literal bytes differ,
//     so that the most specific always wins (Sidekiq's bare
//     {hostname}:{pid}:{nonce} heartbeat loses to bull:{queue}:{id}), or
//     when the presets say they coexist (bull and bullmq, whose shared
//     layouts tie and agree).
//
// Two entries of one preset are not: where both can match a key (two
// Celery apps' results), two owners claim the same keys, which lint
// reports; so is a tie between presets that do not coexist.
func (f *Family) SharesKeysWith(g *Family) bool {
	if !f.FromPreset() || !g.FromPreset() {
		return false
	}
	if f.Preset == g.Preset {
		return f.presetEntry == g.presetEntry
	}
	if f.Pattern != nil && g.Pattern != nil && f.Pattern.LiteralBytes() != g.Pattern.LiteralBytes() {
		return true
	}
	p, _ := LookupPreset(f.Preset)
	q, _ := LookupPreset(g.Preset)
	return p != nil && q != nil && (slices.Contains(p.Coexists, q.Name) || slices.Contains(q.Coexists, p.Name))
}

// Probe is a pattern that finds the value of one parameter of a preset in
// key names: a part's pattern with the parameter replaced by a
// placeholder named Capture, the other parameters at their defaults. keyreg
// init matches keys against probes to tell, say, the BullMQ prefix or the
// Celery queues of a keyspace.
type Probe struct {
	Preset  *Preset
	Part    string // <prefix>-<part>
	Param   string
	Capture string // the placeholder that binds the value
	Pattern *Pattern
	// Sure: one key is enough evidence of a value (a part's Probe: a
	// Celery queue's binding set exists once); Ignore lists values that
	// are not the parameter's.
	Sure   bool
	Ignore []string
}

// minProbeLiteral is the literal bytes a probe needs, so that it does not
// claim keys that merely have as many segments; a control byte (kombu's
// \x06\x16) is distinctive enough on its own.
const minProbeLiteral = 4

// Probes returns the probes of the preset's string and list-of-strings
// parameters: one per part whose pattern holds the parameter once and is
// distinctive without it.
func (p *Preset) Probes() []Probe {
	var out []Probe
	for _, part := range p.Parts {
		src := part.node
		var tmpl string
		for k, v := range pairs(src) {
			if k.Value == "pattern" {
				tmpl = v.Value
			}
		}
		if part.Probe != "" {
			for _, q := range p.Params {
				if (q.Kind == ParamString || q.Kind == ParamStrings) && strings.Count(part.Probe, "${"+q.Name+"}") == 1 {
					if pr, ok := p.probe(part, part.Probe, q, nil); ok {
						pr.Sure, pr.Ignore = true, part.ProbeIgnore
						out = append(out, pr)
					}
				}
			}
		}
		for _, q := range p.Params {
			if (q.Kind != ParamString && q.Kind != ParamStrings) || strings.Count(tmpl, "${"+q.Name+"}") != 1 {
				continue
			}
			// One probe per default value of the part's other list
			// parameters (each priority step of a Celery queue).
			combos := []map[string]string{{}}
			for _, e := range part.Each {
				r, _ := p.Param(e)
				if e == q.Name || len(r.Default) < 2 {
					continue
				}
				var next []map[string]string
				for _, c := range combos {
					for _, v := range r.Default {
						m := map[string]string{e: v}
						for k, x := range c {
							m[k] = x
						}
						next = append(next, m)
					}
				}
				combos = next
			}
			for _, combo := range combos {
				if pr, ok := p.probe(part, tmpl, q, combo); ok {
					out = append(out, pr)
				}
			}
		}
	}
	return out
}

// probe builds the probe of parameter q in a part's pattern template, the
// other parameters at their defaults or at the values of combo.
func (p *Preset) probe(part PresetPart, tmpl string, q PresetParam, combo map[string]string) (Probe, bool) {
	capture := q.Name + "__"
	text := expandRefs(tmpl, func(name string) string {
		if name == q.Name {
			if q.Suffix != "" {
				return "{" + capture + ":word}" + EscapeLiteral(q.Suffix)
			}
			return "{" + capture + ":any}"
		}
		r, _ := p.Param(name)
		v, ok := combo[name]
		if !ok {
			if r.Default == nil {
				return r.Any
			}
			v = r.Default[0]
		}
		if v != "" {
			v += r.Suffix
		}
		return EscapeLiteral(v)
	})
	pat, err := ParsePattern(text, ':')
	if err != nil {
		return Probe{}, false // the parameter stands next to a placeholder
	}
	if pat.LiteralBytes() < minProbeLiteral && !strings.ContainsFunc(literalText(pat), func(r rune) bool { return r < 0x20 }) {
		return Probe{}, false
	}
	return Probe{Preset: p, Part: p.FamilyPrefix + "-" + part.Name, Param: q.Name, Capture: capture, Pattern: pat}, true
}

// literalText is the literal bytes of a pattern, concatenated.
func literalText(p *Pattern) string {
	var b strings.Builder
	for _, part := range p.Parts {
		if !part.IsPlaceholder() {
			b.WriteString(part.Lit)
		}
	}
	return b.String()
}

// presetValue reads the value of parameter name given as text, as
// ExpandPreset takes it: YAML, or text that is not YAML as a string. Text
// that opens a flow list or mapping, or a quoted string, is YAML by
// intent: "[a}b]" is a malformed list, not a queue named "[a}b]", so it is
// an error (a *diag.ListError, as the loader's), and so is a mapping,
// which no parameter takes. Other text that YAML reads as a mapping
// ("a: b") stays the string it was written as.
func presetValue(name, text string) (*yaml.Node, error) {
	t := strings.TrimSpace(text)
	flow := t != "" && strings.ContainsRune("[{\"'", rune(t[0]))
	var doc yaml.Node
	err := yaml.Unmarshal([]byte(text), &doc)
	ok := err == nil && len(doc.Content) == 1
	if !flow {
		if !ok || doc.Content[0].Kind == yaml.MappingNode {
			return str(text), nil
		}
		return doc.Content[0], nil
	}
	var what string
	switch {
	case err != nil:
		what = "does not parse as YAML (" + strings.TrimPrefix(err.Error(), "yaml: ") + ")"
	case !ok:
		what = "is not one YAML value"
	case doc.Content[0].Kind == yaml.MappingNode:
		what = "is a mapping, and a parameter takes a value or a list"
	default:
		return doc.Content[0], nil
	}
	var l diag.List
	l.Add(diag.Pos{File: "--with", Line: 1, Col: 1}, diag.Error, RuleSchemaInvalid, "",
		"with.%s: %s %s: write a list as [a, b], and quote a value that holds [ ] { } , or a quote", name, quoteShort(text), what)
	return nil, &diag.ListError{List: l}
}
