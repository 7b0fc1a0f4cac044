package payload

import (
	"encoding/json"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The fast path decides cheaply that a value is valid, so that Check can
// skip jsonschema, which turns every number it checks into a big.Rat and
// allocates an error for every keyword that fails inside anyOf, not and
// the like. It mirrors jsonschema v6's validator keyword by keyword and
// answers pass, fail or unsure. pass and fail are exact: pass only when
// Schema.Validate returns nil, fail only when it returns an error (fail
// must be exact too, since not and oneOf turn a fail into a pass). It
// answers unsure whenever exactness would cost more than it saves: a
// number that does not fit an int64 mantissa, a value of a Go type
// outside the decoders' value model, a long array under uniqueItems.
//
// A schema that uses, anywhere a value can reach, a keyword the fast path
// does not implement (unevaluatedProperties, $dynamicRef, content
// assertions, vocabulary extensions, a bound that is not a ratio of
// int64s) or that refers to itself without descending into the value
// (which jsonschema reports as a cycle) gets no fast path at all.

// verdict is the fast path's answer for one value.
type verdict uint8

const (
	unsure verdict = iota // the fast path cannot tell; ask jsonschema
	pass                  // jsonschema accepts the value
	fail                  // jsonschema rejects the value
)

// fastCache maps each compiled schema to its fast validator, or to nil
// when it has none. Schemas are compiled once per registry load and live
// as long as the process, so the cache is never pruned.
var fastCache sync.Map // *jsonschema.Schema -> *fastNode

// fastFor returns the fast validator of s, compiling it on first use. It
// returns nil when s is nil or has no fast path; a nil *fastNode answers
// unsure.
func fastFor(s *jsonschema.Schema) *fastNode {
	if s == nil {
		return nil
	}
	if n, ok := fastCache.Load(s); ok {
		return n.(*fastNode)
	}
	n, _ := fastCache.LoadOrStore(s, compileFast(s))
	return n.(*fastNode)
}

// jsonKind is a set of JSON types, as bits.
type jsonKind uint8

const (
	kNull jsonKind = 1 << iota
	kBool
	kNumber
	kInteger // only in a type keyword: values are kNumber
	kString
	kArray
	kObject
)

var typeBits = map[string]jsonKind{
	"null": kNull, "boolean": kBool, "number": kNumber, "integer": kInteger,
	"string": kString, "array": kArray, "object": kObject,
}

// kindOf returns the JSON type of a value in the decoders' model, or 0 for
// anything else, including what jsonschema accepts but the decoders never
// produce (float32, int).
func kindOf(v any) jsonKind {
	switch x := v.(type) {
	case nil:
		return kNull
	case bool:
		return kBool
	case string:
		return kString
	case json.Number, dec:
		return kNumber
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0
		}
		return kNumber
	case []any:
		return kArray
	case map[string]any:
		return kObject
	}
	return 0
}

// fastNode is one compiled schema.
type fastNode struct {
	always  verdict // a boolean schema's answer; unsure for an object schema
	draft   int
	types   jsonKind // 0 when there is no type keyword
	numeric bool     // the number must be parsed: integer type or numeric keywords

	konst     any // normalized, see normalize
	hasConst  bool
	enum      []any // normalized
	enumKinds jsonKind
	hasEnum   bool
	format    *jsonschema.Format

	ref, not, ifs, then, els *fastNode
	allOf, anyOf, oneOf      []*fastNode

	obj *objectRules
	arr *arrayRules
	str *stringRules
	num *numberRules
}

type objectRules struct {
	minProps, maxProps int // -1 when absent
	required           []string
	depRequired        []depRequired
	depSchemas         []depSchema
	props              map[string]*fastNode
	patterns           []patternRule
	noAdditional       bool      // additionalProperties: false
	additional         *fastNode // additionalProperties as a schema
	names              *fastNode // propertyNames
}

type depRequired struct {
	prop     string
	required []string
}

type depSchema struct {
	prop string
	n    *fastNode
}

type patternRule struct {
	re jsonschema.Regexp
	n  *fastNode
}

