package compat

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// schemaError is a document compat cannot reason about. It is raised with
// panic deep in the comparison and recovered by Check.
type schemaError struct {
	ptr string
	msg string
}

func (e *schemaError) Error() string {
	p := e.ptr
	if p == "" {
		p = "(root)"
	}
	return fmt.Sprintf("%s: %s", p, e.msg)
}

func fail(ptr, format string, args ...any) {
	panic(&schemaError{ptr: ptr, msg: fmt.Sprintf(format, args...)})
}

// doc is one schema document.
type doc struct {
	root    any
	id      string            // root $id without fragment
	anchors map[string]string // $anchor name -> pointer
}

func newDoc(v any) (d *doc, err error) {
	switch v.(type) {
	case bool, map[string]any:
	default:
		return nil, fmt.Errorf("a schema must be an object or a boolean, got %s", jsonType(v))
	}
	d = &doc{root: v, anchors: map[string]string{}}
	if m, ok := v.(map[string]any); ok {
		if id, ok := m["$id"].(string); ok {
			d.id, _, _ = strings.Cut(id, "#")
		}
	}
	d.collectAnchors(v, "")
	return d, nil
}

func (d *doc) collectAnchors(v any, ptr string) {
	switch v := v.(type) {
	case map[string]any:
		if a, ok := v["$anchor"].(string); ok {
			if _, dup := d.anchors[a]; !dup {
				d.anchors[a] = ptr
			}
		}
		for _, k := range sortedKeys(v) {
			switch k {
			case "enum", "const", "default", "examples":
				continue
			}
			d.collectAnchors(v[k], ptr+"/"+escape(k))
		}
	case []any:
		for i, e := range v {
			d.collectAnchors(e, ptr+"/"+strconv.Itoa(i))
		}
	}
}

func (d *doc) node() node { return node{v: d.root, d: d} }

// resolve returns the node a $ref at ptr names.
func (d *doc) resolve(ref, ptr string) node {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		base, f, found := strings.Cut(ref, "#")
		if d.id == "" || base != d.id {
			fail(ptr, "$ref %q is not local: only refs within the same document are supported", ref)
		}
		frag = f
		_ = found
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		p, ok := d.anchors[frag]
		if !ok {
			fail(ptr, "$ref %q: no $anchor %q", ref, frag)
		}
		return node{v: lookup(d.root, p), ptr: p, d: d}
	}
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	v, ok := pointerGet(d.root, frag)
	if !ok {
		fail(ptr, "$ref %q does not resolve", ref)
	}
	switch v.(type) {
	case bool, map[string]any:
	default:
		fail(ptr, "$ref %q names a %s, not a schema", ref, jsonType(v))
	}
	return node{v: v, ptr: frag, d: d}
}

func lookup(root any, p string) any {
	v, _ := pointerGet(root, p)
	return v
}

func pointerGet(v any, p string) (any, bool) {
	if p == "" {
		return v, true
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// node is a subschema at a location in a document.
type node struct {
	v   any // bool or map[string]any
	ptr string
	d   *doc
	// base ignores $ref and the combinators: the node stands for its own
	// keywords only (normalize splits a schema into its base and the rest).
	base bool
	// only restricts the node to one JSON type ("" = no restriction); used
	// to split `type: [a, b]` into branches.
	only string
}

func (n node) child(kw string) (node, bool) {
	m, ok := n.v.(map[string]any)
	if !ok {
		return node{}, false
	}
	v, ok := m[kw]
	if !ok {
		return node{}, false
	}
	return n.sub(v, "/"+escape(kw)), true
}

func (n node) sub(v any, suffix string) node {
	p := n.ptr + suffix
	switch v.(type) {
	case bool, map[string]any:
	default:
		fail(p, "a schema must be an object or a boolean, got %s", jsonType(v))
	}
	return node{v: v, ptr: p, d: n.d}
}

// trueAt is an unconstrained node at a (possibly absent) location.
func trueAt(d *doc, ptr string) node { return node{v: true, ptr: ptr, d: d} }

func (n node) m() map[string]any {
	if m, ok := n.v.(map[string]any); ok {
		return m
	}
	return nil
}

func (n node) isFalse() bool { b, ok := n.v.(bool); return ok && !b }

// annotations are keywords that never constrain a value.
var annotations = map[string]bool{
	"$id": true, "$schema": true, "$comment": true, "$anchor": true, "$dynamicAnchor": true,
	"$vocabulary": true, "$defs": true, "definitions": true, "title": true, "description": true,
	"default": true, "examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"contentEncoding": true, "contentMediaType": true, "contentSchema": true,
}

var combinators = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "$ref": true}

// constrained reports whether the node (as a base node if n.base) has any
// keyword that can reject a value.
func (n node) constrained() bool {
	switch v := n.v.(type) {
	case bool:
		return !v
	case map[string]any:
		if n.only != "" {
			return true
		}
		for k := range v {
			if annotations[k] || (n.base && combinators[k]) {
				continue
			}
			if k == "then" || k == "else" {
				if _, ok := v["if"]; !ok {
					continue
				}
			}
			if k == "if" {
				continue // if alone constrains nothing; then/else count
			}
			if k == "minContains" || k == "maxContains" {
				if _, ok := v["contains"]; !ok {
					continue
				}
			}
			return true
		}
	}
	return false
}

func (n node) has(kw string) bool {
	_, ok := n.m()[kw]
	return ok
}

func (n node) str(kw string) (string, bool) {
	v, ok := n.m()[kw]
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		fail(n.ptr+"/"+escape(kw), "%s must be a string, got %s", kw, jsonType(v))
	}
	return s, true
}

