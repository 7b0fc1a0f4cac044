package registry

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// MarshalFamilies writes families as the YAML of a families: list in
// keys.yaml, with the fields each family sets itself (its preset's, for a
// preset's family) in the order docs/registry.md lists them. What it writes
// loads back into the same families: `keyreg presets show` prints it so
// that a preset can be ejected into hand-written families.
func MarshalFamilies(fams []*Family) ([]byte, error) {
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for _, f := range fams {
		seq.Content = append(seq.Content, familyNode(f))
	}
	return encode(seq)
}

// MarshalChannels writes channels as the YAML of a channels: list in
// keys.yaml, as MarshalFamilies writes families: `keyreg presets show`
// prints a preset's channels with it.
func MarshalChannels(chans []*Channel) ([]byte, error) {
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for _, c := range chans {
		m := familyNode(&c.Family)
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "managed_by" { // not a channel field
				m.Content = append(m.Content[:i], m.Content[i+2:]...)
				break
			}
		}
		m.Content = append(m.Content, str("mode"), str(c.Mode))
		if c.SubscribeGlob != "" {
			m.Content = append(m.Content, str("subscribe_glob"), str(c.SubscribeGlob))
		}
		if len(c.With) > 0 {
			l := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, w := range c.With {
				l.Content = append(l.Content, str(w.Name))
			}
			m.Content = append(m.Content, str("with"), l)
		}
		seq.Content = append(seq.Content, m)
	}
	return encode(seq)
}

func familyNode(f *Family) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) { m.Content = append(m.Content, str(k), v) }
	add("name", str(f.Name))
	if f.Description != "" {
		add("description", str(f.Description))
	}
	if f.Pattern != nil {
		add("pattern", str(f.Pattern.Source))
	}
	if f.Has("version") {
		add("version", num(int64(f.Version)))
	}
	if f.ManagedBy != "" {
		add("managed_by", str(f.ManagedBy))
	}
	if f.Owner != "" {
		add("owner", str(f.Owner))
	}
	if f.Kind != "" {
		add("kind", str(f.Kind))
	}
	if f.Type != "" && (f.Kind == "" || f.Has("type")) {
		add("type", str(f.Type))
	}
	encs := f.Encodings()
	if f.Kind == KindFence && !f.Has("encoding") {
		encs = nil // implied by the kind
	}
	if len(encs) == 1 {
		add("encoding", str(encs[0]))
	} else if len(encs) > 1 {
		l := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, e := range encs {
			l.Content = append(l.Content, str(e))
		}
		add("encoding", l)
	}
	if !f.TTLDefault && f.TTL.Kind != TTLUnset && (f.Kind != KindFence || f.Has("ttl")) {
		add("ttl", ttlNode(f.TTL))
	}
	if f.Fencing != "" {
		add("fencing", str(f.Fencing))
	}
	if s := f.Schema; s != nil {
		if s.Path != "" {
			add("schema", str(s.Path))
		} else {
			var n yaml.Node
			if err := n.Encode(s.Doc); err == nil {
				add("schema", &n)
			}
		}
	}
	if f.Has("max_bytes") {
		add("max_bytes", num(f.MaxBytes))
	}
	if f.Has("max_len") {
		add("max_len", num(f.MaxLen))
	}
	if f.Has("max_idle") {
		add("max_idle", str(FormatDuration(f.MaxIdle)))
	}
	if f.Has("groups") {
		gm := &yaml.Node{Kind: yaml.MappingNode}
		for _, g := range f.Groups {
			lm := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
			if g.MaxLag != NoLimit {
				lm.Content = append(lm.Content, str("max_lag"), num(g.MaxLag))
			}
			if g.MaxPending != NoLimit {
				lm.Content = append(lm.Content, str("max_pending"), num(g.MaxPending))
			}
			if g.MaxConsumerIdle != NoLimit {
				lm.Content = append(lm.Content, str("max_consumer_idle"), str(FormatDuration(g.MaxConsumerIdle)))
			}
			gm.Content = append(gm.Content, str(g.Name), lm)
		}
		add("groups", gm)
	}
	if d := f.Deprecated; d != nil {
		dm := &yaml.Node{Kind: yaml.MappingNode}
		date := func(k string, t time.Time) {
			if !t.IsZero() {
				dm.Content = append(dm.Content, str(k), str(t.Format(time.DateOnly)))
			}
		}
		date("since", d.Since)
		date("sunset", d.Sunset)
		if d.ReplacedBy != "" {
			dm.Content = append(dm.Content, str("replaced_by"), str(d.ReplacedBy))
		}
		if d.Reason != "" {
			dm.Content = append(dm.Content, str("reason"), str(d.Reason))
		}
		add("deprecated", dm)
	}
	if f.Has("compat") {
		add("compat", str(f.Compat))
	}
	if f.Has("compat_policy") {
		add("compat_policy", str(f.CompatPolicy))
	}
	if len(f.Ignore) > 0 {
		l := &yaml.Node{Kind: yaml.SequenceNode}
		for _, ig := range f.Ignore {
			im := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
			im.Content = append(im.Content, str("rule"), str(ig.Rule))
			if ig.Reason != "" {
				im.Content = append(im.Content, str("reason"), str(ig.Reason))
			}
			l.Content = append(l.Content, im)
		}
		add("ignore", l)
	}
	return m
}

