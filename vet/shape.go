package vet

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/constant"
	"go/format"
	"go/token"
	"go/types"
	"strconv"
	"strings"
	"time"

	"github.com/keyreg/keyreg/registry"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// maxDepth bounds how far a key expression is followed through variables
// and calls; maxParts bounds the parts of one shape.
const (
	maxDepth = 8
	maxParts = 2*registry.MaxPlaceholders + 1
)

// part is a piece of a key shape: literal bytes or a typed hole.
type part struct {
	lit  string
	hole bool
	typ  registry.PlaceholderType
	expr ast.Expr // the hole's value, for the builder call
	int  bool     // expr is an integer
}

// shape is what the analyzer knows statically about a key expression.
type shape struct {
	parts     []part
	generated bool // built by a keyreg-generated builder
	viaVar    bool // followed through a variable: no builder call offered
	unknown   bool
}

func (s *shape) add(p part) {
	if !p.hole && p.lit == "" {
		return
	}
	if len(s.parts) >= maxParts {
		s.unknown = true
		return
	}
	if n := len(s.parts); n > 0 {
		last := &s.parts[n-1]
		switch {
		case !p.hole && !last.hole:
			last.lit += p.lit
			return
		case p.hole && last.hole: // two holes side by side: one hole of either
			if last.typ != p.typ {
				last.typ = registry.Any
			}
			last.expr, last.int = nil, false
			return
		}
	}
	s.parts = append(s.parts, p)
}

func (s *shape) join(t shape) {
	s.generated = false
	s.viaVar = s.viaVar || t.viaVar
	if t.unknown {
		s.unknown = true
	}
	for _, p := range t.parts {
		s.add(p)
	}
}

func (v *visitor) shapeOf(e ast.Expr, depth int) shape {
	info := v.pass.TypesInfo
	e = ast.Unparen(e)
	tv := info.Types[e]
	if tv.Value != nil && tv.Value.Kind() == constant.String {
		return shape{parts: []part{{lit: constant.StringVal(tv.Value)}}}
	}
	if depth > maxDepth {
		return v.hole(e)
	}
	switch e := e.(type) {
	case *ast.BinaryExpr:
		if e.Op == token.ADD && isString(tv.Type) {
			s := v.shapeOf(e.X, depth+1)
			s.join(v.shapeOf(e.Y, depth+1))
			return s
		}
	case *ast.Ident:
		if obj, ok := info.Uses[e].(*types.Var); ok && obj.Parent() != nil && obj.Parent() != obj.Pkg().Scope() {
			if as := v.assigns[obj]; len(as) == 1 && as[0].rhs != nil {
				if as[0].index < 0 {
					s := v.shapeOf(as[0].rhs, depth+1)
					s.viaVar = true
					return s
				}
				if call, ok := ast.Unparen(as[0].rhs).(*ast.CallExpr); ok && as[0].index == 0 && v.isBuilder(call) {
					return shape{generated: true}
				}
			}
		}
	case *ast.CallExpr:
		if v.isBuilder(e) {
			return shape{generated: true}
		}
		fn, _ := typeutil.Callee(info, e).(*types.Func)
		if fn != nil && fn.Pkg() != nil && fn.Signature().Recv() == nil {
			switch fn.Pkg().Path() + "." + fn.Name() {
			case "fmt.Sprintf":
				return v.sprintf(e, depth)
			case "strconv.Itoa":
				if len(e.Args) == 1 {
					return shape{parts: []part{{hole: true, typ: registry.Int, expr: e.Args[0], int: true}}}
				}
			case "strconv.FormatInt", "strconv.FormatUint":
				if len(e.Args) == 2 {
					if b := info.Types[e.Args[1]].Value; b != nil && b.String() == "10" {
						return shape{parts: []part{{hole: true, typ: registry.Int, expr: e.Args[0], int: true}}}
					}
				}
			}
		}
	}
	return v.hole(e)
}