func (n node) boolean(kw string) bool {
	v, ok := n.m()[kw]
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		fail(n.ptr+"/"+escape(kw), "%s must be a boolean, got %s", kw, jsonType(v))
	}
	return b
}

func (n node) obj(kw string) map[string]any {
	v, ok := n.m()[kw]
	if !ok {
		return nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		fail(n.ptr+"/"+escape(kw), "%s must be an object, got %s", kw, jsonType(v))
	}
	return o
}

func (n node) arr(kw string) ([]any, bool) {
	v, ok := n.m()[kw]
	if !ok {
		return nil, false
	}
	a, ok := v.([]any)
	if !ok {
		fail(n.ptr+"/"+escape(kw), "%s must be an array, got %s", kw, jsonType(v))
	}
	return a, true
}

func (n node) strings(kw string) []string {
	a, _ := n.arr(kw)
	out := make([]string, 0, len(a))
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			fail(fmt.Sprintf("%s/%s/%d", n.ptr, escape(kw), i), "%s entries must be strings, got %s", kw, jsonType(e))
		}
		out = append(out, s)
	}
	return out
}

// num is an exact decimal number with its original spelling.
type num struct {
	r    *big.Rat
	text string
}

func toNum(v any) (num, bool) {
	switch x := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return num{}, false
		}
		return num{r, string(x)}, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return num{}, false
		}
		return num{new(big.Rat).SetFloat64(x), strconv.FormatFloat(x, 'g', -1, 64)}, true
	case float32:
		return toNum(float64(x))
	case int:
		return num{new(big.Rat).SetInt64(int64(x)), strconv.Itoa(x)}, true
	case int64:
		return num{new(big.Rat).SetInt64(x), strconv.FormatInt(x, 10)}, true
	case uint64:
		r := new(big.Rat).SetInt(new(big.Int).SetUint64(x))
		return num{r, strconv.FormatUint(x, 10)}, true
	}
	return num{}, false
}

func (n node) number(kw string) (num, bool) {
	v, ok := n.m()[kw]
	if !ok {
		return num{}, false
	}
	x, ok := toNum(v)
	if !ok {
		fail(n.ptr+"/"+escape(kw), "%s must be a number, got %s", kw, jsonType(v))
	}
	return x, true
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	if x, ok := toNum(v); ok {
		if x.r.IsInt() {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// canon is a canonical text for a JSON value: numbers compare by value, object
// keys are sorted.
func canon(v any) string {
	var b strings.Builder
	writeCanon(&b, v)
	return b.String()
}

func writeCanon(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		b.WriteString(strconv.Quote(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanon(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			writeCanon(b, x[k])
		}
		b.WriteByte('}')
	default:
		if n, ok := toNum(v); ok {
			b.WriteString(n.r.RatString())
			return
		}
		fmt.Fprintf(b, "%v", v)
	}
}

// show formats a JSON value for a message.
func show(v any) string {
	switch x := v.(type) {
	case json.Number:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return strconv.Quote(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

var reCache sync.Map // pattern -> *regexp.Regexp (nil when RE2 cannot express it)

// compilePattern compiles an ECMA-262 pattern as RE2, returning nil when RE2
// cannot express it.
func compilePattern(p string) *regexp.Regexp {
	if re, ok := reCache.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		re = nil
	}
	reCache.Store(p, re)
	return re
}
