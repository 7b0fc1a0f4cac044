package compat

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// checker answers "is every value the writer schema accepts also accepted by
// the reader schema?" for one direction. For Reader the writer is the old
// schema; for Writer it is the new one. Changes are always worded from old to
// new and point into the new schema.
type checker struct {
	dir    Direction
	policy Policy
	memo   map[memoKey][]Change
	busy   map[memoKey]bool
}

type memoKey struct {
	wd, rd *doc
	wp, rp string
	wb, rb bool
	wo, ro string
}

func newChecker(d Direction, p Policy) *checker {
	return &checker{dir: d, policy: p, memo: map[memoKey][]Change{}, busy: map[memoKey]bool{}}
}

func (c *checker) strict() bool { return c.policy == Strict }

// pick returns b in the reader direction and f in the writer direction.
func (c *checker) pick(b, f string) string {
	if c.dir == Reader {
		return b
	}
	return f
}

// newSide returns whichever of w and r is the new schema.
func (c *checker) newSide(w, r node) node {
	if c.dir == Reader {
		return r
	}
	return w
}

// oldNew orders a writer-side and a reader-side value as (old, new).
func oldNew[T any](c *checker, w, r T) (T, T) {
	if c.dir == Reader {
		return w, r
	}
	return r, w
}

func (c *checker) consequence() string {
	if c.dir == Reader {
		return "values written by old writers would be rejected"
	}
	return "old readers would reject values written by new writers"
}

// emitString reports a string keyword (pattern, format) the writer side w
// lacks (wok false) or holds with another value than the reader side r:
// added, removed or changed, seen from old to new.
func (c *checker) emitString(out *[]Change, ptr, kw, w, r string, wok bool) {
	o, n := oldNew(c, w, r)
	switch {
	case !wok && c.dir == Reader:
		c.emit(out, ptr+"/"+kw, kw+"-added", fmt.Sprintf("%s %q added", kw, n))
	case !wok:
		c.emit(out, ptr+"/"+kw, kw+"-removed", fmt.Sprintf("%s %q removed", kw, o))
	default:
		c.emit(out, ptr+"/"+kw, kw+"-changed", fmt.Sprintf("%s changed from %q to %q", kw, o, n))
	}
}

func (c *checker) emit(out *[]Change, ptr, kind, desc string) {
	*out = append(*out, Change{Pointer: ptr, Direction: c.dir, Kind: kind, Message: desc + ": " + c.consequence()})
}

// desc returns a change's message without its consequence.
func (c *checker) desc(ch Change) string {
	return strings.TrimSuffix(ch.Message, ": "+c.consequence())
}

func (c *checker) first(chs []Change) string {
	if len(chs) == 0 {
		return ""
	}
	return c.desc(chs[0])
}

func ref(p string) string { return strconv.Quote("#" + p) }

// cmpNodes compares two subschemas, memoized by location. A pair that is
// being compared further up the stack (a recursive $ref) is assumed
// compatible.
func (c *checker) cmpNodes(w, r node) []Change {
	k := memoKey{w.d, r.d, w.ptr, r.ptr, w.base, r.base, w.only, r.only}
	if ch, ok := c.memo[k]; ok {
		return ch
	}
	// A pair already being compared further up the stack is assumed
	// compatible. Boolean schemas compare by value here, so that an absent
	// keyword (an unconstrained node at a made-up location) facing a
	// recursive schema cannot recurse forever through ever longer pointers.
	bk := k
	if _, ok := w.v.(bool); ok {
		bk.wd, bk.wp = nil, "#"+canon(w.v)
	}
	if _, ok := r.v.(bool); ok {
		bk.rd, bk.rp = nil, "#"+canon(r.v)
	}
	if c.busy[bk] {
		return nil
	}
	c.busy[bk] = true
	we, re := c.normalize(w, nil), c.normalize(r, nil)
	var ch []Change
	if we.op == opAll && we.kw == "allOf" && re.op == opOne {
		// allOf -> oneOf is a criterion change (§2.6), not an allOf branch
		// that happens to fit one oneOf branch.
		ch = c.criterionChanged(we, re)
	} else {
		ch = c.le(we, re)
	}
	delete(c.busy, bk)
	c.memo[k] = ch
	return ch
}

