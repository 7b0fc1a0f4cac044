package typescript

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/codegen/vectors"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
)

// diffCase is one JSON Schema and the values (JSON texts) the generated
// check and payload.Check must judge alike.
type diffCase struct {
	name   string
	schema string
	values []string
}

// kinds are values of every JSON kind, with the numbers whose kind
// depends on the reader (1.0, -0, a number past 2^53).
var kinds = []string{`"s"`, `""`, `0`, `1`, `1.0`, `-0`, `1.5`, `-7`, `1e3`, `1e-7`, `9007199254740993`, `1e308`,
	`true`, `false`, `null`, `[]`, `[1]`, `{}`, `{"a":1}`}

// patternStrings are the subjects of every pattern: ASCII, case, Unicode
// letters and digits, each kind of white space and line terminator.
var patternStrings = []string{"", "abc", "ABC", "aBc", "123", "١٢٣", " ", "\t", "\v", "\f", "\u00a0", "\u2028", "\u3000",
	"\n", "a\nb", "b\n", "\r", "é", "e\u0301", "😀", "foo bar", "foo_bar", "foo-bar", "αβγ", "aa", "aaaa", "abcd", "ab", "x",
	"K", "\u212a", "ſ", "a.b", "axb", "A"}

// diffPatterns are RE2 patterns keyreg accepts, chosen where Go's and
// JavaScript's regular expressions differ: \s, ., $, flags, \z, POSIX and
// Unicode classes, \b, astral characters, case folding (K and the Kelvin
// sign, s and the long s). Go refuses what JavaScript alone has
// (backreferences, lookarounds), so such a schema never reaches codegen.
var diffPatterns = []string{`^[a-z]+$`, `^\d+$`, `\s`, `^\S+$`, `^.$`, `^.+$`, `(?s)^.+$`, `(?i)^abc$`, `(?i:a)bc`, `\Aab\z`,
	`^\w+$`, `\bfoo\b`, `^[[:alpha:]]+$`, `^[[:^digit:]]+$`, `^\pL+$`, `^\p{Greek}+$`, `^\PL+$`, `a{2,3}`, `^(?:ab|cd)*$`,
	`(?m)^b$`, `^[^a]$`, `[\x{1F600}]`, `é`, `x*`, `^$`, `^a$|^b\n$`, `(?U)a+`, `[\d\s]`, `^\x41`, `\Qa.b\E`, `^[\-a]$`,
	`(?i)^k$`, `(?i)^s$`, `(?i)^[a-z]$`, `^[^\n]$`, `a.b`, `^\W$`}

