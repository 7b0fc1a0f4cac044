package infer

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/vmihailenco/msgpack/v5"
)

// compileInferred compiles a schema Schema returned, through its JSON text
// as a file would hold it, with format assertions on (the registry leaves
// formats as annotations; asserting them checks the format rule too).
func compileInferred(t testing.TB, doc map[string]any) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem:///s.json", v); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		t.Fatalf("schema does not compile: %v\n%s", err, b)
	}
	return s
}

// infer feeds the values and checks that the schema validates each.
func infer(t testing.TB, o SchemaOptions, vals ...any) map[string]any {
	t.Helper()
	s := NewSchemaInferrer(o)
	for _, v := range vals {
		s.Add(v)
	}
	doc := s.Schema()
	if doc["$schema"] != SchemaDraft {
		t.Fatalf("$schema = %v", doc["$schema"])
	}
	sch := compileInferred(t, doc)
	for i, v := range vals {
		if err := sch.Validate(v); err != nil {
			b, _ := json.Marshal(doc)
			t.Fatalf("sample %d does not validate: %v\nschema: %s", i, err, b)
		}
	}
	return doc
}

// decodeAll decodes JSON documents the way the audit does.
func decodeAll(t testing.TB, docs ...string) []any {
	t.Helper()
	var out []any
	for _, d := range docs {
		v, err := payload.Decode(payload.JSON, []byte(d))
		if err != nil {
			t.Fatalf("decode %q: %v", d, err)
		}
		out = append(out, v)
	}
	return out
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}

// without drops $schema, to compare the rest.
func without(doc map[string]any) map[string]any {
	m := maps.Clone(doc)
	delete(m, "$schema")
	return m
}

