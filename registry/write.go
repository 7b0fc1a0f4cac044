package registry

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

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
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	if err := e.Encode(seq); err != nil {
		return nil, err
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
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
	if f.Type != "" {
		add("type", str(f.Type))
	}
	if encs := f.Encodings(); len(encs) == 1 {
		add("encoding", str(encs[0]))
	} else if len(encs) > 1 {
		l := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, e := range encs {
			l.Content = append(l.Content, str(e))
		}
		add("encoding", l)
	}
	if !f.TTLDefault && f.TTL.Kind != TTLUnset {
		add("ttl", ttlNode(f.TTL))
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
// "[a, b]" or "1d"; text that is not YAML is taken as a string). It
// returns the registry the entry makes; its errors are the loader's.
func ExpandPreset(name, owner string, with map[string]string) (*Registry, error) {
	withNode := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range slices.Sorted(maps.Keys(with)) {
		var v yaml.Node
		if err := yaml.Unmarshal([]byte(with[k]), &v); err != nil || len(v.Content) != 1 || v.Content[0].Kind == yaml.MappingNode {
			v = yaml.Node{Content: []*yaml.Node{str(with[k])}}
		}
		withNode.Content = append(withNode.Content, str(k), v.Content[0])
	}
	entry := &yaml.Node{Kind: yaml.MappingNode}
	entry.Content = append(entry.Content, str("use"), str(name), str("owner"), str(owner))
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
