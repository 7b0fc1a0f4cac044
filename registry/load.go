package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/big"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/schemas"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Rules reported by the loader. A registry with any of these findings is
// invalid: commands print them and exit 2.
const (
	RuleSchemaInvalid        = "schema-invalid"
	RuleDuplicateName        = "duplicate-name"
	RulePatternInvalid       = "pattern-invalid"
	RulePayloadSchemaInvalid = "payload-schema-invalid"
)

// MaxFileSize is the largest keys.yaml, and the largest payload schema file,
// that Load accepts. A registry of 1,000 families is about 300 KiB. Files
// are read through a bounded reader, so a device or a pipe that never ends
// costs at most this much.
const MaxFileSize = 4 << 20

// MaxNodes bounds the values (mappings, sequences and scalars) a registry
// document expands to once YAML aliases are followed, so that a small file
// cannot turn into a huge document. A registry of 1,000 families is about
// 30,000 nodes.
const MaxNodes = 200_000

// MaxSchemaNodes bounds the JSON values of one family's payload schema: its
// inline schema or schema file, YAML aliases expanded, plus the schema files
// its references load. Compiling a schema costs more than linear time in its
// size, so this keeps loading fast.
const MaxSchemaNodes = 10_000

// MaxSchemaBranches bounds the subschemas that apply to one value: the
// in-place applicators ($ref, allOf, anyOf, oneOf, not, if/then/else,
// dependentSchemas) of a subschema, followed transitively, counted once per
// path. A chain of N "anyOf": [{"$ref": next}, {"$ref": next}] is small as a
// document but reaches 2^N subschemas for one value, and validating a value
// that fails it would take exponential time and memory.
const MaxSchemaBranches = 10_000

// maxDepth bounds the nesting of a document or schema.
const maxDepth = 100

// Load reads and validates the registry at name inside fsys. Payload schema
// files are resolved relative to the directory of name, inside fsys.
//
// An invalid registry yields a *diag.ListError whose diagnostics carry the
// file:line:col of each problem. Other errors come from reading fsys.
func Load(fsys fs.FS, name string) (*Registry, error) {
	resolved, err := resolveIn(fsys, ".", name)
	if err != nil {
		return nil, registryReadError(name, err)
	}
	data, err := readFile(fsys, resolved, MaxFileSize)
	if err != nil {
		return nil, registryReadError(name, err)
	}
	return Parse(fsys, name, data)
}

// LoadFile loads the registry at a path of the operating system. Payload
// schema files must sit in the registry's directory or below it, also
// after following symbolic links (they are read through an os.Root of that
// directory), and positions name the file as p is written. The registry
// file itself may be a symbolic link to anywhere: it is what the caller
// named.
func LoadFile(p string) (*Registry, error) {
	return LoadFileAs(p, filepath.ToSlash(filepath.Clean(p)))
}

