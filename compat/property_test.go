package compat

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var debugPairs = os.Getenv("COMPAT_DEBUG_PAIRS") != ""

var (
	seed  = flag.Uint64("compat.seed", 1, "seed for the random schema tests")
	pairs = flag.Int("compat.pairs", 4000, "schema pairs for the soundness test")
)

// gen builds small random schemas. sound restricts it to the keywords whose
// comparison is meant to be exact under Strict: no oneOf (compatibility.md
// accepts T -> oneOf[T, ...] even when branches overlap), no default (a
// default makes adding a required property compatible by convention), no
// format (an annotation) and no maxContains.
type gen struct {
	r     *rand.Rand
	sound bool
	defs  bool
}

func (g *gen) pick(n int) int        { return g.r.IntN(n) }
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

var (
	numPool  = []any{json.Number("0"), json.Number("1"), json.Number("2"), json.Number("3"), json.Number("-1"), json.Number("0.5"), json.Number("10")}
	strPool  = []any{"", "a", "ab", "b", "abc", "x1"}
	patPool  = []string{"^a", "b$", "^[ab]*$", "^x"}
	propPool = []string{"a", "b", "c", "x1"}
)

func (g *gen) schema(depth int) any {
	if depth <= 0 || g.chance(0.15) {
		switch g.pick(6) {
		case 0:
			return true
		case 1:
			if g.chance(0.3) {
				return false
			}
			return map[string]any{}
		case 2:
			if g.defs {
				return map[string]any{"$ref": "#/$defs/d"}
			}
		}
		return map[string]any{"type": []string{"string", "integer", "number", "boolean", "null"}[g.pick(5)]}
	}
	switch g.pick(14) {
	case 0:
		return map[string]any{"anyOf": []any{g.schema(depth - 1), g.schema(depth - 1)}}
	case 1:
		return map[string]any{"allOf": []any{g.schema(depth - 1), g.schema(depth - 1)}}
	case 2:
		if !g.sound {
			return map[string]any{"oneOf": []any{g.schema(depth - 1), g.schema(depth - 1)}}
		}
		return map[string]any{"not": g.schema(depth - 1)}
	case 3:
		vals := []any{}
		for range 1 + g.pick(3) {
			vals = append(vals, g.value(1))
		}
		if g.chance(0.3) {
			return map[string]any{"const": vals[0]}
		}
		return map[string]any{"enum": vals}
	case 4:
		return map[string]any{"type": []any{"string", "null"}, "maxLength": json.Number(fmt.Sprint(g.pick(3)))}
	}
	m := map[string]any{}
	switch t := []string{"string", "integer", "number", "object", "object", "array", "array", ""}[g.pick(8)]; t {
	case "string":
		m["type"] = t
		g.stringKw(m)
	case "integer", "number":
		m["type"] = t
		g.numberKw(m)
	case "object":
		m["type"] = t
		g.objectKw(m, depth)
	case "array":
		m["type"] = t
		g.arrayKw(m, depth)
	default: // no type: keywords of several types at once
		g.stringKw(m)
		g.numberKw(m)
		if g.chance(0.5) {
			g.objectKw(m, depth)
		}
	}
	return m
}

func (g *gen) stringKw(m map[string]any) {
	if g.chance(0.4) {
		m["minLength"] = json.Number(fmt.Sprint(g.pick(3)))
	}
	if g.chance(0.4) {
		m["maxLength"] = json.Number(fmt.Sprint(g.pick(4)))
	}
	if g.chance(0.3) {
		m["pattern"] = patPool[g.pick(len(patPool))]
	}
	if !g.sound && g.chance(0.2) {
		m["format"] = "email"
	}
}

func (g *gen) numberKw(m map[string]any) {
	for _, kw := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
		if g.chance(0.25) {
			v := numPool[g.pick(len(numPool))]
			if kw == "multipleOf" {
				v = []any{json.Number("1"), json.Number("2"), json.Number("3"), json.Number("0.5")}[g.pick(4)]
			}
			m[kw] = v
		}
	}
}

