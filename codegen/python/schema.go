package python

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// typedDict is a TypedDict declaration made from an object schema.
type typedDict struct {
	name string
	src  string
}

// maxTypeDepth bounds the nesting of generated types; deeper schemas are Any.
const maxTypeDepth = 16

// schemaType returns the Python type of values of schema s, declaring a
// TypedDict (in functional syntax, so that any property name is only a
// string literal) for every object with properties. Names come from want,
// made unique. Anything the mapping does not cover is Any.
func (v *view) schemaType(s any, want string, depth int, top bool) string {
	const anyT = "_kr_t.Any"
	m, ok := s.(map[string]any)
	if !ok || depth > maxTypeDepth {
		return anyT
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "$ref", "not", "if"} {
		if _, ok := m[k]; ok {
			return anyT
		}
	}
	switch t := m["type"].(type) {
	case string:
		return v.typeOf(t, m, want, depth, top)
	case []any:
		if len(t) == 2 {
			a, _ := t[0].(string)
			b, _ := t[1].(string)
			if b == "null" && a != "null" && a != "" {
				return v.typeOf(a, m, want, depth, top) + " | None"
			}
			if a == "null" && b != "null" && b != "" {
				return v.typeOf(b, m, want, depth, top) + " | None"
			}
		}
	}
	return anyT
}

func (v *view) typeOf(t string, m map[string]any, want string, depth int, top bool) string {
	switch t {
	case "integer":
		return "int"
	case "number":
		return "float"
	case "string":
		return "str"
	case "boolean":
		return "bool"
	case "null":
		return "None"
	case "array":
		if it, ok := m["items"]; ok {
			return "list[" + v.schemaType(it, want+"Item", depth+1, false) + "]"
		}
		return "list[_kr_t.Any]"
	case "object":
		props, _ := m["properties"].(map[string]any)
		if len(props) == 0 {
			if ap, ok := m["additionalProperties"].(map[string]any); ok {
				return "dict[str, " + v.schemaType(ap, want+"Item", depth+1, false) + "]"
			}
			return "dict[str, _kr_t.Any]"
		}
		name := want
		for i := 2; !top && v.taken[name]; i++ {
			name = fmt.Sprintf("%s%d", want, i)
		}
		v.taken[name] = true
		required := map[string]bool{}
		if rs, ok := m["required"].([]any); ok {
			for _, r := range rs {
				if s, ok := r.(string); ok {
					required[s] = true
				}
			}
		}
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var fields []string
		for _, k := range keys {
			ft := v.schemaType(props[k], name+camel(snake(k)), depth+1, false)
			if required[k] {
				ft = "_kr_t.Required[" + ft + "]"
			}
			fields = append(fields, "    "+pyStr(k)+": "+ft+",\n")
		}
		var b strings.Builder
		fmt.Fprintf(&b, "\n\n%s = _kr_t.TypedDict(\n    %s,\n    {\n", name, pyStr(name))
		for _, f := range fields {
			b.WriteString("    " + f)
		}
		b.WriteString("    },\n    total=False,\n)\n")
		v.types = append(v.types, typedDict{name: name, src: b.String()})
		return name
	}
	return "_kr_t.Any"
}

// schemaCheck writes the family's schema as a JSON literal and check_X.
func (v *view) schemaCheck(b *strings.Builder, fv *famView) {
	if len(fv.f.Schema) == 0 {
		return
	}
	var doc any
	if json.Unmarshal(fv.f.Schema, &doc) != nil {
		return
	}
	fmt.Fprintf(b, "\n\n_KR_SCHEMA_%s: _kr_t.Final[_kr_t.Any] = _kr_json.loads(%s)\n", fv.upper, pyStr(string(fv.f.Schema)))
	fmt.Fprintf(b, "\n\ndef check_%s(value: object) -> None:\n", fv.snake)
	b.WriteString(`    """Raises SchemaError (a ValueError) naming the JSON pointer, never the
    value, when value (decoded JSON) breaks the family's schema."""` + "\n")
	fmt.Fprintf(b, "    p = _kr_check(_KR_SCHEMA_%s, _KR_SCHEMA_%s, value, \"#\", 0)\n", fv.upper, fv.upper)
	fmt.Fprintf(b, "    if p:\n        raise _kr_schema_error(%s, \"\", p)\n", pyStr(fv.f.Name))
}