func ttlNode(p TTLPolicy) *yaml.Node {
	switch p.Kind {
	case TTLPersistent:
		return str("persistent")
	case TTLOptional:
		return str("optional")
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	m.Content = append(m.Content, str("max"), str(FormatDuration(p.Max)))
	return m
}

// str is a string scalar; the encoder quotes it wherever YAML would read
// it as something else.
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func num(n int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(n, 10)}
}

// ExpandPreset expands a preset as a presets: entry of keys.yaml would,
// owned by owner, with parameters given as YAML values by name (such as
// "[a, b]" or "1d"; text that is not YAML is taken as a string, but text
// that opens a flow list, mapping or quoted string must be valid YAML). It
// returns the registry the entry makes; its errors are the loader's, or a
// malformed value's.
func ExpandPreset(name, owner string, with map[string]string) (*Registry, error) {
	return ExpandPresetAs(name, "", owner, with)
}

// ExpandPresetAs is ExpandPreset for an entry with a name: (its families
// are named <as>-<part>); as may be empty.
func ExpandPresetAs(name, as, owner string, with map[string]string) (*Registry, error) {
	withNode := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range slices.Sorted(maps.Keys(with)) {
		v, err := presetValue(k, with[k])
		if err != nil {
			return nil, err
		}
		withNode.Content = append(withNode.Content, str(k), v)
	}
	entry := &yaml.Node{Kind: yaml.MappingNode}
	entry.Content = append(entry.Content, str("use"), str(name), str("owner"), str(owner))
	if as != "" {
		entry.Content = append(entry.Content, str("name"), str(as))
	}
	if len(withNode.Content) > 0 {
		entry.Content = append(entry.Content, str("with"), withNode)
	}
	owners := &yaml.Node{Kind: yaml.MappingNode}
	contact := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	contact.Content = append(contact.Content, str("contact"), str(owner))
	owners.Content = append(owners.Content, str(owner), contact)
	doc := &yaml.Node{Kind: yaml.MappingNode}
	doc.Content = append(doc.Content,
		str("version"), num(1),
		str("owners"), owners,
		str("families"), &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle},
		str("presets"), &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{entry}})
	data, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("preset %s: %v", name, err)
	}
	return Parse(emptyFS{}, "preset:"+strings.ReplaceAll(name, "/", "_"), data)
}

// emptyFS is a file system without files: a preset expanded on its own
// refers to none.
type emptyFS struct{}

