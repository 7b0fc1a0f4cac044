package jsongen_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/codegen/jsongen"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/schemas"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func requestSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas.CodegenRequestV1))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemas.CodegenRequestV1ID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemas.CodegenRequestV1ID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func generate(t *testing.T, reg *registry.Registry, scope codegen.Scope) []byte {
	t.Helper()
	req, err := codegen.NewRequest(reg, scope)
	if err != nil {
		t.Fatal(err)
	}
	files, err := jsongen.Generator{}.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Name != jsongen.FileName {
		t.Fatalf("Generate returned %d files, want one %s", len(files), jsongen.FileName)
	}
	return files[0].Data
}

func validate(t *testing.T, s *jsonschema.Schema, name string, out []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s: the request does not match schemas/codegen-request.v1.schema.json: %v", name, err)
	}
}

// TestRequestMatchesSchema validates keyreg gen json's document for this
// repository's registries, in every scope, against the published schema.
func TestRequestMatchesSchema(t *testing.T) {
	s := requestSchema(t)
	for _, file := range []string{"keys.yaml", "examples/locks/keys.yaml"} {
		reg, err := registry.Load(os.DirFS("../.."), file)
		if err != nil {
			t.Fatal(err)
		}
		for _, scope := range []codegen.Scope{{}, {IncludePresets: true}} {
			out := generate(t, reg, scope)
			validate(t, s, file, out)
			if again := generate(t, reg, scope); !bytes.Equal(out, again) {
				t.Errorf("%s: two requests differ", file)
			}
		}
	}
}

// hostile covers what this repository's registries do not: a literal
// that is not UTF-8, a TTL below a millisecond, deprecation and a fence.
const hostile = `version: 1
families:
  - name: odd
    pattern: "v1:x:{id:hex}"
    owner: a
    type: string
    encoding: text
    ttl: {max: 1500us}
    deprecated:
      since: 2024-01-02
      replaced_by: lock
      reason: gone
  - name: lock
    pattern: lock:{id}
    owner: a
    kind: lock
    ttl: {max: 30s}
    fencing: fence
  - name: fence
    pattern: fence:{id}
    owner: a
    kind: fence
  - name: events
    pattern: events:{id:int}
    owner: a
    type: stream
    encoding: json
    ttl: persistent
    max_len: 1000
    groups:
      mailer: {max_consumer_idle: 5m}
      audit: {}
`

func TestHostileRequest(t *testing.T) {
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(hostile)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// YAML text is UTF-8; a registry built in code may hold any bytes.
	p, err := registry.ParsePattern("v1:\xff:{id:hex}", ':')
	if err != nil {
		t.Fatal(err)
	}
	reg.Families[0].Pattern = p
	out := generate(t, reg, codegen.Scope{})
	validate(t, requestSchema(t), "hostile", out)
	var doc struct {
		Families []struct {
			Name       string
			Pattern    struct{ Parts []map[string]any }
			TTL        map[string]any
			Fencing    string
			MaxLen     int64 `json:"max_len"`
			Groups     []map[string]any
			Deprecated map[string]any
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, f := range doc.Families {
		byName[f.Name] = i
	}
	odd := doc.Families[byName["odd"]]
	if got := odd.Pattern.Parts[0]["literal_base64"]; got != "djE6/zo=" {
		t.Errorf("odd's literal_base64 = %v, want the bytes v1:\\xff: exactly", got)
	}
	if got := odd.TTL["max_ns"]; got != 1.5e6 {
		t.Errorf("odd's max_ns = %v, want 1500000", got)
	}
	if odd.Deprecated["since"] != "2024-01-02" || odd.Deprecated["replaced_by"] != "lock" {
		t.Errorf("odd's deprecation = %v", odd.Deprecated)
	}
	if f := doc.Families[byName["lock"]].Fencing; f != "fence" {
		t.Errorf("lock's fencing = %q, want fence", f)
	}
	ev := doc.Families[byName["events"]]
	if ev.MaxLen != 1000 || len(ev.Groups) != 2 || ev.Groups[0]["name"] != "audit" || ev.Groups[0]["max_consumer_idle_ms"] != -1.0 || ev.Groups[1]["max_consumer_idle_ms"] != 300000.0 {
		t.Errorf("events: max_len %d, groups %v", ev.MaxLen, ev.Groups)
	}
}

// TestSchemaIsStrict holds the schema to rejecting what the request never
// holds, so that TestRequestMatchesSchema could fail.
func TestSchemaIsStrict(t *testing.T) {
	s := requestSchema(t)
	reg, err := registry.Load(os.DirFS("../.."), "examples/locks/keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	good := string(generate(t, reg, codegen.Scope{}))
	for _, c := range []struct{ old, new string }{
		{`"version": 1`, `"version": 2`},
		{`"policy": "max"`, `"policy": "forever"`},
		{`"in_scope": true`, `"in_scope": true, "extra": 1`},
		{`"type": "word"`, `"type": "float"`},
		{`"registry_digest": "sha256:`, `"registry_digest": "md5:`},
	} {
		bad := strings.Replace(good, c.old, c.new, 1)
		if bad == good {
			t.Errorf("%q is not in the request", c.old)
			continue
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if s.Validate(v) == nil {
			t.Errorf("the schema accepts a request with %s", c.new)
		}
	}
}
