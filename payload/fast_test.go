package payload

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/registry"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// fastSchemas are hand-written schemas that together use every keyword
// the fast path implements, in the drafts where they differ.
var fastSchemas = []string{
	`{"type": "integer", "minimum": -3, "maximum": 1000000000000, "multipleOf": 3}`,
	`{"type": ["number", "null"], "exclusiveMinimum": 0, "exclusiveMaximum": 100.5, "multipleOf": 0.01}`,
	`{"type": "number", "minimum": -0.5, "maximum": 9007199254740993, "multipleOf": 0.25}`,
	`{"type": "integer", "multipleOf": 1e-3, "maximum": -1e-7}`,
	`{"type": ["integer", "string"], "minLength": 2, "maxLength": 3, "pattern": "^[a-zé€𝄞]*$"}`,
	`{"type": "string", "minLength": 1, "maxLength": 4}`,
	`{"enum": [1, 2.5, "a", null, true, [1, "x"], {"k": 1.0}, -0]}`,
	`{"const": {"a": [1, 2.0, {"b": null}], "c": "d"}}`,
	`{"const": 1e2}`,
	`{"enum": []}`,
	`{"not": {"type": "string"}, "anyOf": [{"type": "integer", "maximum": 5}, {"type": "array", "minItems": 2}, {"type": "object"}]}`,
	`{"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 2}, {"type": "string", "maxLength": 2}]}`,
	`{"allOf": [{"type": "object", "required": ["a"]}, {"properties": {"a": {"type": "integer", "minimum": 0}}}]}`,
	`{"if": {"properties": {"kind": {"const": "n"}}, "required": ["kind"]}, "then": {"required": ["n"]}, "else": {"properties": {"n": false}}}`,
	`{"if": {"type": "integer"}, "then": {"minimum": 10}}`,
	`{"if": {"type": "string"}, "else": {"type": "null"}}`,
	`{"if": true, "then": {"type": "boolean"}, "else": {"type": "null"}}`,
	`{"type": "object", "minProperties": 1, "maxProperties": 3, "required": ["a"],
	  "dependentRequired": {"b": ["c"]}, "dependentSchemas": {"c": {"properties": {"a": {"type": "string"}}}},
	  "propertyNames": {"pattern": "^[a-d]$", "maxLength": 1}}`,
	`{"type": "object", "properties": {"a": {"type": "integer"}, "b": true, "c": false},
	  "patternProperties": {"^x": {"type": "string"}, "y$": {"type": "integer", "minimum": 0}},
	  "additionalProperties": {"type": "boolean"}}`,
	`{"properties": {"a": {}}, "patternProperties": {"^p[0-9]$": {"maxLength": 2}}, "additionalProperties": false}`,
	`{"type": "array", "minItems": 1, "maxItems": 4, "uniqueItems": true, "items": {"type": ["integer", "string", "object", "array"]}}`,
	`{"type": "array", "uniqueItems": true}`,
	`{"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false}`,
	`{"prefixItems": [{"const": 1}], "items": {"type": "string", "maxLength": 1}}`,
	`{"type": "array", "contains": {"type": "integer", "minimum": 5}, "minContains": 2, "maxContains": 3}`,
	`{"contains": {"type": "string"}}`,
	`{"contains": {"type": "string"}, "minContains": 0, "maxContains": 0}`,
	`{"$defs": {"pos": {"$ref": "#/$defs/int", "minimum": 1}, "int": {"type": "integer"},
	           "tree": {"type": "object", "properties": {"v": {"$ref": "#/$defs/pos"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}},
	  "$ref": "#/$defs/tree"}`,
	`{"type": "object", "additionalProperties": {"type": "object", "additionalProperties": false, "required": ["qty"],
	  "properties": {"qty": {"type": "integer", "minimum": 1, "maximum": 99}, "at": {"type": "string", "format": "date-time"}}},
	  "propertyNames": {"pattern": "^[1-9][0-9]*$"}}`,
	`{"type": "string", "format": "date-time"}`,
	`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "string", "format": "date-time"}`,
	`{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"e": {"format": "email"}, "i": {"format": "ipv4"}}}`,
	`{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"n": {"type": "integer"}},
	  "properties": {"a": {"$ref": "#/definitions/n", "type": "string"}}}`,
	`{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "integer"}, {"type": "string"}], "additionalItems": false}`,
	`{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "integer"}], "additionalItems": {"type": "boolean"}}`,
	`{"$schema": "http://json-schema.org/draft-07/schema#", "items": {"type": "integer"}, "additionalItems": false}`,
	`{"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"a": ["b"], "c": {"required": ["d"]}}}`,
	`{"$schema": "http://json-schema.org/draft-07/schema#", "contains": {"const": 2}, "propertyNames": {"maxLength": 2}}`,
	`{"$schema": "http://json-schema.org/draft-04/schema#", "type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": true}`,
	`{"$schema": "http://json-schema.org/draft-06/schema#", "type": "integer", "exclusiveMaximum": 3, "const": 2}`,
	`{"$schema": "https://json-schema.org/draft/2019-09/schema", "items": [{"type": "string"}], "additionalItems": false, "contains": {"type": "string"}, "maxContains": 1}`,
	`true`,
	`false`,
}