func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// keywordCases generates, per keyword, schemas with values on both sides
// of each bound.
func keywordCases() []diffCase {
	var cs []diffCase
	add := func(name, schema string, values ...string) {
		cs = append(cs, diffCase{name, schema, values})
	}
	for _, t := range []string{`"string"`, `"number"`, `"integer"`, `"boolean"`, `"null"`, `"array"`, `"object"`, `["integer","null"]`, `["number","string"]`} {
		add("type "+t, `{"type":`+t+`}`, kinds...)
	}
	enums := []string{`["a","b"]`, `[1,"1",null,true]`, `[{"a":1,"b":[1,2]}]`, `[[1,2]]`, `[1.5,0]`, `[{}]`}
	near := append(slices.Clone(kinds), `"a"`, `"A"`, `{"b":[1,2],"a":1}`, `{"a":1,"b":[2,1]}`, `{"a":1.0,"b":[1,2.0]}`, `[2,1]`, `[1,2]`, `1.50`, `-0.0`)
	for _, e := range enums {
		add("enum "+e, `{"enum":`+e+`}`, near...)
		var items []json.RawMessage
		_ = json.Unmarshal([]byte(e), &items)
		add("const "+string(items[0]), `{"const":`+string(items[0])+`}`, near...)
	}
	for _, b := range []string{"0", "1", "-3", "2.5", "1e-9", "9007199254740992"} {
		f, _ := strconv.ParseFloat(b, 64)
		vals := []string{b, `"x"`, `null`}
		for _, d := range []float64{-1, -0.5, 0.5, 1} {
			vals = append(vals, strconv.FormatFloat(f+d, 'g', -1, 64))
		}
		for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
			add(k+" "+b, `{"`+k+`":`+b+`}`, vals...)
		}
	}
	for _, m := range []string{"2", "0.1", "0.01", "3.3", "1e-3", "0.5", "7", "1e-320", "1.7976931348623157e308"} {
		add("multipleOf "+m, `{"multipleOf":`+m+`}`, `0`, `0.3`, `0.7`, `1`, `0.35`, `1e-3`, `4`, `6`, `6.6`, `9.9`, `7`, `-14`, `1e300`,
			`2.0`, `0.05`, `1.1`, `"4"`, `5e-324`, `1e-320`, `1.7976931348623157e308`, `123456789012345680000`)
	}
	strs := []string{`""`, `"a"`, `"ab"`, `"abc"`, `"abcd"`, `"é"`, `"éé"`, `"😀"`, `"😀😀"`, `"e\u0301"`, `"\u0000"`, `"\ud83d\ude00"`, `12`, `null`}
	for _, n := range []string{"0", "1", "2", "3"} {
		add("minLength "+n, `{"minLength":`+n+`}`, strs...)
		add("maxLength "+n, `{"maxLength":`+n+`}`, strs...)
	}
	subjects := []string{`1`, `null`}
	for _, s := range patternStrings {
		subjects = append(subjects, jsonText(s))
	}
	for _, p := range diffPatterns {
		add("pattern "+p, `{"pattern":`+jsonText(p)+`}`, subjects...)
	}
	objs := []string{`{}`, `{"a":1}`, `{"a":1,"b":2}`, `{"b":"x"}`, `{"a":"x","b":2}`, `{"a":1,"c":null}`, `{"a/b":1}`, `{"c~d":1}`, `{"__proto__":1}`, `[]`, `"a"`, `null`}
	add("required", `{"required":["a","b"]}`, objs...)
	add("required escaped", `{"required":["a/b","c~d"]}`, objs...)
	add("properties", `{"properties":{"a":{"type":"integer"},"b":{"type":"string"},"a/b":{"maximum":0},"c~d":false}}`, objs...)
	add("additionalProperties false", `{"properties":{"a":{"type":"integer"}},"additionalProperties":false}`, objs...)
	add("additionalProperties schema", `{"properties":{"a":{}},"additionalProperties":{"type":"string"}}`, objs...)
	add("properties false", `{"properties":{"no":false,"yes":true}}`, `{"yes":1}`, `{"no":1}`, `{}`, `1`)
	add("propertyNames", `{"propertyNames":{"maxLength":1}}`, objs...)
	add("min/maxProperties", `{"minProperties":1,"maxProperties":1}`, objs...)
	add("patternProperties", `{"patternProperties":{"^a":{"type":"integer"},"\\d$":{"type":"string"}},"additionalProperties":false}`, `{"a":1}`, `{"a":"x"}`, `{"a1":"x"}`, `{"b1":"x"}`, `{"b":1}`, `{}`)
	add("dependentRequired", `{"dependentRequired":{"a":["b"]}}`, objs...)
	add("dependentSchemas", `{"dependentSchemas":{"a":{"required":["b"]}}}`, objs...)
	arrs := []string{`[]`, `[1]`, `[1,2]`, `[1,2,3]`, `[1,2,3,4]`, `[1,1]`, `[1,1.0]`, `[0,false]`, `[null,null]`, `["1",1]`, `[[1],[1]]`,
		`[{"a":1,"b":2},{"b":2,"a":1}]`, `[{"a":1},{"a":2}]`, `[1,"a"]`, `["a"]`, `{}`, `"x"`}
	add("items", `{"items":{"type":"integer"}}`, arrs...)
	add("items false", `{"items":false}`, arrs...)
	add("minItems maxItems", `{"minItems":1,"maxItems":2}`, arrs...)
	add("uniqueItems", `{"uniqueItems":true}`, arrs...)
	add("uniqueItems false", `{"uniqueItems":false}`, arrs...)
	add("prefixItems", `{"prefixItems":[{"type":"integer"},{"type":"string"}],"items":false}`, arrs...)
	add("contains", `{"contains":{"type":"string"}}`, arrs...)
	add("min/maxContains", `{"contains":{"type":"integer"},"minContains":2,"maxContains":3}`, arrs...)
	d7 := `"$schema":"http://json-schema.org/draft-07/schema#",`
	add("draft-07 items", `{`+d7+`"items":[{"type":"integer"},{"type":"string"}],"additionalItems":false}`, arrs...)
	add("draft-07 additionalItems", `{`+d7+`"items":[{"type":"integer"}],"additionalItems":{"type":"string"}}`, arrs...)
	add("draft-07 dependencies", `{`+d7+`"dependencies":{"a":["b"],"c":{"required":["a"]}}}`, objs...)
	add("2020-12 dependencies", `{"dependencies":{"a":["b"],"c":{"required":["a"]}}}`, objs...)
	add("unevaluatedProperties", `{"properties":{"a":{}},"unevaluatedProperties":false}`, `{"a":1}`, `{"b":1}`)
	add("allOf", `{"allOf":[{"type":"integer"},{"minimum":5}],"not":{"const":7}}`, `5`, `4`, `7`, `8`, `"5"`)
	add("anyOf", `{"anyOf":[{"type":"string"},{"type":"integer","minimum":0}]}`, `"s"`, `0`, `-1`, `true`)
	add("oneOf", `{"oneOf":[{"type":"integer"},{"minimum":2}]}`, `1`, `3`, `2.5`, `"x"`)
	add("if then else", `{"if":{"properties":{"s":{"const":"done"}},"required":["s"]},"then":{"required":["r"]},"else":{"not":{"required":["r"]}}}`,
		`{"s":"done","r":1}`, `{"s":"done"}`, `{"s":"new"}`, `{"s":"new","r":1}`, `{}`, `{"r":1}`, `1`)
	add("$ref defs", `{"$defs":{"node":{"type":"object","required":["v"],"properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/node"}}}},"$ref":"#/$defs/node"}`,
		`{"v":1}`, `{"v":1,"next":{"v":2,"next":{"v":3}}}`, `{"v":1,"next":{"v":"x"}}`, `{"v":1,"next":{}}`, `{}`)
	add("$ref sibling", `{"$defs":{"pos":{"minimum":0}},"$ref":"#/$defs/pos","maximum":10}`, `0`, `-1`, `10`, `11`, `"x"`)
	add("$ref to properties", `{"properties":{"a":{"type":"string"},"b":{"$ref":"#/properties/a"}}}`, `{"a":"x","b":"y"}`, `{"b":1}`, `{"a":1}`)
	add("$ref escaped", `{"$defs":{"a/b":{"type":"integer"},"c~d":{"type":"string"},"e%f":{"type":"null"}},"properties":{"x":{"$ref":"#/$defs/a~1b"},"y":{"$ref":"#/$defs/c~0d"},"z":{"$ref":"#/$defs/e%25f"}}}`,
		`{"x":1,"y":"s","z":null}`, `{"x":"1"}`, `{"y":1}`, `{"z":1}`)
	add("$ref root", `{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}},"additionalProperties":false}`,
		`{}`, `{"kids":[{}]}`, `{"kids":[{"kids":[{"x":1}]}]}`, `{"kids":[1]}`)
	add("format", `{"properties":{"e":{"format":"email"},"t":{"format":"date-time"},"u":{"format":"uuid"}}}`, `{"e":"x","t":"y","u":"z"}`, `{"e":"a@b.c"}`)
	add("allOf true", `{"allOf":[true]}`, kinds...)
	add("allOf false", `{"allOf":[false]}`, kinds...)
	nest := func(n int, inner string) string { return strings.Repeat("[", n) + inner + strings.Repeat("]", n) }
	add("deep", `{"type":"array","items":{"$ref":"#"}}`, `[]`, `[[]]`, nest(200, ""), nest(200, "1"), nest(500, ""), nest(500, "1"), nest(511, ""), nest(512, ""), nest(513, ""), nest(600, ""), nest(1100, ""))
	add("deep anyOf", `{"type":"array","items":{"anyOf":[{"type":"string"},{"allOf":[{"$ref":"#"}]}]}}`, nest(250, ""), nest(512, ""), nest(512, "1"))
	add("deep unchecked", `{"type":"array"}`, nest(512, ""), nest(513, ""))
	add("precision", `{"properties":{"m":{"multipleOf":2},"x":{"maximum":9007199254740992},"c":{"const":0.1}}}`,
		`{"m":9007199254740993}`, `{"x":9007199254740993}`, `{"c":0.1000000000000000055511151231257827}`, `{"m":1e400}`, `{"x":1e400}`)
	add("surrogates", `{"properties":{"p":{"pattern":"^\\x{FFFD}$"},"n":{"maxLength":1},"d":{"pattern":"^.$"}}}`,
		`{"p":"\ud83d"}`, `{"n":"\ud83d\ud83d"}`, `{"d":"\udc00"}`)
	add("duplicate keys", `{"properties":{"a":{"type":"string"}}}`, `{"a":1,"a":"x"}`, `{"a":"x","a":1}`)
	add("nested pointers", `{"properties":{"a":{"items":{"properties":{"b":{"enum":[1]}}}}}}`, `{"a":[{"b":1},{"b":2}]}`, `{"a":[{"b":1}]}`, `{"a":[{},{"b":"1"}]}`)
	return cs
}

