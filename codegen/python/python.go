// Package python is the codegen backend of keyreg gen python: one module,
// standard library plus redis-py only, with per family a key builder and
// parser, its constants, a TypedDict of its payload and a schema check,
// accessors on redis.Redis and redis.asyncio.Redis that apply the TTL
// policy, locks that subclass redis.lock.Lock with fencing, and stream
// helpers (docs/codegen.md).
//
// No registry text becomes code: names are built from ASCII letters and
// digits (escape.go, names.go), strings are written by pyStr with every
// character outside printable ASCII escaped, and comments by comment.
package python

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

// ModuleName is the file Generate writes for a single module; a package
// gets PackageInit and PyTyped.
const (
	ModuleName  = "keys_gen.py"
	PackageInit = "__init__.py"
	PyTyped     = "py.typed"
)

// Generator writes the Python module. With Package, it writes a package
// directory: the module as __init__.py and an empty py.typed marker
// (PEP 561), so that mypy checks the code that imports it.
type Generator struct {
	Package bool
	// Module, when set, is the module's import name, which Builders puts
	// before each builder (keys.build_cart_items(...)); Generate ignores it.
	Module string
}

// OutputDir reports whether --out names a directory, which holds the
// files Generate returns.
func (g Generator) OutputDir() bool { return g.Package }

// Generate returns the module (or the package's two files).
func (g Generator) Generate(req *codegen.Request) ([]codegen.File, error) {
	v, err := newView(req)
	if err != nil {
		return nil, err
	}
	src := v.render()
	if !g.Package {
		return []codegen.File{{Name: ModuleName, Data: src}}, nil
	}
	return []codegen.File{{Name: PackageInit, Data: src}, {Name: PyTyped, Data: []byte{}}}, nil
}

// Builders names every family's builder as Generate writes it:
// "build_cart_items(user_id: int) -> str".
func (g Generator) Builders(req *codegen.Request) (map[string]string, error) {
	v, err := newView(req)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(v.all))
	for _, f := range v.all {
		out[f.f.Name] = f.signature()
		if g.Module != "" {
			out[f.f.Name] = g.Module + "." + out[f.f.Name]
		}
	}
	return out, nil
}

type param struct {
	name string // as in the pattern
	arg  string // the Python name
	typ  string // placeholder type
	int  bool
}

type famView struct {
	f      *codegen.Family
	snake  string // cart_items
	upper  string // CART_ITEMS
	camel  string // CartItems
	key    string // CartItemsKey
	lock   string // PayLock: the lock class
	lockFn string // pay_lock
	value  string // the Python type of a value, from the schema; "" without one
	field  string // a hash's or stream's field value type, from additionalProperties
	doc    any    // the schema, decoded
	params []param
	parts  []part
	what   string // "" for a family's key, "channel" for a channel's name
}

type part struct {
	lit   string // the literal bytes
	param int    // index in params, or -1
}

type view struct {
	req    *codegen.Request
	all    []*famView
	byName map[string]*famView
	taken  map[string]bool
	types  []typedDict
	chans  []*chanView // every channel, in name order, named after the families
}