// fastRejected are schemas the fast path must not take on.
var fastRejected = []string{
	`{"unevaluatedProperties": false}`,
	`{"properties": {"a": {"type": "array", "unevaluatedItems": false}}}`,
	`{"$dynamicAnchor": "x", "properties": {"a": {"$dynamicRef": "#x"}}}`,
	`{"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveAnchor": true, "properties": {"a": {"$recursiveRef": "#"}}}`,
	`{"$ref": "#"}`,
	`{"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "properties": {"x": {"$ref": "#/$defs/a"}}}`,
	`{"if": {"$ref": "#"}}`,
	`{"$defs": {"a": {"dependentSchemas": {"k": {"$ref": "#/$defs/a"}}}}, "items": {"$ref": "#/$defs/a"}}`,
	`{"maximum": 1e30}`,
	`{"multipleOf": 1e-30}`,
	`{"enum": ["a", 123456789012345678901234567890]}`,
	`{"const": 1e400}`,
}

// compileSchema compiles a schema document; path names it for $ref.
func compileSchema(t testing.TB, doc, path string, opts ...func(*jsonschema.Compiler)) *jsonschema.Schema {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	for _, o := range opts {
		o(c)
	}
	url := "file:///" + path
	if err := c.AddResource(url, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// fileSchemas compiles every *.json schema in dir.
func fileSchemas(t testing.TB, dir string) map[string]*jsonschema.Schema {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in %s: %v", dir, err)
	}
	out := map[string]*jsonschema.Schema{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = compileSchema(t, string(b), filepath.ToSlash(f))
	}
	return out
}

func TestCompileFast(t *testing.T) {
	for i, doc := range fastSchemas {
		if compileFast(compileSchema(t, doc, fmt.Sprintf("s%d.json", i))) == nil {
			t.Errorf("no fast path for supported schema %s", doc)
		}
	}
	for _, dir := range []string{"../schemas", "../bench/schemas"} {
		for name, s := range fileSchemas(t, dir) {
			if compileFast(s) == nil {
				t.Errorf("no fast path for %s", name)
			}
		}
	}
	for i, doc := range fastRejected {
		if compileFast(compileSchema(t, doc, fmt.Sprintf("r%d.json", i))) != nil {
			t.Errorf("fast path for unsupported schema %s", doc)
		}
	}
	content := compileSchema(t, `{"properties": {"b": {"contentEncoding": "base64"}}}`, "c.json",
		func(c *jsonschema.Compiler) { c.AssertContent() })
	if compileFast(content) != nil {
		t.Error("fast path for an asserted contentEncoding")
	}
	if fastFor(nil) != nil || (*fastNode)(nil).check(1) != unsure {
		t.Error("nil schema has a fast path")
	}
}

// TestFastKnowsEverySchemaField fails when jsonschema grows a Schema field:
// fast.go must then implement it or reject schemas that use it.
func TestFastKnowsEverySchemaField(t *testing.T) {
	known := strings.Fields(`DraftVersion Location Bool ID Ref Anchor RecursiveRef RecursiveAnchor DynamicRef
		DynamicAnchor Types Enum Const Not AllOf AnyOf OneOf If Then Else Format MaxProperties MinProperties
		Required PropertyNames Properties PatternProperties AdditionalProperties Dependencies DependentRequired
		DependentSchemas UnevaluatedProperties MinItems MaxItems UniqueItems Contains MinContains MaxContains
		Items AdditionalItems PrefixItems Items2020 UnevaluatedItems MinLength MaxLength Pattern ContentEncoding
		ContentMediaType ContentSchema Maximum Minimum ExclusiveMaximum ExclusiveMinimum MultipleOf Extensions
		Title Description Default Comment ReadOnly WriteOnly Examples Deprecated`)
	for f := range reflect.TypeFor[jsonschema.Schema]().Fields() {
		if f.IsExported() && !slices.Contains(known, f.Name) {
			t.Errorf("jsonschema.Schema has a new field %s: teach fast.go about it", f.Name)
		}
	}
}

// rawString is a string value in TestFastTricky, rather than a JSON
// document.
type rawString string

func TestFastTricky(t *testing.T) {
	tests := []struct {
		schema string
		value  any // a JSON document as a string, decoded by Decode, or a value (rawString for a string)
		want   verdict
	}{
		{`{"type": "integer"}`, `1.0`, pass},
		{`{"type": "integer"}`, `1e2`, pass},
		{`{"type": "integer"}`, `100e-2`, pass},
		{`{"type": "integer"}`, `1.5`, fail},
		{`{"type": "integer"}`, 2.0, pass},
		{`{"type": "integer"}`, 1e300, pass},
		{`{"type": "integer"}`, 0.1, fail},
		{`{"type": "integer"}`, `"1"`, fail},
		{`{"type": "integer"}`, `123456789012345678901234567890`, pass},
		{`{"type": "integer", "minimum": 1}`, `123456789012345678901234567890`, pass},
		{`{"type": "integer", "maximum": 1}`, `123456789012345678901234567890`, fail},
		{`{"exclusiveMinimum": 1}`, `-1e19`, fail},
		{`{"maximum": 1}`, `-18446744073709551615`, pass},
		{`{"maximum": 1}`, `0.00000000000000000000001`, unsure},
		{`{"multipleOf": 1}`, `1e300`, unsure},
		{`{"maxLength": 1}`, `"é"`, pass},
		{`{"maxLength": 1}`, `"éé"`, fail},
		{`{"minLength": 2}`, `"é"`, fail},
		{`{"minLength": 2, "maxLength": 2}`, rawString("𝄞\xff"), pass}, // msgpack strings need not be UTF-8
		{`{"maxLength": 1}`, rawString("\xff\xfe"), fail},
		{`{"enum": [1]}`, `1.0`, pass},
		{`{"enum": [1]}`, 1.0, pass},
		{`{"enum": [1]}`, `1.5`, fail},
		{`{"enum": [1]}`, `"1"`, fail},
		{`{"enum": [1.5, "x"]}`, `15e-1`, pass},
		{`{"const": {"a": [1]}}`, `{"a": [1.0]}`, pass},
		{`{"const": {"a": [1]}}`, `{"a": [1, 2]}`, fail},
		{`{"properties": {"a": {}}, "additionalProperties": false}`, `{"a": 1}`, pass},
		{`{"properties": {"a": {}}, "additionalProperties": false}`, `{"a": 1, "b": 2}`, fail},
		{`{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "integer", "minimum": 3}},
		   "properties": {"x": {"$ref": "#/$defs/a"}}}`, `{"x": 3}`, pass},
		{`{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "integer", "minimum": 3}},
		   "properties": {"x": {"$ref": "#/$defs/a"}}}`, `{"x": 2.5}`, fail},
		{`{"required": ["a", "b"]}`, `{"a": 1}`, fail},
		{`{"required": ["a", "b"]}`, `{"a": 1, "b": null}`, pass},
		{`{"required": ["a"]}`, `[1]`, pass},
		{`{"minimum": 0}`, `-0`, pass},
		{`{"minimum": 0}`, math.Copysign(0, -1), pass},
		{`{"exclusiveMinimum": 0}`, `-0.0`, fail},
		{`{"minimum": 0.5}`, `0.4999999999999999999`, fail},
		{`{"minimum": 0.5}`, `0.49999999999999999999`, unsure}, // 20 digits
		{`{"minimum": -9223372036854775808}`, `-9223372036854775807`, pass},
		{`{"maximum": 1e19}`, `1e18`, unsure}, // the bound is beyond int64: no fast path
		{`{"maximum": 9223372036854775807}`, `9223372036854775807`, pass},
		{`{"multipleOf": 0.01}`, `19.99`, pass},
		{`{"multipleOf": 0.01}`, `19.999`, fail},
		{`{"multipleOf": 0.01}`, 0.07, pass}, // jsonschema reads fmt.Sprint(0.07), not the binary value
		{`{"multipleOf": 0.1}`, 0.30000000000000004, fail},
		{`{"oneOf": [{"type": "integer"}, {"minimum": 0}]}`, `1`, fail},
		{`{"oneOf": [{"type": "integer"}, {"minimum": 0}]}`, `0.5`, pass},
		{`{"not": {"minimum": 0}}`, `-1`, pass},
		{`{"uniqueItems": true}`, `[1, 1.0]`, fail},
		{`{"uniqueItems": true}`, `[{"a": 1}, {"a": 2}]`, pass},
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "format": "date-time"}`, `"yesterday"`, fail},
		{`{"format": "date-time"}`, `"yesterday"`, pass}, // 2020-12 only annotates
		{`{"type": "number"}`, json.Number("0x10"), pass},
		{`{"type": "integer"}`, json.Number("0x10"), unsure},
		{`{"type": "number"}`, math.NaN(), unsure},
		{`{"type": "number"}`, int64(1), unsure},
		{`true`, int64(1), pass},
	}
	for i, tt := range tests {
		s := compileSchema(t, tt.schema, fmt.Sprintf("t%d.json", i))
		v := tt.value
		switch x := v.(type) {
		case string:
			var err error
			if v, err = Decode(JSON, []byte(x)); err != nil {
				t.Fatalf("%s: %v", x, err)
			}
		case rawString:
			v = string(x)
		}
		got := compileFast(s).check(v)
		if got != tt.want {
			t.Errorf("%s with %#v: got %v, want %v", tt.schema, v, got, tt.want)
		}
		agree(t, s, got, v)
	}
}

// agree fails the test when the fast verdict contradicts jsonschema, and
// reports whether jsonschema accepts v.
func agree(t testing.TB, s *jsonschema.Schema, got verdict, v any) bool {
	t.Helper()
	err := safeValidate(s, v)
	switch {
	case got == pass && err != nil:
		t.Errorf("%s: fast path accepts %s, jsonschema rejects it: %v", s.Location, dump(v), err)
	case got == fail && err == nil:
		t.Errorf("%s: fast path rejects %s, jsonschema accepts it", s.Location, dump(v))
	}
	return err == nil
}

// dump shows a value with the Go types of its numbers.
func dump(v any) string {
	switch x := v.(type) {
	case map[string]any:
		var parts []string
		for k, e := range x {
			parts = append(parts, strconv.Quote(k)+": "+dump(e))
		}
		slices.Sort(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = dump(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case json.Number:
		return "json.Number(" + string(x) + ")"
	}
	return fmt.Sprintf("%#v", v)
}

func (v verdict) String() string {
	return [...]string{"unsure", "pass", "fail"}[v]
}

// TestFastDifferential checks random instances, biased toward each
// schema, against jsonschema: a pass must be valid and a fail invalid.
func TestFastDifferential(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 400
	}
	schemas := map[string]*jsonschema.Schema{}
	unsatisfiable := map[string]bool{}
	for i, doc := range fastSchemas {
		name := fmt.Sprintf("hand/%02d", i)
		schemas[name] = compileSchema(t, doc, fmt.Sprintf("hand%d.json", i))
		unsatisfiable[name] = doc == `false` || doc == `{"enum": []}`
	}
	maps.Copy(schemas, fileSchemas(t, "../schemas"))
	maps.Copy(schemas, fileSchemas(t, "../bench/schemas"))
	names := slices.Sorted(maps.Keys(schemas))
	total := 0
	for i, name := range names {
		s := schemas[name]
		fast := compileFast(s)
		g := &instGen{r: rand.New(rand.NewPCG(uint64(i), 42))}
		var valid, passed, failed, invalid int
		for range n {
			v := g.value(s, 0)
			vs := []any{v}
			if g.r.IntN(2) == 0 { // as the JSON decoder yields it
				if b, err := json.Marshal(v); err == nil {
					if dv, err := Decode(JSON, b); err == nil {
						vs = append(vs, dv)
					}
				}
			}
			for _, v := range vs {
				total++
				got := fast.check(v)
				if agree(t, s, got, v) {
					valid++
					if got == pass {
						passed++
					}
				} else {
					invalid++
					if got == fail {
						failed++
					}
				}
			}
		}
		t.Logf("%-40s valid %5d (fast pass %5d)  invalid %5d (fast fail %5d)", name, valid, passed, invalid, failed)
		// The repository's own document schemas (keys.yaml's, the codegen
		// request's) are large and closed (additionalProperties: false at
		// every level), so random instances are rarely valid: 0.5% of them
		// must be. Real documents and their mutations are checked against
		// keys.v1 by TestFastRegistryDocs.
		want := n / 100
		if strings.HasPrefix(name, filepath.Join("..", "schemas")) {
			want = n / 200
		}
		if valid < want && !unsatisfiable[name] {
			t.Errorf("%s: only %d valid instances: the generator misses the schema", name, valid)
		}
		if strings.Contains(name, "bench/schemas") && passed < valid*9/10 {
			t.Errorf("%s: fast path passes only %d of %d valid instances", name, passed, valid)
		}
	}
	t.Logf("%d instances checked against %d schemas", total, len(schemas))
}

// TestFastRegistryDocs checks the keys.yaml files of the repository, and
// mutations of them, against keys.v1.schema.json.
func TestFastRegistryDocs(t *testing.T) {
	sch := fileSchemas(t, "../schemas")[filepath.Join("..", "schemas", "keys.v1.schema.json")]
	fast := compileFast(sch)
	files, _ := filepath.Glob("../[^.]*.yaml") // keys.yaml, not .goreleaser.yaml
	more, _ := filepath.Glob("../bench/*.yaml")
	files = append(files, more...)
	r := rand.New(rand.NewPCG(7, 7))
	checked, passed := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		doc = fromYAML(doc)
		if fast.check(doc) == pass {
			passed++
		}
		for range 300 {
			checked++
			agree(t, sch, fast.check(doc), doc)
			doc = mutate(r, doc)
		}
	}
	if passed < len(files) || len(files) < 2 {
		t.Errorf("fast path passes %d of %d registries", passed, len(files))
	}
	t.Logf("%d registry documents checked", checked)
}

// fromYAML turns a decoded YAML document into the JSON value model.
func fromYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = fromYAML(e)
		}
	case []any:
		for i, e := range x {
			x[i] = fromYAML(e)
		}
	case int:
		return json.Number(strconv.Itoa(x))
	case time.Time:
		return x.Format(time.RFC3339)
	}
	return v
}

// mutate returns a copy of v with one random change somewhere.
func mutate(r *rand.Rand, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x)+1)
		keys := make([]string, 0, len(x))
		for k, e := range x {
			out[k] = e
			keys = append(keys, k)
		}
		slices.Sort(keys)
		switch {
		case len(keys) == 0 || r.IntN(6) == 0:
			out["x"+strconv.Itoa(r.IntN(3))] = json.Number("1")
		case r.IntN(6) == 0:
			delete(out, keys[r.IntN(len(keys))])
		default:
			k := keys[r.IntN(len(keys))]
			out[k] = mutate(r, x[k])
		}
		return out
	case []any:
		out := slices.Clone(x)
		if len(out) == 0 || r.IntN(5) == 0 {
			return append(out, json.Number("2"))
		}
		i := r.IntN(len(out))
		out[i] = mutate(r, out[i])
		return out
	case string:
		return [...]any{x + "x", "", strings.ToUpper(x), json.Number("3"), nil}[r.IntN(5)]
	case json.Number:
		return [...]any{json.Number("-1"), json.Number(string(x) + ".5"), json.Number(string(x) + ".0"), "1"}[r.IntN(4)]
	}
	return [...]any{"s", json.Number("0"), true, nil, []any{}}[r.IntN(5)]
}

// instGen generates instances near a schema: mostly of the right types,
// with values at the boundaries, and now and then something off.
type instGen struct{ r *rand.Rand }

func (g *instGen) coin(n int) bool { return g.r.IntN(n) == 0 }

func (g *instGen) value(s *jsonschema.Schema, depth int) any {
	if s == nil || s.Bool != nil || depth > 5 || g.coin(40) {
		return g.random(depth)
	}
	switch {
	case s.Ref != nil && (s.Types == nil || !g.coin(4)):
		return g.value(s.Ref, depth)
	case len(s.AllOf) > 0 && g.coin(2):
		return g.value(s.AllOf[g.r.IntN(len(s.AllOf))], depth)
	case len(s.AnyOf) > 0 && (g.coin(2) || s.Types == nil && !g.coin(8)):
		// Without types of its own, a schema's values come from its
		// branches: off them, nearly every value fails.
		return g.value(s.AnyOf[g.r.IntN(len(s.AnyOf))], depth)
	case len(s.OneOf) > 0 && (g.coin(2) || s.Types == nil && !g.coin(8)):
		return g.value(s.OneOf[g.r.IntN(len(s.OneOf))], depth)
	case s.Then != nil && g.coin(3):
		return g.value(s.Then, depth)
	case s.Const != nil && !g.coin(4):
		return g.variant(*s.Const)
	case s.Enum != nil && len(s.Enum.Values) > 0 && !g.coin(5):
		return g.variant(s.Enum.Values[g.r.IntN(len(s.Enum.Values))])
	}
	var types []string
	if s.Types != nil {
		types = s.Types.ToStrings()
	}
	if len(types) == 0 || g.coin(20) {
		switch {
		case s.Properties != nil || s.Required != nil || s.AdditionalProperties != nil || s.PropertyNames != nil:
			types = []string{"object"}
		case s.Items != nil || s.PrefixItems != nil || s.Items2020 != nil || s.Contains != nil:
			types = []string{"array"}
		case s.MinLength != nil || s.MaxLength != nil || s.Pattern != nil || s.Format != nil:
			types = []string{"string"}
		case s.Minimum != nil || s.Maximum != nil || s.MultipleOf != nil || s.ExclusiveMaximum != nil || s.ExclusiveMinimum != nil:
			types = []string{"number"}
		default:
			types = []string{"null", "boolean", "number", "integer", "string", "array", "object"}
		}
	}
	switch types[g.r.IntN(len(types))] {
	case "null":
		return nil
	case "boolean":
		return g.coin(2)
	case "integer":
		return g.number(s, true)
	case "number":
		return g.number(s, false)
	case "string":
		return g.string(s)
	case "array":
		return g.array(s, depth)
	}
	return g.object(s, depth)
}

func (g *instGen) object(s *jsonschema.Schema, depth int) map[string]any {
	m := map[string]any{}
	for _, p := range s.Required {
		if !g.coin(25) {
			m[p] = g.value(s.Properties[p], depth+1)
		}
	}
	// Maps in sorted order, so that a seed makes the same instances.
	for _, p := range slices.Sorted(maps.Keys(s.Properties)) {
		if g.coin(2) {
			m[p] = g.value(s.Properties[p], depth+1)
		}
	}
	patterns := slices.SortedFunc(maps.Keys(s.PatternProperties), func(a, b jsonschema.Regexp) int {
		return strings.Compare(a.String(), b.String())
	})
	for _, re := range patterns {
		if g.coin(2) {
			m[g.regex(re.String())] = g.value(s.PatternProperties[re], depth+1)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(s.DependentRequired)) {
		req := s.DependentRequired[p]
		if g.coin(3) {
			m[p] = g.random(depth + 1)
			for _, q := range req {
				if !g.coin(4) {
					m[q] = g.random(depth + 1)
				}
			}
		}
	}
	if a, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		for range g.r.IntN(4) {
			m[g.name(s)] = g.value(a, depth+1)
		}
	}
	if g.coin(8) {
		m[g.name(s)] = g.random(depth + 1)
	}
	if s.MinProperties != nil {
		for len(m) < *s.MinProperties && !g.coin(8) {
			m[g.name(s)] = g.random(depth + 1)
		}
	}
	return m
}

// name makes a property name, following propertyNames when there is one.
func (g *instGen) name(s *jsonschema.Schema) string {
	if s.PropertyNames != nil && !g.coin(6) {
		return g.string(s.PropertyNames)
	}
	return g.text(g.r.IntN(6))
}

func (g *instGen) array(s *jsonschema.Schema, depth int) []any {
	lengths := []int{0, 1, 2, 3, g.r.IntN(8)}
	for _, p := range []*int{s.MinItems, s.MaxItems, s.MinContains, s.MaxContains} {
		if p != nil {
			lengths = append(lengths, *p-1, *p, *p+1)
		}
	}
	if s.UniqueItems {
		lengths = append(lengths, maxUnique, maxUnique+1)
	}
	n := max(0, lengths[g.r.IntN(len(lengths))])
	prefix := s.PrefixItems
	rest := s.Items2020
	if s.DraftVersion < 2020 {
		switch items := s.Items.(type) {
		case []*jsonschema.Schema:
			prefix = items
			rest, _ = s.AdditionalItems.(*jsonschema.Schema)
		case *jsonschema.Schema:
			rest = items
		}
	}
	a := make([]any, 0, n)
	for i := range n {
		item := rest
		switch {
		case i < len(prefix):
			item = prefix[i]
		case s.Contains != nil && g.coin(2):
			item = s.Contains
		}
		if s.UniqueItems && i > 0 && g.coin(3*n) {
			a = append(a, g.variant(a[g.r.IntN(i)]))
			continue
		}
		if s.UniqueItems && item == nil {
			// Distinct by construction, so long unique arrays are valid.
			a = append(a, json.Number(strconv.Itoa(i)))
			continue
		}
		a = append(a, g.value(item, depth+1))
	}
	return a
}

var runes = []string{"a", "Z", "0", "-", " ", "é", "€", "𝄞", "\xff", "\u00e9"}

// text makes a string of n runes, mostly ASCII.
func (g *instGen) text(n int) string {
	var sb strings.Builder
	for range n {
		if g.coin(3) {
			sb.WriteString(runes[g.r.IntN(len(runes))])
		} else {
			sb.WriteByte(byte('a' + g.r.IntN(26)))
		}
	}
	return sb.String()
}

func (g *instGen) string(s *jsonschema.Schema) string {
	if s.Pattern != nil && !g.coin(5) {
		return g.regex(s.Pattern.String())
	}
	if s.Format != nil || g.coin(10) {
		switch g.r.IntN(4) {
		case 0:
			return time.Unix(g.r.Int64N(4e9), 0).UTC().Format(time.RFC3339)
		case 1:
			return "user@example.com"
		case 2:
			return "10.0.0." + strconv.Itoa(g.r.IntN(300))
		}
	}
	lengths := []int{0, 1, 2, g.r.IntN(20)}
	for _, p := range []*int{s.MinLength, s.MaxLength} {
		if p != nil {
			lengths = append(lengths, *p-1, *p, *p+1)
		}
	}
	return g.text(max(0, lengths[g.r.IntN(len(lengths))]))
}

// regex makes a string that matches the pattern, most of the time.
func (g *instGen) regex(pattern string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return g.text(3)
	}
	var sb strings.Builder
	g.regexInto(&sb, re)
	if g.coin(10) {
		sb.WriteString(g.text(1))
	}
	return sb.String()
}

func (g *instGen) regexInto(sb *strings.Builder, re *syntax.Regexp) {
	repeat := func(lo, hi int) {
		if hi < 0 {
			hi = lo + 3
		}
		for range lo + g.r.IntN(hi-lo+1) {
			g.regexInto(sb, re.Sub[0])
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		sb.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		if len(re.Rune) >= 2 {
			i := 2 * g.r.IntN(len(re.Rune)/2)
			lo, hi := re.Rune[i], min(re.Rune[i+1], re.Rune[i]+1000)
			sb.WriteRune(lo + rune(g.r.IntN(int(hi-lo)+1)))
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		sb.WriteString(g.text(1))
	case syntax.OpCapture:
		g.regexInto(sb, re.Sub[0])
	case syntax.OpStar:
		repeat(0, 3)
	case syntax.OpPlus:
		repeat(1, 4)
	case syntax.OpQuest:
		repeat(0, 1)
	case syntax.OpRepeat:
		repeat(re.Min, re.Max)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			g.regexInto(sb, sub)
		}
	case syntax.OpAlternate:
		g.regexInto(sb, re.Sub[g.r.IntN(len(re.Sub))])
	}
}

// number makes a number near the schema's bounds, as a json.Number in one
// of its spellings or as a float64 (as msgpack and the float encoding
// yield).
func (g *instGen) number(s *jsonschema.Schema, integer bool) any {
	anchors := []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1), big.NewRat(-1, 1)}
	for _, b := range []*big.Rat{s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum} {
		if b != nil {
			anchors = append(anchors, b)
		}
	}
	if m := s.MultipleOf; m != nil {
		anchors = append(anchors, new(big.Rat).Mul(m, big.NewRat(g.r.Int64N(2000)-1000, 1)))
	}
	if g.coin(12) {
		return g.oddNumber()
	}
	if g.coin(2) {
		return g.spell(g.inside(s, integer))
	}
	x := new(big.Rat).Set(anchors[g.r.IntN(len(anchors))])
	deltas := []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1), big.NewRat(-1, 1), big.NewRat(g.r.Int64N(100), 1)}
	if !integer || g.coin(10) {
		deltas = append(deltas, big.NewRat(1, 2), big.NewRat(-1, 100), big.NewRat(1, 1000), big.NewRat(1, 10000000))
	}
	x.Add(x, deltas[g.r.IntN(len(deltas))])
	return g.spell(x)
}

// inside makes a number that meets the bounds, most of the time.
func (g *instGen) inside(s *jsonschema.Schema, integer bool) *big.Rat {
	lo, hi := s.Minimum, s.Maximum
	if s.ExclusiveMinimum != nil {
		lo = new(big.Rat).Add(s.ExclusiveMinimum, big.NewRat(1, 1))
	}
	if s.ExclusiveMaximum != nil {
		hi = new(big.Rat).Sub(s.ExclusiveMaximum, big.NewRat(1, 1))
	}
	step := big.NewRat(g.r.Int64N(100), 1)
	if !integer && g.coin(2) {
		step.Add(step, big.NewRat(g.r.Int64N(1000), 1000))
	}
	var x *big.Rat
	switch {
	case lo != nil:
		x = new(big.Rat).Add(lo, step)
		if hi != nil && x.Cmp(hi) > 0 {
			x.Set(hi)
		}
	case hi != nil:
		x = new(big.Rat).Sub(hi, step)
	default:
		x = step.Sub(step, big.NewRat(50, 1))
	}
	if m := s.MultipleOf; m != nil {
		q := new(big.Rat).Quo(x, m)
		n := new(big.Int).Quo(q.Num(), q.Denom())
		x.Mul(new(big.Rat).SetInt(n), m)
	}
	if integer && !x.IsInt() {
		x.SetInt(new(big.Int).Quo(x.Num(), x.Denom()))
	}
	return x
}

// spell writes an exact decimal in one of several forms.
func (g *instGen) spell(x *big.Rat) any {
	if g.coin(4) {
		f, _ := x.Float64()
		return f
	}
	s := strings.TrimRight(strings.TrimRight(x.FloatString(30), "0"), ".")
	if s == "-0" {
		s = "0"
	}
	switch g.r.IntN(6) {
	case 0:
		if !strings.Contains(s, ".") {
			s += ".0"
		}
	case 1:
		s += "e0"
	case 2:
		// Shift the point: 12.5 becomes 125e-1.
		mant, frac, _ := strings.Cut(s, ".")
		if frac != "" {
			s = strings.TrimLeft(mant+frac, "0") + "e-" + strconv.Itoa(len(frac))
			if strings.HasPrefix(s, "e") {
				s = "0" + s
			}
			if strings.HasPrefix(s, "-") && strings.HasPrefix(s[1:], "0") && len(s) > 2 && s[2] != 'e' {
				s = "-" + strings.TrimLeft(s[1:], "0")
			}
		}
	case 3:
		s += "00e-2"
	}
	if _, ok := new(big.Rat).SetString(s); !ok || !json.Valid([]byte(s)) {
		s = x.RatString()
		if strings.Contains(s, "/") {
			f, _ := x.Float64()
			return f
		}
	}
	return json.Number(s)
}

var oddNumbers = []any{
	json.Number("-0"), json.Number("0.0"), json.Number("-0.0"), json.Number("1e300"), json.Number("1E2"),
	json.Number("1e+2"), json.Number("123456789012345678901234567890"), json.Number("-9223372036854775808"),
	json.Number("9223372036854775807"), json.Number("18446744073709551615"), json.Number("1e-300"),
	json.Number("0.1e1"), json.Number("100e-2"), json.Number("999999999999999999"), json.Number("0.000000000000000000001"),
	json.Number("1234567890.12345678901"), json.Number("0.5"), json.Number("2.0"),
	0.1, 1e21, math.Copysign(0, -1), 5e-324, 1.7976931348623157e308, 9007199254740993.0, 1e15 + 0.5, -2.0, 0.07,
}

func (g *instGen) oddNumber() any { return oddNumbers[g.r.IntN(len(oddNumbers))] }

// variant returns v or a JSON-equal value spelled differently.
func (g *instGen) variant(v any) any {
	switch x := v.(type) {
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(x)); ok && !g.coin(3) {
			return g.spell(r)
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = g.variant(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out[k] = g.variant(x[k])
		}
		return out
	}
	return v
}

// random makes any value of the decoders' model.
func (g *instGen) random(depth int) any {
	k := g.r.IntN(7)
	if depth > 4 && k >= 5 {
		k = 0
	}
	switch k {
	case 0:
		return nil
	case 1:
		return g.coin(2)
	case 2:
		return g.oddNumber()
	case 3:
		return json.Number(strconv.Itoa(g.r.IntN(20) - 5))
	case 4:
		return g.text(g.r.IntN(5))
	case 5:
		a := make([]any, g.r.IntN(4))
		for i := range a {
			a[i] = g.random(depth + 1)
		}
		return a
	}
	m := map[string]any{}
	for range g.r.IntN(4) {
		m[g.text(1+g.r.IntN(2))] = g.random(depth + 1)
	}
	return m
}

// fuzzSchemas are the schemas FuzzFastValidate checks every input against.
var fuzzSchemas = []string{
	`{"type": "object", "additionalProperties": false, "required": ["user_id", "auth_method"],
	  "properties": {"user_id": {"type": "integer", "minimum": 1}, "auth_method": {"enum": ["password", "sso"]},
	  "roles": {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": true, "maxItems": 4},
	  "ua": {"type": "string", "maxLength": 3}}}`,
	`{"type": ["number", "string", "array"], "multipleOf": 0.5, "exclusiveMaximum": 1e6, "minimum": -2.5,
	  "maxLength": 2, "items": {"$ref": "#"}, "not": {"const": 1.5}}`,
	`{"oneOf": [{"type": "integer"}, {"enum": [0.5, "a", [1], {"b": 1}]}, {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}]}`,
}

func FuzzFastValidate(f *testing.F) {
	for _, seed := range []string{
		`{"user_id": 1, "auth_method": "sso", "roles": ["a", "b"]}`,
		`{"user_id": 1.0, "auth_method": "password", "ua": "é€𝄞"}`,
		`{"user_id": 123456789012345678901234567890, "auth_method": "sso"}`,
		`[0.5, 1, -2.5, "ab", [1.5e0]]`,
		`1.5`, `-0`, `1e2`, `0.25`, `"é"`, `{"b": 1.0}`, `[1.0]`, `{"a": 1, "B": 2}`, `null`,
		"\x82\xa7user_id\x01\xabauth_method\xa3sso",
	} {
		f.Add([]byte(seed))
	}
	var schemas []*jsonschema.Schema
	for i, doc := range fuzzSchemas {
		s := compileSchema(f, doc, fmt.Sprintf("fuzz%d.json", i))
		if compileFast(s) == nil {
			f.Fatalf("no fast path for %s", doc)
		}
		schemas = append(schemas, s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, enc := range []string{JSON, Msgpack} {
			v, err := Decode(enc, data)
			if err != nil {
				continue
			}
			for _, s := range schemas {
				agree(t, s, fastFor(s).check(v), v)
			}
		}
	})
}

// benchSamples reproduces the payload shapes bench/seed.go writes, for the
// families of bench/keys.yaml.
func benchSamples(t testing.TB) map[string]struct {
	fam *registry.Family
	s   Sample
} {
	t.Helper()
	reg, err := registry.LoadFile("../bench/keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fam := func(name string) *registry.Family {
		f, ok := reg.Family(name)
		if !ok || f.Schema == nil || f.Schema.Compiled == nil {
			t.Fatalf("family %s has no compiled schema", name)
		}
		return f
	}
	ts := "2026-03-01T12:34:56Z"
	cart := map[string][]byte{}
	for i, id := range []string{"104233", "77", "912345"} {
		cart[id] = []byte(`{"qty":` + strconv.Itoa(1+i) + `,"unit_price":` + strconv.Itoa(1999*(i+1)) + `,"added_at":"` + ts + `"}`)
	}
	return map[string]struct {
		fam *registry.Family
		s   Sample
	}{
		"session": {fam("user-session"), Sample{Type: "string", String: []byte(`{"user_id":4211337,"created_at":"` + ts +
			`","expires_at":"2026-03-02T12:34:56Z","csrf_token":"` + strings.Repeat("0123456789abcdef", 4) +
			`","auth_method":"passkey","mfa":true,"roles":["customer"],"ip":"10.1.22.203","user_agent":"Mozilla/5.0 (X11; Linux x86_64) Firefox/131.0"}`)}},
		"product": {fam("product-cache"), Sample{Type: "string", String: []byte(`{"id":81234,"sku":"SKU-482913","title":"Product 81234 in colour 17",` +
			`"price":{"amount":45900,"currency":"EUR"},"in_stock":true,"category_ids":[12,407],"updated_at":"` + ts + `"}`)}},
		"cart": {fam("cart-items"), Sample{Type: "hash", Fields: cart}},
		"celery": {fam("celery-task-result"), Sample{Type: "string", String: []byte(`{"status":"SUCCESS","result":{"order_id":482913,"ok":true},` +
			`"traceback":null,"children":[],"date_done":"` + ts + `","task_id":"3f2a9c1e-7b4d-4e21-9a3c-5d6e7f8a9b0c"}`)}},
	}
}

