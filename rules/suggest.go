package rules

import (
	"strconv"
	"strings"

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
// source when it can be told exactly: the pattern is a single-line scalar of
// ASCII bytes that no quoting style escapes. Otherwise it returns the
// position of the whole pattern.
func patternPos(f *registry.Family, off, n int) diag.Pos {
	pos := f.PosOf("pattern")
	if !f.Has("pattern") || f.Pattern == nil || pos.EndLine != pos.Line {
		return pos
	}
	src := f.Pattern.Source
	var open int
	switch pos.EndCol - pos.Col - len(src) {
	case 0:
	case 2:
		// Quoted. The loader measures the value, not the text as written,
		// so a value that a quoted scalar may have escaped ("\\", "''") can
		// put the bytes elsewhere.
		if strings.ContainsAny(src, `\"'`) {
			return pos
		}
		open = 1
	default:
		return pos
	}
	for i := 0; i < len(src); i++ {
		if src[i] >= 0x80 {
			return pos // YAML columns count characters, not bytes
		}
	}
	pos.Col += open + off
	pos.EndCol = pos.Col + n
	return pos
}

// quote formats s as %q does.
func quote(s string) string { return strconv.Quote(s) }