const (
	opLeaf = iota
	opAll
	opAny
	opOne
)

// expr is a schema split into its own keywords (a base leaf), its resolved
// $ref and its combinators.
type expr struct {
	op   int
	n    node   // the leaf, or the schema holding the combinator
	kw   string // "allOf", "anyOf", "oneOf"; "" for a conjunction of mixed parts
	subs []expr
}

func (e expr) ptr() string {
	if e.op == opLeaf || e.kw == "" {
		return e.n.ptr
	}
	return e.n.ptr + "/" + e.kw
}

func (c *checker) normalize(n node, seen map[string]bool) expr {
	if _, ok := n.v.(map[string]any); !ok || n.base {
		return expr{op: opLeaf, n: n}
	}
	// seen holds the schemas being normalized up the stack, so that a $ref
	// cycle that never passes through a keyword that descends into the value
	// (such as {"anyOf": [X, {"$ref": "#"}]}) terminates.
	s := map[string]bool{n.ptr: true}
	for k := range seen {
		s[k] = true
	}
	var parts []expr
	fromAllOf := true
	hasComb := false
	if n.has("$dynamicRef") {
		fail(n.ptr+"/$dynamicRef", "$dynamicRef is not supported")
	}
	refKw := "$ref"
	if !n.has(refKw) && n.has("$recursiveRef") {
		refKw = "$recursiveRef"
	}
	if r, ok := n.str(refKw); ok {
		hasComb, fromAllOf = true, false
		t := n.d.resolve(r, n.ptr+"/"+refKw)
		if s[t.ptr] {
			fail(n.ptr+"/"+refKw, "%s %q loops back to %s without descending into the value", refKw, r, ref(t.ptr))
		}
		parts = append(parts, c.normalize(t, s))
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		a, ok := n.arr(kw)
		if !ok {
			continue
		}
		if len(a) == 0 {
			fail(n.ptr+"/"+kw, "%s must not be empty", kw)
		}
		hasComb = true
		var subs []expr
		dup := map[string]bool{}
		for i, e := range a {
			if k := canon(e); dup[k] {
				continue
			} else {
				dup[k] = true
			}
			subs = append(subs, c.normalize(n.sub(e, fmt.Sprintf("/%s/%d", kw, i)), s))
		}
		switch {
		case kw == "allOf":
			parts = append(parts, subs...)
		case len(subs) == 1:
			fromAllOf = false
			parts = append(parts, subs[0])
		default:
			fromAllOf = false
			op := opAny
			if kw == "oneOf" {
				op = opOne
			}
			parts = append(parts, expr{op: op, n: n, kw: kw, subs: subs})
		}
	}
	b := n
	b.base = true
	if !hasComb {
		return expr{op: opLeaf, n: b}
	}
	if b.constrained() {
		fromAllOf = false
		parts = append([]expr{{op: opLeaf, n: b}}, parts...)
	}
	switch len(parts) {
	case 0:
		return expr{op: opLeaf, n: b}
	case 1:
		return parts[0]
	}
	kw := ""
	if fromAllOf {
		kw = "allOf"
	}
	return expr{op: opAll, n: n, kw: kw, subs: parts}
}

// le reports why w does not imply r (nil when it does).
func (c *checker) le(w, r expr) []Change {
	switch {
	case w.op == opLeaf && r.op == opLeaf:
		return c.cmpLeaf(w.n, r.n)
	case r.op == opAll:
		var out []Change
		for _, s := range r.subs {
			out = append(out, c.le(w, s)...)
		}
		return out
	case w.op == opAll:
		var best []Change
		for i, s := range w.subs {
			ch := c.le(s, r)
			if len(ch) == 0 {
				return nil
			}
			if i == 0 || len(ch) < len(best) {
				best = ch
			}
		}
		return best
	case w.op == opLeaf: // r is anyOf or oneOf
		if ts := explicitTypes(w.n); len(ts) > 1 && w.n.only == "" {
			var out []Change
			for _, t := range ts {
				n := w.n
				n.only = t
				out = append(out, c.le(expr{op: opLeaf, n: n}, r)...)
			}
			return out
		}
		return c.someBranch(w, r)
	case r.op == opLeaf: // w is anyOf or oneOf: every branch must fit
		var out []Change
		for _, s := range w.subs {
			out = append(out, c.le(s, r)...)
		}
		return out
	}
	// Both are anyOf or oneOf.
	if r.op == opOne && w.op != opOne {
		return c.criterionChanged(w, r)
	}
	if r.op == opOne {
		return c.matchBranches(w, r)
	}
	var out []Change
	for _, s := range w.subs {
		out = append(out, c.someBranch(s, r)...)
	}
	return out
}