// hole is the shape of a value the analyzer cannot see into: a string is a
// word (one segment), anything else any bytes.
func (v *visitor) hole(e ast.Expr) shape {
	t := v.pass.TypesInfo.TypeOf(e)
	if t != nil && isString(t) {
		return shape{parts: []part{{hole: true, typ: registry.Word, expr: e}}}
	}
	return shape{parts: []part{{hole: true, typ: registry.Any}}}
}

// sprintf derives the shape of fmt.Sprintf with a constant format.
func (v *visitor) sprintf(call *ast.CallExpr, depth int) shape {
	info := v.pass.TypesInfo
	if len(call.Args) == 0 || call.Ellipsis != token.NoPos {
		return v.hole(call)
	}
	fv := info.Types[call.Args[0]].Value
	if fv == nil || fv.Kind() != constant.String {
		return v.hole(call)
	}
	f := constant.StringVal(fv)
	args := call.Args[1:]
	var s shape
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			j := strings.IndexByte(f[i:], '%')
			if j < 0 {
				j = len(f) - i
			}
			s.add(part{lit: f[i : i+j]})
			i += j - 1
			continue
		}
		if i+1 >= len(f) {
			return v.hole(call)
		}
		verb := f[i+1]
		i++
		if verb == '%' {
			s.add(part{lit: "%"})
			continue
		}
		if len(args) == 0 {
			return v.hole(call) // a verb with flags or width, or too few arguments
		}
		a := args[0]
		args = args[1:]
		t := info.TypeOf(a)
		switch {
		case verb == 'd' && t != nil && isInteger(t), verb == 'v' && t != nil && isInteger(t):
			s.add(part{hole: true, typ: registry.Int, expr: a, int: true})
		case (verb == 's' || verb == 'v') && t != nil && isString(t):
			s.join(v.shapeOf(a, depth+1))
		case verb == 'x' && t != nil && (isInteger(t) || isString(t)):
			s.add(part{hole: true, typ: registry.Hex})
		case strings.IndexByte("sdvxXqfgeEtbocUp", verb) >= 0:
			s.add(part{hole: true, typ: registry.Any})
		default:
			return v.hole(call) // flags, widths, indexes: not followed
		}
	}
	if len(args) != 0 {
		return v.hole(call)
	}
	return s
}

// isBuilder reports whether call is a keyreg-generated builder: a function
// Build... or MustBuild..., or a method Build or String of a key type, of a
// package that declares RegistryDigest.
func (v *visitor) isBuilder(call *ast.CallExpr) bool {
	fn, _ := typeutil.Callee(v.pass.TypesInfo, call).(*types.Func)
	if fn == nil || fn.Pkg() == nil || !generatedPkg(fn.Pkg()) {
		return false
	}
	if fn.Signature().Recv() != nil {
		return fn.Name() == "Build" || fn.Name() == "String"
	}
	return strings.HasPrefix(fn.Name(), "Build") || strings.HasPrefix(fn.Name(), "MustBuild")
}

func generatedPkg(p *types.Package) bool {
	c, ok := p.Scope().Lookup("RegistryDigest").(*types.Const)
	return ok && strings.HasPrefix(constant.StringVal(c.Val()), "sha256:")
}

// key checks one key argument and returns it with the family it matches.
func (v *visitor) key(e ast.Expr) *keyArg {
	return v.keyShape(e, v.shapeOf(e, 0))
}

