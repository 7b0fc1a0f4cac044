package compat

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
)

// Content models (compatibility.md §2.4).
const (
	modelOpen    = iota // additionalProperties absent or true
	modelClosed         // additionalProperties false
	modelPartial        // additionalProperties a schema, or a patternProperties match
)

// extra is the schema for properties that no properties or
// patternProperties entry names.
type extra struct {
	n     node
	model int
	kw    string
}

func extraOf(n node) extra {
	for _, kw := range []string{"additionalProperties", "unevaluatedProperties"} {
		if s, ok := n.child(kw); ok {
			e := extra{n: s, kw: kw, model: modelPartial}
			switch {
			case s.isFalse():
				e.model = modelClosed
			case !s.constrained():
				e.model = modelOpen
			}
			return e
		}
	}
	return extra{n: trueAt(n.d, n.ptr+"/additionalProperties"), kw: "additionalProperties", model: modelOpen}
}

type patProp struct {
	pat string
	re  *regexp.Regexp
	n   node
}

func patternsOf(n node) []patProp {
	pp := n.obj("patternProperties")
	var out []patProp
	for _, p := range sortedKeys(pp) {
		out = append(out, patProp{pat: p, re: compilePattern(p), n: n.sub(pp[p], "/patternProperties/"+escape(p))})
	}
	return out
}

type objModel struct {
	n     node
	props map[string]any
	pats  []patProp
	extra extra
}

func objModelOf(n node) objModel {
	return objModel{n: n, props: n.obj("properties"), pats: patternsOf(n), extra: extraOf(n)}
}

// constraints returns every subschema a property named p must satisfy, and
// the content model that governs it.
func (o objModel) constraints(p string) ([]node, int) {
	var out []node
	model := o.extra.model
	if v, ok := o.props[p]; ok {
		out = append(out, o.n.sub(v, "/properties/"+escape(p)))
		model = -1
	}
	for _, pp := range o.pats {
		if pp.re != nil && pp.re.MatchString(p) {
			out = append(out, pp.n)
			if model != -1 {
				model = modelPartial
			}
		}
	}
	if len(out) == 0 {
		out = append(out, o.extra.n)
	}
	return out, model
}

// someOf compares the conjunction of ws with r: it suffices that one of ws
// fits r. It goes through cmpNodes so that recursion is memoized.
func (c *checker) someOf(ws []node, r node) []Change {
	var best []Change
	for i, w := range ws {
		ch := c.cmpNodes(w, r)
		if len(ch) == 0 {
			return nil
		}
		if i == 0 || len(ch) < len(best) {
			best = ch
		}
	}
	return best
}