type arrayRules struct {
	minItems, maxItems int // -1 when absent
	unique             bool
	prefix             []*fastNode // items before rest
	rest               *fastNode   // the items after prefix, or nil
	noRest             bool        // no items after prefix allowed
	contains           *fastNode
	minContains        int // 1 unless minContains says otherwise
	maxContains        int // -1 when absent
}

type stringRules struct {
	minLen, maxLen int // in runes; -1 when absent
	pattern        jsonschema.Regexp
}

type numberRules struct {
	min, max, exMin, exMax, multipleOf *ratio
}

// ratio is a rational bound p/q in lowest terms, q > 0.
type ratio struct {
	p int64
	q uint64
}

// fastCompiler builds the fast nodes of one schema graph.
type fastCompiler struct {
	nodes map[*jsonschema.Schema]*fastNode
	ok    bool
}

// compileFast compiles the fast validator of s, or returns nil when some
// schema reachable from s is beyond the fast path.
func compileFast(s *jsonschema.Schema) *fastNode {
	c := fastCompiler{nodes: map[*jsonschema.Schema]*fastNode{}, ok: true}
	root := c.node(s)
	if !c.ok {
		return nil
	}
	state := make(map[*fastNode]uint8, len(c.nodes))
	for _, n := range c.nodes {
		if cyclic(n, state) {
			return nil
		}
	}
	return root
}

func (c *fastCompiler) node(s *jsonschema.Schema) *fastNode {
	if n, ok := c.nodes[s]; ok {
		return n
	}
	n := &fastNode{draft: s.DraftVersion}
	c.nodes[s] = n
	if s.Bool != nil {
		n.always = fail
		if *s.Bool {
			n.always = pass
		}
		return n
	}
	if s.RecursiveRef != nil || s.DynamicRef != nil ||
		s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil ||
		s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil ||
		len(s.Extensions) > 0 || s.Format != nil && s.Format.Validate == nil {
		c.ok = false
		return n
	}
	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			n.types |= typeBits[t]
		}
	}
	if s.Const != nil {
		n.konst, n.hasConst = c.normalize(*s.Const), true
	}
	if s.Enum != nil {
		n.hasEnum = true
		for _, v := range s.Enum.Values {
			v = c.normalize(v)
			n.enum = append(n.enum, v)
			n.enumKinds |= kindOf(v)
		}
	}
	n.format = s.Format
	n.ref = c.opt(s.Ref)
	n.not = c.opt(s.Not)
	n.ifs = c.opt(s.If)
	n.then = c.opt(s.Then)
	n.els = c.opt(s.Else)
	n.allOf = c.list(s.AllOf)
	n.anyOf = c.list(s.AnyOf)
	n.oneOf = c.list(s.OneOf)
	n.obj = c.object(s)
	n.arr = c.array(s)
	if s.MinLength != nil || s.MaxLength != nil || s.Pattern != nil {
		n.str = &stringRules{minLen: intOr(s.MinLength, -1), maxLen: intOr(s.MaxLength, -1), pattern: s.Pattern}
	}
	if s.Minimum != nil || s.Maximum != nil || s.ExclusiveMinimum != nil || s.ExclusiveMaximum != nil || s.MultipleOf != nil {
		n.num = &numberRules{
			min: c.ratio(s.Minimum), max: c.ratio(s.Maximum),
			exMin: c.ratio(s.ExclusiveMinimum), exMax: c.ratio(s.ExclusiveMaximum),
			multipleOf: c.ratio(s.MultipleOf),
		}
		if m := n.num.multipleOf; m != nil && m.p <= 0 {
			c.ok = false
		}
	}
	n.numeric = n.num != nil || n.types&kInteger != 0 && n.types&kNumber == 0
	return n
}