func newView(req *codegen.Request) (*view, error) {
	if req == nil {
		return nil, fmt.Errorf("no request")
	}
	if len(req.Separator) != 1 {
		return nil, fmt.Errorf("the separator %q is not one byte", req.Separator)
	}
	v := &view{req: req, byName: map[string]*famView{}, taken: map[string]bool{}}
	for n := range moduleReserved {
		v.taken[n] = true
	}
	for _, f := range req.Families {
		fv := &famView{f: f}
		base := snake(f.Name)
		for i := 1; ; i++ {
			s := base
			if i > 1 {
				s = base + strconv.Itoa(i)
			}
			names := derived(s, f)
			if v.free(names) {
				v.take(names)
				fv.setNames(s, f)
				break
			}
		}
		taken := map[string]bool{}
		for _, pt := range f.Pattern.Parts {
			if !pt.IsPlaceholder() {
				lit := pt.Literal
				if pt.LiteralBase64 != "" {
					b, err := base64.StdEncoding.DecodeString(pt.LiteralBase64)
					if err != nil {
						return nil, fmt.Errorf("family %q: a literal's bytes: %w", f.Name, err)
					}
					lit = string(b)
				}
				fv.parts = append(fv.parts, part{lit: lit, param: -1})
				continue
			}
			if _, ok := registry.ParsePlaceholderType(pt.Type); !ok {
				return nil, fmt.Errorf("family %q: placeholder %q has an unknown type", f.Name, pt.Placeholder)
			}
			fv.parts = append(fv.parts, part{param: len(fv.params)})
			fv.params = append(fv.params, param{name: pt.Placeholder, arg: argName(pt.Placeholder, taken), typ: pt.Type, int: pt.Type == "int"})
		}
		v.all = append(v.all, fv)
		v.byName[f.Name] = fv
	}
	if err := v.addChannels(); err != nil {
		return nil, err
	}
	for _, fv := range v.all {
		if fv.f.InScope && len(fv.f.Schema) > 0 {
			var doc any
			if err := json.Unmarshal(fv.f.Schema, &doc); err == nil {
				fv.doc = doc
				fv.value = v.schemaType(doc, fv.camel+"Value", 0, true)
				if ap, ok := mapOf(doc)["additionalProperties"]; ok && (fv.f.Type == "hash" || fv.f.Type == "stream") {
					fv.field = v.schemaType(ap, fv.camel+"Field", 0, false)
				}
			}
		}
	}
	v.channelTypes()
	return v, nil
}

// derived are the module-level names a family's code declares.
func derived(s string, f *codegen.Family) []string {
	u := strings.ToUpper(s)
	c := camel(s)
	names := []string{"build_" + s, "parse_" + s, "check_" + s, c + "Key", c + "Value",
		u + "_PATTERN", u + "_GLOB", u + "_OWNER", u + "_REDIS_TYPE", u + "_ENCODING", u + "_TTL_POLICY",
		u + "_MAX_TTL", u + "_MAX_LEN", u + "_GROUPS", "_KR_RE_" + u, "_KR_SCHEMA_" + u, "_KR_PARTS_" + u}
	for _, a := range []string{"get", "set", "delete", "apply_ttl", "hset", "hgetall", "rpush", "lpush", "sadd", "zadd", "xadd", "read_group", "ack", "claim"} {
		names = append(names, a+"_"+s, "a"+a+"_"+s)
	}
	names = append(names, lockNames(s, c)...)
	return names
}

func lockNames(s, c string) []string {
	fn, cl := s, c
	if fn != "lock" && !strings.HasSuffix(fn, "_lock") {
		fn += "_lock"
	}
	if cl != "Lock" && !strings.HasSuffix(cl, "Lock") {
		cl += "Lock"
	}
	return []string{fn, cl}
}

func (fv *famView) setNames(s string, f *codegen.Family) {
	fv.snake, fv.upper, fv.camel = s, strings.ToUpper(s), camel(s)
	fv.key = fv.camel + "Key"
	ln := lockNames(s, fv.camel)
	fv.lockFn, fv.lock = ln[0], ln[1]
}

func (v *view) free(names []string) bool {
	for _, n := range names {
		if v.taken[n] {
			return false
		}
	}
	return true
}

func (v *view) take(names []string) {
	for _, n := range names {
		v.taken[n] = true
	}
}

func (fv *famView) signature() string {
	var args []string
	for _, p := range fv.params {
		args = append(args, p.arg+": "+p.pyType())
	}
	return "build_" + fv.snake + "(" + strings.Join(args, ", ") + ") -> str"
}

func (p param) pyType() string {
	if p.int {
		return "int"
	}
	return "str"
}