func TestSchemaShapes(t *testing.T) {
	tests := []struct {
		name string
		docs []string
		want string // the schema without $schema, as JSON (keys sorted)
	}{
		{"nothing", nil, `{}`},
		{"integer", []string{`1`, `-7`, `0`}, `{"type":"integer"}`},
		{"integer and number", []string{`1`, `2.5`}, `{"type":"number"}`},
		{"exponent is a number", []string{`1e3`}, `{"type":"number"}`},
		{"string or null", []string{`"a b"`, `null`}, `{"type":["null","string"]}`},
		{"many types", []string{`1`, `"x y"`, `true`, `[]`, `{}`, `null`},
			`{"type":["array","boolean","integer","null","object","string"]}`},
		{"object", []string{`{"a":1,"b":"x y"}`, `{"a":2}`},
			`{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a"],"type":"object"}`},
		{"property seen late is optional", []string{`{"a":1}`, `{"a":2,"b":true}`},
			`{"properties":{"a":{"type":"integer"},"b":{"type":"boolean"}},"required":["a"],"type":"object"}`},
		{"nullable property", []string{`{"a":1}`, `{"a":null}`},
			`{"properties":{"a":{"type":["integer","null"]}},"required":["a"],"type":"object"}`},
		{"array items merged", []string{`[1,2]`, `["x y",3]`, `[]`},
			`{"items":{"type":["integer","string"]},"type":"array"}`},
		{"only empty arrays", []string{`[]`, `[]`}, `{"type":"array"}`},
		{"array of objects", []string{`[{"id":1,"n":"a b"},{"id":2}]`},
			`{"items":{"properties":{"id":{"type":"integer"},"n":{"type":"string"}},"required":["id"],"type":"object"},"type":"array"}`},
		{"object or array", []string{`{"a":1}`, `[true]`},
			`{"items":{"type":"boolean"},"properties":{"a":{"type":"integer"}},"required":["a"],"type":["array","object"]}`},
		{"empty object", []string{`{}`}, `{"type":"object"}`},
		{"escaped names", []string{`{"a/b":1,"~":2,"$ref":"x y"}`},
			`{"properties":{"$ref":{"type":"string"},"a/b":{"type":"integer"},"~":{"type":"integer"}},"required":["$ref","a/b","~"],"type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := infer(t, SchemaOptions{}, decodeAll(t, tt.docs...)...)
			if got := js(without(doc)); got != tt.want {
				t.Errorf("schema = %s\nwant     %s", got, tt.want)
			}
		})
	}
}

func TestSchemaFloat64IsNumber(t *testing.T) {
	// msgpack floats decode to float64: a float field stays number even
	// when a sample happens to be whole.
	doc := infer(t, SchemaOptions{}, 3.0, 2.5)
	if doc["type"] != "number" {
		t.Errorf("type = %v, want number", doc["type"])
	}
}

func TestSchemaFormats(t *testing.T) {
	tests := []struct {
		name string
		vals []string
		want string // "" for none
	}{
		{"uuid", []string{"123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-00000000ABCD"}, "uuid"},
		{"uuid with a bad char", []string{"123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-42661417400g"}, ""},
		{"date-time", []string{"2024-01-02T03:04:05Z", "2024-01-02t03:04:05.123456+02:00", "1999-12-31T23:59:59-11:30"}, "date-time"},
		{"leap second is refused", []string{"2016-12-31T23:59:60Z"}, ""},
		{"date-time without zone", []string{"2024-01-02T03:04:05"}, ""},
		{"date-time hour 24", []string{"2024-01-02T24:00:00Z"}, ""},
		{"date-time, 10 fraction digits", []string{"2024-01-02T03:04:05.1234567890Z"}, ""},
		{"date", []string{"2024-02-29", "1970-01-01"}, "date"},
		{"date not in the calendar", []string{"2023-02-29"}, ""},
		{"date and date-time mixed", []string{"2024-02-29", "2024-01-02T03:04:05Z"}, ""},
		{"email", []string{"ann@example.com", "a.b+tag@mail.example.org"}, "email"},
		{"email without a dot in the domain", []string{"root@localhost"}, ""},
		{"email quoted local part", []string{`"a b"@example.com`}, ""},
		{"email two ats", []string{"a@b@example.com"}, ""},
		{"uri", []string{"https://example.com/a?b=c#d", "mailto:ann@example.com", "urn:isbn:0451450523"}, "uri"},
		{"uri relative", []string{"/a/b"}, ""},
		{"uri with a space", []string{"https://example.com/a b"}, ""},
		{"uri ipv6 host", []string{"http://[::1]:80/"}, ""},
		{"uri bad escape", []string{"https://example.com/%zz"}, ""},
		{"one misfit", []string{"https://example.com/", "hello"}, ""},
		{"empty string", []string{""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals := make([]any, len(tt.vals))
			for i, v := range tt.vals {
				vals[i] = v
			}
			doc := infer(t, SchemaOptions{}, vals...)
			got, _ := doc["format"].(string)
			if got != tt.want {
				t.Errorf("format = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFormatsStricterThanValidator: whatever formatsOf accepts, jsonschema
// v6 accepts too, for every format, over tricky strings.
func TestFormatsStricterThanValidator(t *testing.T) {
	cands := []string{
		"2024-01-02T03:04:05Z", "2024-01-02T23:59:60Z", "2024-01-02T03:04:05+24:00", "2024-01-02T03:04:05+23:59",
		"2024-13-01", "2024-00-10", "0000-01-01", "+024-01-01", "2024-1-01", "2024-01-02T03:04:05.Z",
		"a@b.c", "a@-b.c", "a@b-.c", "a@b..c", ".a@b.c", "a.@b.c", "a..b@c.d", strings.Repeat("a", 65) + "@b.c",
		"a@" + strings.Repeat("b", 64) + ".c", "é@b.c", "a@b.c.", "http://x", "x:", "1a:b", "a+b.c-d:e",
		"http://a:b@c:d/", "http://[v1.x]/", "http://%41/", "http://a/%", "HTTP://A", "a:\u00e9",
		"123e4567-e89b-12d3-a456-4266141740000", "123e4567e89b-12d3-a456-426614174000-", "g23e4567-e89b-12d3-a456-426614174000",
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, f := range formatNames {
		url := "mem:///" + f.name + ".json"
		if err := c.AddResource(url, map[string]any{"format": f.name}); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range cands {
			if formatsOf(s)&f.bit != 0 && sch.Validate(s) != nil {
				t.Errorf("formatsOf(%q) says %s, jsonschema disagrees", s, f.name)
			}
		}
	}
	// Some of the candidates do fit, so the loop above is not vacuous.
	if formatsOf("a@b.c")&fEmail == 0 || formatsOf("HTTP://A")&fURI == 0 || formatsOf("2024-01-02T03:04:05+23:59")&fDateTime == 0 {
		t.Error("expected fits were refused")
	}
}

func TestSchemaEnum(t *testing.T) {
	rep := func(n int, vals ...string) []any {
		var out []any
		for i := 0; i < n; i++ {
			for _, v := range vals {
				out = append(out, v)
			}
		}
		return out
	}
	tests := []struct {
		name string
		vals []any
		want string // the enum as JSON, or "" for none
	}{
		{"repeated small set", rep(2, "active", "banned", "pending"), `["active","banned","pending"]`},
		{"each seen once, few samples", rep(1, "active", "banned", "pending"), ""},
		{"one seen once among few", append(rep(2, "active", "banned"), "pending"), ""},
		{"one seen once among many", append(rep(16, "active", "banned"), "pending"), `["active","banned","pending"]`},
		{"single value", rep(10, "active"), ""},
		{"too many distinct", rep(2, "a", "b", "c", "d", "e", "f", "g", "h", "i"), ""},
		{"exactly MaxEnum", rep(2, "a", "b", "c", "d", "e", "f", "g", "h"), `["a","b","c","d","e","f","g","h"]`},
		{"with null", append(rep(2, "on", "off"), nil), `["off","on",null]`},
		{"with a number", append(rep(2, "on", "off"), json.Number("1")), ""},
		{"numeric ids", rep(3, "10001", "10002"), ""},
		{"prefixed ids", rep(3, "u_1001", "u_1002"), ""},
		{"hex ids", rep(3, "a1b2c3d4", "ff00aa11"), ""},
		{"uuids", rep(3, "123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174001"), ""},
		{"dates", rep(3, "2024-01-01", "2024-01-02"), ""},
		{"long tokens", rep(3, "abcdefghijklmnopqrstuvwxyz", "zyxwvutsrqponmlkjihgfedcba"), ""},
		{"long value", rep(3, strings.Repeat("a ", 40), "b"), ""},
		{"short mixed words stay", rep(2, "v2", "sha256", "en-US"), `["en-US","sha256","v2"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := infer(t, SchemaOptions{}, tt.vals...)
			got := ""
			if e, ok := doc["enum"]; ok {
				got = js(e)
			}
			if got != tt.want {
				t.Errorf("enum = %s, want %q", got, tt.want)
			}
		})
	}
	t.Run("id-named property", func(t *testing.T) {
		var vals []any
		for i := 0; i < 10; i++ {
			vals = append(vals, map[string]any{"tenant_id": []string{"acme", "globex"}[i%2], "tenantId": "acme", "plan": []string{"free", "pro"}[i%2]})
		}
		doc := infer(t, SchemaOptions{}, vals...)
		props := doc["properties"].(map[string]any)
		for _, name := range []string{"tenant_id", "tenantId"} {
			if _, ok := props[name].(map[string]any)["enum"]; ok {
				t.Errorf("%s got an enum", name)
			}
		}
		if _, ok := props["plan"].(map[string]any)["enum"]; !ok {
			t.Errorf("plan has no enum: %s", js(props["plan"]))
		}
	})
	t.Run("MaxEnum option", func(t *testing.T) {
		doc := infer(t, SchemaOptions{MaxEnum: 2}, rep(3, "a", "b", "c")...)
		if _, ok := doc["enum"]; ok {
			t.Errorf("enum over MaxEnum: %s", js(doc))
		}
	})
}

