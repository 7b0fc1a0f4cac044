// Package vet is keyreg vet: a go/analysis analyzer that finds the key
// arguments of go-redis v9 commands, derives their shape statically (a
// constant, a concatenation or fmt.Sprintf of constants and typed holes,
// a call of a keyreg-generated builder, or unknown) and checks it against
// the registry with the registry's matcher and overlap proof.
//
// The analyzer is run three ways (docs/vet.md): by keyreg vet, by go vet
// through the keyreg-vet singlechecker, and by golangci-lint as a module
// plugin (package vet/plugin).
package vet

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strings"
	"sync"

	"github.com/keyreg/keyreg/codegen/golang"
	"github.com/keyreg/keyreg/registry"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// Rule IDs, public: every diagnostic's Category is one of them, and its
// message ends with it in parentheses.
const (
	RuleUnregistered  = "key-unregistered"
	RuleShapeMismatch = "key-shape-mismatch"
	RuleDeprecated    = "key-deprecated"
	RuleTTLPolicy     = "key-ttl-policy"
	RuleHandbuilt     = "key-handbuilt"
	// The channel rules, for the channels of Publish, SPublish, Subscribe
	// and SSubscribe, checked against the registry's channels: (a
	// namespace of its own); the first two are the IDs the channel audit
	// gives the same findings on a live server.
	RuleChannelUnregistered = "channel-unregistered"
	RuleChannelModeMismatch = "channel-mode-mismatch"
	RuleChannelDeprecated   = "channel-deprecated"
)

// Rules lists the rule IDs in the order docs/vet.md describes them.
var Rules = []string{RuleUnregistered, RuleShapeMismatch, RuleDeprecated, RuleTTLPolicy, RuleHandbuilt,
	RuleChannelUnregistered, RuleChannelModeMismatch, RuleChannelDeprecated}

const redisPkg = "github.com/redis/go-redis/v9"

// Config is what the analyzer checks against.
type Config struct {
	Registry string // path of keys.yaml
	Strict   bool   // report keys whose shape is unknown, as key-unregistered
	// Stats makes the analyzer report its Stats as one diagnostic of
	// category StatsCategory per package, for a driver that gets only
	// diagnostics back (keyreg vet through go vet -json, where results
	// do not cross the process boundary). The driver filters them out.
	Stats bool
}

// StatsCategory is the category of the per-package Stats diagnostic.
const StatsCategory = "keyreg-stats"

// ToolEnv, set to 1 in go vet's environment by GoVet, tells the tool go vet
// runs (keyreg itself, or keyreg-vet) to report its Stats as diagnostics.
const ToolEnv = "KEYREG_VET_TOOL"

// Stats is the analyzer's result per package: the key arguments it found.
type Stats struct {
	Keys      int // key arguments seen
	Unknown   int // of them, with a shape that cannot be derived
	Generated int // of them, built by a generated builder
}

// New returns an analyzer for c. Its flags -registry and -strict set c.
func New(c *Config) *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name:       "keyreg",
		Doc:        "check go-redis v9 key arguments against the keyreg registry (keys.yaml)\n\nRules: " + strings.Join(Rules, ", ") + ".",
		URL:        "https://github.com/keyreg/keyreg/blob/main/docs/vet.md",
		ResultType: reflect.TypeFor[*Stats](),
		Run:        func(p *analysis.Pass) (any, error) { return run(c, p) },
	}
	a.Flags.StringVar(&c.Registry, "registry", c.Registry, "path of the registry, keys.yaml")
	a.Flags.BoolVar(&c.Strict, "strict", c.Strict, "report key arguments whose shape cannot be derived statically")
	// go vet caches a package's vet output keyed on its sources and the
	// tool's flags, not on files the tool reads: a digest of the registry
	// as a flag makes a changed keys.yaml miss that cache.
	a.Flags.String("registry-sum", "", "a digest of the registry, only so that go vet's result cache notices a changed keys.yaml (keyreg vet sets it)")
	return a
}

// Analyzer is the analyzer with its own Config, for singlechecker.
var Analyzer = New(&Config{Registry: "keys.yaml"})

// loaded is one registry, loaded once per process and path.
type loaded struct {
	reg      *registry.Registry
	builders map[string]golang.Builder
	mu       sync.Mutex // guards index, which is not safe for concurrent use, and shapes
	index    *registry.ShapeIndex
	shapes   map[string][]*registry.Family // index's answers by shape text: code repeats its key shapes
	// chanIndex is the ShapeIndex of the channels, built on first use.
	chanIndex *registry.ShapeIndex
	err       error
}

