package rules

import (
	"strconv"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// closest returns the candidate nearest to name by edit distance, if one is
// within distance 2 and shorter than name itself (so "qa" is never offered
// for "db"). Ties go to the earliest candidate.
func closest(name string, candidates []string) (string, bool) {
	best, bestD := "", 3
	for _, c := range candidates {
		if c == name {
			continue
		}
		if d := editDistance(name, c); d < bestD && d < len(name) {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// didYouMean returns `; did you mean "x"?` for the closest candidate, or "".
func didYouMean(name string, candidates []string) string {
	if c, ok := closest(name, candidates); ok {
		return "; did you mean " + quote(c) + "?"
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// patternPos returns the position of the bytes [off, off+n) of f's pattern
// source in keys.yaml, or of the whole pattern when they cannot be placed.
func patternPos(f *registry.Family, off, n int) diag.Pos {
	return f.PatternPos(off, n)
}

// quote formats s as %q does.
func quote(s string) string { return strconv.Quote(s) }