// render writes the module.
func (v *view) render() []byte {
	var b strings.Builder
	b.WriteString("# Code generated by keyreg. DO NOT EDIT.\n")
	b.WriteString(`"""Redis keys of the registry: builders, parsers, accessors, locks and
stream helpers generated by keyreg gen python (docs/codegen.md)."""
`)
	b.WriteString(runtimeHead)
	for _, cv := range v.chans {
		if cv.c.InScope {
			b.WriteString(runtimeChannels)
			break
		}
	}
	fmt.Fprintf(&b, "\nREGISTRY_DIGEST: _kr_t.Final = %s\n", pyStr(v.req.Digest))
	b.WriteString(`"""The sha256 of the normalized keys.yaml this module was generated from."""` + "\n")
	fmt.Fprintf(&b, "SEPARATOR: _kr_t.Final = %s\n", pyStr(v.req.Separator))
	b.WriteString(`"""The registry's key segment separator."""` + "\n")
	for _, t := range []string{"hex", "uuid", "ulid"} {
		fmt.Fprintf(&b, "_KR_T_%s = _kr_re.compile(%s)\n", strings.ToUpper(t), pyStr(typeRegex(t, v.req.Separator[0])))
	}
	for _, t := range v.types {
		b.WriteString(t.src)
	}
	for _, fv := range v.all {
		if fv.f.InScope {
			v.family(&b, fv)
		}
	}
	for _, cv := range v.chans {
		if cv.c.InScope {
			v.channel(&b, cv)
		}
	}
	return []byte(b.String())
}

func (v *view) family(b *strings.Builder, fv *famView) {
	f := fv.f
	fmt.Fprintf(b, "\n\n# Family %s.\n", comment(f.Name))
	if f.Description != "" {
		fmt.Fprintf(b, "# %s\n", prose(f.Description))
	}
	fmt.Fprintf(b, "# Pattern: %s\n# Owner: %s\n# TTL policy: %s\n", comment(f.Pattern.Source), comment(f.Owner), comment(f.TTL.Text))
	if d := f.Deprecated; d != nil {
		fmt.Fprintf(b, "# Deprecated: since %s, sunset %s, replaced by %s: %s\n", comment(d.Since), comment(d.Sunset), comment(d.ReplacedBy), prose(d.Reason))
	}
	u := fv.upper
	fmt.Fprintf(b, "%s_PATTERN: _kr_t.Final = %s\n", u, pyStr(f.Pattern.Source))
	fmt.Fprintf(b, "%s_GLOB: _kr_t.Final = %s\n", u, pyStr(f.Pattern.Glob))
	fmt.Fprintf(b, "%s_OWNER: _kr_t.Final = %s\n", u, pyStr(f.Owner))
	fmt.Fprintf(b, "%s_REDIS_TYPE: _kr_t.Final = %s\n", u, pyStr(f.Type))
	fmt.Fprintf(b, "%s_ENCODING: _kr_t.Final = %s\n", u, pyStr(f.Encoding))
	maxMS := fv.maxMS()
	if f.TTL.Policy == "max" {
		fmt.Fprintf(b, "%s_MAX_TTL: _kr_t.Final = _kr_datetime.timedelta(milliseconds=%d)\n", u, maxMS)
	}
	fmt.Fprintf(b, "%s_TTL_POLICY: _kr_t.Final = TTLPolicy(%s, %d)\n", u, pyStr(f.TTL.Policy), maxMS)
	if f.MaxLen > 0 {
		fmt.Fprintf(b, "%s_MAX_LEN: _kr_t.Final = %d\n", u, f.MaxLen)
	}
	if len(f.Groups) > 0 {
		var gs []string
		for _, g := range f.Groups {
			gs = append(gs, pyStr(g.Name))
		}
		fmt.Fprintf(b, "%s_GROUPS: _kr_t.Final = frozenset({%s})\n", u, strings.Join(gs, ", "))
	}
	v.keyCode(b, fv)
	v.schemaCheck(b, fv)
	v.accessors(b, fv)
}

