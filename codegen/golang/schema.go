package golang

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// typeDecl is a named Go type generated from a JSON Schema: a struct for an
// object with properties, or a string type for an enum.
type typeDecl struct {
	Name         string
	Doc          []string // comment lines, without "// "
	Struct       bool
	Fields       []fieldDecl
	Enum         []enumConst
	Unknown      string // the name of the Unknown constant of an enum
	UnknownValue string // its value, quoted: "" unless the enum lists ""
	Family       string // the family name, for error messages
	Of           string // "family", or "channel" for a channel's message types
}

type fieldDecl struct {
	Name string
	Type string
	Tag  string // the whole struct tag, backquoted
	Doc  []string
}

type enumConst struct {
	Name  string
	Value string // a quoted Go string
}

// unsupported are schema keywords that change the shape of a value in a way
// the generator does not map to Go types. A schema using one of them is
// typed json.RawMessage. Keywords that only constrain a value (pattern,
// minimum, if/then/else, not, …) are left to keyreg audit.
var unsupported = []string{"$dynamicRef", "allOf", "anyOf", "dependentSchemas", "oneOf", "patternProperties", "prefixItems"}

// typeGen generates the payload types of one family.
type typeGen struct {
	names  *namer // package-level identifiers
	family string
	of     string // "family" or "channel": what family names, in doc comments
	base   string // the family's identifier; types of $defs are named after it
	root   any    // the schema document, for local $refs
	decls  []*typeDecl
	refs   map[string]string // local $ref -> the Go type generated for it
	active map[string]bool   // $refs being generated, to stop recursion
}

// goType returns the Go type of a value of schema s and a comment saying
// why it is json.RawMessage when it is. name is the identifier a named type
// for s gets; prefix is what nested types are named after.
func (g *typeGen) goType(s any, name, prefix string) (typ, why string) {
	m, ok := s.(map[string]any)
	if !ok {
		if b, isBool := s.(bool); isBool && !b {
			return "json.RawMessage", "the schema is false: no value is valid"
		}
		return "json.RawMessage", "any JSON value"
	}
	for _, k := range unsupported {
		if _, has := m[k]; has {
			return "json.RawMessage", fmt.Sprintf("keyreg gen does not map %s to Go types", k)
		}
	}
	if ref, has := m["$ref"].(string); has {
		return g.ref(ref)
	}
	if enum, ok := stringEnum(m); ok {
		t := g.enum(m, enum, name)
		if nullable(m) {
			t = "*" + t
		}
		return t, ""
	}
	types, why := schemaTypes(m)
	if why != "" {
		return "json.RawMessage", why
	}
	var nonNull []string
	for _, t := range types {
		if t != "null" {
			nonNull = append(nonNull, t)
		}
	}
	if len(nonNull) != 1 {
		if len(nonNull) == 0 && len(types) > 0 {
			return "json.RawMessage", "the schema allows only null"
		}
		if len(nonNull) == 0 {
			return "json.RawMessage", "any JSON value"
		}
		return "json.RawMessage", "the schema allows several types: " + strings.Join(nonNull, ", ")
	}
	typ, why = g.single(nonNull[0], m, name, prefix)
	if len(types) > 1 && !nilable(typ) {
		typ = "*" + typ // a nullable value
	}
	return typ, why
}

// single returns the Go type of a schema with one JSON type t.
func (g *typeGen) single(t string, m map[string]any, name, prefix string) (string, string) {
	switch t {
	case "string":
		return "string", ""
	case "integer":
		return "int64", ""
	case "number":
		return "float64", ""
	case "boolean":
		return "bool", ""
	case "array":
		items, ok := m["items"]
		if !ok {
			return "[]json.RawMessage", ""
		}
		it, why := g.goType(items, name+"Item", prefix+"Item")
		return "[]" + it, why
	case "object":
		props, _ := m["properties"].(map[string]any)
		if len(props) > 0 {
			return g.object(m, props, name, prefix)
		}
		if ap, ok := m["additionalProperties"].(map[string]any); ok {
			vt, why := g.goType(ap, name+"Value", prefix+"Value")
			return "map[string]" + vt, why
		}
		return "map[string]json.RawMessage", ""
	}
	return "json.RawMessage", fmt.Sprintf("unknown type %q", t)
}

