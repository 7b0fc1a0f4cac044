package golang

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// goPackages are the packages generated code may import, each with the
// name the code refers to it by, in the order of the import block: the
// standard library sorted by path, then go-redis.
var goPackages = []struct{ path, name string }{
	{"cmp", "cmp"},
	{"context", "context"},
	{"crypto/rand", "rand"},
	{"encoding/json", "json"},
	{"errors", "errors"},
	{"fmt", "fmt"},
	{"maps", "maps"},
	{"math", "math"},
	{"math/rand/v2", "mathrand"}, // beside crypto/rand
	{"reflect", "reflect"},
	{"regexp", "regexp"},
	{"slices", "slices"},
	{"strconv", "strconv"},
	{"strings", "strings"},
	{"time", "time"},
	{"unicode/utf8", "utf8"},
	{"github.com/redis/go-redis/v9", "redis"},
}

// importSpecs returns the import specs of the packages whose name use
// accepts: the standard library's, and the third-party modules'.
func importSpecs(use func(name string) bool) (std, modules []string) {
	for _, p := range goPackages {
		if !use(p.name) {
			continue
		}
		spec := strconv.Quote(p.path)
		if p.name == "mathrand" {
			spec = p.name + " " + spec
		}
		if p.path == "github.com/redis/go-redis/v9" {
			modules = append(modules, spec)
		} else {
			std = append(std, spec)
		}
	}
	return std, modules
}

// referencedNames returns the names src uses as the left side of a
// selector (pkg.Name). No generated parameter or local is named like a
// package (localName sees to the placeholder arguments, and the templates'
// own locals are fixed), so such a name is a package the file uses.
func referencedNames(src []byte) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				used[x.Name] = true
			}
		}
		return true
	})
	return used, nil
}
