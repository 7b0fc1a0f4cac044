package registry

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/keyreg/keyreg/diag"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchemas reads and compiles every family's payload schema. A
// missing file or a schema that does not compile is a
// payload-schema-invalid finding on the family's schema: line.
func (l *loader) compileSchemas(r *Registry) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	ld := &fsLoader{fsys: l.fsys, dir: l.dir}
	c.UseLoader(ld)
	compiled := map[string]*Schema{} // by URL, so a file shared by families compiles once
	all := r.Families
	ns := func(i int) string { return "/families/" }
	if len(r.Channels) > 0 {
		all = make([]*Family, 0, len(r.Families)+len(r.Channels))
		all = append(all, r.Families...)
		for _, c := range r.Channels {
			all = append(all, &c.Family)
		}
		ns = func(i int) string {
			if i >= len(r.Families) {
				return "/channels/"
			}
			return "/families/"
		}
	}
	for i, f := range all {
		s := f.Schema
		if s == nil {
			continue
		}
		pos := f.PosOf("schema")
		ld.left = MaxSchemaNodes
		var url string
		if s.Path != "" {
			if !fs.ValidPath(s.File) || !within(l.dir, s.File) {
				l.errorf(pos, RulePayloadSchemaInvalid, f.Name, "schema path %q leaves the registry's directory tree", s.Path)
				continue
			}
			url = "file:///" + s.File
			if prev, ok := compiled[url]; ok {
				s.Doc, s.Compiled = prev.Doc, prev.Compiled
				continue
			}
			doc, err := ld.read(s.File)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					l.errorf(pos, RulePayloadSchemaInvalid, f.Name, "schema file %q not found (paths are relative to the directory of %s)", s.Path, l.file)
				} else {
					l.errorf(pos, RulePayloadSchemaInvalid, f.Name, "schema file %q: %v", s.Path, err)
				}
				continue
			}
			s.Doc = doc
		} else {
			url = "keyreg:///" + l.file + ns(i) + f.Name + "/schema.json"
			if err := ld.count(s.Doc, 0); err != nil {
				l.errorf(pos, RulePayloadSchemaInvalid, f.Name, "schema (inline): %v", err)
				continue
			}
		}
		if err := c.AddResource(url, s.Doc); err != nil {
			l.errorf(pos, RulePayloadSchemaInvalid, f.Name, "schema %s: %v", schemaName(s), oneLine(err))
			continue
		}
		sch, err := c.Compile(url)
		if err != nil {
			l.errorf(pos, RulePayloadSchemaInvalid, f.Name, "schema %s does not compile: %v", schemaName(s), oneLine(err))
			continue
		}
		if cycle := refCycle(sch); cycle != nil {
			l.errorf(pos, RulePayloadSchemaInvalid, f.Name, "schema %s has a reference cycle: %s applies to the same value again, so validating it never ends", schemaName(s), strings.Join(cycle, " -> "))
			continue
		}
		if loc := branchBomb(sch); loc != "" {
			l.errorf(pos, RulePayloadSchemaInvalid, f.Name, "schema %s: %s applies more than %d subschemas to one value (through $ref, allOf, anyOf, oneOf..., counted per path), so validating a value could take exponential time", schemaName(s), loc, MaxSchemaBranches)
			continue
		}
		s.Compiled = sch
		compiled[url] = s
	}
}

// refCycle finds a chain of subschemas that apply to the same value (through
// $ref, $dynamicRef, $recursiveRef, allOf, anyOf, oneOf, not, if, then,
// else, dependentSchemas or dependencies) and leads back to where it
// started: validating a value that reaches it would loop, which jsonschema
// reports as a "reference cycle" on every such value. Recursion through
// properties or items moves to a smaller value and is fine. It returns the
// locations along the cycle, the first repeated at the end, or nil.
func refCycle(root *jsonschema.Schema) []string {
	const (
		unseen = iota
		active
		done
	)
	state := map[*jsonschema.Schema]int{}
	var path []*jsonschema.Schema
	var visit func(s *jsonschema.Schema) []string
	visit = func(s *jsonschema.Schema) []string {
		switch state[s] {
		case active:
			i := slices.Index(path, s)
			var out []string
			for _, p := range append(path[i:], s) {
				out = append(out, schemaLoc(p.Location))
			}
			return out
		case done:
			return nil
		}
		state[s] = active
		path = append(path, s)
		for _, c := range inPlace(s) {
			if c != nil {
				if cycle := visit(c); cycle != nil {
					return cycle
				}
			}
		}
		path = path[:len(path)-1]
		state[s] = done
		return nil
	}
	return visit(root)
}