// TestCheckFastSameResult checks that Check reports the same with and
// without the fast path, for valid and broken bench payloads.
func TestCheckFastSameResult(t *testing.T) {
	for name, b := range benchSamples(t) {
		sch := b.fam.Schema.Compiled
		if fastFor(sch) == nil {
			t.Fatalf("%s: no fast path", name)
		}
		// Broken as bench/seed.go breaks them, and then some.
		broken := b.s
		if broken.String != nil {
			broken.String = []byte(strings.NewReplacer(`"user_id":4211337`, `"user_id":"u4211337"`,
				`"amount":45900`, `"amount":-459001`, `"SUCCESS"`, `"DONE"`).Replace(string(broken.String)))
		} else {
			broken.Fields = map[string][]byte{"0": []byte(`{"qty":0,"unit_price":1.5}`), "77": b.s.Fields["77"]}
		}
		samples := []Sample{b.s, broken}
		for i, s := range samples {
			fast := Check(b.fam, s, Options{ShowValues: true, MaxViolations: -1})
			fastCache.Store(sch, (*fastNode)(nil))
			slow := Check(b.fam, s, Options{ShowValues: true, MaxViolations: -1})
			fastCache.Delete(sch)
			if !reflect.DeepEqual(fast, slow) {
				t.Errorf("%s sample %d: fast path changes the result:\n%+v\nwant\n%+v", name, i, fast, slow)
			}
			if i == 0 && (fast.Checked == 0 || fast.Violations != nil) {
				t.Errorf("%s: valid sample: %+v", name, fast)
			}
			if i == 1 && fast.Violations == nil {
				t.Errorf("%s: broken sample passes", name)
			}
		}
	}
}

// BenchmarkCheck runs Check on the bench payloads with jsonschema alone
// (path=v6) and with the fast path (path=fast). Compare the two with
//
//	benchstat -col /path bench.txt
func BenchmarkCheck(b *testing.B) {
	samples := benchSamples(b)
	for _, name := range []string{"session", "product", "cart", "celery"} {
		x := samples[name]
		sch := x.fam.Schema.Compiled
		for _, path := range []string{"v6", "fast"} {
			b.Run("payload="+name+"/path="+path, func(b *testing.B) {
				if path == "v6" {
					fastCache.Store(sch, (*fastNode)(nil))
					defer fastCache.Delete(sch)
				}
				if r := Check(x.fam, x.s, Options{}); r.Checked == 0 || r.Violations != nil || r.DecodeErrors != 0 {
					b.Fatalf("unexpected result %+v", r)
				}
				b.ReportAllocs()
				for b.Loop() {
					Check(x.fam, x.s, Options{})
				}
			})
		}
	}
}