func (g *gen) objectKw(m map[string]any, depth int) {
	props := map[string]any{}
	var req []any
	for _, p := range propPool {
		if g.chance(0.4) {
			s := g.schema(depth - 1)
			if !g.sound && g.chance(0.2) {
				if sm, ok := s.(map[string]any); ok {
					sm["default"] = "d"
				}
			}
			props[p] = s
		}
		if g.chance(0.25) && !slices.Contains(req, any(p)) {
			req = append(req, p)
		}
	}
	if len(props) > 0 {
		m["properties"] = props
	}
	if len(req) > 0 {
		m["required"] = req
	}
	switch g.pick(5) {
	case 0:
		m["additionalProperties"] = false
	case 1:
		m["additionalProperties"] = g.schema(depth - 1)
	case 2:
		m["additionalProperties"] = true
	}
	if g.chance(0.15) {
		m["patternProperties"] = map[string]any{"^x": g.schema(depth - 1)}
	}
	if g.chance(0.15) {
		m["minProperties"] = json.Number(fmt.Sprint(g.pick(3)))
	}
	if g.chance(0.15) {
		m["maxProperties"] = json.Number(fmt.Sprint(g.pick(3)))
	}
	if g.chance(0.1) {
		m["dependentRequired"] = map[string]any{"a": []any{"b"}}
	}
	if g.chance(0.1) {
		m["propertyNames"] = map[string]any{"maxLength": json.Number("1")}
	}
}

func (g *gen) arrayKw(m map[string]any, depth int) {
	if g.chance(0.4) {
		var pre []any
		for range 1 + g.pick(2) {
			pre = append(pre, g.schema(depth-1))
		}
		m["prefixItems"] = pre
	}
	if g.chance(0.6) {
		if g.chance(0.3) {
			m["items"] = false
		} else {
			m["items"] = g.schema(depth - 1)
		}
	}
	if g.chance(0.2) {
		m["minItems"] = json.Number(fmt.Sprint(g.pick(3)))
	}
	if g.chance(0.2) {
		m["maxItems"] = json.Number(fmt.Sprint(g.pick(3)))
	}
	if g.chance(0.15) {
		m["uniqueItems"] = true
	}
	if g.chance(0.15) {
		m["contains"] = g.schema(depth - 1)
		if g.chance(0.5) {
			m["minContains"] = json.Number(fmt.Sprint(g.pick(3)))
		}
	}
}

func (g *gen) value(depth int) any {
	switch n := g.pick(8); {
	case n == 0:
		return nil
	case n == 1:
		return g.chance(0.5)
	case n <= 3:
		return numPool[g.pick(len(numPool))]
	case n <= 5 || depth <= 0:
		return strPool[g.pick(len(strPool))]
	case n == 6:
		a := []any{}
		for range g.pick(4) {
			a = append(a, g.value(depth-1))
		}
		return a
	}
	o := map[string]any{}
	for _, p := range propPool {
		if g.chance(0.4) {
			o[p] = g.value(depth - 1)
		}
	}
	return o
}

// doc wraps a schema with $defs when the generator uses refs.
func (g *gen) doc(depth int) any {
	s := g.schema(depth)
	if !g.defs {
		return s
	}
	m, ok := s.(map[string]any)
	if !ok {
		m = map[string]any{"allOf": []any{s}}
	}
	g.defs = false
	m["$defs"] = map[string]any{"d": g.schema(2)}
	g.defs = true
	return m
}

func clone(v any) any {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		panic(err)
	}
	d := json.NewDecoder(&b)
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		panic(err)
	}
	return out
}

// mutate makes one random edit somewhere in s.
func (g *gen) mutate(s any, depth int) any {
	m, ok := s.(map[string]any)
	if !ok || len(m) == 0 || g.chance(0.1) {
		if g.chance(0.5) {
			return g.schema(depth)
		}
		return s
	}
	keys := sortedKeys(m)
	// Descend into a subschema.
	if g.chance(0.5) {
		var subs []func()
		for _, k := range keys {
			switch v := m[k].(type) {
			case map[string]any:
				switch k {
				case "properties", "patternProperties", "$defs", "dependentRequired":
					for _, p := range sortedKeys(v) {
						if k == "dependentRequired" {
							continue
						}
						subs = append(subs, func() { v[p] = g.mutate(v[p], depth-1) })
					}
				default:
					subs = append(subs, func() { m[k] = g.mutate(v, depth-1) })
				}
			case []any:
				if k == "anyOf" || k == "allOf" || k == "oneOf" || k == "prefixItems" {
					for i := range v {
						subs = append(subs, func() { v[i] = g.mutate(v[i], depth-1) })
					}
				}
			case bool:
				if k == "additionalProperties" || k == "items" {
					subs = append(subs, func() { m[k] = g.mutate(v, depth-1) })
				}
			}
		}
		if len(subs) > 0 {
			subs[g.pick(len(subs))]()
			return m
		}
	}
	switch g.pick(3) {
	case 0: // drop a keyword, keeping the $defs refs point at
		if k := keys[g.pick(len(keys))]; k != "$defs" {
			delete(m, k)
		}
	case 1: // add keywords of a fresh schema of the same shape
		if fresh, ok := g.schema(depth).(map[string]any); ok {
			for k, v := range fresh {
				if _, exists := m[k]; !exists || g.chance(0.3) {
					m[k] = v
				}
			}
		}
	default: // tweak a number or an array
		for _, k := range keys {
			switch v := m[k].(type) {
			case json.Number:
				m[k] = numPool[g.pick(len(numPool))]
				if strings.Contains(k, "Length") || strings.Contains(k, "Items") || strings.Contains(k, "Properties") || strings.Contains(k, "Contains") {
					m[k] = json.Number(fmt.Sprint(g.pick(4)))
				}
				if k == "multipleOf" {
					m[k] = []any{json.Number("1"), json.Number("2"), json.Number("4"), json.Number("0.5")}[g.pick(4)]
				}
				return m
			case []any:
				if len(v) > 1 && g.chance(0.5) {
					m[k] = v[:len(v)-1]
					return m
				}
				if k == "enum" || k == "required" {
					e := any(propPool[g.pick(len(propPool))])
					if k == "enum" {
						e = g.value(1)
					}
					if !slices.ContainsFunc(v, func(x any) bool { return canon(x) == canon(e) }) {
						m[k] = append(v, e)
					}
					return m
				}
			}
		}
	}
	return m
}