// LoadFileAs is LoadFile with positions naming the file display, such as
// its path from the repository root, where CI systems look for it.
func LoadFileAs(p, display string) (*Registry, error) {
	dir, name := filepath.Dir(p), filepath.Base(p)
	data, err := readFile(os.DirFS(dir), name, MaxFileSize)
	if err != nil {
		return nil, registryReadError(display, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("reading registry: %w", err)
	}
	defer root.Close()
	return parse(root.FS(), name, display, data)
}

// tooLargeError says that a file is over its size limit. Size is -1 when
// the file does not say how large it is (a pipe or a device).
type tooLargeError struct {
	size, limit int64
}

func (e *tooLargeError) Error() string {
	if e.size < 0 {
		return fmt.Sprintf("file is larger than the %d-byte limit", e.limit)
	}
	return fmt.Sprintf("file is %d bytes, larger than the %d-byte limit", e.size, e.limit)
}

// readFile reads name from fsys, reading at most limit+1 bytes of it. A
// file over limit bytes is a *tooLargeError, found from its size before
// reading when fsys knows it (a git tree does, without reading the blob).
func readFile(fsys fs.FS, name string, limit int64) ([]byte, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	if st.Mode().IsRegular() && st.Size() > limit {
		return nil, &tooLargeError{st.Size(), limit}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &tooLargeError{-1, limit}
	}
	return data, nil
}

// registryReadError turns a failure to read keys.yaml into an error: an
// oversized file is an invalid registry, anything else a read error.
func registryReadError(file string, err error) error {
	var tl *tooLargeError
	if errors.As(err, &tl) {
		var l diag.List
		l.Add(diag.Pos{File: file, Line: 1, Col: 1}, diag.Error, RuleSchemaInvalid, "", "%s for a registry", tl.Error())
		return &diag.ListError{List: l}
	}
	return fmt.Errorf("reading registry: %w", err)
}

// Parse is Load for a registry already read into data. fsys is used to read
// payload schema files.
func Parse(fsys fs.FS, name string, data []byte) (*Registry, error) {
	return parse(fsys, name, name, data)
}

// parse loads the registry called name inside fsys; display is the file
// name that positions carry.
func parse(fsys fs.FS, name, display string, data []byte) (*Registry, error) {
	l := &loader{data: data, lines: &lines{data: data}, fsys: fsys, file: display, dir: path.Dir(name), pos: map[string]diag.Pos{}, keyPos: map[string]diag.Pos{}, maxNodes: MaxNodes, jsonPtr: map[*yaml.Node]string{}}
	reg := l.load(data)
	if len(l.diags) > 0 {
		l.diags.Sort()
		return nil, &diag.ListError{List: l.diags}
	}
	reg.buildLockMatchers()
	return reg, nil
}

type loader struct {
	data     []byte // the registry file
	lines    *lines // its line index, for positions inside scalars
	fsys     fs.FS
	file     string
	dir      string
	diags    diag.List
	pos      map[string]diag.Pos // JSON pointer -> position of the value
	keyPos   map[string]diag.Pos // JSON pointer -> position of the mapping key naming it
	value    any                 // the document as JSON values
	nodes    int                 // nodes visited by toJSON, aliases expanded
	maxNodes int                 // the bound on nodes
	depth    int
	// jsonPtr gives the JSON pointer of inline schema nodes that a preset
	// entry splices into an expanded family.
	jsonPtr map[*yaml.Node]string
	// presetFamilies counts the families presets: entries expanded into.
	presetFamilies int
	// lenient is set while a document the schema rejected is decoded:
	// values may then have any shape.
	lenient bool
	// badPtrs are the JSON pointers of the values the schema rejected.
	// The model is still decoded, to report what its pass finds too
	// (patterns, schema files), but a presets: entry with a rejected value
	// is not expanded.
	badPtrs []string
	// keysByName are the keys a propertyNames error may be about, not yet
	// claimed by one (namedKey).
	keysByName map[keyName][]string
}

func (l *loader) errorf(pos diag.Pos, rule, family, format string, args ...any) {
	l.diags.Add(pos, diag.Error, rule, family, format, args...)
}

func (l *loader) nodePos(n *yaml.Node) diag.Pos {
	p := diag.Pos{File: l.file, Line: n.Line, Col: n.Column, EndLine: n.Line, EndCol: n.Column}
	if n.Kind == yaml.ScalarNode && !strings.Contains(n.Value, "\n") {
		w := len(n.Value)
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			w += 2
		}
		p.EndCol = n.Column + w
	}
	return p
}

var yamlLine = regexp.MustCompile(`line (\d+)(?:, column (\d+))?: `)

func (l *loader) load(data []byte) *Registry {
	top := diag.Pos{File: l.file, Line: 1, Col: 1}
	if len(data) > MaxFileSize {
		l.errorf(top, RuleSchemaInvalid, "", "file is %d bytes, larger than the %d-byte limit for a registry", len(data), MaxFileSize)
		return nil
	}
	doc, err := decodeYAML(data)
	if err != nil {
		l.yamlError(err)
		return nil
	}
	if len(doc.Content) == 0 {
		l.errorf(top, RuleSchemaInvalid, "", "registry is empty (want a mapping with version: 1 and families:)")
		return nil
	}
	root := doc.Content[0]
	value, ok := l.toJSON(root, "")
	if !ok {
		return nil
	}
	l.value = value
	l.validateSchema(value)
	if len(l.diags) == 0 {
		return l.decode(root)
	}
	// The schema rejected the document. Decode it anyway, so that one run
	// also reports what decoding finds (a pattern that does not parse, a
	// payload schema file that is missing, a duplicate name), without a
	// second finding where the schema already put one.
	schemaDiags := len(l.diags)
	l.lenient = true
	l.decode(root)
	l.diags = dropRepeats(l.diags, schemaDiags)
	return nil
}

// dropRepeats keeps the first n diagnostics, and of the rest those at a
// position none of the first n has: the schema's finding on a value says
// what is wrong with it, a decoder's finding there only repeats it.
func dropRepeats(l diag.List, n int) diag.List {
	type at struct{ line, col int }
	seen := make(map[at]bool, n)
	for _, d := range l[:n] {
		seen[at{d.Pos.Line, d.Pos.Col}] = true
	}
	out := l[:n]
	for _, d := range l[n:] {
		if k := (at{d.Pos.Line, d.Pos.Col}); !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}

// rejected reports whether the schema rejected the value at ptr, or a
// value inside it.
func (l *loader) rejected(ptr string) bool {
	for _, p := range l.badPtrs {
		if p == ptr || strings.HasPrefix(p, ptr+"/") {
			return true
		}
	}
	return false
}

// decodeYAML parses data, which must hold one YAML document. A second
// document with content ("---" and more) is an error at its position:
// keyreg would read only the first and silently drop the rest. Empty
// documents after the first (a trailing "---") drop nothing and are allowed.
func decodeYAML(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return &doc, nil
		}
		return nil, err
	}
	for {
		var next yaml.Node
		if err := dec.Decode(&next); err != nil {
			if err == io.EOF {
				return &doc, nil
			}
			return nil, err
		}
		if c := next.Content; len(c) > 0 && !(c[0].Kind == yaml.ScalarNode && c[0].ShortTag() == "!!null" && c[0].Value == "") {
			return nil, &multiDocError{line: next.Line, col: next.Column}
		}
	}
}