// object compiles the object keywords, mirroring the order and the draft
// cut-offs of jsonschema's objValidate.
func (c *fastCompiler) object(s *jsonschema.Schema) *objectRules {
	o := &objectRules{minProps: intOr(s.MinProperties, -1), maxProps: intOr(s.MaxProperties, -1), required: s.Required}
	for p, d := range s.Dependencies {
		switch d := d.(type) {
		case []string:
			o.depRequired = append(o.depRequired, depRequired{p, d})
		case *jsonschema.Schema:
			o.depSchemas = append(o.depSchemas, depSchema{p, c.node(d)})
		default:
			c.ok = false
		}
	}
	if len(s.Properties) > 0 {
		o.props = make(map[string]*fastNode, len(s.Properties))
		for p, ps := range s.Properties {
			o.props[p] = c.node(ps)
		}
	}
	for re, ps := range s.PatternProperties {
		o.patterns = append(o.patterns, patternRule{re, c.node(ps)})
	}
	o.noAdditional, o.additional = c.boolOrSchema(s.AdditionalProperties)
	if s.DraftVersion != 4 {
		o.names = c.opt(s.PropertyNames)
		if s.DraftVersion != 6 {
			for p, ds := range s.DependentSchemas {
				o.depSchemas = append(o.depSchemas, depSchema{p, c.node(ds)})
			}
			for p, r := range s.DependentRequired {
				o.depRequired = append(o.depRequired, depRequired{p, r})
			}
		}
	}
	if o.minProps < 0 && o.maxProps < 0 && len(o.required) == 0 && len(o.depRequired) == 0 && len(o.depSchemas) == 0 &&
		o.props == nil && o.patterns == nil && !o.noAdditional && o.additional == nil && o.names == nil {
		return nil
	}
	return o
}

// array compiles the array keywords: items and additionalItems up to
// draft 2019, prefixItems and items from 2020 on.
func (c *fastCompiler) array(s *jsonschema.Schema) *arrayRules {
	a := &arrayRules{minItems: intOr(s.MinItems, -1), maxItems: intOr(s.MaxItems, -1), unique: s.UniqueItems,
		minContains: intOr(s.MinContains, 1), maxContains: intOr(s.MaxContains, -1)}
	if s.DraftVersion < 2020 {
		switch items := s.Items.(type) {
		case nil:
		case *jsonschema.Schema:
			a.rest = c.node(items) // covers every item: additionalItems never applies
		case []*jsonschema.Schema:
			a.prefix = c.list(items)
		default:
			c.ok = false
		}
		if a.rest == nil {
			a.noRest, a.rest = c.boolOrSchema(s.AdditionalItems)
		}
	} else {
		a.prefix = c.list(s.PrefixItems)
		a.rest = c.opt(s.Items2020)
	}
	a.contains = c.opt(s.Contains)
	if a.minItems < 0 && a.maxItems < 0 && !a.unique && a.prefix == nil && a.rest == nil && !a.noRest && a.contains == nil {
		return nil
	}
	return a
}

// boolOrSchema compiles a keyword that is absent (nil), a boolean (false
// denies what it covers) or a schema.
func (c *fastCompiler) boolOrSchema(v any) (deny bool, n *fastNode) {
	switch a := v.(type) {
	case nil:
	case bool:
		deny = !a
	case *jsonschema.Schema:
		n = c.node(a)
	default:
		c.ok = false
	}
	return deny, n
}

func (c *fastCompiler) opt(s *jsonschema.Schema) *fastNode {
	if s == nil {
		return nil
	}
	return c.node(s)
}

func (c *fastCompiler) list(ss []*jsonschema.Schema) []*fastNode {
	if len(ss) == 0 {
		return nil
	}
	ns := make([]*fastNode, len(ss))
	for i, s := range ss {
		ns[i] = c.node(s)
	}
	return ns
}

func (c *fastCompiler) ratio(r *big.Rat) *ratio {
	if r == nil {
		return nil
	}
	if !r.Num().IsInt64() || !r.Denom().IsUint64() {
		c.ok = false
		return nil
	}
	return &ratio{r.Num().Int64(), r.Denom().Uint64()}
}

