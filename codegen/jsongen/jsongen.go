// Package jsongen is the codegen backend of keyreg gen json: it writes the
// request itself, a stable JSON document (docs/codegen.md, its schema
// schemas/codegen-request.v1.schema.json) that other tools may generate
// code from.
package jsongen

import "github.com/keyreg/keyreg/codegen"

// FileName is the name of the one file Generate returns.
const FileName = "keyreg-request.json"

// Generator writes the request as JSON.
type Generator struct{}

// Generate returns the request, indented, as one file.
func (Generator) Generate(req *codegen.Request) ([]codegen.File, error) {
	b, err := req.MarshalIndented()
	if err != nil {
		return nil, err
	}
	return []codegen.File{{Name: FileName, Data: b}}, nil
}