// multiDocError reports a second YAML document in a file.
type multiDocError struct{ line, col int }

func (e *multiDocError) Error() string {
	return fmt.Sprintf("line %d, column %d: a second YAML document starts here, but the file must hold exactly one (remove the \"---\" or split the file)", e.line, e.col)
}

// yamlError reports a YAML syntax error at the position it names.
func (l *loader) yamlError(err error) {
	pos := diag.Pos{File: l.file, Line: 1, Col: 1}
	var md *multiDocError
	if errors.As(err, &md) {
		pos.Line, pos.Col = md.line, md.col
		l.errorf(pos, RuleSchemaInvalid, "", "a second YAML document starts here, but a registry is one document (remove the \"---\" line and what follows, or merge it into the first)")
		return
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		pos.Line, _ = strconv.Atoi(m[1])
		if m[2] != "" {
			pos.Col, _ = strconv.Atoi(m[2])
		}
		msg = strings.Replace(msg, m[0], "", 1)
	}
	if strings.Contains(msg, "cannot start any token") || strings.Contains(msg, "tab character") {
		// The scanner may name the line before the tab: point at the tab.
		if line, col, ok := indentTab(l.data, pos.Line); ok {
			pos.Line, pos.Col = line, col
			msg += " (YAML forbids tabs for indentation: use spaces)"
		}
	}
	l.errorf(pos, RuleSchemaInvalid, "", "invalid YAML: %s", msg)
}

// indentTab finds the tab that a YAML tab error on line is about: the first
// tab in the indentation of that line or the next one (the scanner reports
// some tab errors on the line before the tab).
func indentTab(data []byte, line int) (tabLine, col int, ok bool) {
	n := 1
	for len(data) > 0 && n <= line+1 {
		text := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			text, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if n >= line {
			for i, c := range text {
				if c == '\t' {
					return n, i + 1, true
				}
				if c != ' ' {
					break
				}
			}
		}
		n++
	}
	return 0, 0, false
}

// toJSON converts a YAML node to JSON-compatible values, recording the
// position of every value and key by JSON pointer, and reporting duplicate
// keys, which YAML forbids but the decoder accepts.
func (l *loader) toJSON(n *yaml.Node, ptr string) (any, bool) {
	l.depth++
	defer func() { l.depth-- }()
	if l.depth > maxDepth {
		l.errorf(l.nodePos(n), RuleSchemaInvalid, "", "document is nested more than %d levels deep", maxDepth)
		return nil, false
	}
	if l.nodes++; l.nodes > l.maxNodes {
		l.errorf(l.nodePos(n), RuleSchemaInvalid, "", "document expands to more than %d values (too many aliases?)", l.maxNodes)
		return nil, false
	}
	l.pos[ptr] = l.nodePos(n)
	switch n.Kind {
	case yaml.AliasNode:
		return l.toJSON(n.Alias, ptr)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		seen := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				l.errorf(l.nodePos(k), RuleSchemaInvalid, "", "mapping key must be a scalar")
				return nil, false
			}
			if prev, dup := seen[k.Value]; dup {
				l.errorf(l.nodePos(k), RuleSchemaInvalid, "", "duplicate key %q (first defined at line %d)", k.Value, prev.Line)
				continue
			}
			seen[k.Value] = k
			child := ptr + "/" + escapePointer(k.Value)
			l.keyPos[child] = l.nodePos(k)
			cv, ok := l.toJSON(v, child)
			if !ok {
				return nil, false
			}
			m[k.Value] = cv
		}
		return m, true
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			cv, ok := l.toJSON(c, ptr+"/"+strconv.Itoa(i))
			if !ok {
				return nil, false
			}
			a = append(a, cv)
		}
		return a, true
	case yaml.ScalarNode:
		return scalarJSON(n), true
	}
	return nil, true
}

// decimalInt is a YAML integer written in plain decimal digits.
var decimalInt = regexp.MustCompile(`^[-+]?[0-9]+$`)

func scalarJSON(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return json.Number(strconv.FormatInt(i, 10))
		}
		if len(n.Value) <= 100 && decimalInt.MatchString(n.Value) {
			// Beyond int64: still an integer, which the schema's bounds
			// then judge (a 2^63 max_len is "more than the maximum", not
			// "a string").
			return json.Number(n.Value)
		}
	case "!!float":
		if len(n.Value) <= 100 && decimalInt.MatchString(n.Value) {
			return json.Number(n.Value) // an integer beyond int64: exactly as written
		}
		var f float64
		if n.Decode(&f) == nil {
			return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
		}
	}
	return n.Value // strings, timestamps, binary
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

var keysSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas.KeysV1))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemas.KeysV1ID, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemas.KeysV1ID)
})

var printer = message.NewPrinter(language.English)

func (l *loader) validateSchema(value any) {
	sch, err := keysSchema()
	if err != nil {
		panic(fmt.Sprintf("embedded keys.yaml schema does not compile: %v", err))
	}
	err = sch.Validate(value)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		l.schemaErrors(ve)
	}
}

// schemaErrors turns a validation error tree into one diagnostic per
// problem, at the position of the offending node.
func (l *loader) schemaErrors(e *jsonschema.ValidationError) {
	ptr := pointer(e.InstanceLocation)
	where := displayPath(e.InstanceLocation)
	pos := l.posAt(ptr)
	if len(e.Causes) == 0 {
		l.badPtrs = append(l.badPtrs, ptr)
	}
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		fields := schemaFields(e.SchemaURL)
		for _, p := range k.Properties {
			child := ptr + "/" + escapePointer(p)
			kp, ok := l.keyPos[child]
			if !ok {
				kp = pos
			}
			l.errorf(kp, RuleSchemaInvalid, "", "%sunknown field %s%s", prefix(where), quoteShort(p), diag.DidYouMean(p, fields))
		}
		return
	case *kind.Required:
		for _, p := range k.Missing {
			l.errorf(pos, RuleSchemaInvalid, "", "%smissing required field %q", prefix(where), p)
		}
		return
	case *kind.PropertyNames:
		// The causes judge the name as a value of its own, at no location:
		// report them at the key, with the path of its mapping.
		child := l.namedKey(e, k.Property)
		where = displayPath(splitPointer(child)[:max(len(splitPointer(child))-1, 0)])
		kp, ok := l.keyPos[child]
		if !ok {
			kp = pos
		}
		var why []string
		var leaves func(c *jsonschema.ValidationError)
		leaves = func(c *jsonschema.ValidationError) {
			if len(c.Causes) == 0 {
				why = append(why, c.ErrorKind.LocalizedString(printer))
			}
			for _, cc := range c.Causes {
				leaves(cc)
			}
		}
		for _, c := range e.Causes {
			leaves(c)
		}
		if k.Property == "" {
			why = []string{"a name must not be empty"}
		} else if len(why) == 0 {
			why = append(why, "not allowed")
		}
		l.badPtrs = append(l.badPtrs, child)
		l.errorf(kp, RuleSchemaInvalid, "", "%sbad name %s: %s", prefix(where), quoteShort(k.Property), strings.Join(why, "; "))
		return
	case *kind.Maximum:
		l.errorf(pos, RuleSchemaInvalid, "", "%s%s is more than the maximum, %s", prefix(where), ratString(k.Got), ratString(k.Want))
		return
	case *kind.Minimum:
		l.errorf(pos, RuleSchemaInvalid, "", "%s%s is less than the minimum, %s", prefix(where), ratString(k.Got), ratString(k.Want))
		return
	case *kind.Enum:
		l.errorf(pos, RuleSchemaInvalid, "", "%s%s%s", prefix(where), e.ErrorKind.LocalizedString(printer), enumSuggestion(k))
		return
	case *kind.OneOf, *kind.AnyOf:
		// Errors below this node come from the branch whose shape fit;
		// report those. Otherwise no branch fit: say what was wanted.
		var deeper []*jsonschema.ValidationError
		collectDeeper(e, len(e.InstanceLocation), &deeper)
		if len(deeper) > 0 {
			for _, d := range deeper {
				l.schemaErrors(d)
			}
			return
		}
		l.badPtrs = append(l.badPtrs, ptr)
		l.errorf(pos, RuleSchemaInvalid, "", "%s%s%s", prefix(where), wantFor(e.InstanceLocation), branchSuggestion(e, len(e.InstanceLocation)))
		return
	case *kind.Pattern:
		if strings.Contains(e.SchemaURL, "duration") {
			l.errorf(pos, RuleSchemaInvalid, "", "%sbad duration %q (want Go syntax with d and w, such as 30m, 24h or 7d)", prefix(where), fmt.Sprint(k.Got))
			return
		}
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			l.schemaErrors(c)
		}
		return
	}
	l.errorf(pos, RuleSchemaInvalid, "", "%s%s", prefix(where), e.ErrorKind.LocalizedString(printer))
}