// vectorCases are the payload schemas of the codegen vectors' registries,
// each with values generated from it: a valid instance, then one change
// at a time (a property removed, added, or given each wrong value).
func vectorCases(t *testing.T) []diffCase {
	var cs []diffCase
	for _, f := range vectors.Files() {
		reg, err := registry.Load(os.DirFS(filepath.Join("..", "..", filepath.Dir(f.Registry))), filepath.Base(f.Registry))
		if err != nil {
			t.Fatal(err)
		}
		for _, fam := range reg.Families {
			if fam.Schema == nil {
				continue
			}
			b, err := json.Marshal(fam.Schema.Doc)
			if err != nil {
				t.Fatal(err)
			}
			g := instanceGen{root: fam.Schema.Doc}
			valid := g.sample(fam.Schema.Doc, 0)
			seen := map[string]bool{}
			var values []string
			for _, v := range append([]any{valid}, g.mutations(fam.Schema.Doc, valid, 0)...) {
				s, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				if !seen[string(s)] {
					seen[string(s)] = true
					values = append(values, string(s))
				}
			}
			cs = append(cs, diffCase{f.Registry + " " + fam.Name, string(b), values})
		}
	}
	return cs
}

// instanceGen derives values from a schema.
type instanceGen struct{ root any }

// stringGuesses are tried, in order, against a string's pattern.
var stringGuesses = []string{"abc", "1", "42", "0123abcd-0123-4abc-8def-0123456789ab", "en-GB", "2024-01-01T00:00:00Z", "user@example.com", "9f86d0", "a", "x1",
	"01ARZ3NDEKTSV4RRFFQ69G5FAV"}

