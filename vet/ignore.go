package vet

import (
	"go/ast"
	"go/token"
	"slices"
	"strings"
)

// ignores returns, per line of f, the rules a //keyreg:ignore comment on
// that line silences. A comment without a reason silences nothing.
func ignores(fset *token.FileSet, f *ast.File) map[int][]string {
	var out map[int][]string
	for _, g := range f.Comments {
		for _, c := range g.List {
			text, ok := strings.CutPrefix(c.Text, "//keyreg:ignore ")
			if !ok {
				continue
			}
			fields := strings.Fields(text)
			if len(fields) < 2 || !slices.Contains(Rules, fields[0]) {
				continue
			}
			if out == nil {
				out = map[int][]string{}
			}
			line := fset.Position(c.Pos()).Line
			out[line] = append(out[line], fields[0])
		}
	}
	return out
}