// namedKey returns the JSON pointer of the mapping key that a
// propertyNames error is about. The validator (jsonschema v6.0.x) hands
// that error its live location buffer, not a copy, so the tokens may have
// been overwritten by the time the error is read (an owner's bad name was
// reported under families:); only their number is right. The key is found
// in the document instead: a key of that name, at that depth, inside a
// mapping named as the schema's propertyNames keyword says (owners, groups,
// families, rules). Each key is claimed once, so two bad names of the same
// spelling in two mappings land on their own lines.
func (l *loader) namedKey(e *jsonschema.ValidationError, name string) string {
	depth := len(e.InstanceLocation) + 1
	_, frag, _ := strings.Cut(e.SchemaURL, "#")
	parent := ""
	if steps := strings.Split(strings.TrimSuffix(frag, "/propertyNames"), "/"); len(steps) > 0 {
		parent = steps[len(steps)-1]
	}
	if l.keysByName == nil {
		// Index every key once by (depth, mapping, name), in document
		// order, so that many bad names cost one pass over the document.
		l.keysByName = map[keyName][]string{}
		for ptr := range l.keyPos {
			toks := splitPointer(ptr)
			k := keyName{depth: len(toks), name: toks[len(toks)-1]}
			if len(toks) >= 2 {
				k.parent = toks[len(toks)-2]
			}
			l.keysByName[k] = append(l.keysByName[k], ptr)
		}
		for _, ptrs := range l.keysByName {
			slices.SortFunc(ptrs, func(a, b string) int {
				pa, pb := l.keyPos[a], l.keyPos[b]
				if pa.Line != pb.Line {
					return pa.Line - pb.Line
				}
				return pa.Col - pb.Col
			})
		}
	}
	k := keyName{depth: depth, name: name}
	if depth >= 2 {
		k.parent = parent
	}
	ptrs := l.keysByName[k]
	if len(ptrs) == 0 {
		return pointer(e.InstanceLocation) + "/" + escapePointer(name)
	}
	l.keysByName[k] = ptrs[1:] // each key is claimed once
	return ptrs[0]
}

// keyName indexes the keys of the document for namedKey.
type keyName struct {
	depth        int
	parent, name string
}

// ratString writes a number of a schema error as written in YAML: an
// integer in full, anything else as a short decimal.
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	return r.FloatString(3)
}