// wrongValues replace a value, one at a time.
var wrongValues = []any{nil, "x", "", 1.5, -1.0, 0.0, 1e9, true, []any{}, map[string]any{}, strings.Repeat("z", 300)}

func (g instanceGen) resolve(s any) map[string]any {
	m, _ := s.(map[string]any)
	for i := 0; m != nil && i < 8; i++ {
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			break
		}
		var target any = g.root
		for _, part := range strings.Split(ref[1:], "/")[1:] {
			tm, _ := target.(map[string]any)
			target = tm[strings.NewReplacer("~1", "/", "~0", "~").Replace(part)]
		}
		m, _ = target.(map[string]any)
	}
	return m
}

func (g instanceGen) sample(s any, depth int) any {
	m := g.resolve(s)
	if m == nil || depth > 8 {
		return nil
	}
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	t, _ := m["type"].(string)
	if ts, ok := m["type"].([]any); ok && len(ts) > 0 {
		t, _ = ts[0].(string)
	}
	num := func(def float64) float64 {
		if x, ok := m["minimum"].(float64); ok {
			return x
		}
		if x, ok := m["exclusiveMinimum"].(float64); ok {
			return x + 1
		}
		return def
	}
	switch t {
	case "object":
		o := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		for k, p := range props {
			o[k] = g.sample(p, depth+1)
		}
		if ap, ok := m["additionalProperties"].(map[string]any); ok && len(props) == 0 {
			o["k1"] = g.sample(ap, depth+1)
		}
		return o
	case "array":
		return []any{g.sample(m["items"], depth+1)}
	case "string":
		if p, ok := m["pattern"].(string); ok {
			if re, err := regexp.Compile(p); err == nil {
				for _, s := range stringGuesses {
					if re.MatchString(s) {
						return s
					}
				}
			}
		}
		return "abc"
	case "integer":
		return num(1)
	case "number":
		return num(1.5)
	case "boolean":
		return true
	}
	return nil
}