func (c *checker) criterionChanged(w, r expr) []Change {
	var out []Change
	o, n := oldNew(c, w.kw, r.kw)
	c.emit(&out, c.pick(r.ptr(), w.ptr()), "combined-type-changed", fmt.Sprintf("%s changed to %s", o, n))
	return out
}

// someBranch requires w to fit at least one branch of the anyOf/oneOf r.
func (c *checker) someBranch(w, r expr) []Change {
	var best []Change
	bi := 0
	for i, s := range r.subs {
		ch := c.le(w, s)
		if len(ch) == 0 {
			return nil
		}
		if i == 0 || len(ch) < len(best) {
			best, bi = ch, i
		}
	}
	return c.unmatched(w, r, r.subs[bi], best)
}

func (c *checker) unmatched(w, r, closest expr, why []Change) []Change {
	var out []Change
	detail := fmt.Sprintf("; closest branch %s: %s", ref(closest.ptr()), c.first(why))
	if c.dir == Reader {
		c.emit(&out, r.ptr(), "sum-type-narrowed",
			fmt.Sprintf("no branch of the new %s accepts everything the old schema at %s accepts%s", r.kw, ref(w.ptr()), detail))
	} else {
		c.emit(&out, w.ptr(), "sum-type-extended",
			fmt.Sprintf("new schema at %s accepts values no branch of the old %s accepts%s", ref(w.ptr()), r.kw, detail))
	}
	return out
}

// matchBranches pairs oneOf branches by maximum bipartite matching over
// compatible pairs; every writer branch must be matched.
func (c *checker) matchBranches(w, r expr) []Change {
	ok := make([][]bool, len(w.subs))
	why := make([][][]Change, len(w.subs))
	for i, ws := range w.subs {
		ok[i] = make([]bool, len(r.subs))
		why[i] = make([][]Change, len(r.subs))
		for j, rs := range r.subs {
			why[i][j] = c.le(ws, rs)
			ok[i][j] = len(why[i][j]) == 0
		}
	}
	match := make([]int, len(r.subs)) // r branch -> w branch
	for j := range match {
		match[j] = -1
	}
	var try func(i int, seen []bool) bool
	try = func(i int, seen []bool) bool {
		for j := range r.subs {
			if ok[i][j] && !seen[j] {
				seen[j] = true
				if match[j] < 0 || try(match[j], seen) {
					match[j] = i
					return true
				}
			}
		}
		return false
	}
	matched := make([]bool, len(w.subs))
	for i := range w.subs {
		matched[i] = try(i, make([]bool, len(r.subs)))
	}
	var out []Change
	for i, m := range matched {
		if m {
			continue
		}
		bj := 0
		for j := range r.subs {
			if len(why[i][j]) > 0 && (len(why[i][bj]) == 0 || len(why[i][j]) < len(why[i][bj])) {
				bj = j
			}
		}
		out = append(out, c.unmatched(w.subs[i], r, r.subs[bj], why[i][bj])...)
	}
	return out
}