func TestIdName(t *testing.T) {
	for k, want := range map[string]bool{
		"id": true, "ID": true, "user_id": true, "userId": true, "user-id": true, "session.token": true, "api_key": true,
		"uuid": true, "owner_email": true, "ids": true,
		"paid": false, "valid": false, "monkey": false, "status": false, "kind": false, "hid": false,
	} {
		if got := idName(k); got != want {
			t.Errorf("idName(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestSchemaMaxProperties(t *testing.T) {
	obj := map[string]any{}
	for i := range 50 {
		obj["f"+strconv.Itoa(i)] = i
	}
	vals := []any{obj, map[string]any{"zz": "x y", "f1": 1}}
	doc := infer(t, SchemaOptions{MaxProperties: 10}, vals...)
	props := doc["properties"].(map[string]any)
	if len(props) != 10 {
		t.Fatalf("%d properties, want 10", len(props))
	}
	// The first ten names in order, whatever the map's iteration order.
	want := []string{"f0", "f1", "f10", "f11", "f12", "f13", "f14", "f15", "f16", "f17"}
	if got := slices.Sorted(maps.Keys(props)); !slices.Equal(got, want) {
		t.Errorf("properties %v, want %v", got, want)
	}
	if _, ok := doc["additionalProperties"]; ok {
		t.Error("additionalProperties set")
	}
	if got := js(doc["required"]); got != `["f1"]` {
		t.Errorf("required = %s", got)
	}
	// Same result every time: the bound cuts in name order.
	for range 20 {
		if again := infer(t, SchemaOptions{MaxProperties: 10}, vals...); !reflect.DeepEqual(again, doc) {
			t.Fatalf("not deterministic:\n%s\n%s", js(again), js(doc))
		}
	}
}

func TestSchemaOddNames(t *testing.T) {
	long := strings.Repeat("n", maxNameLen+1)
	doc := infer(t, SchemaOptions{}, map[string]any{"\xff\xfe": 1, long: 2, "ok": 3})
	props := doc["properties"].(map[string]any)
	if len(props) != 1 || props["ok"] == nil {
		t.Errorf("properties = %s, want only ok", js(props))
	}
}

// nest returns v wrapped in n objects {"a": ...} or arrays.
func nest(v any, n int, array bool) any {
	for range n {
		if array {
			v = []any{v}
		} else {
			v = map[string]any{"a": v}
		}
	}
	return v
}

// schemaDepth is the nesting depth of a document, counted as the registry
// counts it.
func schemaDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, c := range v {
			d = max(d, 1+schemaDepth(c))
		}
	case []any:
		for _, c := range v {
			d = max(d, 1+schemaDepth(c))
		}
	}
	return d
}

// schemaValues counts the values of a document as the registry does.
func schemaValues(v any) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, c := range v {
			n += schemaValues(c)
		}
	case []any:
		for _, c := range v {
			n += schemaValues(c)
		}
	}
	return n
}