// mutations are v with one change each, also inside its properties and
// first item (to depth 2).
func (g instanceGen) mutations(s, v any, depth int) []any {
	m := g.resolve(s)
	out := slices.Clone(wrongValues)
	if depth > 2 || m == nil {
		return out
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		with := func(k string, nv any) map[string]any {
			c := map[string]any{}
			for kk, vv := range x {
				c[kk] = vv
			}
			c[k] = nv
			return c
		}
		for _, k := range keys {
			c := with(k, nil)
			delete(c, k)
			out = append(out, c)
			ps, _ := m["properties"].(map[string]any)
			sub, ok := ps[k]
			if !ok {
				sub = m["additionalProperties"]
			}
			for _, nv := range g.mutations(sub, x[k], depth+1) {
				out = append(out, with(k, nv))
			}
		}
		out = append(out, with("zz_extra", 1.0))
	case []any:
		out = append(out, []any{}, append(slices.Clone(x), x...))
		if len(x) > 0 {
			for _, nv := range g.mutations(m["items"], x[0], depth+1) {
				out = append(out, []any{nv})
			}
		}
	}
	return out
}

// knownDiffs are the values the two checks judge differently, by case
// name and value, with the reason (docs/codegen.md lists them): each must
// still differ, so that the list stays true.
var knownDiffs = map[[2]string]string{
	{"deep anyOf", strings.Repeat("[", 512) + strings.Repeat("]", 512)}:     "the check follows at most 1100 nested subschemas (4 a level here): refused, never unchecked",
	{"unevaluatedProperties", `{"b":1}`}:                                    "unevaluatedProperties is left to keyreg audit",
	{"deep unchecked", strings.Repeat("[", 513) + strings.Repeat("]", 513)}: "Go's decoder refuses JSON nested deeper than 512 whatever the schema; the check follows only the levels its schema describes",
	{"precision", `{"m":9007199254740993}`}:                                 "JSON.parse rounds to the double 9007199254740992",
	{"precision", `{"x":9007199254740993}`}:                                 "JSON.parse rounds to the double 9007199254740992",
	{"precision", `{"c":0.1000000000000000055511151231257827}`}:             "JSON.parse rounds to the double 0.1",
	{"precision", `{"m":1e400}`}:                                            "JSON.parse gives Infinity, which the check refuses",
	{"surrogates", `{"p":"\ud83d"}`}:                                        "Go decodes a lone surrogate as U+FFFD; JavaScript keeps it",
}

