package registry

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/keyreg/keyreg/diag"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// compileSchemas reads and compiles every family's payload schema. A
// missing file or a schema that does not compile is a
// payload-schema-invalid finding on the family's schema: line.
func (l *loader) compileSchemas(r *Registry) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(fsLoader{l.fsys})
	compiled := map[string]*Schema{} // by URL, so a file shared by families compiles once
	for _, f := range r.Families {
		s := f.Schema
		if s == nil {
			continue
		}
		pos := f.PosOf("schema")
		var url string
		if s.Path != "" {
			if !fs.ValidPath(s.File) {
				l.errorf(pos, RulePayloadSchemaInvalid, f.Name, "schema path %q leaves the registry's directory tree", s.Path)
				continue
			}
			url = "file:///" + s.File
			if prev, ok := compiled[url]; ok {
				s.Doc, s.Compiled = prev.Doc, prev.Compiled
				continue
			}
			doc, err := readSchemaFile(l.fsys, s.File)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					l.errorf(pos, RulePayloadSchemaInvalid, f.Name, "schema file %q not found (paths are relative to %s)", s.Path, l.file)
				} else {
					l.errorf(pos, RulePayloadSchemaInvalid, f.Name, "schema file %q: %v", s.Path, err)
				}
				continue
			}
			s.Doc = doc
		} else {
			url = "keyreg:///" + l.file + "/families/" + f.Name + "/schema.json"
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
		s.Compiled = sch
		compiled[url] = s
	}
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

// readSchemaFile reads a JSON or YAML schema file as JSON values.
func readSchemaFile(fsys fs.FS, name string) (any, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	switch path.Ext(name) {
	case ".yaml", ".yml":
		var n yaml.Node
		if err := yaml.Unmarshal(data, &n); err != nil {
			return nil, fmt.Errorf("invalid YAML: %v", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if len(n.Content) == 0 {
			return nil, fmt.Errorf("file is empty")
		}
		l := &loader{file: name, pos: map[string]diag.Pos{}, keyPos: map[string]diag.Pos{}}
		v, ok := l.toJSON(n.Content[0], "")
		if !ok {
			return nil, fmt.Errorf("%s", l.diags[0].Message)
		}
		return v, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	return v, nil
}

// fsLoader resolves file:/// references between schema files inside the
// registry's file system. Other URLs are refused: the loader never goes to
// the network.
type fsLoader struct{ fsys fs.FS }

func (f fsLoader) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, "file:///")
	if !ok {
		return nil, fmt.Errorf("cannot load %q: only local schema files can be referenced", url)
	}
	return readSchemaFile(f.fsys, name)
}