// maxShapes bounds the shapes a loaded registry remembers.
const maxShapes = 1 << 14

// families returns the families the shape p, rendered as text, can match.
func (l *loaded) families(text string, p *registry.Pattern) []*registry.Family {
	l.mu.Lock()
	defer l.mu.Unlock()
	if fams, ok := l.shapes[text]; ok {
		return fams
	}
	fams := l.index.Families(p)
	if l.shapes == nil {
		l.shapes = map[string][]*registry.Family{}
	}
	if len(l.shapes) < maxShapes {
		l.shapes[text] = fams
	}
	return fams
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*loaded{}
)

func load(path string) *loaded {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if l, ok := cache[path]; ok {
		return l
	}
	l := &loaded{}
	l.reg, l.err = registry.LoadFile(path)
	if l.err == nil {
		l.index = l.reg.NewShapeIndex()
		l.builders, _ = golang.FuncBuilders(l.reg) // a registry codegen refuses has no builders
	}
	cache[path] = l
	return l
}

func run(c *Config, pass *analysis.Pass) (any, error) {
	l := load(c.Registry)
	if l.err != nil {
		return nil, fmt.Errorf("keyreg: %w", l.err)
	}
	v := &visitor{c: c, pass: pass, l: l, stats: &Stats{}, assigns: map[*types.Var][]assign{}}
	// One walk of each file finds the assignments and the calls; the calls
	// are checked after it, when every assignment is known.
	calls := make([][]*ast.CallExpr, len(pass.Files))
	for i, f := range pass.Files {
		calls[i] = v.collect(f)
	}
	for i, f := range pass.Files {
		if len(calls[i]) == 0 {
			continue
		}
		v.file = f
		v.ignores = ignores(pass.Fset, f)
		for _, call := range calls[i] {
			v.call(call)
		}
	}
	if c.Stats && len(pass.Files) > 0 {
		st := v.stats
		pass.Report(analysis.Diagnostic{Pos: pass.Files[0].Package, Category: StatsCategory,
			Message: fmt.Sprintf("keys=%d unknown=%d generated=%d", st.Keys, st.Unknown, st.Generated)})
	}
	return v.stats, nil
}

type assign struct {
	rhs   ast.Expr
	index int // the result index of a multi-value call; -1 for a single value
}

type visitor struct {
	c       *Config
	pass    *analysis.Pass
	l       *loaded
	stats   *Stats
	file    *ast.File
	ignores map[int][]string
	assigns map[*types.Var][]assign
}

// collect records every assignment of every local variable, so that a
// variable assigned once can be followed to its value, and returns the
// calls of f, in source order, whose callee is a method of go-redis v9.
func (v *visitor) collect(f *ast.File) []*ast.CallExpr {
	info := v.pass.TypesInfo
	var calls []*ast.CallExpr
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok {
				if s := info.Selections[sel]; s != nil && s.Kind() == types.MethodVal && s.Obj().Pkg() != nil && s.Obj().Pkg().Path() == redisPkg {
					calls = append(calls, n)
				}
			}
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				id, ok := lhs.(*ast.Ident)
				if !ok {
					// x.f = …, x.f[i] = …: the value of x, a struct or a
					// pointer to one, is not its literal any more.
					if obj := fieldBase(info, lhs); obj != nil {
						v.assigns[obj] = append(v.assigns[obj], assign{}, assign{})
					}
					continue
				}
				obj, _ := info.ObjectOf(id).(*types.Var)
				if obj == nil {
					continue
				}
				a := assign{index: -1}
				if len(n.Rhs) == len(n.Lhs) {
					a.rhs = n.Rhs[i]
				} else if len(n.Rhs) == 1 {
					a.rhs, a.index = n.Rhs[0], i
				}
				if n.Tok != token.ASSIGN && n.Tok != token.DEFINE {
					a.rhs = nil // +=: not one value
				}
				v.assigns[obj] = append(v.assigns[obj], a)
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				obj, _ := info.ObjectOf(id).(*types.Var)
				if obj == nil {
					continue
				}
				a := assign{index: -1}
				switch {
				case len(n.Values) == len(n.Names):
					a.rhs = n.Values[i]
				case len(n.Values) == 1:
					a.rhs, a.index = n.Values[0], i
				}
				v.assigns[obj] = append(v.assigns[obj], a)
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND { // &x: x may change through the pointer
				if id, ok := n.X.(*ast.Ident); ok {
					if obj, _ := info.ObjectOf(id).(*types.Var); obj != nil {
						v.assigns[obj] = append(v.assigns[obj], assign{}, assign{})
					}
				}
			}
		}
		return true
	})
	return calls
}