// normalize prepares an enum or const value for equal: numbers become
// dec. A value equal cannot compare exactly disables the fast path.
func (c *fastCompiler) normalize(v any) any {
	switch x := v.(type) {
	case nil, bool, string:
		return v
	case json.Number, float64:
		if kindOf(v) == kNumber {
			if n, ok := numberOf(v); ok && n.fits {
				return n.d
			}
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = c.normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = c.normalize(e)
		}
		return out
	}
	c.ok = false
	return nil
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// cyclic reports whether a schema reachable from n reaches itself without
// descending into the value, which jsonschema reports as a reference
// cycle. state is 1 while a node is on the path, 2 once it is done.
func cyclic(n *fastNode, state map[*fastNode]uint8) bool {
	switch state[n] {
	case 1:
		return true
	case 2:
		return false
	}
	state[n] = 1
	for _, m := range n.children() {
		if cyclic(m, state) {
			return true
		}
	}
	state[n] = 2
	return false
}

// children lists the schemas n applies to the same value, not below it.
func (n *fastNode) children() []*fastNode {
	var out []*fastNode
	for _, m := range []*fastNode{n.ref, n.not, n.ifs, n.then, n.els} {
		if m != nil {
			out = append(out, m)
		}
	}
	out = append(out, n.allOf...)
	out = append(out, n.anyOf...)
	out = append(out, n.oneOf...)
	if o := n.obj; o != nil {
		for _, d := range o.depSchemas {
			out = append(out, d.n)
		}
	}
	return out
}

// check answers whether v, a value in the decoders' model, is valid. It is
// safe on a nil *fastNode and never panics.
func (n *fastNode) check(v any) (r verdict) {
	if n == nil {
		return unsure
	}
	defer func() {
		if recover() != nil { // a Regexp or Format of the schema panicked
			r = unsure
		}
	}()
	return n.value(v)
}

func (n *fastNode) value(v any) verdict {
	if n.always != unsure {
		return n.always
	}
	if s, ok := v.(string); ok {
		return n.eval(v, s, kString)
	}
	k := kindOf(v)
	if k == 0 {
		return unsure
	}
	return n.eval(v, "", k)
}

// and combines the verdicts of two keywords of one schema.
func and(a, b verdict) verdict {
	if a == fail || b == fail {
		return fail
	}
	if a == unsure || b == unsure {
		return unsure
	}
	return pass
}

// eval checks a value of kind k against n. A string is passed in s, and v
// may then be nil: it is boxed only if a keyword needs the interface.
func (n *fastNode) eval(v any, s string, k jsonKind) verdict {
	if n.always != unsure {
		return n.always
	}
	var num numInfo
	if k == kNumber && n.numeric {
		var ok bool
		if num, ok = numberOf(v); !ok {
			return unsure
		}
	}
	if n.types != 0 && n.types&k == 0 && !(k == kNumber && n.types&kInteger != 0 && num.isInt) {
		return fail
	}
	r := pass
	if n.hasConst {
		if r = and(r, match(v, s, k, n.konst)); r == fail {
			return fail
		}
	}
	if n.hasEnum {
		if r = and(r, n.inEnum(v, s, k)); r == fail {
			return fail
		}
	}
	if n.format != nil {
		if k == kString && v == nil {
			v = s
		}
		if n.format.Validate(v) != nil {
			return fail
		}
	}
	if n.ref != nil {
		if r = and(r, n.ref.eval(v, s, k)); r == fail || n.draft < 2019 {
			return r // before 2019, $ref hides its siblings
		}
	}
	switch k {
	case kObject:
		if n.obj != nil {
			r = and(r, n.obj.check(v, v.(map[string]any)))
		}
	case kArray:
		if n.arr != nil {
			r = and(r, n.arr.check(v.([]any)))
		}
	case kString:
		if n.str != nil {
			r = and(r, n.str.check(s))
		}
	case kNumber:
		if n.num != nil {
			r = and(r, n.num.check(num))
		}
	}
	if r == fail {
		return fail
	}
	return and(r, n.cond(v, s, k))
}

// inEnum checks enum. An unsure comparison before a match leaves the
// answer unsure: jsonschema stops at an error as early as at a match.
func (n *fastNode) inEnum(v any, s string, k jsonKind) verdict {
	if n.enumKinds&k == 0 {
		return fail
	}
	for _, e := range n.enum {
		switch match(v, s, k, e) {
		case pass:
			return pass
		case unsure:
			return unsure
		}
	}
	return fail
}

// match compares a value with a normalized enum or const value.
func match(v any, s string, k jsonKind, e any) verdict {
	if k == kString {
		if es, ok := e.(string); ok && es == s {
			return pass
		}
		return fail
	}
	return equal(v, e)
}

// cond checks not, allOf, anyOf, oneOf and if/then/else.
func (n *fastNode) cond(v any, s string, k jsonKind) verdict {
	r := pass
	if n.not != nil {
		switch n.not.eval(v, s, k) {
		case pass:
			return fail
		case unsure:
			r = unsure
		}
	}
	for _, m := range n.allOf {
		if r = and(r, m.eval(v, s, k)); r == fail {
			return fail
		}
	}
	if len(n.anyOf) > 0 {
		some := fail
		for _, m := range n.anyOf {
			x := m.eval(v, s, k)
			if x == pass {
				some = pass
				break
			}
			if x == unsure {
				some = unsure
			}
		}
		if r = and(r, some); r == fail {
			return fail
		}
	}
	if len(n.oneOf) > 0 {
		passed, unsures := 0, 0
		for _, m := range n.oneOf {
			switch m.eval(v, s, k) {
			case pass:
				passed++
			case unsure:
				unsures++
			}
		}
		switch {
		case passed >= 2 || passed+unsures == 0:
			return fail
		case passed == 1 && unsures == 0:
		default:
			r = unsure
		}
	}
	if n.ifs != nil && (n.then != nil || n.els != nil) {
		then, els := pass, pass
		switch n.ifs.eval(v, s, k) {
		case pass:
			if n.then != nil {
				then = n.then.eval(v, s, k)
			}
			r = and(r, then)
		case fail:
			if n.els != nil {
				els = n.els.eval(v, s, k)
			}
			r = and(r, els)
		default:
			if n.then != nil {
				then = n.then.eval(v, s, k)
			}
			if n.els != nil {
				els = n.els.eval(v, s, k)
			}
			if then != els {
				then = unsure
			}
			r = and(r, then)
		}
	}
	return r
}

func (o *objectRules) check(v any, obj map[string]any) verdict {
	if o.minProps >= 0 && len(obj) < o.minProps || o.maxProps >= 0 && len(obj) > o.maxProps {
		return fail
	}
	for _, p := range o.required {
		if _, ok := obj[p]; !ok {
			return fail
		}
	}
	for _, d := range o.depRequired {
		if _, ok := obj[d.prop]; ok {
			for _, p := range d.required {
				if _, ok := obj[p]; !ok {
					return fail
				}
			}
		}
	}
	r := pass
	for _, d := range o.depSchemas {
		if _, ok := obj[d.prop]; ok {
			if r = and(r, d.n.eval(v, "", kObject)); r == fail {
				return fail
			}
		}
	}
	for name, pv := range obj {
		seen := false
		if pn, ok := o.props[name]; ok {
			seen = true
			if r = and(r, pn.value(pv)); r == fail {
				return fail
			}
		}
		for _, pr := range o.patterns {
			if pr.re.MatchString(name) {
				seen = true
				if r = and(r, pr.n.value(pv)); r == fail {
					return fail
				}
			}
		}
		if !seen {
			if o.noAdditional {
				return fail
			}
			if o.additional != nil {
				if r = and(r, o.additional.value(pv)); r == fail {
					return fail
				}
			}
		}
		if o.names != nil {
			if r = and(r, o.names.eval(nil, name, kString)); r == fail {
				return fail
			}
		}
	}
	return r
}

// maxUnique is the longest array whose uniqueness is checked pairwise;
// longer arrays under uniqueItems are left to jsonschema.
const maxUnique = 64

func (a *arrayRules) check(arr []any) verdict {
	if a.minItems >= 0 && len(arr) < a.minItems || a.maxItems >= 0 && len(arr) > a.maxItems {
		return fail
	}
	r := pass
	if a.unique && len(arr) > 1 {
		if len(arr) > maxUnique {
			r = unsure
		} else {
			for i := 1; i < len(arr); i++ {
				for j := range i {
					switch equal(arr[i], arr[j]) {
					case pass:
						return fail
					case unsure:
						r = unsure
					}
				}
			}
		}
	}
	for i, item := range arr {
		var m *fastNode
		switch {
		case i < len(a.prefix):
			m = a.prefix[i]
		case a.noRest:
			return fail
		default:
			m = a.rest
		}
		if m != nil {
			if r = and(r, m.value(item)); r == fail {
				return fail
			}
		}
	}
	if a.contains != nil {
		lo, hi := 0, 0 // items that surely match, and that may match
		for _, item := range arr {
			switch a.contains.value(item) {
			case pass:
				lo++
				hi++
			case unsure:
				hi++
			}
		}
		switch {
		case hi < a.minContains, a.maxContains >= 0 && lo > a.maxContains:
			return fail
		case lo < a.minContains, a.maxContains >= 0 && hi > a.maxContains:
			r = unsure
		}
	}
	return r
}

func (sr *stringRules) check(s string) verdict {
	if sr.minLen >= 0 || sr.maxLen >= 0 {
		// A rune takes one to four bytes (an invalid byte counts as one
		// rune), so len(s)/4 <= runes <= len(s), and most strings need no
		// counting.
		n := len(s)
		if sr.maxLen >= 0 && n > sr.maxLen || sr.minLen > n/utf8.UTFMax {
			n = utf8.RuneCountInString(s)
		}
		if sr.minLen >= 0 && n < sr.minLen || sr.maxLen >= 0 && n > sr.maxLen {
			return fail
		}
	}
	if sr.pattern != nil && !sr.pattern.MatchString(s) {
		return fail
	}
	return pass
}

func (nr *numberRules) check(x numInfo) verdict {
	if !x.fits {
		// A huge number is beyond every bound, on the side of its sign.
		if x.huge == 0 || nr.multipleOf != nil {
			return unsure
		}
		above, below := x.huge > 0, x.huge < 0
		return is(!(above && (nr.max != nil || nr.exMax != nil) || below && (nr.min != nil || nr.exMin != nil)))
	}
	d := x.d
	if nr.min != nil && d.cmp(nr.min) < 0 ||
		nr.max != nil && d.cmp(nr.max) > 0 ||
		nr.exMin != nil && d.cmp(nr.exMin) <= 0 ||
		nr.exMax != nil && d.cmp(nr.exMax) >= 0 {
		return fail
	}
	if nr.multipleOf != nil {
		return d.multipleOf(nr.multipleOf)
	}
	return pass
}

// equal compares two values as jsonschema's equals does: JSON equality,
// so 1 and 1.0 are equal. It answers pass for equal, fail for unequal.
func equal(a, b any) verdict {
	ka, kb := kindOf(a), kindOf(b)
	switch {
	case ka == 0 || kb == 0:
		return unsure
	case ka != kb:
		return fail
	}
	switch ka {
	case kNull:
		return pass
	case kBool:
		return is(a.(bool) == b.(bool))
	case kString:
		return is(a.(string) == b.(string))
	case kNumber:
		x, ok1 := numberOf(a)
		y, ok2 := numberOf(b)
		if !ok1 || !ok2 || !x.fits || !y.fits {
			return unsure
		}
		return is(x.d == y.d)
	case kArray:
		x, y := a.([]any), b.([]any)
		if len(x) != len(y) {
			return fail
		}
		for i := range x {
			// jsonschema stops at the first difference, in order.
			if r := equal(x[i], y[i]); r != pass {
				return r
			}
		}
		return pass
	}
	x, y := a.(map[string]any), b.(map[string]any)
	if len(x) != len(y) {
		return fail
	}
	// jsonschema stops at the first difference in map order, which is
	// random, so a difference is certain only if nothing is unsure.
	r := pass
	for key, xv := range x {
		yv, ok := y[key]
		if !ok {
			r = fail
			continue
		}
		switch equal(xv, yv) {
		case unsure:
			return unsure
		case fail:
			r = fail
		}
	}
	return r
}

func is(b bool) verdict {
	if b {
		return pass
	}
	return fail
}

// dec is a decimal m/10^k with m > math.MinInt64 and 0 <= k <= 19, normalized
// so that equal numbers are equal decs: m has no trailing zero when k > 0.
type dec struct {
	m int64
	k int
}

// numInfo describes a number as jsonschema sees it: the decimal value of
// its fmt.Sprint form.
type numInfo struct {
	isInt bool // a mathematical integer, such as 2.0 or 1e2
	fits  bool // d holds the value exactly
	d     dec
	huge  int // 1 or -1 when |x| >= 10^19, with the sign of x
}

// numberOf reads a number of the value model. ok is false when it is not
// one, or not in the strict JSON number syntax (jsonschema's big.Rat would
// read more, or fail), or its exponent is absurd.
func numberOf(v any) (numInfo, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseDecimal(string(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return numInfo{}, false
		}
		// jsonschema reads fmt.Sprint(x): the shortest decimal that
		// round-trips, which 'g' with precision -1 also yields.
		var buf [32]byte
		return parseDecimal(strconv.AppendFloat(buf[:0], x, 'g', -1, 64))
	case dec:
		return numInfo{isInt: x.k == 0, fits: true, d: x}, true
	}
	return numInfo{}, false
}

// pow10[i] is 10^i.
var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// parseDecimal reads a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// with at most 6 exponent digits.
func parseDecimal[T string | []byte](s T) (numInfo, bool) {
	i := 0
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	intStart := i
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return numInfo{}, false
	}
	intEnd := i
	fracStart, fracEnd := i, i
	if i < len(s) && s[i] == '.' {
		i++
		fracStart = i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == fracStart {
			return numInfo{}, false
		}
		fracEnd = i
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			exp = exp*10 + int(s[i]-'0')
			i++
		}
		if i == start || i-start > 6 {
			return numInfo{}, false
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return numInfo{}, false
	}

	// The digits are those of the integer part followed by those of the
	// fraction; the decimal point sits after dp of them.
	nInt, nDigits := intEnd-intStart, intEnd-intStart+fracEnd-fracStart
	digit := func(j int) byte {
		if j < nInt {
			return s[intStart+j]
		}
		return s[fracStart+j-nInt]
	}
	first, last := 0, nDigits-1
	for first < nDigits && digit(first) == '0' {
		first++
	}
	if first == nDigits {
		return numInfo{isInt: true, fits: true}, true // zero, -0 included
	}
	for digit(last) == '0' {
		last--
	}
	n := last - first + 1        // significant digits
	dp := nInt + exp - first     // digits before the point, counted from first
	x := numInfo{isInt: dp >= n} // every significant digit is before the point
	if dp >= 20 {                // |x| >= 10^19, beyond every int64 ratio
		x.huge = 1
		if neg {
			x.huge = -1
		}
	}
	if n > 19 || x.isInt && dp > 19 || !x.isInt && n-dp > 19 {
		return x, true
	}
	var u uint64 // < 10^19
	for j := first; j <= last; j++ {
		u = u*10 + uint64(digit(j)-'0')
	}
	if x.isInt {
		hi, lo := bits.Mul64(u, pow10[dp-n])
		if hi != 0 {
			return x, true
		}
		u = lo
	} else {
		x.d.k = n - dp
	}
	if u > math.MaxInt64 {
		return x, true
	}
	x.d.m, x.fits = int64(u), true
	if neg {
		x.d.m = -x.d.m
	}
	return x, true
}

// cmp compares d with r exactly: it compares m*q with p*10^k in 128 bits.
func (d dec) cmp(r *ratio) int {
	sd, sr := sign(d.m), sign(r.p)
	if sd != sr || sd == 0 {
		return sd - sr
	}
	ah, al := bits.Mul64(uabs(d.m), r.q)
	bh, bl := bits.Mul64(uabs(r.p), pow10[d.k])
	c := 0
	switch {
	case ah != bh:
		c = cmpUint(ah, bh)
	default:
		c = cmpUint(al, bl)
	}
	return c * sd
}

// multipleOf reports whether d/r is an integer: whether p*10^k divides
// m*q.
func (d dec) multipleOf(r *ratio) verdict {
	hi, lo := bits.Mul64(uabs(d.m), r.q)
	yh, y := bits.Mul64(uint64(r.p), pow10[d.k])
	if yh != 0 {
		return unsure
	}
	return is(bits.Rem64(hi, lo, y) == 0)
}

func sign(x int64) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func uabs(x int64) uint64 {
	if x < 0 {
		return uint64(-x) // also right for math.MinInt64
	}
	return uint64(x)
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
