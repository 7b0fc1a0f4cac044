package rules

import (
	"slices"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/payload"
)

// PayloadSchemaTypeMismatch reports payload schemas whose root "type"
// cannot describe the value the family's Redis type and encoding produce,
// so every sampled key would fail validation.
//
// What the schema describes depends on the type: a string's decoded value,
// a hash's object of fields, a list, set or zset member, a stream entry's
// field map, a RedisJSON document. The root must then allow:
//   - hash, stream: "object"
//   - string, list, set, zset by encoding: int "integer" or "number",
//     float "number", text "string", json and msgpack anything
//   - json (RedisJSON): anything
//
// A schema without a root "type", or a family without a type (or, where
// the encoding decides, without an encoding), is not checked. A schema on
// a family with encoding binary is always reported: binary values are not
// decoded, so there is nothing to validate.
var PayloadSchemaTypeMismatch = &Rule{
	ID:       "payload-schema-type-mismatch",
	Doc:      "a payload schema's root type cannot describe the family's redis type and encoding",
	Kind:     KindLint,
	Severity: diag.Error,
	Lint: func(p *Pass) {
		for _, f := range p.Reg.Families {
			if f.Schema == nil {
				continue
			}
			pos := f.PosOf("schema")
			if payload.Opaque(f.Encoding) {
				p.Reportf(f, pos, `a schema cannot validate encoding %q: %s values are not decoded, so drop the schema or declare the real encoding`, f.Encoding, f.Encoding)
				continue
			}
			doc, ok := f.Schema.Doc.(map[string]any)
			if !ok {
				continue // a boolean schema, or one that failed to load
			}
			types, ok := schemaTypes(doc["type"])
			if !ok {
				continue
			}
			what, want := payloadForm(f.Type, f.Encoding)
			if want == nil || slices.ContainsFunc(types, func(t string) bool { return slices.Contains(want, t) }) {
				continue
			}
			p.Reportf(f, pos, "schema root type %s cannot describe %s (want %s)", orList(types), what, orList(want))
		}
	},
}

// payloadForm describes the value a schema of a family validates, and the
// JSON types its root must allow one of; want is nil when any type can fit
// or when the family does not say enough to tell.
func payloadForm(typ, enc string) (what string, want []string) {
	switch typ {
	case "hash":
		return "a hash, which is validated as an object of its fields", []string{"object"}
	case "stream":
		return "a stream entry, which is validated as its field map", []string{"object"}
	case "string":
		what = "a string value"
	case "list", "set", "zset":
		what = "a " + typ + " member"
	default:
		return "", nil // json (RedisJSON) holds any document; no type, no check
	}
	what += " with encoding " + strconv.Quote(enc)
	switch enc {
	case "int":
		return what, []string{"integer", "number"}
	case "float":
		return what, []string{"number"}
	case "text":
		return what, []string{"string"}
	}
	return what, nil // json, msgpack: any value; no encoding: unknown
}

// schemaTypes reads a schema's "type" keyword: a string or an array of
// strings. ok is false when there is none.
func schemaTypes(v any) (types []string, ok bool) {
	switch t := v.(type) {
	case string:
		return []string{t}, true
	case []any:
		for _, e := range t {
			if s, isStr := e.(string); isStr {
				types = append(types, s)
			}
		}
		return types, len(types) > 0
	}
	return nil, false
}

// orList formats ["a", "b"] as `"a" or "b"`.
func orList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