// fieldBase returns the variable whose field (or an element of it) the
// assignment target e writes, or nil.
func fieldBase(info *types.Info, e ast.Expr) *types.Var {
	for depth := 0; depth < maxDepth; depth++ {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.Ident:
			obj, _ := info.ObjectOf(x).(*types.Var)
			return obj
		default:
			return nil
		}
	}
	return nil
}

// keyParams are the names go-redis v9 gives a key parameter of type string.
var keyParams = map[string]bool{
	"key": true, "newkey": true, "destKey": true, "sourceKey": true, "destination": true,
	"source": true, "dest": true, "stream": true, "store": true,
	"dst": true, "Key": true, // ZRangeStore's; TSIncrBy's, TSDecrBy's, TSDel's
}

// notKeys are the methods whose parameter keys holds no keys.
var notKeys = map[string]bool{
	"ClientKillByFilter": true, // CLIENT KILL's filters: TYPE normal, ADDR …
}

// ttlCommands are the commands whose "expiration" argument is the key's TTL.
var ttlCommands = map[string]bool{
	"Set": true, "SetNX": true, "SetEx": true, "SetXX": true, "Expire": true, "PExpire": true,
	"ExpireNX": true, "ExpireXX": true, "ExpireGT": true, "ExpireLT": true, "GetEx": true,
}

// call checks the key arguments of call when it is a go-redis v9 command.
func (v *visitor) call(call *ast.CallExpr) {
	fn, _ := typeutil.Callee(v.pass.TypesInfo, call).(*types.Func)
	if fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != redisPkg {
		return
	}
	sig := fn.Signature()
	if sig.Recv() == nil || sig.Params().Len() < 2 || !isContext(sig.Params().At(0).Type()) {
		return
	}
	params := sig.Params()
	if sig.Variadic() {
		// Methods whose keys their parameter names do not show.
		last := params.Len() - 1
		switch fn.Name() {
		case "MSet", "MSetNX", "MSetEX":
			if last < len(call.Args) {
				v.pairs(call.Args[last:], call.Ellipsis != token.NoPos)
			}
			return
		case "Do", "DoRaw":
			if last == 1 && len(call.Args) > 1 {
				v.do(call, call.Args[1:])
			}
			return
		case "Subscribe", "SSubscribe":
			if params.At(last).Name() == "channels" && last < len(call.Args) && call.Ellipsis == token.NoPos {
				for _, a := range call.Args[last:] {
					v.channel(a, strings.ToUpper(fn.Name()), fn.Name() == "SSubscribe")
				}
			}
			return
		}
	}
	if (fn.Name() == "Publish" || fn.Name() == "SPublish") && params.At(1).Name() == "channel" && len(call.Args) > 1 {
		v.channel(call.Args[1], strings.ToUpper(fn.Name()), fn.Name() == "SPublish")
		return
	}
	var first *keyArg
	var ttl ast.Expr
	for i := 1; i < params.Len(); i++ {
		p := params.At(i)
		name := p.Name()
		variadic := sig.Variadic() && i == params.Len()-1
		switch {
		case keyParams[name] && isString(p.Type()) && !variadic && i < len(call.Args):
			k := v.key(call.Args[i])
			if first == nil {
				first = k
			}
		case name == "keys" && i < len(call.Args) && !notKeys[fn.Name()]:
			if variadic && call.Ellipsis == token.NoPos {
				for _, a := range call.Args[i:] {
					v.key(a)
				}
			} else if lit, ok := ast.Unparen(call.Args[i]).(*ast.CompositeLit); ok {
				for _, a := range lit.Elts {
					v.key(a)
				}
			}
		case name == "expiration" && i < len(call.Args):
			ttl = call.Args[i]
		case i < len(call.Args) && !variadic:
			v.argsStruct(call.Args[i])
		}
	}
	if first != nil && ttl != nil && ttlCommands[fn.Name()] {
		v.ttl(fn.Name(), first, ttl)
	}
}

func isContext(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

func isString(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

func isInteger(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

// keyArg is one checked key argument with the family it matched.
type keyArg struct {
	expr   ast.Expr
	family *registry.Family // the one family it can match, or nil
}

// report adds a diagnostic unless a //keyreg:ignore comment silences it.
func (v *visitor) report(d analysis.Diagnostic) {
	line := v.pass.Fset.Position(d.Pos).Line
	for _, r := range v.ignores[line] {
		if r == d.Category {
			return
		}
	}
	d.Message += " (" + d.Category + ")"
	v.pass.Report(d)
}