// cmpLeaf compares the own keywords of two schemas.
func (c *checker) cmpLeaf(w, r node) []Change {
	w.base, r.base = true, true
	if w.isFalse() || !r.constrained() {
		return nil
	}
	var out []Change
	if r.isFalse() {
		if c.dir == Reader {
			c.emit(&out, r.ptr, "false-schema", "schema changed to false, which accepts nothing")
		} else {
			c.emit(&out, w.ptr, "false-schema", "schema changed from false, which accepted nothing")
		}
		return out
	}
	if w.v == true {
		w.v = map[string]any{}
	}
	fin := finite(w)
	wT, rT := typeSet(w), typeSet(r)
	if wT == nil && fin != nil {
		wT = map[string]bool{}
		for _, v := range fin {
			wT[jsonType(v)] = true
		}
	}
	c.types(&out, w, r, wT, rT, fin)
	c.enums(&out, w, r, fin)
	if canHave(wT, "string") && canHave(rT, "string") {
		c.strs(&out, w, r, fin)
	}
	if canHave(wT, "number") && canHave(rT, "number") {
		c.nums(&out, w, r, wT, fin)
	}
	if canHave(wT, "object") && canHave(rT, "object") {
		c.objects(&out, w, r)
	}
	if canHave(wT, "array") && canHave(rT, "array") {
		c.arrays(&out, w, r)
	}
	c.not(&out, w, r)
	c.conditional(&out, w, r)
	return out
}

var typeOrder = []string{"null", "boolean", "object", "array", "number", "integer", "string"}

