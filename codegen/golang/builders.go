package golang

import (
	"strings"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

// Generator is a codegen.Documenter: the catalogue (keyreg docs) shows
// the builders it writes.
var _ codegen.Documenter = Generator{}

// Builders returns the signature of the key builder that Generate writes
// for every family of req (in scope or not), by family name, qualified by
// g.Package, such as
// "keys.BuildUserSession(sessionID string) (string, error)". The names
// are Generate's, collisions resolved alike; they depend neither on the
// scope nor on Client. It fails when the names cannot be chosen, as
// Generate would.
func (g Generator) Builders(req *codegen.Request) (map[string]string, error) {
	bs, err := FuncBuilders(req.Registry())
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(bs))
	for name, b := range bs {
		out[name] = g.Package + "." + b.Func + "(" + strings.Join(b.Params, ", ") + ") (string, error)"
	}
	return out, nil
}

// Builder is the key builder Generate writes for one family, for a tool
// that writes Go calls of it (keyreg vet's suggested fixes).
type Builder struct {
	Func   string   // such as "BuildUserSession"; Must+Func panics instead of failing
	Params []string // such as "sessionID string" or "userID int64", in pattern order
}

// FuncBuilders returns the key builder of every family of reg, by family
// name, exactly as Generate names them (whatever the package, client or
// scope). It fails when Generate would.
func FuncBuilders(reg *registry.Registry) (map[string]Builder, error) {
	v, err := newView(reg, Options{Package: "keys", Client: ClientNone})
	if err != nil {
		return nil, err
	}
	out := make(map[string]Builder, len(v.Families))
	for _, f := range v.Families {
		b := Builder{Func: "Build" + f.Ident}
		for _, p := range f.Params {
			typ := "string"
			if p.Int {
				typ = "int64"
			}
			b.Params = append(b.Params, p.Arg+" "+typ)
		}
		out[f.Name] = b
	}
	return out, nil
}