func (c *checker) objects(out *[]Change, w, r node) {
	c.intBounds(out, w, r, "minProperties", "maxProperties", nil)
	wo, ro := objModelOf(w), objModelOf(r)
	ns := c.newSide(w, r)

	names := sortedKeys(wo.props)
	for _, p := range sortedKeys(ro.props) {
		if _, ok := wo.props[p]; !ok {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	for _, p := range names {
		_, inW := wo.props[p]
		_, inR := ro.props[p]
		wc, wModel := wo.constraints(p)
		rc, rModel := ro.constraints(p)
		var ch []Change
		for _, n := range rc {
			ch = append(ch, c.someOf(wc, n)...)
		}
		if len(ch) == 0 {
			continue
		}
		pp := ns.ptr + "/properties/" + escape(p)
		switch {
		case inW && inR:
			*out = append(*out, ch...)
		case inR: // the reader declares p; the writer's content model governs it
			switch wModel {
			case modelOpen:
				if c.strict() {
					if c.dir == Reader {
						c.emit(out, pp, "property-added-open-model", fmt.Sprintf("property %q added to an open content model, where old values may hold any %q (%s)", p, p, c.first(ch)))
					} else {
						c.emit(out, pp, "property-removed-open-model", fmt.Sprintf("property %q removed from an open content model, so new values may hold any %q (%s)", p, p, c.first(ch)))
					}
				}
			case modelPartial:
				c.emit(out, pp, c.pick("property-added-not-covered", "property-removed-not-covered"),
					fmt.Sprintf("property %q %s, but the %s schema for other properties does not cover it (%s)", p, c.pick("added", "removed"), c.pick("old", "new"), c.first(ch)))
			}
		case inW: // the writer declares p; the reader's content model governs it
			switch rModel {
			case modelClosed:
				if c.strict() {
					c.emit(out, pp, c.pick("property-removed-closed-model", "property-added-closed-model"),
						fmt.Sprintf("property %q %s a closed content model", p, c.pick("removed from", "added to")))
				}
			case modelPartial:
				c.emit(out, pp, c.pick("property-removed-not-covered", "property-added-not-covered"),
					fmt.Sprintf("property %q %s, but the %s schema for other properties does not cover it (%s)", p, c.pick("removed", "added"), c.pick("new", "old"), c.first(ch)))
			}
		}
	}

	// Properties neither side names.
	we, re := wo.extra, ro.extra
	ep := ns.ptr + "/" + extraKw(ns)
	switch {
	case re.model == modelOpen, we.model == modelClosed:
	case re.model == modelClosed:
		if c.strict() {
			c.emit(out, ep, kebab(re.kw)+c.pick("-removed", "-added"),
				fmt.Sprintf("content model %s (%s: false %s)", c.pick("closed", "opened"), re.kw, c.pick("added", "removed")))
		}
	case we.model == modelOpen:
		if ch := c.cmpNodes(we.n, re.n); len(ch) > 0 && c.strict() {
			c.emit(out, ep, kebab(re.kw)+c.pick("-narrowed", "-extended"),
				fmt.Sprintf("content model %s (%s schema %s; %s)", c.pick("narrowed", "extended"), re.kw, c.pick("added", "removed"), c.first(ch)))
		}
	default:
		*out = append(*out, c.cmpNodes(we.n, re.n)...)
	}

	// patternProperties by pattern text.
	wPats := map[string]node{}
	for _, p := range wo.pats {
		wPats[p.pat] = p.n
	}
	rPats := map[string]bool{}
	for _, rp := range ro.pats {
		rPats[rp.pat] = true
		if wn, ok := wPats[rp.pat]; ok {
			*out = append(*out, c.cmpNodes(wn, rp.n)...)
			continue
		}
		switch we.model {
		case modelOpen:
			if ch := c.cmpNodes(we.n, rp.n); len(ch) > 0 && c.strict() {
				c.emit(out, c.newSide(w, r).ptr+"/patternProperties/"+escape(rp.pat), c.pick("pattern-property-added", "pattern-property-removed"),
					fmt.Sprintf("patternProperties %q %s (%s)", rp.pat, c.pick("added", "removed"), c.first(ch)))
			}
		case modelPartial:
			*out = append(*out, c.cmpNodes(we.n, rp.n)...)
		}
	}
	for _, wp := range wo.pats {
		if rPats[wp.pat] {
			continue
		}
		switch re.model {
		case modelClosed:
			if ch := c.cmpNodes(wp.n, re.n); len(ch) > 0 && c.strict() {
				c.emit(out, c.newSide(w, r).ptr+"/patternProperties/"+escape(wp.pat), c.pick("pattern-property-removed", "pattern-property-added"),
					fmt.Sprintf("patternProperties %q %s a closed content model", wp.pat, c.pick("removed from", "added to")))
			}
		case modelPartial:
			*out = append(*out, c.cmpNodes(wp.n, re.n)...)
		}
	}

	c.required(out, w, r, wo, ro)
	c.dependencies(out, w, r)

	if rn, ok := r.child("propertyNames"); ok {
		if wn, ok := w.child("propertyNames"); ok {
			*out = append(*out, c.cmpNodes(wn, rn)...)
		} else {
			c.emit(out, ns.ptr+"/propertyNames", c.pick("property-names-added", "property-names-removed"),
				fmt.Sprintf("propertyNames %s", c.pick("added", "removed")))
		}
	}
}

// extraKw is the keyword name to point at for content-model changes.
func extraKw(n node) string {
	if n.has("unevaluatedProperties") && !n.has("additionalProperties") {
		return "unevaluatedProperties"
	}
	return "additionalProperties"
}

func hasDefault(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m["default"]
	return ok
}

func (c *checker) required(out *[]Change, w, r node, wo, ro objModel) {
	wReq := map[string]bool{}
	for _, p := range w.strings("required") {
		wReq[p] = true
	}
	for _, p := range r.strings("required") {
		if wReq[p] {
			continue
		}
		if hasDefault(ro.props[p]) {
			continue // readers fill in the default (§2.4)
		}
		if c.dir == Reader {
			c.emit(out, r.ptr+"/required", "required-added", fmt.Sprintf("property %q is now required", p))
			continue
		}
		ptr := w.ptr
		switch _, inProps := wo.props[p]; {
		case inProps:
			ptr = w.ptr + "/properties/" + escape(p)
		case w.has("required"):
			ptr = w.ptr + "/required"
		}
		c.emit(out, ptr, "required-removed", fmt.Sprintf("property %q is no longer required", p))
	}
}

type depSet struct {
	req     map[string][]string
	reqKw   map[string]string
	schemas map[string]node
}

func depsOf(n node) depSet {
	d := depSet{req: map[string][]string{}, reqKw: map[string]string{}, schemas: map[string]node{}}
	for _, kw := range []string{"dependencies", "dependentRequired", "dependentSchemas"} {
		o := n.obj(kw)
		for _, k := range sortedKeys(o) {
			p := n.ptr + "/" + kw + "/" + escape(k)
			switch v := o[k].(type) {
			case []any:
				if kw == "dependentSchemas" {
					fail(p, "dependentSchemas entries must be schemas")
				}
				var ss []string
				for i, e := range v {
					s, ok := e.(string)
					if !ok {
						fail(p+"/"+strconv.Itoa(i), "dependency entries must be strings")
					}
					ss = append(ss, s)
				}
				d.req[k] = append(d.req[k], ss...)
				d.reqKw[k] = kw
			default:
				if kw == "dependentRequired" {
					fail(p, "dependentRequired entries must be arrays")
				}
				d.schemas[k] = n.sub(v, "/"+kw+"/"+escape(k))
			}
		}
	}
	return d
}

func (c *checker) dependencies(out *[]Change, w, r node) {
	wd, rd := depsOf(w), depsOf(r)
	ns := c.newSide(w, r)
	nd := wd
	if c.dir == Reader {
		nd = rd
	}
	od := rd
	if c.dir == Reader {
		od = wd
	}
	wReq := w.strings("required")
	for _, k := range sortedKeys(rd.req) {
		have, ok := wd.req[k]
		var missing []string
		for _, p := range rd.req[k] {
			if !slices.Contains(have, p) && !slices.Contains(wReq, p) {
				missing = append(missing, p)
			}
		}
		if len(missing) == 0 {
			continue
		}
		kw := nd.reqKw[k]
		if kw == "" {
			kw = od.reqKw[k]
		}
		p := ns.ptr + "/" + kw + "/" + escape(k)
		if !ok {
			c.emit(out, p, c.pick("dependent-required-added", "dependent-required-removed"),
				fmt.Sprintf("%s entry %q %s", kw, k, c.pick("added", "removed")))
		} else {
			c.emit(out, p, c.pick("dependent-required-extended", "dependent-required-narrowed"),
				fmt.Sprintf("%s entry %q %s %s", kw, k, c.pick("now also requires", "no longer requires"), show(toAny(missing))))
		}
	}
	for _, k := range sortedKeys(rd.schemas) {
		if wn, ok := wd.schemas[k]; ok {
			*out = append(*out, c.cmpNodes(wn, rd.schemas[k])...)
			continue
		}
		c.emit(out, ns.ptr+"/dependentSchemas/"+escape(k), c.pick("dependent-schema-added", "dependent-schema-removed"),
			fmt.Sprintf("dependent schema for %q %s", k, c.pick("added", "removed")))
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// arrayModel splits an array schema into tuple positions and the schema for
// the remaining items, for both draft 2020-12 (prefixItems/items) and earlier
// drafts (items array/additionalItems).
func arrayModel(n node) (pre []node, rest node, restKw string) {
	m := n.m()
	if a, ok := m["items"].([]any); ok {
		for i, e := range a {
			pre = append(pre, n.sub(e, "/items/"+strconv.Itoa(i)))
		}
		if s, ok := n.child("additionalItems"); ok {
			return pre, s, "additionalItems"
		}
		return pre, trueAt(n.d, n.ptr+"/additionalItems"), "additionalItems"
	}
	if _, ok := m["prefixItems"]; ok {
		a, _ := n.arr("prefixItems")
		for i, e := range a {
			pre = append(pre, n.sub(e, "/prefixItems/"+strconv.Itoa(i)))
		}
	}
	for _, kw := range []string{"items", "unevaluatedItems"} {
		if s, ok := n.child(kw); ok {
			return pre, s, kw
		}
	}
	return pre, trueAt(n.d, n.ptr+"/items"), "items"
}

func (c *checker) arrays(out *[]Change, w, r node) {
	c.intBounds(out, w, r, "minItems", "maxItems", nil)
	ns := c.newSide(w, r)
	if r.boolean("uniqueItems") && !w.boolean("uniqueItems") {
		c.emit(out, ns.ptr+"/uniqueItems", c.pick("unique-items-added", "unique-items-removed"),
			fmt.Sprintf("uniqueItems %s", c.pick("added", "removed")))
	}
	rMin, rMinOK := intBound(r, "minContains")
	if rc, ok := r.child("contains"); ok && (!rMinOK || rMin.v.r.Sign() > 0) {
		if wc, ok := w.child("contains"); ok {
			*out = append(*out, c.cmpNodes(wc, rc)...)
			// minContains defaults to 1 when contains is present.
			one := bound{v: num{r: big.NewRat(1, 1), text: "1"}, kw: "minContains"}
			wMin, wMinOK := intBound(w, "minContains")
			if !wMinOK {
				wMin = one
			}
			if !rMinOK {
				rMin = one
			}
			c.checkBound(out, w, r, wMin, rMin, true, true, false, nil)
			wMax, wMaxOK := intBound(w, "maxContains")
			rMax, rMaxOK := intBound(r, "maxContains")
			c.checkBound(out, w, r, wMax, rMax, wMaxOK, rMaxOK, true, nil)
		} else {
			c.emit(out, ns.ptr+"/contains", c.pick("contains-added", "contains-removed"),
				fmt.Sprintf("contains %s", c.pick("added", "removed")))
		}
	}

	wPre, wRest, _ := arrayModel(w)
	rPre, rRest, _ := arrayModel(r)
	limit := -1
	if b, ok := intBound(w, "maxItems"); ok && b.v.r.Num().IsInt64() {
		limit = int(b.v.r.Num().Int64())
	}
	_, _, nKw := arrayModel(ns)
	nPre, _, _ := arrayModel(ns)
	for i := 0; i < max(len(wPre), len(rPre)); i++ {
		if limit >= 0 && i >= limit {
			break
		}
		wi, rWi := wRest, false
		if i < len(wPre) {
			wi, rWi = wPre[i], true
		}
		ri, rRi := rRest, false
		if i < len(rPre) {
			ri, rRi = rPre[i], true
		}
		ch := c.cmpNodes(wi, ri)
		if len(ch) == 0 {
			continue
		}
		if rWi && rRi {
			*out = append(*out, ch...)
			continue
		}
		p := ns.ptr + "/" + nKw
		if i < len(nPre) {
			p = nPre[i].ptr
		}
		added := rRi // only the reader has a tuple schema here
		if c.dir == Writer {
			added = !added
		}
		verb := "removed"
		if added {
			verb = "added"
		}
		c.emit(out, p, "tuple-item-"+verb, fmt.Sprintf("tuple item %d %s (%s)", i, verb, c.first(ch)))
	}
	if limit >= 0 && limit <= len(wPre) {
		return
	}
	ch := c.cmpNodes(wRest, rRest)
	if len(ch) == 0 {
		return
	}
	if rRest.isFalse() {
		kw := "additional-items"
		c.emit(out, ns.ptr+"/"+nKw, c.pick(kw+"-removed", kw+"-added"),
			fmt.Sprintf("array %s to items beyond the tuple", c.pick("closed", "opened")))
		return
	}
	*out = append(*out, ch...)
}
