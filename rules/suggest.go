package rules

import (
	"strconv"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// didYouMean returns `; did you mean "x"?` for the closest candidate, or "".
func didYouMean(name string, candidates []string) string { return diag.DidYouMean(name, candidates) }

// patternPos returns the position of the bytes [off, off+n) of f's pattern
// source in keys.yaml, or of the whole pattern when they cannot be placed.
func patternPos(f *registry.Family, off, n int) diag.Pos {
	return f.PatternPos(off, n)
}

// quote formats s as %q does.
func quote(s string) string { return strconv.Quote(s) }
