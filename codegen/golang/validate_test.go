package golang

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
)

// schemaCases pair a JSON Schema with values; the generated schema check
// must accept exactly the values keyreg's own validator (payload.Check,
// the audit's) accepts.
var schemaCases = []struct {
	schema string
	values []string
}{
	{`{"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 2}`, []string{`2`, `0`, `11`, `12`, `3`, `4.0`, `4.5`, `"4"`, `null`}},
	{`{"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}`, []string{`0`, `0.5`, `1`, `-1`, `true`}},
	{`{"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-zé]+$"}`, []string{`"ab"`, `"a"`, `"abcd"`, `"éé"`, `"ééé"`, `"AB"`, `1`}},
	{`{"enum": ["a", 1, null, {"x": [1]}]}`, []string{`"a"`, `1`, `1.0`, `null`, `{"x": [1]}`, `{"x": [2]}`, `"b"`, `[]`}},
	{`{"const": {"a": 1}}`, []string{`{"a": 1}`, `{"a": 2}`, `{}`}},
	{`{"type": ["string", "null"]}`, []string{`"x"`, `null`, `0`}},
	{`{"type": "object", "required": ["id"], "additionalProperties": false, "minProperties": 1, "maxProperties": 2,
	  "properties": {"id": {"type": "integer"}, "tag": {"type": "string"}}}`,
		[]string{`{"id": 1}`, `{"id": 1, "tag": "x"}`, `{"tag": "x"}`, `{"id": "1"}`, `{"id": 1, "other": 2}`, `{}`, `[]`}},
	{`{"type": "object", "additionalProperties": {"type": "boolean"}, "propertyNames": {"pattern": "^[a-z]+$"}}`,
		[]string{`{"a": true}`, `{"a": 1}`, `{"A": true}`, `{}`}},
	{`{"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3, "uniqueItems": true}`,
		[]string{`[1]`, `[]`, `[1, 2, 3, 4]`, `[1, 1]`, `[1, 1.0]`, `[1, "a"]`, `{}`}},
	{`{"allOf": [{"type": "integer"}, {"minimum": 5}], "not": {"const": 7}}`, []string{`5`, `4`, `7`, `8`, `"5"`}},
	{`{"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]}`, []string{`"s"`, `0`, `-1`, `true`}},
	{`{"oneOf": [{"type": "integer"}, {"minimum": 2}]}`, []string{`1`, `3`, `2.5`, `"x"`}},
	{`{"$defs": {"node": {"type": "object", "required": ["v"], "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}}}},
	  "$ref": "#/$defs/node"}`,
		[]string{`{"v": 1}`, `{"v": 1, "next": {"v": 2, "next": {"v": 3}}}`, `{"v": 1, "next": {"v": "x"}}`, `{"v": 1, "next": {}}`}},
	{`{"properties": {"no": false, "yes": true}}`, []string{`{"yes": 1}`, `{"no": 1}`, `{}`, `1`}},
	{`{"type": "object", "properties": {"a/b": {"type": "integer"}, "c~d": {"items": {"maxLength": 1}}}}`,
		[]string{`{"a/b": 1}`, `{"a/b": "x"}`, `{"c~d": ["x", "yy"]}`}},
}

// TestSchemaCheckAgrees generates one family per schema case, runs the
// generated check on every value, and compares each verdict with
// payload.Check on the same value.
func TestSchemaCheckAgrees(t *testing.T) {
	var y strings.Builder
	y.WriteString("version: 1\nfamilies:\n")
	for i, c := range schemaCases {
		fmt.Fprintf(&y, "  - name: f%d\n    pattern: \"v1:f%d:{id}\"\n    type: string\n    encoding: json\n    ttl: 1h\n    schema: %s\n", i, i, strings.Join(strings.Fields(c.schema), " "))
	}
	reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte(y.String()))
	if err != nil {
		t.Fatalf("%v\n%s", err, y.String())
	}
	out, err := Generate(reg, Options{Package: "main"})
	if err != nil {
		t.Fatal(err)
	}
	var main strings.Builder
	main.WriteString("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar v any\n\tvar err error\n")
	for i, c := range schemaCases {
		for _, v := range c.values {
			fmt.Fprintf(&main, "\tif v, err = keyregJSONValue([]byte(%s)); err != nil {\n\t\tpanic(err)\n\t}\n", strconv.Quote(v))
			fmt.Fprintf(&main, "\tfmt.Println(keyregCheck(keyregSchemaF%d, \"f\", \"k\", v) == nil)\n", i)
		}
	}
	main.WriteString("}\n")
	dir := mkTempPackageDir(t)
	for name, data := range map[string][]byte{goldenOut: out, "main.go": []byte(main.String())} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", "./"+filepath.ToSlash(dir))
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, got)
	}
	lines := strings.Fields(string(got))
	n := 0
	for i, c := range schemaCases {
		f := reg.Families[i]
		for _, v := range c.values {
			res := payload.Check(f, payload.Sample{String: []byte(v)}, payload.Options{})
			want := res.DecodeErrors == 0 && len(res.Violations) == 0
			if n >= len(lines) {
				t.Fatalf("the program printed %d verdicts, want more", len(lines))
			}
			if lines[n] != strconv.FormatBool(want) {
				t.Errorf("schema %s, value %s: generated check says %s, keyreg's validator %v (%v)", c.schema, v, lines[n], want, res.Violations)
			}
			n++
		}
	}
	if n != len(lines) {
		t.Errorf("%d verdicts for %d values", len(lines), n)
	}
}