func TestIdentityIsCompatible(t *testing.T) {
	r := rand.New(rand.NewPCG(*seed, 2))
	for i := range 3000 {
		g := &gen{r: r, defs: i%3 == 0}
		s := clone(g.doc(3))
		for _, p := range []Policy{Strict, Lenient} {
			cs, err := Check(s, clone(s), Full, p)
			if err != nil {
				t.Fatalf("Check(S, S): %v\nS = %s", err, mustJSON(s))
			}
			if len(cs) > 0 {
				t.Fatalf("Check(S, S, %s) = %v\nS = %s", p, cs, mustJSON(s))
			}
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func compile(t *testing.T, s any) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem://s.json", s); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem://s.json")
	if err != nil {
		t.Fatalf("compiling %s: %v", mustJSON(s), err)
	}
	return sch
}

// TestSoundness cross-checks Check against a real validator: when Check
// says new is backward compatible with old under Strict, every sampled
// instance valid under old must be valid under new.
func TestSoundness(t *testing.T) {
	r := rand.New(rand.NewPCG(*seed, 3))
	vg := &gen{r: r}
	var pool []any
	for range 400 {
		pool = append(pool, clone(vg.value(3)))
	}
	for _, s := range []string{`null`, `true`, `false`, `0`, `1`, `2`, `3`, `-1`, `0.5`, `1.5`, `10`, `""`, `"a"`, `"ab"`, `"abc"`, `"x1"`,
		`[]`, `[1]`, `["a"]`, `[1,"a"]`, `[1,1]`, `["a","b","c"]`, `{}`, `{"a":1}`, `{"a":"x"}`, `{"a":"x","b":1}`, `{"x1":"a"}`, `{"a":{"a":1}}`, `[{"a":1}]`} {
		pool = append(pool, decode(t, []byte(s)))
	}
	compatible, counter := 0, 0
	for i := range *pairs {
		g := &gen{r: r, sound: true, defs: i%4 == 0}
		old := clone(g.doc(3))
		nw := clone(g.mutate(clone(old), 3))
		if om, ok := old.(map[string]any); ok && om["$defs"] != nil {
			nm, ok := nw.(map[string]any)
			if !ok {
				nm = map[string]any{"allOf": []any{nw}}
			}
			if nm["$defs"] == nil {
				nm["$defs"] = clone(om["$defs"])
			}
			nw = nm
		}
		if g.chance(0.3) {
			old, nw = nw, old
		}
		if debugPairs {
			fmt.Fprintf(os.Stderr, "pair %d\nold = %s\nnew = %s\n", i, mustJSON(old), mustJSON(nw))
		}
		cs, err := Check(old, nw, Backward, Strict)
		if err != nil && strings.Contains(err.Error(), "loops back") {
			continue // mutation made an ill-founded $ref cycle
		}
		if err != nil {
			t.Fatalf("Check: %v\nold = %s\nnew = %s", err, mustJSON(old), mustJSON(nw))
		}
		if len(cs) > 0 {
			continue
		}
		compatible++
		so, sn := compile(t, old), compile(t, nw)
		for _, v := range pool {
			if so.Validate(v) == nil && sn.Validate(v) != nil {
				counter++
				if counter <= 10 {
					t.Errorf("counterexample: Check says compatible but %s is valid under old and not under new\nold = %s\nnew = %s", mustJSON(v), mustJSON(old), mustJSON(nw))
				}
				break
			}
		}
	}
	t.Logf("%d of %d pairs backward compatible; %d counterexamples", compatible, *pairs, counter)
	if compatible < *pairs/10 {
		t.Errorf("only %d compatible pairs: the generator is too weak", compatible)
	}
}