// keyShape checks a key of shape s, reported at e.
func (v *visitor) keyShape(e ast.Expr, s shape) *keyArg {
	v.stats.Keys++
	k := &keyArg{expr: e}
	if s.generated {
		v.stats.Generated++
		return k
	}
	literal := 0
	for _, p := range s.parts {
		literal += len(p.lit)
	}
	if s.unknown || literal == 0 || len(s.parts) == 0 || s.parts[0].hole {
		v.stats.Unknown++
		if v.c.Strict {
			v.report(analysis.Diagnostic{Pos: e.Pos(), End: e.End(), Category: RuleUnregistered,
				Message: "key shape cannot be derived statically; use a generated builder"})
		}
		return k
	}
	text := render(s.parts)
	reg := v.l.reg
	var fams []*registry.Family
	if len(s.parts) == 1 {
		if f, _ := reg.Match(s.parts[0].lit); f != nil {
			fams = []*registry.Family{f}
		}
	} else {
		fams = v.l.families(text, s.pattern(text, reg.Separator))
	}
	if len(fams) == 0 {
		head := s.parts[0].lit
		if f := v.prefixFamily(head); f != nil {
			v.report(analysis.Diagnostic{Pos: e.Pos(), End: e.End(), Category: RuleShapeMismatch,
				Message: fmt.Sprintf("key %s has the prefix of family %s but does not fit its pattern %s", s.quote(), f.Name, f.Pattern.Source)})
			return k
		}
		v.report(analysis.Diagnostic{Pos: e.Pos(), End: e.End(), Category: RuleUnregistered,
			Message: fmt.Sprintf("key %s matches no family of the registry", s.quote())})
		return k
	}
	deprecated := true
	for _, f := range fams {
		deprecated = deprecated && f.Deprecated != nil
	}
	if deprecated {
		f := fams[0]
		msg := fmt.Sprintf("key %s is of the deprecated family %s", s.quote(), f.Name)
		if f.Deprecated.ReplacedBy != "" {
			msg += ", replaced by " + f.Deprecated.ReplacedBy
		}
		v.report(analysis.Diagnostic{Pos: e.Pos(), End: e.End(), Category: RuleDeprecated, Message: msg})
	}
	if len(fams) != 1 {
		return k
	}
	k.family = fams[0]
	if !s.viaVar {
		v.handbuilt(e, s, fams[0])
	}
	return k
}

// quote is the shape as messages show it, quoted: a constant as the key
// itself, a shape with holes as a pattern ({:int}, braces of the key
// escaped).
func (s *shape) quote() string {
	if len(s.parts) == 1 && !s.parts[0].hole {
		return strconv.Quote(s.parts[0].lit)
	}
	return strconv.Quote(render(s.parts))
}

// pattern is the shape as a registry pattern, of source text.
func (s *shape) pattern(text string, sep byte) *registry.Pattern {
	p := &registry.Pattern{Source: text, Sep: sep}
	for i, sp := range s.parts {
		if sp.hole {
			p.Parts = append(p.Parts, registry.Part{Name: "_" + strconv.Itoa(i), Type: sp.typ, Typed: true})
		} else {
			p.Parts = append(p.Parts, registry.Part{Lit: sp.lit})
		}
	}
	return p
}

// prefixFamily is the family with the longest literal prefix that key's
// literal head starts with, or nil.
func (v *visitor) prefixFamily(head string) *registry.Family {
	var best *registry.Family
	for _, f := range v.l.reg.Families {
		if f.Pattern == nil {
			continue
		}
		p := f.Pattern.LiteralPrefix()
		if p == "" || !strings.HasPrefix(head, p) {
			continue
		}
		if best == nil || len(p) > len(best.Pattern.LiteralPrefix()) {
			best = f
		}
	}
	return best
}

// render writes a shape as a pattern: holes as {:type}.
func render(parts []part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.hole {
			b.WriteString("{:" + p.typ.String() + "}")
			continue
		}
		b.WriteString(registry.EscapeLiteral(p.lit))
	}
	return b.String()
}

// ttl checks a literal TTL against the family's policy.
func (v *visitor) ttl(cmd string, k *keyArg, e ast.Expr) {
	f := k.family
	if f == nil {
		return
	}
	tv := v.pass.TypesInfo.Types[e]
	if tv.Value == nil {
		return
	}
	n, ok := constant.Int64Val(constant.ToInt(tv.Value))
	if !ok {
		return
	}
	expire := strings.HasPrefix(cmd, "Expire") || cmd == "PExpire"
	v.ttlPolicy(cmd, f, time.Duration(n), expire, e)
}