func (emptyFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// Draft is a registry to write out, as keyreg init proposes it: the
// fields of a first keys.yaml, with a comment on each entry. Marshal
// writes it in the order and style of this repository's keys.yaml.
type Draft struct {
	Header    []string // comment lines at the top of the file
	Footer    []string // comment lines at the end of the file (init's unregistered leftovers)
	Separator byte     // written when it is not ':'
	Owners    []DraftOwner
	Families  []DraftFamily
	Presets   []DraftPreset
}

// DraftOwner is one entry of owners:.
type DraftOwner struct {
	Name, Contact string
	Comment       []string
}

// DraftFamily is one entry of families:.
type DraftFamily struct {
	Comment     []string // lines above the entry: counts, TTL range, examples
	Name        string
	Description string
	Pattern     string // in pattern syntax
	Version     int    // 0: none
	ManagedBy   string
	Owner       string
	Type        string
	Encodings   []string // one, or several for a list
	TTL         TTLPolicy
	TTLComment  string // a line comment after ttl:
	Schema      string // a schema file path, relative to keys.yaml
	MaxBytes    int64
	MaxLen      int64
	Ignore      []Ignore // Pos is not written
}

// DraftPreset is one entry of presets:.
type DraftPreset struct {
	Comment []string
	Use     string
	Name    string // the entry's name:, or empty
	Owner   string
	With    []DraftParam
	// Ignore holds, per expanded family name, rules the entry's
	// families: overrides ignore.
	Ignore map[string][]Ignore
}

// DraftParam is one parameter of a preset entry: a list when List is set,
// else Values[0].
type DraftParam struct {
	Name   string
	Values []string
	List   bool
}

// Marshal writes the draft as keys.yaml.
func (d *Draft) Marshal() ([]byte, error) {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) *yaml.Node {
		kn := str(k)
		doc.Content = append(doc.Content, kn, v)
		return kn
	}
	version := add("version", num(1))
	version.HeadComment = comment(d.Header)
	if d.Separator != 0 && d.Separator != ':' {
		add("separator", str(string(d.Separator)))
	}
	owners := &yaml.Node{Kind: yaml.MappingNode}
	for _, o := range d.Owners {
		v := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		v.Content = append(v.Content, str("contact"), str(o.Contact))
		k := str(o.Name)
		k.HeadComment = comment(o.Comment)
		owners.Content = append(owners.Content, k, v)
	}
	add("owners", owners)
	fams := &yaml.Node{Kind: yaml.SequenceNode}
	if len(d.Families) == 0 {
		fams.Style = yaml.FlowStyle
	}
	for _, f := range d.Families {
		fams.Content = append(fams.Content, draftFamilyNode(f))
	}
	add("families", fams)
	if len(d.Presets) > 0 {
		ps := &yaml.Node{Kind: yaml.SequenceNode}
		for _, p := range d.Presets {
			m := &yaml.Node{Kind: yaml.MappingNode, HeadComment: comment(p.Comment)}
			m.Content = append(m.Content, str("use"), str(p.Use))
			if p.Name != "" {
				m.Content = append(m.Content, str("name"), str(p.Name))
			}
			m.Content = append(m.Content, str("owner"), str(p.Owner))
			if len(p.With) > 0 {
				w := &yaml.Node{Kind: yaml.MappingNode}
				for _, q := range p.With {
					var v *yaml.Node
					if q.List {
						v = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
						for _, x := range q.Values {
							v.Content = append(v.Content, str(x))
						}
					} else if len(q.Values) > 0 {
						v = str(q.Values[0])
					} else {
						continue
					}
					w.Content = append(w.Content, str(q.Name), v)
				}
				m.Content = append(m.Content, str("with"), w)
			}
			if len(p.Ignore) > 0 {
				fm := &yaml.Node{Kind: yaml.MappingNode}
				for _, name := range slices.Sorted(maps.Keys(p.Ignore)) {
					o := &yaml.Node{Kind: yaml.MappingNode}
					o.Content = append(o.Content, str("ignore"), ignoreNode(p.Ignore[name]))
					fm.Content = append(fm.Content, str(name), o)
				}
				m.Content = append(m.Content, str("families"), fm)
			}
			ps.Content = append(ps.Content, m)
		}
		add("presets", ps)
	}
	out, err := encode(doc)
	if err != nil || len(d.Footer) == 0 {
		return out, err
	}
	// Comment lines after the document, escaped as every comment is: they
	// cannot end the comment or start YAML.
	return append(append(out, '\n'), comment(d.Footer)+"\n"...), nil
}

// MarshalFooter writes the draft's footer as comment lines, for keyreg
// suggest to print after the proposals; it is empty when there is none.
func (d *Draft) MarshalFooter() []byte {
	if len(d.Footer) == 0 {
		return nil
	}
	return []byte(comment(d.Footer) + "\n")
}