// splitPointer splits a JSON pointer into its unescaped tokens.
func splitPointer(ptr string) []string {
	if ptr == "" {
		return nil
	}
	toks := strings.Split(ptr[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks
}

// keysSchemaDoc is the embedded schema as JSON values, for the names of
// the fields a typo is compared with.
var keysSchemaDoc = sync.OnceValue(func() any {
	var v any
	if err := json.Unmarshal(schemas.KeysV1, &v); err != nil {
		panic(fmt.Sprintf("embedded keys.yaml schema is not JSON: %v", err))
	}
	return v
})

// schemaFields returns the properties of the object schema at url (the
// location in the embedded schema of the subschema that rejected an
// unknown field), sorted, for a "did you mean".
func schemaFields(url string) []string {
	_, frag, ok := strings.Cut(url, "#")
	if !ok || (frag != "" && frag[0] != '/') {
		return nil
	}
	v := keysSchemaDoc()
	for _, step := range strings.Split(frag, "/")[1:] {
		step = strings.ReplaceAll(strings.ReplaceAll(step, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			v = x[step]
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	m, _ := v.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// enumSuggestion returns a "did you mean" for a string that is none of an
// enum's values, such as "strin" for "string".
func enumSuggestion(k *kind.Enum) string {
	got, ok := k.Got.(string)
	if !ok {
		return ""
	}
	var want []string
	for _, w := range k.Want {
		if s, ok := w.(string); ok {
			want = append(want, s)
		}
	}
	return diag.DidYouMean(got, want)
}

// branchSuggestion returns a "did you mean" for a value that fits no branch
// of a oneOf or anyOf at depth, from the first enum among the branches'
// errors at the value itself (encoding: jsn, whose branches are one
// encoding or a list of them).
func branchSuggestion(e *jsonschema.ValidationError, depth int) string {
	for _, c := range e.Causes {
		if len(c.InstanceLocation) != depth {
			continue
		}
		if k, ok := c.ErrorKind.(*kind.Enum); ok {
			return enumSuggestion(k)
		}
		if s := branchSuggestion(c, depth); s != "" {
			return s
		}
	}
	return ""
}

func collectDeeper(e *jsonschema.ValidationError, depth int, out *[]*jsonschema.ValidationError) {
	for _, c := range e.Causes {
		if len(c.InstanceLocation) > depth {
			*out = append(*out, c)
			continue
		}
		collectDeeper(c, depth, out)
	}
}

func wantFor(loc []string) string {
	field := ""
	if len(loc) > 0 {
		field = loc[len(loc)-1]
	}
	switch field {
	case "ttl":
		return `bad ttl: want a duration such as "30m" or "7d", "persistent", "optional" or {max: <duration>}`
	case "schema":
		return "bad schema: want a schema file path or an inline schema object"
	}
	return "value matches none of the allowed forms"
}

func prefix(where string) string {
	if where == "" {
		return ""
	}
	return where + ": "
}

func pointer(loc []string) string {
	var b strings.Builder
	for _, s := range loc {
		b.WriteByte('/')
		b.WriteString(escapePointer(s))
	}
	return b.String()
}

// displayPath renders an instance location as families[2].ttl.
func displayPath(loc []string) string {
	var b strings.Builder
	for _, s := range loc {
		if _, err := strconv.Atoi(s); err == nil {
			fmt.Fprintf(&b, "[%s]", s)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

func (l *loader) posAt(ptr string) diag.Pos {
	for {
		if p, ok := l.pos[ptr]; ok {
			return p
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return diag.Pos{File: l.file, Line: 1, Col: 1}
		}
		ptr = ptr[:i]
	}
}

// pairs iterates over the key/value pairs of a mapping node.
func pairs(n *yaml.Node) func(yield func(k, v *yaml.Node) bool) {
	return func(yield func(k, v *yaml.Node) bool) {
		if n == nil || n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			v := n.Content[i+1]
			if v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			if !yield(n.Content[i], v) {
				return
			}
		}
	}
}

// decode builds the model from a document that passed the schema.
func (l *loader) decode(root *yaml.Node) *Registry {
	r := &Registry{
		File:          l.file,
		Separator:     ':',
		CompatPolicy:  PolicyLenient,
		Pos:           l.nodePos(root),
		fieldPos:      map[string]diag.Pos{},
		keyPos:        map[string]diag.Pos{},
		owners:        map[string]*Owner{},
		byName:        map[string]*Family{},
		channelByName: map[string]*Channel{},
	}
	var families, presets, channels *yaml.Node
	for k, v := range pairs(root) {
		r.fieldPos[k.Value] = l.nodePos(v)
		r.keyPos[k.Value] = l.nodePos(k)
		switch k.Value {
		case "version":
			r.Version, _ = strconv.Atoi(v.Value)
		case "separator":
			if len(v.Value) != 1 {
				l.errorf(l.nodePos(v), RuleSchemaInvalid, "", "separator %q must be a single ASCII byte", v.Value)
				continue
			}
			r.Separator = v.Value[0]
		case "defaults":
			r.Defaults.Pos = l.nodePos(v)
			for dk, dv := range pairs(v) {
				switch dk.Value {
				case "ttl":
					r.Defaults.TTL = l.ttl(dv)
				case "max_idle":
					r.Defaults.MaxIdle = l.duration(dv)
				case "max_bytes":
					r.Defaults.MaxBytes = l.limit(dv)
				case "max_len":
					r.Defaults.MaxLen = l.limit(dv)
				}
			}
		case "owners":
			for ok, ov := range pairs(v) {
				o := &Owner{Name: ok.Value, Pos: l.nodePos(ok)}
				for fk, fv := range pairs(ov) {
					switch fk.Value {
					case "contact":
						o.Contact = fv.Value
					case "description":
						o.Description = fv.Value
					case "prefixes":
						for _, p := range fv.Content {
							if len(p.Value) > MaxPatternLen {
								// lint proves claims against each other
								// in time quadratic in their lengths.
								l.errorf(l.nodePos(p), RuleSchemaInvalid, "", "owners.%s.prefixes: prefix is %d bytes long, more than the limit of %d", o.Name, len(p.Value), MaxPatternLen)
								continue
							}
							o.Prefixes = append(o.Prefixes, Prefix{Glob: p.Value, Pos: l.nodePos(p)})
						}
					}
				}
				r.Owners = append(r.Owners, o)
				r.owners[o.Name] = o
			}
		case "rules":
			for rk, rv := range pairs(v) {
				sev, _ := diag.ParseSeverity(rv.Value)
				r.Rules = append(r.Rules, Override{Rule: rk.Value, Severity: sev, Pos: l.nodePos(rk)})
			}
		case "compat_policy":
			r.CompatPolicy = v.Value
		case "breaking":
			r.Breaking.Pos = l.nodePos(v)
			for bk, bv := range pairs(v) {
				var refs []RuleRef
				for _, item := range bv.Content {
					refs = append(refs, RuleRef{Name: item.Value, Pos: l.nodePos(item)})
				}
				switch bk.Value {
				case "use":
					r.Breaking.Use = refs
				case "except":
					r.Breaking.Except = refs
				}
			}
		case "families":
			families = v
		case "cluster":
			r.Cluster = v.Value == "true"
		case "channels":
			channels = v
		case "presets":
			presets = v
		}
	}
	if families != nil && (!l.lenient || families.Kind == yaml.SequenceNode) {
		for i, fn := range families.Content {
			if l.lenient && fn.Kind != yaml.MappingNode {
				continue
			}
			f := l.family(r, fn, "/families/"+strconv.Itoa(i))
			f.Index = len(r.Families)
			if f.Name == "" && l.lenient {
				// The schema reported the missing name.
			} else if prev, dup := r.byName[f.Name]; dup {
				l.errorf(f.PosOf("name"), RuleDuplicateName, f.Name, "family name %q is already used at line %d", f.Name, prev.Pos.Line)
			} else {
				r.byName[f.Name] = f
			}
			r.Families = append(r.Families, f)
		}
	}
	l.presets(r, presets)
	l.channels(r, channels)
	for _, f := range r.Families {
		if f.Fencing != "" {
			f.FencingFamily = r.byName[f.Fencing]
		}
	}
	l.compileSchemas(r)
	return r
}

// family decodes the mapping of one family. ptr is its JSON pointer in the
// document, or empty for a family a preset expands into.
func (l *loader) family(r *Registry, n *yaml.Node, ptr string) *Family {
	f := &Family{Pos: l.nodePos(n), Compat: CompatFull, CompatPolicy: r.CompatPolicy, fieldPos: map[string]diag.Pos{}}
	var pattern *yaml.Node
	for k, v := range pairs(n) {
		f.fieldPos[k.Value] = l.nodePos(v)
		switch k.Value {
		case "name":
			f.Name = v.Value
		case "description":
			f.Description = v.Value
		case "pattern":
			pattern = v
			if l.lines != nil && v.Kind == yaml.ScalarNode {
				f.patternSrc = &scalar{file: l.lines, line: v.Line, col: v.Column, style: v.Style, value: v.Value, start: l.nodePos(v)}
			}
		case "version":
			f.Version, _ = strconv.Atoi(v.Value)
		case "owner":
			f.Owner = v.Value
		case "type":
			f.Type = v.Value
		case "encoding":
			f.Encoding = v.Value
			if v.Kind == yaml.SequenceNode {
				names := make([]string, len(v.Content))
				for i, e := range v.Content {
					names[i] = e.Value
				}
				f.Encoding = strings.Join(names, "|")
			}
		case "ttl":
			f.TTL = l.ttl(v)
		case "schema":
			f.Schema = l.schema(v, ptr)
		case "max_bytes":
			f.MaxBytes = l.limit(v)
		case "max_len":
			f.MaxLen = l.limit(v)
		case "max_idle":
			f.MaxIdle = l.duration(v)
		case "managed_by":
			f.ManagedBy = v.Value
		case "kind":
			f.Kind = v.Value
		case "fencing":
			f.Fencing = v.Value
		case "groups":
			f.Groups = l.groups(v)
		case "compat":
			f.Compat = v.Value
		case "compat_policy":
			f.CompatPolicy = v.Value
		case "deprecated":
			f.Deprecated = l.deprecation(v)
		case "ignore":
			for _, item := range v.Content {
				ig := Ignore{Pos: l.nodePos(item)}
				for ik, iv := range pairs(item) {
					switch ik.Value {
					case "rule":
						ig.Rule = iv.Value
					case "reason":
						ig.Reason = iv.Value
					}
				}
				f.Ignore = append(f.Ignore, ig)
			}
		}
	}
	if f.TTL.Kind == TTLUnset && r.Defaults.TTL.Kind != TTLUnset {
		f.TTL, f.TTLDefault = r.Defaults.TTL, true
	}
	l.kindImplies(f)
	if !f.Has("max_idle") {
		f.MaxIdle = r.Defaults.MaxIdle
	}
	if !f.Has("max_bytes") {
		f.MaxBytes = r.Defaults.MaxBytes
	}
	if !f.Has("max_len") {
		f.MaxLen = r.Defaults.MaxLen
	}
	if pattern != nil {
		p, err := ParsePattern(pattern.Value, r.Separator)
		if err != nil {
			var pe *PatternError
			pos := l.nodePos(pattern)
			msg := err.Error()
			if errors.As(err, &pe) {
				pos = f.PatternPos(pe.Offset, 1)
				msg = pe.Msg
			}
			l.errorf(pos, RulePatternInvalid, f.Name, "pattern %s: %s", quoteShort(pattern.Value), msg)
		} else {
			f.Pattern = p
		}
	}
	return f
}

// kindImplies applies what a family's kind implies (a lock and a fence
// are strings; a fence is a persistent int) and reports a declaration that
// contradicts it, at the declaration. It also checks that only a stream
// declares groups.
func (l *loader) kindImplies(f *Family) {
	want := func(field, have, implied string) string {
		if have != "" && have != implied {
			l.errorf(f.PosOf(field), RuleSchemaInvalid, f.Name, "%s %q contradicts kind: %s, which implies %s: %s (remove the %s field or the kind)", field, have, f.Kind, field, implied, field)
		}
		return implied
	}
	switch f.Kind {
	case KindLock:
		f.Type = want("type", f.Type, "string")
	case KindFence:
		f.Type = want("type", f.Type, "string")
		f.Encoding = want("encoding", f.Encoding, "int")
		if !f.TTLDefault && f.TTL.Kind != TTLUnset && f.TTL.Kind != TTLPersistent {
			l.errorf(f.PosOf("ttl"), RuleSchemaInvalid, f.Name, "ttl %q contradicts kind: fence, which implies ttl: persistent (a fence must outlive every lease; remove the ttl field)", f.TTL)
		}
		f.TTL, f.TTLDefault = TTLPolicy{Kind: TTLPersistent}, false
	}
	if f.Fencing != "" && f.Kind != KindLock {
		l.errorf(f.PosOf("fencing"), RuleSchemaInvalid, f.Name, "fencing: only a kind: lock family has a fencing counter")
	}
	if f.Has("groups") && f.Type != "stream" {
		l.errorf(f.PosOf("groups"), RuleSchemaInvalid, f.Name, "groups: consumer groups need type: stream (the family declares %s)", typeOrNone(f.Type))
	}
}

func typeOrNone(t string) string {
	if t == "" {
		return "no type"
	}
	return "type: " + t
}

// groups decodes a stream family's groups: mapping, sorted by name.
func (l *loader) groups(n *yaml.Node) []StreamGroup {
	var gs []StreamGroup
	for k, v := range pairs(n) {
		g := StreamGroup{Name: k.Value, MaxLag: NoLimit, MaxPending: NoLimit, MaxConsumerIdle: NoLimit, Pos: l.nodePos(k)}
		for gk, gv := range pairs(v) {
			switch gk.Value {
			case "max_lag":
				g.MaxLag = l.count(gv)
			case "max_pending":
				g.MaxPending = l.count(gv)
			case "max_consumer_idle":
				g.MaxConsumerIdle = l.duration(gv)
			}
		}
		gs = append(gs, g)
	}
	slices.SortFunc(gs, func(a, b StreamGroup) int { return strings.Compare(a.Name, b.Name) })
	return gs
}

// count parses a non-negative integer the schema accepted, which may still
// be too large for an int64.
func (l *loader) count(n *yaml.Node) int64 {
	c, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil || c < 0 {
		l.errorf(l.nodePos(n), RuleSchemaInvalid, "", "bad count %q (want an integer from 0 to %d)", n.Value, int64(math.MaxInt64))
		return NoLimit
	}
	return c
}

// limit parses a max_bytes or max_len: an integer from 1 to the largest
// int64. A larger one (10^26, which YAML reads as a float and the schema
// accepts as an integer) is refused at its position rather than clamped.
func (l *loader) limit(n *yaml.Node) int64 {
	c, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil || c < 1 {
		l.errorf(l.nodePos(n), RuleSchemaInvalid, "", "bad limit %s (want an integer from 1 to %d)", quoteShort(n.Value), int64(math.MaxInt64))
		return 0
	}
	return c
}

// quoteShort quotes s as %q does, cutting a long s to its first bytes.
func quoteShort(s string) string {
	const max = 100
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}

func (l *loader) duration(n *yaml.Node) time.Duration {
	d, err := ParseDuration(n.Value)
	if err != nil {
		l.errorf(l.nodePos(n), RuleSchemaInvalid, "", "%v", err)
	}
	return d
}

func (l *loader) ttl(n *yaml.Node) TTLPolicy {
	switch {
	case n.Kind == yaml.MappingNode:
		for k, v := range pairs(n) {
			if k.Value == "max" {
				return TTLPolicy{Kind: TTLMax, Max: l.duration(v)}
			}
		}
	case n.Value == "persistent":
		return TTLPolicy{Kind: TTLPersistent}
	case n.Value == "optional":
		return TTLPolicy{Kind: TTLOptional}
	}
	return TTLPolicy{Kind: TTLMax, Max: l.duration(n)}
}

func (l *loader) deprecation(n *yaml.Node) *Deprecation {
	d := &Deprecation{}
	for k, v := range pairs(n) {
		switch k.Value {
		case "since", "sunset":
			t, err := time.Parse(time.DateOnly, v.Value)
			if err != nil {
				l.errorf(l.nodePos(v), RuleSchemaInvalid, "", "bad date %q (want YYYY-MM-DD)", v.Value)
			}
			if k.Value == "since" {
				d.Since = t
			} else {
				d.Sunset = t
			}
		case "replaced_by":
			d.ReplacedBy = v.Value
		case "reason":
			d.Reason = v.Value
		}
	}
	return d
}

// schema reads the schema: field of the family at ptr.
func (l *loader) schema(n *yaml.Node, ptr string) *Schema {
	if n.Kind == yaml.ScalarNode {
		return &Schema{Path: n.Value, File: path.Join(l.dir, n.Value)}
	}
	if p, ok := l.jsonPtr[n]; ok {
		return &Schema{Doc: l.jsonAt(p)}
	}
	if ptr != "" {
		return &Schema{Doc: l.jsonAt(ptr + "/schema")}
	}
	// A preset's template: keyreg's own data, converted here.
	doc, _ := l.toJSON(n, "/~preset")
	return &Schema{Doc: doc}
}

// jsonAt returns the value of the document at a JSON pointer whose every
// step exists.
func (l *loader) jsonAt(ptr string) any {
	v := l.value
	for _, step := range strings.Split(ptr, "/")[1:] {
		step = strings.ReplaceAll(strings.ReplaceAll(step, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			v = x[step]
		case []any:
			i, _ := strconv.Atoi(step)
			v = x[i]
		}
	}
	return v
}