func TestSchemaMaxDepth(t *testing.T) {
	for _, array := range []bool{false, true} {
		deep := nest("x y", 400, array)
		doc := infer(t, SchemaOptions{}, deep, nest(1, 400, array))
		if d := schemaDepth(doc); d > 2*16+3 {
			t.Errorf("array=%v: schema depth %d", array, d)
		}
		// Even the largest MaxDepth stays under the registry's 100.
		doc = infer(t, SchemaOptions{MaxDepth: 1000}, deep)
		if d := schemaDepth(doc); d >= 100 {
			t.Errorf("array=%v: MaxDepth 1000 gives schema depth %d", array, d)
		}
	}
	// At the bound, the type is still described.
	doc := infer(t, SchemaOptions{MaxDepth: 1}, map[string]any{"a": map[string]any{"b": 1}})
	if got := js(without(doc)); got != `{"properties":{"a":{"type":"object"}},"required":["a"],"type":"object"}` {
		t.Errorf("schema = %s", got)
	}
}

func TestSchemaNodeBudget(t *testing.T) {
	// Many objects with distinct nested properties: the inferrer stops
	// creating nodes, the schema still validates and stays within the
	// registry's limits.
	var vals []any
	for i := range 300 {
		obj := map[string]any{}
		for j := range 20 {
			obj[fmt.Sprintf("p%d_%d", i, j)] = map[string]any{"x": []any{"a b", 1.5}, "y": nil}
		}
		vals = append(vals, map[string]any{"o": obj, "k": i})
	}
	s := NewSchemaInferrer(SchemaOptions{})
	for _, v := range vals {
		s.Add(v)
	}
	if s.nodes > maxNodes {
		t.Errorf("%d nodes", s.nodes)
	}
	doc := infer(t, SchemaOptions{}, vals...)
	if n := schemaValues(doc); n > maxSchemaValues {
		t.Errorf("%d values, over %d", n, maxSchemaValues)
	}
	if n := schemaValues(doc); n < maxSchemaValues/4 {
		t.Errorf("only %d values: the budget cut too early", n)
	}
}