// ttlPolicy checks the TTL d that cmd gives a key of family f, reported
// at e; expire is for the commands that only set a TTL (EXPIRE), for
// which 0 is not "no TTL".
func (v *visitor) ttlPolicy(cmd string, f *registry.Family, d time.Duration, expire bool, e ast.Expr) {
	var msg string
	switch f.TTL.Kind {
	case registry.TTLMax:
		switch {
		case d == 0 && !expire:
			msg = fmt.Sprintf("%s without a TTL on family %s, whose policy is %s", cmd, f.Name, f.TTL)
		case d > f.TTL.Max:
			msg = fmt.Sprintf("%s with a TTL of %s on family %s, whose policy is %s", cmd, d, f.Name, f.TTL)
		}
	case registry.TTLPersistent:
		if d > 0 {
			msg = fmt.Sprintf("%s with a TTL of %s on family %s, whose keys must not expire", cmd, d, f.Name)
		}
	}
	if msg != "" {
		v.report(analysis.Diagnostic{Pos: e.Pos(), End: e.End(), Category: RuleTTLPolicy, Message: msg})
	}
}

// handbuilt reports a key built by hand for a family whose generated
// builder the package imports, with the builder call as a fix when the
// holes map onto its parameters.
func (v *visitor) handbuilt(e ast.Expr, s shape, f *registry.Family) {
	b, ok := v.l.builders[f.Name]
	if !ok {
		return
	}
	must := "Must" + b.Func
	pkgName := ""
	for _, imp := range v.file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		var pkg *types.Package
		for _, p := range v.pass.Pkg.Imports() {
			if p.Path() == path {
				pkg = p
			}
		}
		if pkg == nil || !generatedPkg(pkg) || pkg.Scope().Lookup(must) == nil {
			continue
		}
		pkgName = pkg.Name()
		if imp.Name != nil {
			pkgName = imp.Name.Name
		}
		break
	}
	if pkgName == "" || pkgName == "_" || pkgName == "." {
		return
	}
	d := analysis.Diagnostic{Pos: e.Pos(), End: e.End(), Category: RuleHandbuilt,
		Message: fmt.Sprintf("key of family %s built by hand; use %s.%s", f.Name, pkgName, must)}
	if args, ok := v.builderArgs(s, f, b.Params); ok {
		d.SuggestedFixes = []analysis.SuggestedFix{{
			Message:   "use " + pkgName + "." + must,
			TextEdits: []analysis.TextEdit{{Pos: e.Pos(), End: e.End(), NewText: []byte(pkgName + "." + must + "(" + strings.Join(args, ", ") + ")")}},
		}}
	}
	v.report(d)
}

// builderArgs maps the shape's holes, or a constant key's values, onto
// the builder's parameters.
func (v *visitor) builderArgs(s shape, f *registry.Family, params []string) ([]string, bool) {
	pp := f.Pattern.Parts
	if len(s.parts) == 1 && !s.parts[0].hole {
		_, vals := v.l.reg.Match(s.parts[0].lit)
		if len(vals) != len(params) {
			return nil, false
		}
		var out []string
		for i, pv := range vals {
			if strings.HasSuffix(params[i], " int64") {
				if _, err := strconv.ParseInt(pv.Value, 10, 64); err != nil {
					return nil, false
				}
				out = append(out, pv.Value)
			} else {
				out = append(out, strconv.Quote(pv.Value))
			}
		}
		return out, true
	}
	if len(pp) != len(s.parts) {
		return nil, false
	}
	var out []string
	for i, p := range pp {
		sp := s.parts[i]
		if p.IsPlaceholder() != sp.hole || (!sp.hole && p.Lit != sp.lit) {
			return nil, false
		}
		if !sp.hole {
			continue
		}
		if sp.expr == nil || len(out) >= len(params) {
			return nil, false
		}
		src := v.source(sp.expr)
		param := params[len(out)]
		t := v.pass.TypesInfo.TypeOf(sp.expr)
		switch {
		case strings.HasSuffix(param, " int64") && sp.int:
			if !types.Identical(t, types.Typ[types.Int64]) {
				src = "int64(" + src + ")"
			}
		case strings.HasSuffix(param, " string") && !sp.int && t != nil && types.Identical(t, types.Typ[types.String]):
		default:
			return nil, false
		}
		out = append(out, src)
	}
	return out, len(out) == len(params)
}

func (v *visitor) source(e ast.Expr) string {
	var b bytes.Buffer
	if err := format.Node(&b, v.pass.Fset, e); err != nil {
		return ""
	}
	return b.String()
}