// keyCode writes what a family and a channel share: the regex (or the
// matcher's parts), the dataclass of the placeholders, the builder and the
// parser, named from fv.
func (v *view) keyCode(b *strings.Builder, fv *famView) {
	f := fv.f
	fam := pyStr(f.Name)
	u := fv.upper
	noun, owner := "key", "family"
	if fv.what == "channel" {
		noun, owner = "name", "channel"
	}
	fmt.Fprintf(b, "_KR_RE_%s = _kr_re.compile(%s, _kr_re.DOTALL)\n", u, pyStr(v.regex(fv)))
	if ambiguous(fv, v.req.Separator[0]) {
		var ps []string
		for _, pt := range fv.parts {
			if pt.param < 0 {
				ps = append(ps, fmt.Sprintf("(%s, None, 0, False)", pyStr(pt.lit)))
				continue
			}
			p := fv.params[pt.param]
			typ, _ := registry.ParsePlaceholderType(p.typ)
			ps = append(ps, fmt.Sprintf("(\"\", _kr_re.compile(%s, _kr_re.DOTALL), %d, %s)", pyStr(typeRegex(p.typ, v.req.Separator[0])), typ.FixedLen(), pyBool(p.int)))
		}
		fmt.Fprintf(b, "_KR_PARTS_%s: tuple[_KrPart, ...] = (\n    %s,\n)\n", u, strings.Join(ps, ",\n    "))
	}

	// The key dataclass.
	fmt.Fprintf(b, "\n\n@_kr_dataclasses.dataclass(frozen=True)\nclass %s:\n", fv.key)
	fmt.Fprintf(b, "    \"\"\"A %s of this %s, its placeholder values in pattern order.\"\"\"\n\n", noun, owner)
	for _, p := range fv.params {
		fmt.Fprintf(b, "    %s: %s\n", p.arg, p.pyType())
	}
	if len(fv.params) > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "    def build(self) -> str:\n        \"\"\"The %s, its values checked.\"\"\"\n        return build_%s(%s)\n", noun, fv.snake, fv.selfArgs())

	// Builder.
	fmt.Fprintf(b, "\n\ndef %s:\n", fv.signature())
	fmt.Fprintf(b, "    \"\"\"The %s of these values; InvalidKeyError (a ValueError) when one does\n    not fit its placeholder.\"\"\"\n", noun)
	for _, p := range fv.params {
		if p.int {
			fmt.Fprintf(b, "    if type(%s) is not int or not _KR_I64_MIN <= %s <= _KR_I64_MAX:\n", p.arg, p.arg)
		} else {
			fmt.Fprintf(b, "    if type(%s) is not str or %s:\n", p.arg, v.refuse(p))
		}
		fmt.Fprintf(b, "        raise _kr_bad(%s, %s, %s, %s)\n", fam, pyStr(p.name), pyStr(p.typ), p.arg)
	}
	var fs strings.Builder
	fs.WriteString(`f"`)
	for _, pt := range fv.parts {
		if pt.param < 0 {
			fs.WriteString(fLit(pt.lit))
		} else {
			fs.WriteString("{" + fv.params[pt.param].arg + "}")
		}
	}
	fs.WriteString(`"`)
	if len(fv.params) == 0 {
		fmt.Fprintf(b, "    return %s\n", pyStr(fv.constKey()))
	} else if ambiguous(fv, v.req.Separator[0]) {
		fmt.Fprintf(b, "    key = %s\n", fs.String())
		b.WriteString("    # The pattern lets a value contain the literal after it: the key must\n    # parse back to the same values.\n")
		var strs []string
		for _, p := range fv.params {
			strs = append(strs, p.strExpr())
		}
		fmt.Fprintf(b, "    if _kr_match(_KR_PARTS_%s, key) != [%s]:\n", u, strings.Join(strs, ", "))
		fmt.Fprintf(b, "        raise InvalidKeyError(%s + \": the values are ambiguous in \" + repr(key))\n", fam)
		b.WriteString("    return key\n")
	} else {
		fmt.Fprintf(b, "    return %s\n", fs.String())
	}

	// Parser.
	arg := "key"
	if fv.what == "channel" {
		arg = "name"
	}
	fmt.Fprintf(b, "\n\ndef parse_%s(%s: str | bytes) -> %s:\n", fv.snake, arg, fv.key)
	fmt.Fprintf(b, "    \"\"\"The values of a %s of this %s; InvalidKeyError (a ValueError) when\n    it does not match the pattern or an int does not fit in an int64.\"\"\"\n", noun, owner)
	fmt.Fprintf(b, "    k = _kr_key(%s, %s)\n", fam, arg)
	group := func(i int) string { return fmt.Sprintf("m.group(%d)", i+1) }
	if ambiguous(fv, v.req.Separator[0]) {
		// A backtracking regex could take exponential time on a hostile key.
		fmt.Fprintf(b, "    m = _kr_match(_KR_PARTS_%s, k)\n    if m is None:\n        raise _kr_nomatch(%s, %s_PATTERN, k)\n", u, fam, u)
		group = func(i int) string { return fmt.Sprintf("m[%d]", i) }
	} else {
		fmt.Fprintf(b, "    m = _KR_RE_%s.fullmatch(k)\n    if m is None:\n        raise _kr_nomatch(%s, %s_PATTERN, k)\n", u, fam, u)
	}
	var vals []string
	for i, p := range fv.params {
		if p.int {
			vals = append(vals, fmt.Sprintf("_kr_int(%s, %s, %s)", fam, pyStr(p.name), group(i)))
		} else {
			vals = append(vals, group(i))
		}
	}
	fmt.Fprintf(b, "    return %s(%s)\n", fv.key, strings.Join(vals, ", "))
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func (p param) strExpr() string {
	if p.int {
		return "str(" + p.arg + ")"
	}
	return p.arg
}