// object generates a struct for an object schema with properties. Nested
// types are named prefix + the field name.
func (g *typeGen) object(m map[string]any, props map[string]any, name, prefix string) (string, string) {
	keys := make([]string, 0, len(props))
	for k := range props {
		if !validTag(k) {
			return "map[string]json.RawMessage", fmt.Sprintf("property %q cannot be a struct tag", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	required := map[string]bool{}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	name = g.names.unique(name)
	d := &typeDecl{Name: name, Struct: true, Doc: schemaDoc(m), Family: g.family, Of: cmp.Or(g.of, "family")}
	g.decls = append(g.decls, d)
	fields := newNamer()
	for _, k := range keys {
		ps := props[k]
		fn := exported(k)
		if fn == "" {
			fn = "Field"
		}
		fn = fields.unique(fn)
		typ, why := g.goType(ps, prefix+fn, prefix+fn)
		tag := k
		if k == "-" {
			tag = "-," // a bare "-" would tell encoding/json to skip the field
		}
		switch {
		case required[k]:
		case nilable(typ):
			tag += ",omitempty"
		default:
			typ = "*" + typ
			tag += ",omitempty"
		}
		f := fieldDecl{Name: fn, Type: typ, Tag: "`json:" + strconv.Quote(tag) + "`"}
		var doc []string
		if pm, ok := ps.(map[string]any); ok {
			doc = append(doc, schemaText(pm)...)
		}
		if !required[k] {
			doc = append(doc, "Optional.")
		}
		if why != "" {
			doc = append(doc, "json.RawMessage: "+why+".")
		}
		f.Doc = wrap(strings.Join(doc, " "), 72)
		d.Fields = append(d.Fields, f)
	}
	return name, ""
}

// enum generates a string type with one constant per value and an
// Unknown constant that decoding yields for values it does not know.
func (g *typeGen) enum(m map[string]any, values []string, name string) string {
	name = g.names.unique(name)
	d := &typeDecl{Name: name, Doc: schemaDoc(m), Family: g.family, Of: cmp.Or(g.of, "family")}
	for i, v := range values {
		cn := exported(v)
		if cn == "" {
			cn = "Value" + strconv.Itoa(i)
		}
		d.Enum = append(d.Enum, enumConst{Name: g.names.unique(name + cn), Value: strconv.Quote(v)})
	}
	d.Unknown = g.names.unique(name + "Unknown")
	// The Unknown value must differ from every listed value, or Known
	// would list one constant twice.
	unknown := ""
	for i := 1; slices.Contains(values, unknown); i++ {
		unknown = "\x00unknown" + strings.Repeat("\x00", i-1)
	}
	d.UnknownValue = strconv.Quote(unknown)
	g.decls = append(g.decls, d)
	return name
}

// ref resolves a local $ref ("#/$defs/x") in the schema document.
func (g *typeGen) ref(ref string) (string, string) {
	if t, ok := g.refs[ref]; ok {
		return t, ""
	}
	if !strings.HasPrefix(ref, "#/") {
		return "json.RawMessage", fmt.Sprintf("$ref %q points outside this schema", ref)
	}
	if g.active[ref] {
		return "json.RawMessage", fmt.Sprintf("$ref %q is recursive", ref)
	}
	target, ok := pointer(g.root, ref[2:])
	if !ok {
		return "json.RawMessage", fmt.Sprintf("$ref %q not found", ref)
	}
	seg := ref[strings.LastIndexByte(ref, '/')+1:]
	name := g.base + exported(seg)
	if g.refs == nil {
		g.refs, g.active = map[string]string{}, map[string]bool{}
	}
	g.active[ref] = true
	t, why := g.goType(target, name, name)
	delete(g.active, ref)
	if why == "" {
		g.refs[ref] = t
	}
	return t, why
}

// pointer follows a JSON pointer (without the leading "#/") in doc.
func pointer(doc any, p string) (any, bool) {
	for _, seg := range strings.Split(p, "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch v := doc.(type) {
		case map[string]any:
			n, ok := v[seg]
			if !ok {
				return nil, false
			}
			doc = n
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			doc = v[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

// schemaTypes returns the JSON types a schema allows, inferring one from
// properties or items when "type" is absent.
func schemaTypes(m map[string]any) ([]string, string) {
	switch t := m["type"].(type) {
	case string:
		return []string{t}, ""
	case []any:
		var out []string
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, "the schema's type list is not a list of strings"
			}
			out = append(out, s)
		}
		return out, ""
	case nil:
		if _, ok := m["properties"]; ok {
			return []string{"object"}, ""
		}
		if _, ok := m["additionalProperties"]; ok {
			return []string{"object"}, ""
		}
		if _, ok := m["items"]; ok {
			return []string{"array"}, ""
		}
		if c, ok := m["const"]; ok {
			return constType(c), ""
		}
		return nil, ""
	}
	return nil, "the schema's type is not a string or list"
}

func constType(c any) []string {
	switch c.(type) {
	case string:
		return []string{"string"}
	case bool:
		return []string{"boolean"}
	case json.Number, float64:
		return []string{"number"}
	}
	return nil
}

// stringEnum returns the values of an enum whose values are all strings.
func stringEnum(m map[string]any) ([]string, bool) {
	e, ok := m["enum"].([]any)
	if !ok || len(e) == 0 {
		return nil, false
	}
	var out []string
	for _, v := range e {
		switch v := v.(type) {
		case string:
			// A value listed twice gets one constant.
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		case nil:
			// null in an enum makes the value nullable; see nullable.
		default:
			return nil, false
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	switch t := m["type"].(type) {
	case nil:
	case string:
		if t != "string" {
			return nil, false
		}
	case []any:
		for _, x := range t {
			if x != "string" && x != "null" {
				return nil, false
			}
		}
	}
	return out, true
}

// nullable reports whether an enum schema also allows null.
func nullable(m map[string]any) bool {
	if e, ok := m["enum"].([]any); ok && slices.Contains(e, nil) {
		return true
	}
	if t, ok := m["type"].([]any); ok && slices.Contains(t, any("null")) {
		return true
	}
	return false
}

// nilable reports whether the zero value of a Go type already means absent.
func nilable(t string) bool {
	return strings.HasPrefix(t, "[]") || strings.HasPrefix(t, "map[") || strings.HasPrefix(t, "*") || t == "json.RawMessage"
}

// schemaDoc returns the comment lines for a schema: its title and
// description.
func schemaDoc(m map[string]any) []string {
	return wrap(strings.Join(schemaText(m), " "), 76)
}

// schemaText returns the title, description and format of a schema as
// sentences.
func schemaText(m map[string]any) []string {
	var parts []string
	if t, ok := m["title"].(string); ok && strings.TrimSpace(t) != "" {
		parts = append(parts, sentence(t))
	}
	if d, ok := m["description"].(string); ok && strings.TrimSpace(d) != "" {
		parts = append(parts, sentence(d))
	}
	if f, ok := m["format"].(string); ok && f != "" {
		parts = append(parts, "Format: "+f+".")
	}
	return parts
}

// sentence ends s with a period unless it ends in punctuation already.
func sentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s != "" && !strings.ContainsAny(s[len(s)-1:], ".!?") {
		s += "."
	}
	return s
}

// wrap breaks text into lines of at most width bytes, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(text) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// validTag reports whether encoding/json accepts name in a struct tag, by
// the rules of its isValidTag: ASCII punctuation other than quotes,
// backslash and comma, and letters and digits. A name it rejected would
// silently be replaced by the Go field name.
func validTag(name string) bool {
	if name == "" || !utf8.ValidString(name) {
		return false
	}
	for _, c := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