func draftFamilyNode(f DraftFamily) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, HeadComment: comment(f.Comment)}
	add := func(k string, v *yaml.Node) { m.Content = append(m.Content, str(k), v) }
	add("name", str(f.Name))
	if f.Description != "" {
		add("description", str(f.Description))
	}
	add("pattern", str(f.Pattern))
	if f.Version > 0 {
		add("version", num(int64(f.Version)))
	}
	if f.ManagedBy != "" {
		add("managed_by", str(f.ManagedBy))
	}
	add("owner", str(f.Owner))
	if f.Type != "" {
		add("type", str(f.Type))
	}
	switch len(f.Encodings) {
	case 0:
	case 1:
		add("encoding", str(f.Encodings[0]))
	default:
		l := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, e := range f.Encodings {
			l.Content = append(l.Content, str(e))
		}
		add("encoding", l)
	}
	if f.TTL.Kind != TTLUnset {
		v := ttlNode(f.TTL)
		if f.TTLComment != "" {
			v.LineComment = comment([]string{f.TTLComment})
		}
		add("ttl", v)
	}
	if f.Schema != "" {
		add("schema", str(f.Schema))
	}
	if f.MaxBytes > 0 {
		add("max_bytes", num(f.MaxBytes))
	}
	if f.MaxLen > 0 {
		add("max_len", num(f.MaxLen))
	}
	if len(f.Ignore) > 0 {
		add("ignore", ignoreNode(f.Ignore))
	}
	return m
}

func ignoreNode(igs []Ignore) *yaml.Node {
	l := &yaml.Node{Kind: yaml.SequenceNode}
	for _, ig := range igs {
		im := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		im.Content = append(im.Content, str("rule"), str(ig.Rule), str("reason"), str(ig.Reason))
		l.Content = append(l.Content, im)
	}
	return l
}

// comment writes lines as YAML comment lines. Text that comes from a
// keyspace (example keys) may hold anything: bytes that could end the
// comment line or confuse an editor (control bytes, line and paragraph
// separators, bidi controls, invalid UTF-8) are escaped as Go escapes.
func comment(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		var b strings.Builder
		b.WriteString("# ")
		for j := 0; j < len(l); {
			r, n := utf8.DecodeRuneInString(l[j:])
			switch {
			case r == utf8.RuneError && n == 1:
				fmt.Fprintf(&b, `\x%02x`, l[j])
			case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0xfeff:
				q := strconv.QuoteRune(r)
				b.WriteString(q[1 : len(q)-1])
			default:
				b.WriteString(l[j : j+n])
			}
			j += n
		}
		out[i] = b.String()
	}
	return strings.Join(out, "\n")
}

// MarshalParts writes the draft's families and preset entries as the YAML
// of the items of a families: and a presets: list, each item indented by
// indent spaces, for keyreg suggest to print or to insert into a registry.
// Either is empty when the draft has none.
func (d *Draft) MarshalParts(indent int) (families, presets []byte, err error) {
	whole, err := (&Draft{Families: d.Families, Presets: d.Presets}).Marshal()
	if err != nil {
		return nil, nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(whole, &doc); err != nil {
		return nil, nil, err
	}
	part := func(key string) ([]byte, error) {
		for k, v := range pairs(doc.Content[0]) {
			if k.Value != key || v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				continue
			}
			b, err := encode(v)
			if err != nil {
				return nil, err
			}
			return []byte(indentLines(b, indent)), nil
		}
		return nil, nil
	}
	if families, err = part("families"); err != nil {
		return nil, nil, err
	}
	presets, err = part("presets")
	return families, presets, err
}