// branchBomb returns the location of the first subschema reachable from
// root (through any keyword) whose in-place expansion, counted per path,
// exceeds MaxSchemaBranches, or "". refCycle has run first,
// so the in-place graph has no cycle and the counts are finite; they are
// memoised and saturate just past the bound.
func branchBomb(root *jsonschema.Schema) string {
	cost := map[*jsonschema.Schema]int{}
	var branches func(s *jsonschema.Schema) int
	branches = func(s *jsonschema.Schema) int {
		if n, ok := cost[s]; ok {
			return n
		}
		cost[s] = MaxSchemaBranches + 1 // not reached: refCycle found none
		n := 1
		for _, c := range inPlace(s) {
			if c != nil && n <= MaxSchemaBranches {
				n += branches(c)
			}
		}
		n = min(n, MaxSchemaBranches+1)
		cost[s] = n
		return n
	}
	seen := map[*jsonschema.Schema]bool{}
	stack := []*jsonschema.Schema{root}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s == nil || seen[s] {
			continue
		}
		seen[s] = true
		if branches(s) > MaxSchemaBranches {
			return schemaLoc(s.Location)
		}
		stack = appendSubschemas(stack, reflect.ValueOf(s).Elem())
	}
	return ""
}

// schemaType is the type of a compiled subschema pointer.
var schemaType = reflect.TypeFor[*jsonschema.Schema]()

// appendSubschemas appends every *jsonschema.Schema held by the fields of
// the struct v: directly, in slices, in maps, or in interface values (such
// as additionalProperties, which is a bool or a schema). Reflection keeps
// the walk complete when jsonschema adds a keyword.
func appendSubschemas(out []*jsonschema.Schema, v reflect.Value) []*jsonschema.Schema {
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			switch {
			case v.IsNil():
			case v.Type() == schemaType:
				out = append(out, v.Interface().(*jsonschema.Schema))
			case v.Elem().Kind() == reflect.Struct:
				walk(v.Elem())
			}
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Value())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(v)
	return out
}

// inPlace returns the subschemas of s that apply to the same value as s.
func inPlace(s *jsonschema.Schema) []*jsonschema.Schema {
	out := []*jsonschema.Schema{s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else}
	if s.DynamicRef != nil {
		out = append(out, s.DynamicRef.Ref)
	}
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	for _, k := range slices.Sorted(maps.Keys(s.DependentSchemas)) {
		out = append(out, s.DependentSchemas[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Dependencies)) {
		if d, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			out = append(out, d)
		}
	}
	return out
}

// schemaLoc shortens a schema location for a message: "a.json#/allOf/0",
// or "#/allOf/0" inside an inline schema.
func schemaLoc(loc string) string {
	if rest, ok := strings.CutPrefix(loc, "file:///"); ok {
		return rest
	}
	if strings.HasPrefix(loc, "keyreg:///") {
		if i := strings.IndexByte(loc, '#'); i >= 0 {
			return loc[i:]
		}
	}
	return loc
}

func schemaName(s *Schema) string {
	if s.Path != "" {
		return fmt.Sprintf("%q", s.Path)
	}
	return "(inline)"
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// fsLoader reads schema files inside the registry's file system: the
// schema: files of families and the files their references name. It
// resolves file:/// references; other URLs are refused, so the loader never
// goes to the network. Symbolic links are followed only while they stay in
// the registry's directory tree. left is what remains of the current family's budget
// of MaxSchemaNodes values.
type fsLoader struct {
	fsys fs.FS
	dir  string // the directory of keys.yaml: files must resolve inside it
	left int
}

// Load implements jsonschema.URLLoader.
func (f *fsLoader) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, "file:///")
	if !ok {
		return nil, fmt.Errorf("cannot load %q: only local schema files can be referenced", url)
	}
	return f.read(name)
}

// read reads a JSON or YAML schema file as JSON values, and charges its
// values to the budget.
func (f *fsLoader) read(name string) (any, error) {
	resolved, err := resolveIn(f.fsys, f.dir, name)
	if err != nil {
		return nil, err
	}
	data, err := readFile(f.fsys, resolved, MaxFileSize)
	if err != nil {
		return nil, err
	}
	var v any
	switch path.Ext(name) {
	case ".yaml", ".yml":
		n, err := decodeYAML(data)
		if err != nil {
			return nil, fmt.Errorf("invalid YAML: %v", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if len(n.Content) == 0 {
			return nil, fmt.Errorf("file is empty")
		}
		l := &loader{file: name, pos: map[string]diag.Pos{}, keyPos: map[string]diag.Pos{}, maxNodes: f.left}
		var ok bool
		if v, ok = l.toJSON(n.Content[0], ""); !ok {
			return nil, fmt.Errorf("%s", l.diags[0].Message)
		}
	default:
		if v, err = jsonschema.UnmarshalJSON(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("invalid JSON: %v", err)
		}
	}
	if err := f.count(v, 0); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// count charges the values of v to the budget. It fails once the budget is
// spent, or when v is nested more than maxDepth levels deep.
func (f *fsLoader) count(v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("schema is nested more than %d levels deep", maxDepth)
	}
	if f.left--; f.left < 0 {
		return fmt.Errorf("schema has more than %d values, counting the files it references and YAML aliases expanded", MaxSchemaNodes)
	}
	switch v := v.(type) {
	case map[string]any:
		for _, c := range v {
			if err := f.count(c, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, c := range v {
			if err := f.count(c, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
