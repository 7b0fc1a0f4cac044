package vet

import (
	"go/token"
	"path/filepath"
	"strings"

	"github.com/keyreg/keyreg/diag"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// Severity is the severity keyreg vet gives a rule's findings.
func Severity(rule string) diag.Severity {
	switch rule {
	case RuleDeprecated, RuleChannelDeprecated:
		return diag.Warn
	case RuleHandbuilt:
		return diag.Info
	}
	return diag.Error
}

// Result is one keyreg vet run.
type Result struct {
	Diagnostics diag.List
	Stats       Stats
	// Errors are the packages that did not load or type-check; a run with
	// errors is partial.
	Errors []string
}

// Check is the in-process driver (keyreg vet uses GoVet, which is faster):
// it loads the packages of patterns in dir, as go vet does (the
// packages' own syntax, their dependencies from export data), and runs the
// analyzer of c over them. Positions are relative to dir.
func Check(c *Config, dir string, patterns []string) (*Result, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
			packages.NeedTypesInfo | packages.NeedImports | packages.NeedModule | packages.NeedTypesSizes,
		Dir: dir,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	var ok []*packages.Package
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			for _, e := range p.Errors {
				res.Errors = append(res.Errors, e.Error())
			}
			continue
		}
		ok = append(ok, p)
	}
	a := New(c)
	g, err := checker.Analyze([]*analysis.Analyzer{a}, ok, nil)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	for _, act := range g.Roots {
		if act.Err != nil {
			return nil, act.Err
		}
		if st, ok := act.Result.(*Stats); ok {
			res.Stats.Keys += st.Keys
			res.Stats.Unknown += st.Unknown
			res.Stats.Generated += st.Generated
		}
		for _, d := range act.Diagnostics {
			res.Diagnostics = append(res.Diagnostics, toDiag(act.Package.Fset, abs, d))
		}
	}
	res.Diagnostics.Sort()
	return res, nil
}

// toDiag turns an analysis diagnostic into keyreg's, its position relative
// to dir and its message without the rule suffix that go vet shows.
func toDiag(fset *token.FileSet, dir string, d analysis.Diagnostic) diag.Diagnostic {
	start, end := fset.Position(d.Pos), fset.Position(d.End)
	file := start.Filename
	if rel, err := filepath.Rel(dir, file); err == nil && !strings.HasPrefix(rel, "..") {
		file = rel
	}
	pos := diag.Pos{File: filepath.ToSlash(file), Line: start.Line, Col: start.Column}
	if end.IsValid() {
		pos.EndLine, pos.EndCol = end.Line, end.Column
	}
	return diag.Diagnostic{
		Pos:      pos,
		Severity: Severity(d.Category),
		Rule:     d.Category,
		Message:  strings.TrimSuffix(d.Message, " ("+d.Category+")"),
	}
}