func (fv *famView) selfArgs() string {
	var a []string
	for _, p := range fv.params {
		a = append(a, "self."+p.arg)
	}
	return strings.Join(a, ", ")
}

func (fv *famView) constKey() string {
	var s strings.Builder
	for _, p := range fv.parts {
		s.WriteString(p.lit)
	}
	return s.String()
}

func (fv *famView) maxMS() int64 {
	t := fv.f.TTL
	if t.Policy != "max" {
		return 0
	}
	if t.MaxMS > 0 {
		return t.MaxMS
	}
	return max(t.MaxNS/1e6, 1)
}

// ambiguous reports whether a value may contain the literal after it, so
// that a built key could parse to other values (as the Go backend's).
func ambiguous(fv *famView, sep byte) bool {
	if len(fv.params) < 2 {
		return false
	}
	seen := 0
	for i, pt := range fv.parts {
		if pt.param < 0 {
			continue
		}
		seen++
		typ, _ := registry.ParsePlaceholderType(fv.params[pt.param].typ)
		if seen == len(fv.params) || typ.FixedLen() != 0 || i+1 >= len(fv.parts) {
			continue
		}
		next := fv.parts[i+1]
		if next.param >= 0 || next.lit == "" || typ.AcceptsAt(1, next.lit[0], sep) {
			return true
		}
	}
	return false
}

// refuse is the Python condition under which a str value p is refused.
func (v *view) refuse(p param) string {
	sep := pyStr(v.req.Separator)
	switch p.typ {
	case "any":
		return "not " + p.arg
	case "word":
		return "not " + p.arg + " or " + sep + " in " + p.arg
	}
	return "_KR_T_" + strings.ToUpper(p.typ) + ".fullmatch(" + p.arg + ") is None"
}

// typeRegex is the regular expression of one value of a placeholder type,
// derived from registry.PlaceholderType.AcceptsAt so that it accepts
// exactly what keyreg's matcher does.
func typeRegex(typ string, sep byte) string {
	t, _ := registry.ParsePlaceholderType(typ)
	switch typ {
	case "any":
		return ".+"
	case "int":
		return "-?[0-9]+"
	}
	class := func(i int) string {
		if t.AcceptsAt(i, 0x80, sep) { // non-ASCII too: a negated class
			var b strings.Builder
			b.WriteString("[^")
			for c := 0; c < 0x80; c++ {
				if !t.AcceptsAt(i, byte(c), sep) {
					fmt.Fprintf(&b, `\x%02x`, c)
				}
			}
			b.WriteString("]")
			return b.String()
		}
		var b strings.Builder
		b.WriteString("[")
		for c := 0; c < 0x80; c++ {
			if t.AcceptsAt(i, byte(c), sep) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
		b.WriteString("]")
		return b.String()
	}
	if n := t.FixedLen(); n != 0 {
		var b strings.Builder
		for i := 0; i < n; {
			c := class(i)
			j := i + 1
			for j < n && class(j) == c {
				j++
			}
			b.WriteString(c)
			if j-i > 1 {
				fmt.Fprintf(&b, "{%d}", j-i)
			}
			i = j
		}
		return b.String()
	}
	return class(0) + class(1) + "*"
}

func (v *view) regex(fv *famView) string {
	var b strings.Builder
	for _, pt := range fv.parts {
		if pt.param < 0 {
			b.WriteString(reLit(pt.lit))
			continue
		}
		b.WriteString("(" + typeRegex(fv.params[pt.param].typ, v.req.Separator[0]) + ")")
	}
	return b.String()
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
