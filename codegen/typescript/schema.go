package typescript

import (
	_ "embed"
	"encoding/json"
	"slices"
	"strings"
)

//go:embed runtime/schema.ts
var schemaRuntime string

// schemaType writes the TypeScript type of values of a JSON Schema:
// objects with properties (required ones plain, others optional, with an
// index signature unless additionalProperties is false), maps, arrays,
// primitives, string enums as unions of their literals and
// UnknownEnumValue, [T, "null"] as T | null,
// local $refs resolved (recursion becomes unknown). Anything else is
// unknown. Property names and literals are written with str.
func schemaType(root, s any, depth int, seen []string) string {
	m, ok := s.(map[string]any)
	if !ok || depth > 16 {
		return "unknown"
	}
	if ref, ok := m["$ref"].(string); ok {
		if !strings.HasPrefix(ref, "#/") || slices.Contains(seen, ref) {
			return "unknown"
		}
		var target any = root
		for _, part := range strings.Split(ref[2:], "/") {
			part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
			tm, ok := target.(map[string]any)
			if !ok {
				return "unknown"
			}
			target = tm[part]
		}
		return schemaType(root, target, depth+1, append(seen, ref))
	}
	if enum, ok := m["enum"].([]any); ok && len(enum) > 0 {
		var lits []string
		for _, e := range enum {
			es, ok := e.(string)
			if !ok {
				return "unknown"
			}
			if l := str(es); !slices.Contains(lits, l) {
				lits = append(lits, l)
			}
		}
		// A newer writer may store a value this module does not list: it
		// is read as it is, typed UnknownEnumValue (Go reads it as the
		// enum's …Unknown constant).
		return strings.Join(lits, " | ") + " | UnknownEnumValue"
	}
	var t string
	switch x := m["type"].(type) {
	case string:
		t = x
	case []any:
		if len(x) == 2 && (x[1] == "null" || x[0] == "null") {
			other := x[0]
			if other == "null" {
				other = x[1]
			}
			if os, ok := other.(string); ok {
				c := map[string]any{}
				for k, v := range m {
					c[k] = v
				}
				c["type"] = os
				return "(" + schemaType(root, c, depth+1, seen) + ") | null"
			}
		}
		return "unknown"
	default:
		return "unknown"
	}
	switch t {
	case "string":
		return "string"
	case "integer", "number":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		return "(" + schemaType(root, m["items"], depth+1, seen) + ")[]"
	case "object":
		props, _ := m["properties"].(map[string]any)
		ap, hasAP := m["additionalProperties"]
		if len(props) == 0 {
			if hasAP && ap != false && ap != true {
				return "Record<string, " + schemaType(root, ap, depth+1, seen) + ">"
			}
			return "Record<string, unknown>"
		}
		req := map[string]bool{}
		if rs, ok := m["required"].([]any); ok {
			for _, r := range rs {
				if s, ok := r.(string); ok {
					req[s] = true
				}
			}
		}
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		slices.Sort(names)
		var b strings.Builder
		b.WriteString("{ ")
		for _, k := range names {
			opt := "?"
			if req[k] {
				opt = ""
			}
			b.WriteString(str(k) + opt + ": " + schemaType(root, props[k], depth+1, seen) + "; ")
		}
		if ap != false {
			b.WriteString("[k: string]: unknown; ")
		}
		b.WriteString("}")
		return b.String()
	}
	return "unknown"
}

// valueSchema returns the family's schema decoded, and the schema of one
// value as the accessors take it: the whole schema for strings, lists,
// sets and sorted sets, additionalProperties for hashes and streams.
func valueSchema(f *famView) (root, one any) {
	if len(f.Schema) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(f.Schema, &root); err != nil {
		return nil, nil
	}
	switch f.Type {
	case "hash", "stream":
		if m, ok := root.(map[string]any); ok {
			if ap, ok := m["additionalProperties"].(map[string]any); ok {
				return root, ap
			}
		}
		return root, nil
	}
	return root, root
}