func TestSchemaValueBudget(t *testing.T) {
	// Wide types everywhere and enums: the emitter's own count must match
	// the registry's, and stay under the bound.
	// 10 x 200 nodes of six types each: about 20,000 values unbounded.
	var vals []any
	for i := range 14 {
		obj := map[string]any{}
		for j := range 10 {
			inner := map[string]any{}
			for k := range 200 {
				inner[fmt.Sprintf("f%03d", k)] = []any{"on", "off", nil, json.Number("1"), true, []any{}, map[string]any{}}[i%7]
			}
			obj[fmt.Sprintf("o%d", j)] = inner
		}
		vals = append(vals, obj)
	}
	doc := infer(t, SchemaOptions{}, vals...)
	n := schemaValues(doc)
	if n > maxSchemaValues {
		t.Errorf("%d values, over %d", n, maxSchemaValues)
	}
	if n < maxSchemaValues*9/10 {
		t.Errorf("%d values: the budget cut far below %d", n, maxSchemaValues)
	}
	// Breadth first: every object keeps its properties, the cut falls on
	// the leaves, which become {}.
	props := doc["properties"].(map[string]any)
	if len(props) != 10 {
		t.Fatalf("%d properties at the root", len(props))
	}
	empty := 0
	for _, o := range props {
		for _, leaf := range o.(map[string]any)["properties"].(map[string]any) {
			if len(leaf.(map[string]any)) == 0 {
				empty++
			}
		}
	}
	if empty == 0 {
		t.Error("no leaf was cut: the test does not reach the budget")
	}
}

func TestSchemaHostileValues(t *testing.T) {
	// A cyclic value: bounded by depth and visits; the schema accepts it.
	cyc := map[string]any{}
	arr := []any{cyc, cyc, cyc, cyc, cyc, cyc, cyc, cyc}
	cyc["a"], cyc["b"] = arr, cyc
	s := NewSchemaInferrer(SchemaOptions{})
	s.Add(cyc)
	if doc := s.Schema(); len(doc) != 1 {
		t.Errorf("cyclic value: schema %v, want only $schema", doc)
	}
	// Values outside the model leave their place open.
	doc := infer(t, SchemaOptions{}, map[string]any{"a": math.NaN(), "b": json.Number("1")})
	if got := js(doc["properties"]); got != `{"a":{},"b":{"type":"integer"}}` {
		t.Errorf("properties = %s", got)
	}
	s = NewSchemaInferrer(SchemaOptions{})
	s.Add(map[string]any{"a": json.Number("1"), "b": int8(2), "c": json.Number("0x1"), "d": math.Inf(1), "e": []byte("x")})
	if got := js(s.Schema()["properties"]); got != `{"a":{"type":"integer"},"b":{},"c":{},"d":{},"e":{}}` {
		t.Errorf("properties = %s", got)
	}
}