func explicitTypes(n node) []string {
	m := n.m()
	if m == nil {
		return nil
	}
	a, ok := m["type"].([]any)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range a {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// typeSet is the set of JSON types a schema allows; nil means all.
func typeSet(n node) map[string]bool {
	var set map[string]bool
	if v, ok := n.m()["type"]; ok {
		set = map[string]bool{}
		add := func(e any, p string) {
			s, ok := e.(string)
			if !ok || !slices.Contains(typeOrder, s) {
				fail(p, "type must name a JSON type, got %s", show(e))
			}
			set[s] = true
		}
		switch x := v.(type) {
		case []any:
			for i, e := range x {
				add(e, n.ptr+"/type/"+strconv.Itoa(i))
			}
		default:
			add(x, n.ptr+"/type")
		}
	}
	if n.only == "" {
		return set
	}
	if set == nil || set[n.only] {
		return map[string]bool{n.only: true}
	}
	if n.only == "integer" && set["number"] {
		return map[string]bool{"integer": true}
	}
	return map[string]bool{}
}

// canHave reports whether a type set admits values of type t, counting
// integers as numbers.
func canHave(set map[string]bool, t string) bool {
	if set == nil || set[t] {
		return true
	}
	switch t {
	case "number":
		return set["integer"]
	case "integer":
		return set["number"]
	}
	return false
}

// accepts reports whether every value of type t is allowed by set.
func accepts(set map[string]bool, t string) bool {
	return set == nil || set[t] || (t == "integer" && set["number"])
}

func fmtTypes(set map[string]bool) string {
	if set == nil {
		return "any"
	}
	var ts []string
	for _, t := range typeOrder {
		if set[t] {
			ts = append(ts, strconv.Quote(t))
		}
	}
	if len(ts) == 1 {
		return ts[0]
	}
	return "[" + strings.Join(ts, ", ") + "]"
}

func (c *checker) types(out *[]Change, w, r node, wT, rT map[string]bool, fin []any) {
	if rT == nil {
		return
	}
	np := c.newSide(w, r).ptr + "/type"
	oT, nT := oldNew(c, wT, rT)
	if wT == nil {
		if c.dir == Reader {
			c.emit(out, np, "type-added", fmt.Sprintf("type %s added", fmtTypes(nT)))
		} else {
			c.emit(out, np, "type-removed", fmt.Sprintf("type %s removed", fmtTypes(oT)))
		}
		return
	}
	var missing []string
	overlap := false
	for _, t := range typeOrder {
		if !wT[t] {
			continue
		}
		if canHave(rT, t) {
			overlap = true
		}
		if accepts(rT, t) {
			continue
		}
		if fin != nil && !slices.ContainsFunc(fin, func(v any) bool { return jsonType(v) == t }) {
			continue
		}
		missing = append(missing, t)
	}
	if len(missing) == 0 {
		return
	}
	switch {
	case !overlap:
		c.emit(out, np, "type-changed", fmt.Sprintf("type changed from %s to %s", fmtTypes(oT), fmtTypes(nT)))
	case c.dir == Reader:
		c.emit(out, np, "type-narrowed", fmt.Sprintf("type narrowed from %s to %s", fmtTypes(oT), fmtTypes(nT)))
	default:
		c.emit(out, np, "type-widened", fmt.Sprintf("type widened from %s to %s", fmtTypes(oT), fmtTypes(nT)))
	}
}

// finite returns the values a schema's const or enum allows, or nil.
func finite(n node) []any {
	m := n.m()
	c, hasConst := m["const"]
	if _, ok := m["enum"]; !ok {
		if hasConst {
			return []any{c}
		}
		return nil
	}
	a, _ := n.arr("enum")
	if !hasConst {
		return append([]any{}, a...)
	}
	for _, v := range a { // const and enum: both must hold
		if canon(v) == canon(c) {
			return []any{c}
		}
	}
	return []any{}
}

func (c *checker) enums(out *[]Change, w, r node, fin []any) {
	rv := finite(r)
	if rv == nil {
		return
	}
	ns := c.newSide(w, r)
	rConst, wConst := r.has("const"), w.has("const")
	kwNew := "enum"
	if (c.dir == Reader && rConst) || (c.dir == Writer && wConst) {
		kwNew = "const"
	}
	np := ns.ptr + "/" + kwNew
	if fin == nil {
		kw := "enum"
		if rConst {
			kw = "const"
		}
		v := r.m()[kw]
		if c.dir == Reader {
			c.emit(out, r.ptr+"/"+kw, kw+"-added", fmt.Sprintf("%s %s added", kw, show(v)))
		} else {
			c.emit(out, w.ptr+"/"+kw, kw+"-removed", fmt.Sprintf("%s %s removed", kw, show(v)))
		}
		return
	}
	in := map[string]bool{}
	for _, v := range rv {
		in[canon(v)] = true
	}
	var missing []any
	for _, v := range fin {
		if !in[canon(v)] {
			missing = append(missing, v)
		}
	}
	if len(missing) == 0 {
		return
	}
	if rConst || wConst {
		o, n := oldNew(c, w, r)
		c.emit(out, np, "const-changed", fmt.Sprintf("allowed values changed from %s to %s", showValues(o), showValues(n)))
		return
	}
	for _, v := range missing {
		if c.dir == Reader {
			c.emit(out, np, "enum-value-removed", fmt.Sprintf("enum value %s removed", show(v)))
		} else {
			c.emit(out, np, "enum-value-added", fmt.Sprintf("enum value %s added", show(v)))
		}
	}
}

func showValues(n node) string {
	if v, ok := n.m()["const"]; ok {
		return "const " + show(v)
	}
	return "enum " + show(n.m()["enum"])
}

// bound is a lower or upper limit from one keyword.
type bound struct {
	v    num
	excl bool
	kw   string
}

// numBound returns the effective numeric lower (upper=false) or upper bound.
func numBound(n node, upper bool) (bound, bool) {
	incl, excl := "minimum", "exclusiveMinimum"
	if upper {
		incl, excl = "maximum", "exclusiveMaximum"
	}
	var b bound
	have := false
	if v, ok := n.number(incl); ok {
		b, have = bound{v: v, kw: incl}, true
		if x, ok := n.m()[excl].(bool); ok && x { // draft 4
			b.excl, b.kw = true, excl
		}
	}
	if _, isBool := n.m()[excl].(bool); !isBool {
		if v, ok := n.number(excl); ok {
			tighter := !have
			if have {
				d := v.r.Cmp(b.v.r)
				tighter = d == 0 || (d > 0) != upper
			}
			if tighter {
				b, have = bound{v: v, excl: true, kw: excl}, true
			}
		}
	}
	return b, have
}

func intBound(n node, kw string) (bound, bool) {
	v, ok := n.number(kw)
	if !ok {
		return bound{}, false
	}
	if !v.r.IsInt() || v.r.Sign() < 0 {
		fail(n.ptr+"/"+kw, "%s must be a non-negative integer, got %s", kw, v.text)
	}
	return bound{v: v, kw: kw}, true
}

// looser reports whether writer bound wb admits a value reader bound rb
// rejects.
func looser(wb, rb bound, upper bool) bool {
	d := wb.v.r.Cmp(rb.v.r)
	if upper {
		d = -d
	}
	return d < 0 || (d == 0 && rb.excl && !wb.excl)
}

// checkBound compares one bound; violates, when not nil, says whether a
// value of the writer's finite set breaks the reader's bound.
func (c *checker) checkBound(out *[]Change, w, r node, wb, rb bound, wok, rok, upper bool, violates func(bound) bool) {
	if !rok || (wok && !looser(wb, rb, upper)) {
		return
	}
	if violates != nil && !violates(rb) {
		return
	}
	ns := c.newSide(w, r)
	ob, nb := oldNew(c, wb, rb)
	oHas, nHas := oldNew(c, wok, rok)
	switch {
	case !oHas:
		c.emit(out, ns.ptr+"/"+nb.kw, kebab(nb.kw)+"-added", fmt.Sprintf("%s %s added", nb.kw, nb.v.text))
	case !nHas:
		c.emit(out, ns.ptr+"/"+ob.kw, kebab(ob.kw)+"-removed", fmt.Sprintf("%s %s removed", ob.kw, ob.v.text))
	case ob.kw != nb.kw:
		if c.dir == Reader {
			c.emit(out, ns.ptr+"/"+nb.kw, kebab(nb.kw)+"-added", fmt.Sprintf("%s %s replaced by %s %s", ob.kw, ob.v.text, nb.kw, nb.v.text))
		} else {
			c.emit(out, ns.ptr+"/"+nb.kw, kebab(ob.kw)+"-removed", fmt.Sprintf("%s %s replaced by %s %s", ob.kw, ob.v.text, nb.kw, nb.v.text))
		}
	default:
		dir := "increased"
		if nb.v.r.Cmp(ob.v.r) < 0 {
			dir = "decreased"
		}
		c.emit(out, ns.ptr+"/"+nb.kw, kebab(nb.kw)+"-"+dir, fmt.Sprintf("%s %s from %s to %s", nb.kw, dir, ob.v.text, nb.v.text))
	}
}

func (c *checker) intBounds(out *[]Change, w, r node, lower, upper string, violates func(kw string, b bound) bool) {
	for _, kw := range []string{lower, upper} {
		wb, wok := intBound(w, kw)
		rb, rok := intBound(r, kw)
		var v func(bound) bool
		if violates != nil {
			v = func(b bound) bool { return violates(kw, b) }
		}
		c.checkBound(out, w, r, wb, rb, wok, rok, kw == upper, v)
	}
}

func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (c *checker) strs(out *[]Change, w, r node, fin []any) {
	var strsIn []string
	for _, v := range fin {
		if s, ok := v.(string); ok {
			strsIn = append(strsIn, s)
		}
	}
	var violates func(string, bound) bool
	if fin != nil {
		violates = func(kw string, b bound) bool {
			for _, s := range strsIn {
				l := new(big.Rat).SetInt64(int64(utf8.RuneCountInString(s)))
				if d := l.Cmp(b.v.r); (kw == "minLength" && d < 0) || (kw == "maxLength" && d > 0) {
					return true
				}
			}
			return false
		}
	}
	c.intBounds(out, w, r, "minLength", "maxLength", violates)

	ns := c.newSide(w, r)
	if rp, ok := r.str("pattern"); ok {
		wp, wok := w.str("pattern")
		bad := !wok || wp != rp
		if bad && fin != nil {
			re := compilePattern(rp)
			bad = slices.ContainsFunc(strsIn, func(s string) bool { return re == nil || !re.MatchString(s) })
		}
		if bad {
			c.emitString(out, ns.ptr, "pattern", wp, rp, wok)
		}
	}
	if rf, ok := r.str("format"); ok && fin == nil {
		wf, wok := w.str("format")
		if !wok || wf != rf {
			c.emitString(out, ns.ptr, "format", wf, rf, wok)
		}
	}
}

func isMultiple(a, b *big.Rat) bool {
	if b.Sign() == 0 {
		return false
	}
	return new(big.Rat).Quo(a, b).IsInt()
}

func (c *checker) nums(out *[]Change, w, r node, wT map[string]bool, fin []any) {
	var numsIn []*big.Rat
	for _, v := range fin {
		if n, ok := toNum(v); ok {
			if _, isBool := v.(bool); !isBool {
				numsIn = append(numsIn, n.r)
			}
		}
	}
	for _, upper := range []bool{false, true} {
		wb, wok := numBound(w, upper)
		rb, rok := numBound(r, upper)
		var v func(bound) bool
		if fin != nil {
			v = func(b bound) bool {
				for _, x := range numsIn {
					if looser(bound{v: num{r: x}}, b, upper) {
						return true
					}
				}
				return false
			}
		}
		c.checkBound(out, w, r, wb, rb, wok, rok, upper, v)
	}
	rm, ok := r.number("multipleOf")
	if !ok {
		return
	}
	if rm.r.Sign() <= 0 {
		fail(r.ptr+"/multipleOf", "multipleOf must be greater than 0")
	}
	wm, wok := w.number("multipleOf")
	if wok && isMultiple(wm.r, rm.r) {
		return
	}
	onlyInts := wT != nil && !wT["number"] && wT["integer"]
	if onlyInts && new(big.Rat).Inv(rm.r).IsInt() {
		return // every integer is a multiple of 1/k
	}
	if fin != nil && !slices.ContainsFunc(numsIn, func(x *big.Rat) bool { return !isMultiple(x, rm.r) }) {
		return
	}
	ns := c.newSide(w, r)
	om, nm := oldNew(c, wm, rm)
	p := ns.ptr + "/multipleOf"
	switch {
	case !wok && c.dir == Reader:
		c.emit(out, p, "multiple-of-added", fmt.Sprintf("multipleOf %s added", nm.text))
	case !wok:
		c.emit(out, p, "multiple-of-removed", fmt.Sprintf("multipleOf %s removed", om.text))
	case isMultiple(nm.r, om.r):
		c.emit(out, p, "multiple-of-expanded", fmt.Sprintf("multipleOf changed from %s to its multiple %s", om.text, nm.text))
	case isMultiple(om.r, nm.r):
		c.emit(out, p, "multiple-of-reduced", fmt.Sprintf("multipleOf changed from %s to its divisor %s", om.text, nm.text))
	default:
		c.emit(out, p, "multiple-of-changed", fmt.Sprintf("multipleOf changed from %s to %s", om.text, nm.text))
	}
}

func (c *checker) not(out *[]Change, w, r node) {
	rn, ok := r.child("not")
	if !ok {
		return
	}
	wn, wok := w.child("not")
	if wok && len(c.cmpNodes(rn, wn)) == 0 {
		return // the new exclusion is inside the old one
	}
	ns := c.newSide(w, r)
	switch {
	case !wok && c.dir == Reader:
		c.emit(out, ns.ptr+"/not", "not-added", "not added")
	case !wok:
		c.emit(out, ns.ptr+"/not", "not-removed", "not removed")
	default:
		c.emit(out, ns.ptr+"/not", "not-changed", c.pick("not changed: the new schema excludes values the old one allowed",
			"not changed: the old schema excludes values the new one allows"))
	}
}

func (c *checker) conditional(out *[]Change, w, r node) {
	ri, ok := r.child("if")
	if !ok || (!r.has("then") && !r.has("else")) {
		return
	}
	wi, wok := w.child("if")
	if wok && (w.has("then") || w.has("else")) && canon(wi.v) == canon(ri.v) {
		for _, kw := range []string{"then", "else"} {
			rt, ok := r.child(kw)
			if !ok {
				continue
			}
			wt, ok := w.child(kw)
			if !ok {
				wt = trueAt(w.d, w.ptr+"/"+kw)
			}
			*out = append(*out, c.cmpNodes(wt, rt)...)
		}
		return
	}
	ns := c.newSide(w, r)
	switch {
	case !wok && c.dir == Reader:
		c.emit(out, ns.ptr+"/if", "conditional-added", "if/then/else added")
	case !wok:
		c.emit(out, ns.ptr+"/if", "conditional-removed", "if/then/else removed")
	default:
		c.emit(out, ns.ptr+"/if", "conditional-changed", "if condition changed")
	}
}