// Insert returns the registry source src with the draft's families added
// at the end of its families: list and its preset entries at the end of
// its presets: list (a presets: list is added at the end when there is
// none). The lists must be block sequences, as keys.yaml writes them; the
// caller loads the result to check it.
func (d *Draft) Insert(src []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil || len(doc.Content) == 0 {
		return nil, fmt.Errorf("the registry does not parse: %v", err)
	}
	root := doc.Content[0]
	lines := strings.SplitAfter(string(src), "\n")
	type block struct{ key, val *yaml.Node }
	blocks := map[string]block{}
	var keys []*yaml.Node
	for k, v := range pairs(root) {
		blocks[k.Value] = block{k, v}
		keys = append(keys, k)
	}
	// end returns the line index (0-based) after the last line of the
	// top-level value under key: the line of the next top-level key, or
	// the end of the file, less trailing blank and comment lines.
	end := func(key *yaml.Node) int {
		next := len(lines)
		for _, k := range keys {
			if k.Line > key.Line && k.Line-1 < next {
				next = k.Line - 1
			}
		}
		for next > key.Line {
			l := strings.TrimSpace(lines[next-1])
			if l != "" && !strings.HasPrefix(l, "#") {
				break
			}
			next--
		}
		return next
	}
	type insertion struct {
		at   int
		text string
	}
	var ins []insertion
	add := func(key string, render func(indent int) ([]byte, error)) error {
		b, ok := blocks[key]
		if !ok {
			text, err := render(2)
			if err != nil || len(text) == 0 {
				return err
			}
			ins = append(ins, insertion{len(lines), key + ":\n" + string(text)})
			return nil
		}
		if b.val.Kind != yaml.SequenceNode || (b.val.Style&yaml.FlowStyle != 0 && len(b.val.Content) > 0) {
			return fmt.Errorf("%s: is not a block list, so keyreg cannot add to it: add the entries printed without --write by hand", key)
		}
		indent := 2
		if len(b.val.Content) > 0 {
			indent = max(0, b.val.Content[0].Column-3) // the column of "- " before the first item
		}
		text, err := render(indent)
		if err != nil || len(text) == 0 {
			return err
		}
		if len(b.val.Content) == 0 { // "families: []": replace the empty list
			i := b.key.Line - 1
			ins = append(ins, insertion{-1 - i, key + ":\n" + string(text)})
			return nil
		}
		ins = append(ins, insertion{end(b.key), string(text)})
		return nil
	}
	fams, pres, err := d.MarshalParts(0)
	if err != nil {
		return nil, err
	}
	if len(d.Owners) > 0 {
		var ob strings.Builder
		for _, o := range d.Owners {
			for _, c := range strings.Split(comment(o.Comment), "\n") {
				if c != "" {
					ob.WriteString(c + "\n")
				}
			}
			m := &yaml.Node{Kind: yaml.MappingNode}
			v := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
			v.Content = append(v.Content, str("contact"), str(o.Contact))
			m.Content = append(m.Content, str(o.Name), v)
			line, err := yaml.Marshal(m)
			if err != nil {
				return nil, err
			}
			ob.Write(line)
		}
		text := []byte(ob.String())
		b, ok := blocks["owners"]
		switch {
		case !ok:
			ins = append(ins, insertion{len(lines), "owners:\n" + indentLines(text, 2)})
		case b.val.Kind == yaml.MappingNode && b.val.Style&yaml.FlowStyle == 0 && len(b.val.Content) > 0:
			ins = append(ins, insertion{end(b.key), indentLines(text, b.val.Content[0].Column-1)})
		default:
			return nil, errors.New("owners: is not a block mapping, so keyreg cannot add to it: add the owner printed without --write by hand")
		}
	}
	reindent := func(b []byte) func(int) ([]byte, error) {
		return func(n int) ([]byte, error) { return []byte(indentLines(b, n)), nil }
	}
	if err := add("families", reindent(fams)); err != nil {
		return nil, err
	}
	if err := add("presets", reindent(pres)); err != nil {
		return nil, err
	}
	var out strings.Builder
	for i := 0; i <= len(lines); i++ {
		replaced := false
		for _, x := range ins {
			if x.at == i {
				if i == len(lines) && len(lines) > 0 && !strings.HasSuffix(lines[len(lines)-1], "\n") {
					out.WriteString("\n")
				}
				out.WriteString(x.text)
			}
			if x.at == -1-i {
				out.WriteString(x.text)
				replaced = true
			}
		}
		if i < len(lines) && !replaced {
			out.WriteString(lines[i])
		}
	}
	return []byte(out.String()), nil
}

// indentLines indents every non-empty line of b by n spaces.
func indentLines(b []byte, n int) string {
	pad := strings.Repeat(" ", n)
	var out strings.Builder
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" && l != "\n" {
			out.WriteString(pad)
		}
		out.WriteString(l)
	}
	return out.String()
}

// encode writes a YAML node with keys.yaml's two-space indent.
func encode(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	if err := e.Encode(n); err != nil {
		return nil, err
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
