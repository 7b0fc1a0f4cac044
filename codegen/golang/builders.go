package golang

import "github.com/keyreg/keyreg/registry"

// Builder describes the key builder that Generate writes for one family,
// for documentation such as keyreg docs.
type Builder struct {
	Func   string   // such as "BuildUserSession"
	Params []string // such as "sessionID string", in pattern order
}

// Builders returns the key builder of every family of reg, by family name,
// exactly as Generate names them (the names do not depend on Options). It
// fails when Generate would.
func Builders(reg *registry.Registry) (map[string]Builder, error) {
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