func TestNumberKind(t *testing.T) {
	for s, want := range map[string]uint8{
		"0": kInteger, "-0": kInteger, "123": kInteger, "1.0": kNumber, "1e5": kNumber, "-1.5E-3": kNumber,
		"": 0, "-": 0, "01": 0, "1.": 0, ".5": 0, "1e": 0, "+1": 0, "0x1": 0, "1 ": 0, "NaN": 0,
	} {
		if got := numberKind(s); got != want {
			t.Errorf("numberKind(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestSchemaDeterministic(t *testing.T) {
	docs := []string{
		`{"a":1,"b":{"c":["x y",2],"d":"2024-01-01"},"e":"on"}`,
		`{"a":2.5,"b":{"c":[],"d":"2024-01-02"},"e":"off","f":null}`,
		`{"a":3,"b":{"d":"2024-01-03"},"e":"on"}`,
		`{"a":3,"b":{"d":"2024-01-03"},"e":"off"}`,
	}
	first := infer(t, SchemaOptions{}, decodeAll(t, docs...)...)
	for range 20 {
		if again := infer(t, SchemaOptions{}, decodeAll(t, docs...)...); !reflect.DeepEqual(again, first) {
			t.Fatalf("not deterministic:\n%s\n%s", js(again), js(first))
		}
	}
	want := `{"properties":{"a":{"type":"number"},"b":{"properties":{"c":{"items":{"type":["integer","string"]},"type":"array"},"d":{"format":"date","type":"string"}},"required":["d"],"type":"object"},"e":{"enum":["off","on"],"type":"string"},"f":{"type":"null"}},"required":["a","b","e"],"type":"object"}`
	if got := js(without(first)); got != want {
		t.Errorf("schema = %s\nwant     %s", got, want)
	}
}

// family loads a one-family registry whose schema is doc, as keyreg init
// would write it (a file next to keys.yaml).
func family(t testing.TB, typ, enc string, doc map[string]any) *registry.Family {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"keys.yaml": {Data: []byte("version: 1\nfamilies:\n  - {name: a, pattern: \"a:{x}\", type: " + typ + ", encoding: " + enc + ", schema: s.json}\n")},
		"s.json":    {Data: b},
	}
	reg, err := registry.Load(fsys, "keys.yaml")
	if err != nil {
		t.Fatalf("registry refuses the inferred schema: %v\n%s", err, b)
	}
	return reg.Families[0]
}

// TestSchemaThroughTheAudit infers schemas of each Redis type the way
// keyreg init feeds them and runs payload.Check, the audit's own path, on
// the same samples: no violations.
func TestSchemaThroughTheAudit(t *testing.T) {
	mp := func(v any) []byte {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Run("json strings", func(t *testing.T) {
		samples := []payload.Sample{
			{String: []byte(`{"user":"123e4567-e89b-12d3-a456-426614174000","exp":"2024-01-02T03:04:05Z","n":1}`)},
			{String: []byte(`{"user":"123e4567-e89b-12d3-a456-426614174001","exp":"2024-01-03T03:04:05Z","n":2.5,"x":[1]}`)},
		}
		s := NewSchemaInferrer(SchemaOptions{})
		for _, sm := range samples {
			v, err := payload.Decode(payload.JSON, sm.String)
			if err != nil {
				t.Fatal(err)
			}
			s.Add(v)
		}
		checkAll(t, family(t, "string", "json", s.Schema()), samples)
	})
	t.Run("msgpack hash", func(t *testing.T) {
		samples := []payload.Sample{
			{Fields: map[string][]byte{"name": mp("Ann"), "tags": mp([]any{"a", "b"}), "score": mp(1.5)}},
			{Fields: map[string][]byte{"name": mp("Bob"), "tags": mp([]any{}), "score": mp(2), "extra": mp(map[string]any{"k": true})}},
		}
		s := NewSchemaInferrer(SchemaOptions{})
		for _, sm := range samples {
			obj := map[string]any{}
			for k, b := range sm.Fields {
				v, err := payload.Decode(payload.Msgpack, b)
				if err != nil {
					t.Fatal(err)
				}
				obj[k] = v
			}
			s.Add(obj)
		}
		doc := s.Schema()
		if doc["type"] != "object" {
			t.Errorf("hash schema type = %v", doc["type"])
		}
		checkAll(t, family(t, "hash", "msgpack", doc), samples)
	})
	t.Run("set members", func(t *testing.T) {
		samples := []payload.Sample{{Members: [][]byte{[]byte("1"), []byte("22"), []byte("-3")}}, {Members: [][]byte{[]byte("4")}}}
		s := NewSchemaInferrer(SchemaOptions{})
		for _, sm := range samples {
			for _, m := range sm.Members {
				v, err := payload.Decode(payload.Int, m)
				if err != nil {
					t.Fatal(err)
				}
				s.Add(v)
			}
		}
		doc := s.Schema()
		if doc["type"] != "integer" {
			t.Errorf("member schema type = %v", doc["type"])
		}
		checkAll(t, family(t, "set", "int", doc), samples)
	})
	t.Run("stream entries", func(t *testing.T) {
		samples := []payload.Sample{{Entries: []map[string][]byte{
			{"event": []byte(`"login"`), "at": []byte(`"2024-01-02T03:04:05Z"`)},
			{"event": []byte(`"logout"`), "at": []byte(`"2024-01-02T04:04:05Z"`), "why": []byte(`{"code":7}`)},
		}}}
		s := NewSchemaInferrer(SchemaOptions{})
		for _, sm := range samples {
			for _, e := range sm.Entries {
				obj := map[string]any{}
				for k, b := range e {
					v, err := payload.Decode(payload.JSON, b)
					if err != nil {
						t.Fatal(err)
					}
					obj[k] = v
				}
				s.Add(obj)
			}
		}
		checkAll(t, family(t, "stream", "json", s.Schema()), samples)
	})
}

func checkAll(t *testing.T, f *registry.Family, samples []payload.Sample) {
	t.Helper()
	for i, sm := range samples {
		r := payload.Check(f, sm, payload.Options{})
		if r.DecodeErrors > 0 || len(r.Violations) > 0 || r.Checked == 0 {
			t.Errorf("sample %d: checked %d, decode errors %d (%s), violations %v", i, r.Checked, r.DecodeErrors, r.DecodeError, r.Violations)
		}
	}
}

// FuzzSchema splits the input into several JSON documents (on NUL bytes),
// decodes each as the audit does (JSON, and also as msgpack), feeds them
// to one inferrer, and checks the schema validates every one of them and
// stays within the registry's limits.
func FuzzSchema(f *testing.F) {
	for _, s := range []string{
		`{"a":1}` + "\x00" + `{"a":"x","b":[1,2.5]}`,
		`"2024-01-01"` + "\x00" + `"2024-02-30"`,
		`["on","off"]` + "\x00" + `["on"]` + "\x00" + `["off"]`,
		`[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]`,
		`{"id":"123e4567-e89b-12d3-a456-426614174000","at":"2024-01-02T03:04:05Z","m":"a@b.co","u":"https://x.y/"}`,
		"\x82\xa1a\x01\xa1b\x92\xc3\xc0" + "\x00" + "\x81\xa1a\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00",
		`null` + "\x00" + `1e400` + "\x00" + `-0.0`,
		`{"a":{"a":{"a":{}}}}` + "\x00" + `{"a":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		var vals []any
		for doc := range strings.SplitSeq(string(b), "\x00") {
			for _, enc := range []string{payload.JSON, payload.Msgpack} {
				if v, err := payload.Decode(enc, []byte(doc)); err == nil {
					vals = append(vals, v)
				}
			}
		}
		for _, o := range []SchemaOptions{{}, {MaxEnum: 1, MaxDepth: 2, MaxProperties: 2}} {
			doc := infer(t, o, vals...)
			if n := schemaValues(doc); n > maxSchemaValues {
				t.Fatalf("%d values", n)
			}
			if d := schemaDepth(doc); d >= 100 {
				t.Fatalf("depth %d", d)
			}
		}
	})
}

func BenchmarkSchemaAdd(b *testing.B) {
	docs := []string{
		`{"user":"123e4567-e89b-12d3-a456-426614174000","exp":"2024-01-02T03:04:05Z","state":"active","n":12,"roles":["admin","dev"],"profile":{"name":"Ann Lee","email":"ann@example.com","age":31}}`,
		`{"user":"223e4567-e89b-12d3-a456-426614174000","exp":"2024-01-03T03:04:05Z","state":"banned","n":3,"roles":[],"profile":{"name":"Bob","email":"bob@example.com","age":null}}`,
	}
	vals := decodeAll(b, docs...)
	s := NewSchemaInferrer(SchemaOptions{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Add(vals[i%2])
	}
}

func BenchmarkSchemaEmit(b *testing.B) {
	vals := decodeAll(b, `{"user":"123e4567-e89b-12d3-a456-426614174000","exp":"2024-01-02T03:04:05Z","state":"active","n":12,"roles":["admin","dev"],"profile":{"name":"Ann Lee","email":"ann@example.com","age":31}}`)
	s := NewSchemaInferrer(SchemaOptions{})
	s.Add(vals[0])
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Schema()
	}
}

// BenchmarkSchemaState reports, as B/op, the memory a fresh inferrer
// holds after one value of each shape (Add allocates nothing but state).
func BenchmarkSchemaState(b *testing.B) {
	wide := map[string]any{}
	for i := range 500 {
		wide[fmt.Sprintf("field_%03d", i)] = "v"
	}
	worst := map[string]any{}
	for i := range 20 {
		obj := map[string]any{}
		for j := range 200 {
			obj[fmt.Sprintf("%0200d", j)] = map[string]any{"x": "enum value"}
		}
		worst[fmt.Sprint(i)] = obj
	}
	shapes := map[string]any{
		"session":     decodeAll(b, `{"user":"123e4567-e89b-12d3-a456-426614174000","exp":"2024-01-02T03:04:05Z","state":"active","n":12,"roles":["admin","dev"],"profile":{"name":"Ann Lee","email":"ann@example.com","age":31}}`)[0],
		"wide-hash":   wide,
		"node-budget": worst,
	}
	for _, name := range slices.Sorted(maps.Keys(shapes)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := NewSchemaInferrer(SchemaOptions{})
				s.Add(shapes[name])
			}
		})
	}
}