// TestSchemaCheckDiff runs the generated checkX and payload.Check (the
// audit's validator) on the same values: a corpus generated per keyword
// and values generated from every payload schema of the codegen vectors.
// Both must accept or refuse each value, and the JSON pointer of the
// TypeScript SchemaError must be one of the pointers of Go's violations;
// knownDiffs are the exceptions.
func TestSchemaCheckDiff(t *testing.T) {
	cases := append(keywordCases(), vectorCases(t)...)
	var y strings.Builder
	y.WriteString("version: 1\nfamilies:\n")
	for i, c := range cases {
		fmt.Fprintf(&y, "  - name: f%d\n    pattern: \"v1:f%d:{id}\"\n    type: string\n    encoding: json\n    ttl: 1h\n    schema: %s\n", i, i, c.schema)
	}
	reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte(y.String()))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	req, err := codegen.NewRequest(reg, codegen.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generator{Client: ClientRedis}.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	v, err := newView(req)
	if err != nil {
		t.Fatal(err)
	}
	type jsCase struct {
		Check  string   `json:"check"`
		Values []string `json:"values"`
	}
	idents := map[string]string{}
	for _, f := range v.all {
		idents[f.Name] = f.Ident
	}
	var js []jsCase
	for i, c := range cases {
		js = append(js, jsCase{"check" + idents[fmt.Sprintf("f%d", i)], c.values})
	}
	tc := needToolchain(t)
	p := tc.project(t)
	write(t, filepath.Join(p.dir, "diff.ts"), string(files[0].Data))
	p.compile()
	write(t, filepath.Join(p.dir, "cases.json"), marshal(t, js))
	script, err := filepath.Abs(filepath.Join("testdata", "schemadiff.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	var got [][]*string
	out := p.node(nil, script, filepath.Join(p.dir, "out", "diff.js"), filepath.Join(p.dir, "cases.json"))
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != len(cases) {
		t.Fatalf("%v: %d results for %d cases", err, len(got), len(cases))
	}
	short := func(s string) string {
		if len(s) > 300 {
			return s[:300] + "…"
		}
		return s
	}
	values, refused, known := 0, 0, 0
	for i, c := range cases {
		fam := reg.Families[i]
		for j, val := range c.values {
			values++
			res := payload.Check(fam, payload.Sample{String: []byte(val)}, payload.Options{MaxViolations: -1})
			var ptrs []string
			if res.DecodeErrors != 0 {
				// Refused before any keyword (JSON nested too deeply):
				// any pointer of the check will do.
				ptrs = append(ptrs, "(not decoded)")
				if got[i][j] != nil {
					ptrs = append(ptrs, *got[i][j])
				}
			}
			for _, vi := range res.Violations {
				ptrs = append(ptrs, "#"+vi.Pointer)
			}
			if len(ptrs) > 0 {
				refused++
			}
			ts := got[i][j]
			if reason, ok := knownDiffs[[2]string{c.name, val}]; ok {
				if (ts == nil) == (len(ptrs) == 0) {
					t.Errorf("%s: value %s: known to differ (%s), but both say %v", c.name, short(val), reason, ts == nil)
				}
				known++
				continue
			}
			switch {
			case ts == nil && len(ptrs) > 0:
				t.Errorf("%s: schema %s, value %s: TypeScript accepts, Go refuses %s", c.name, short(c.schema), short(val), short(fmt.Sprint(res.Violations)))
			case ts != nil && len(ptrs) == 0:
				t.Errorf("%s: schema %s, value %s: TypeScript refuses at %s, Go accepts", c.name, short(c.schema), short(val), short(*ts))
			case ts != nil && !slices.Contains(ptrs, *ts):
				t.Errorf("%s: schema %s, value %s: TypeScript refuses at %s, Go at %s", c.name, short(c.schema), short(val), short(*ts), short(fmt.Sprint(res.Violations)))
			}
		}
	}
	if known != len(knownDiffs) {
		t.Errorf("%d of the %d known differences are in the corpus", known, len(knownDiffs))
	}
	t.Logf("%d schemas, %d values, %d refused by Go, %d known differences", len(cases), values, refused, known)
}

// hashCases are hash schemas, whose writes (hSetX) check each field
// against the hash's schema: $refs resolved in the whole schema,
// patternProperties, propertyNames, additionalProperties; then the hash
// schemas of the codegen vectors with generated objects. (required and
// the property counts apply to the whole hash, which a write of some
// fields cannot know, so they are not here.)
func hashCases(t *testing.T) []diffCase {
	objs := []string{`{"a":1}`, `{"a":"x"}`, `{"n_1":"x"}`, `{"n_1":1}`, `{"b":1}`, `{"12":1}`, `{"12":"x"}`, `{"a/b":{"qty":1}}`,
		`{"1":{"qty":1}}`, `{"1":{"qty":0}}`, `{"1":{}}`, `{"1":{"qty":1},"2":{"qty":"x"}}`, `{"a":1,"n_":2}`}
	cs := []diffCase{
		{"hash $ref", `{"type":"object","additionalProperties":{"$ref":"#/$defs/item"},"$defs":{"item":{"type":"object","required":["qty"],"properties":{"qty":{"type":"integer","minimum":1}}}}}`, objs},
		{"hash patternProperties", `{"type":"object","properties":{"a":{"type":"integer"}},"patternProperties":{"^n_":{"type":"string"}},"additionalProperties":false}`, objs},
		{"hash propertyNames", `{"type":"object","propertyNames":{"pattern":"^[0-9]+$"},"additionalProperties":{"type":"integer"}}`, objs},
		{"hash both", `{"type":"object","properties":{"n_1":{"maxLength":0}},"patternProperties":{"^n_":{"type":"string"}}}`, objs},
	}
	for _, c := range vectorCases(t) {
		if c.name != "keys.yaml cart-items" && c.name != "keys.yaml feature-flags" {
			continue
		}
		var keep []string
		for _, v := range c.values {
			if strings.HasPrefix(v, "{") && v != "{}" {
				keep = append(keep, v)
			}
		}
		cs = append(cs, diffCase{c.name, c.schema, keep})
	}
	if len(cs) != 6 {
		t.Fatalf("%d hash cases, want the vectors' cart-items and feature-flags too", len(cs))
	}
	return cs
}

// TestSchemaCheckDiffHash is TestSchemaCheckDiff for hash writes: hSetX of
// each object (to a client that records what it is sent) against
// payload.Check of the hash with those fields.
func TestSchemaCheckDiffHash(t *testing.T) {
	cases := hashCases(t)
	var y strings.Builder
	y.WriteString("version: 1\nfamilies:\n")
	for i, c := range cases {
		fmt.Fprintf(&y, "  - name: h%d\n    pattern: \"v1:h%d:{id}\"\n    type: hash\n    encoding: json\n    ttl: 1h\n    schema: %s\n", i, i, c.schema)
	}
	reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte(y.String()))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	req, err := codegen.NewRequest(reg, codegen.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generator{Client: ClientRedis}.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	v, err := newView(req)
	if err != nil {
		t.Fatal(err)
	}
	idents := map[string]string{}
	for _, f := range v.all {
		idents[f.Name] = f.Ident
	}
	type jsCase struct {
		HSet   string   `json:"hset"`
		Values []string `json:"values"`
	}
	var js []jsCase
	for i, c := range cases {
		js = append(js, jsCase{"hSet" + idents[fmt.Sprintf("h%d", i)], c.values})
	}
	tc := needToolchain(t)
	p := tc.project(t)
	write(t, filepath.Join(p.dir, "diff.ts"), string(files[0].Data))
	p.compile()
	write(t, filepath.Join(p.dir, "cases.json"), marshal(t, js))
	script, err := filepath.Abs(filepath.Join("testdata", "schemadiffhash.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	var got [][]*string
	out := p.node(nil, script, filepath.Join(p.dir, "out", "diff.js"), filepath.Join(p.dir, "cases.json"))
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != len(cases) {
		t.Fatalf("%v: %d results for %d cases", err, len(got), len(cases))
	}
	values, refused := 0, 0
	for i, c := range cases {
		for j, val := range c.values {
			values++
			var obj map[string]json.RawMessage
			if err := json.Unmarshal([]byte(val), &obj); err != nil {
				t.Fatal(err)
			}
			fields := map[string][]byte{}
			for k, fv := range obj {
				fields[k] = fv
			}
			res := payload.Check(reg.Families[i], payload.Sample{Fields: fields}, payload.Options{MaxViolations: -1})
			var ptrs []string
			for _, vi := range res.Violations {
				ptrs = append(ptrs, "#"+vi.Pointer)
			}
			if res.DecodeErrors != 0 {
				t.Fatalf("%s: %s: %s", c.name, val, res.DecodeError)
			}
			if len(ptrs) > 0 {
				refused++
			}
			ts := got[i][j]
			switch {
			case ts == nil && len(ptrs) > 0:
				t.Errorf("%s: value %s: hSet sends it, Go refuses %v", c.name, val, res.Violations)
			case ts != nil && len(ptrs) == 0:
				t.Errorf("%s: value %s: hSet refuses at %s, Go accepts", c.name, val, *ts)
			case ts != nil && !slices.Contains(ptrs, *ts):
				t.Errorf("%s: value %s: hSet refuses at %s, Go at %v", c.name, val, *ts, res.Violations)
			}
		}
	}
	t.Logf("%d hash schemas, %d values, %d refused by Go", len(cases), values, refused)
}
