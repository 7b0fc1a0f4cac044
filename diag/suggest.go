package diag

import "strconv"

// Closest returns the candidate nearest to name by edit distance, if one is
// within distance 2 and shorter than name itself (so "qa" is never offered
// for "db"). Ties go to the earliest candidate.
func Closest(name string, candidates []string) (string, bool) {
	best, bestD := "", 3
	for _, c := range candidates {
		// The distance is at least the difference in length: skip those
		// out of reach before paying len(name)*len(c) steps.
		if c == name || len(c) > len(name)+2 || len(name) > len(c)+2 {
			continue
		}
		if d := editDistance(name, c); d < bestD && d < len(name) {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// DidYouMean returns `; did you mean "x"?` for the closest candidate, or "".
func DidYouMean(name string, candidates []string) string {
	if c, ok := Closest(name, candidates); ok {
		return "; did you mean " + strconv.Quote(c) + "?"
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes. Names
// longer than 256 bytes are not compared (the distance is taken as their
// length difference plus 3), so a hostile name costs at most 256² steps per
// candidate.
func editDistance(a, b string) int {
	const maxLen = 256
	if len(a) > maxLen || len(b) > maxLen {
		return max(len(a), len(b)) - min(len(a), len(b)) + 3
	}
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
