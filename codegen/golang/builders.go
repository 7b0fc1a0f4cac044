package golang

import (
	"strings"

	"github.com/keyreg/keyreg/codegen"
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
	v, err := newView(req.Registry(), Options{Package: g.Package, Client: ClientNone})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(v.Families))
	for _, f := range v.Families {
		params := make([]string, len(f.Params))
		for i, p := range f.Params {
			typ := "string"
			if p.Int {
				typ = "int64"
			}
			params[i] = p.Arg + " " + typ
		}
		out[f.Name] = g.Package + ".Build" + f.Ident + "(" + strings.Join(params, ", ") + ") (string, error)"
	}
	return out, nil
}
