package codegen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/keyreg/keyreg/diag"
)

// The line diff bounds its work. Myers' algorithm is tried first on each
// changed region, up to maxMyersEdits edits (its trace then holds about
// maxMyersEdits² indexes); a region that needs more is split at the lines
// that occur exactly once in both files (patience diff), up to
// maxPatienceDepth times, and what still differs is shown as one
// replacement. So the script is minimal for the small changes --check
// exists for, and two unrelated files cost O(n log n), not O(n²).
const (
	maxMyersEdits    = 1000
	maxPatienceDepth = 32
	diffContext      = 3
	// myersBudget bounds the line comparisons and diagonal steps of every
	// Myers run of one diff together; once spent, regions are split by
	// patience alone.
	myersBudget = 50_000_000
)

// UnifiedDiff returns a unified diff that turns old into new, in the
// format of diff -u (3 lines of context, hunks merged when their context
// meets, "\ No newline at end of file" marks); oldName and newName label
// the --- and +++ lines. It returns nil when old and new are equal.
//
// When maxBytes > 0 the diff is cut before it would exceed maxBytes: hunks
// are printed whole while they fit, then the part of the next hunk that
// fits, with a header counting the lines printed, so every hunk printed
// applies. A last line, which starts with no diff marker, then says how
// many hunks and changed lines were left out.
func UnifiedDiff(oldName, newName string, old, new []byte, maxBytes int) []byte {
	if bytes.Equal(old, new) {
		return nil
	}
	ops := diffLines(splitLines(old), splitLines(new))
	var out bytes.Buffer
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	hunks := hunksOf(ops)
	for i, h := range hunks {
		text := renderHunk(ops[h[0]:h[1]])
		if maxBytes <= 0 || out.Len()+len(text) <= maxBytes {
			out.Write(text)
			continue
		}
		// Print the longest prefix of the hunk that fits, if it holds a
		// change, and count what is left out.
		cut, size := h[0], 0
		for cut < h[1] {
			size += lineSize(ops[cut])
			if out.Len()+headerSize(ops[h[0]:cut+1])+size > maxBytes {
				break
			}
			cut++
		}
		for cut > h[0] && ops[cut-1].kind == ' ' {
			cut--
		}
		if cut > h[0] {
			out.Write(renderHunk(ops[h[0]:cut]))
		}
		del, add := 0, 0
		for _, op := range ops[cut:] {
			switch op.kind {
			case '-':
				del++
			case '+':
				add++
			}
		}
		what := diag.Count(len(hunks)-i, "more hunk")
		if cut > h[0] {
			what = "the rest of this hunk and " + diag.Count(len(hunks)-i-1, "more hunk")
		}
		fmt.Fprintf(&out, "[keyreg: the diff is cut at %d bytes: %s left out, with %s removed and %s added]\n",
			maxBytes, what, diag.Count(del, "line"), diag.Count(add, "line"))
		break
	}
	return out.Bytes()
}

// hunksOf groups an edit script into hunks: [start, end) ranges of ops
// with diffContext lines of context around each change, merged when the
// context of two changes would touch or overlap, as diff -u does.
func hunksOf(ops []diffOp) [][2]int {
	var hunks [][2]int
	for i := 0; i < len(ops); {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-diffContext, 0)
		end := i + 1 // one past the last change of the hunk
		for j := end; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j + 1
			} else if j-end >= 2*diffContext {
				break
			}
		}
		end = min(end+diffContext, len(ops))
		hunks = append(hunks, [2]int{start, end})
		i = end
	}
	return hunks
}

// header writes the @@ line of a hunk.
func header(ops []diffOp) string {
	last := ops[len(ops)-1]
	// The lines of old and new the hunk spans, from the first op's
	// position to the last's, which an added line does not advance in old
	// nor a removed one in new.
	aN := last.a - ops[0].a + boolInt(last.kind != '+')
	bN := last.b - ops[0].b + boolInt(last.kind != '-')
	return fmt.Sprintf("@@ -%s +%s @@\n", hunkRange(ops[0].a, aN), hunkRange(ops[0].b, bN))
}

func headerSize(ops []diffOp) int { return len(header(ops)) }

// lineSize is the bytes renderHunk writes for op.
func lineSize(op diffOp) int {
	if strings.HasSuffix(op.line, "\n") {
		return 1 + len(op.line)
	}
	return 1 + len(op.line) + len("\n\\ No newline at end of file\n")
}

// renderHunk writes one hunk: its @@ header and its lines.
func renderHunk(ops []diffOp) []byte {
	var out bytes.Buffer
	out.WriteString(header(ops))
	for _, op := range ops {
		out.WriteByte(op.kind)
		out.WriteString(op.line)
		if !strings.HasSuffix(op.line, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
	return out.Bytes()
}

// hunkRange writes a hunk's start and length as diff -u does: the start
// is 1-based, or the line before an empty range; a length of 1 is left
// out.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// diffOp is one line of an edit script: ' ' kept, '-' removed, '+' added.
// a and b are the 0-based line indexes in old and new where it stands.
type diffOp struct {
	kind byte
	line string
	a, b int
}

func splitLines(s []byte) []string {
	if len(s) == 0 {
		return nil
	}
	return strings.SplitAfter(string(s), "\n")[:bytes.Count(s, []byte("\n"))+boolInt(s[len(s)-1] != '\n')]
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// differ computes an edit script over lines interned as integers.
type differ struct {
	la, lb []string // the lines
	a, b   []int    // their ids: equal lines, equal ids
	ops    []diffOp
	budget int // what is left of myersBudget
}

// diffLines returns an edit script that turns a into b.
func diffLines(a, b []string) []diffOp {
	d := &differ{la: a, lb: b, a: make([]int, len(a)), b: make([]int, len(b)), budget: myersBudget}
	ids := map[string]int{}
	for i, l := range a {
		id, ok := ids[l]
		if !ok {
			id = len(ids)
			ids[l] = id
		}
		d.a[i] = id
	}
	for i, l := range b {
		id, ok := ids[l]
		if !ok {
			id = len(ids)
			ids[l] = id
		}
		d.b[i] = id
	}
	d.diff(0, len(a), 0, len(b), 0)
	return d.ops
}

func (d *differ) keep(i, j int) { d.ops = append(d.ops, diffOp{' ', d.la[i], i, j}) }
func (d *differ) del(i, j int)  { d.ops = append(d.ops, diffOp{'-', d.la[i], i, j}) }
func (d *differ) add(i, j int)  { d.ops = append(d.ops, diffOp{'+', d.lb[j], i, j}) }

// diff appends the edit script of a[a0:a1] to b[b0:b1].
func (d *differ) diff(a0, a1, b0, b1, depth int) {
	for a0 < a1 && b0 < b1 && d.a[a0] == d.b[b0] {
		d.keep(a0, b0)
		a0, b0 = a0+1, b0+1
	}
	suf := 0
	for a1-suf > a0 && b1-suf > b0 && d.a[a1-suf-1] == d.b[b1-suf-1] {
		suf++
	}
	a1, b1 = a1-suf, b1-suf
	switch {
	case a0 == a1 && b0 == b1:
	case a0 == a1 || b0 == b1 || !d.myers(a0, a1, b0, b1):
		if a0 == a1 || b0 == b1 || depth >= maxPatienceDepth || !d.patience(a0, a1, b0, b1, depth) {
			for i := a0; i < a1; i++ {
				d.del(i, b0)
			}
			for j := b0; j < b1; j++ {
				d.add(a1, j)
			}
		}
	}
	for k := 0; k < suf; k++ {
		d.keep(a1+k, b1+k)
	}
}

// myers appends a shortest edit script of a[a0:a1] to b[b0:b1] (E. Myers,
// An O(ND) Difference Algorithm and Its Variations, 1986), or returns
// false, appending nothing, when it needs more than maxMyersEdits edits
// or more work than is left of the budget.
func (d *differ) myers(a0, a1, b0, b1 int) bool {
	n, m := a1-a0, b1-b0
	most := min(n+m, maxMyersEdits)
	off := most + 1
	v := make([]int32, 2*most+3) // v[off+k]: the furthest x on diagonal k
	var trace [][]int32          // trace[e]: v[off-e-1 : off+e+2] before step e
	for e := 0; e <= most; e++ {
		trace = append(trace, append([]int32(nil), v[off-e-1:off+e+2]...))
		for k := -e; k <= e; k += 2 {
			var x int
			if k == -e || k != e && v[off+k-1] < v[off+k+1] {
				x = int(v[off+k+1]) // down: an insertion
			} else {
				x = int(v[off+k-1]) + 1 // right: a deletion
			}
			y := x - k
			start := x
			for x < n && y < m && d.a[a0+x] == d.b[b0+y] {
				x, y = x+1, y+1
			}
			if d.budget -= 1 + x - start; d.budget < 0 {
				return false
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				d.backtrack(trace, a0, b0, n, m)
				return true
			}
		}
	}
	return false
}

// backtrack follows Myers' trace back from (n, m) and appends the edit
// script in order.
func (d *differ) backtrack(trace [][]int32, a0, b0, n, m int) {
	var rev []diffOp
	x, y := n, m
	for e := len(trace) - 1; e >= 0; e-- {
		v := trace[e]
		at := func(k int) int { return int(v[k+e+1]) }
		k := x - y
		var pk int
		if k == -e || k != e && at(k-1) < at(k+1) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		if e == 0 {
			px, py = 0, 0
		}
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, diffOp{' ', d.la[a0+x], a0 + x, b0 + y})
		}
		if e > 0 {
			if x == px {
				rev = append(rev, diffOp{'+', d.lb[b0+py], a0 + px, b0 + py})
			} else {
				rev = append(rev, diffOp{'-', d.la[a0+px], a0 + px, b0 + py})
			}
		}
		x, y = px, py
	}
	for i := len(rev) - 1; i >= 0; i-- {
		d.ops = append(d.ops, rev[i])
	}
}

// patience splits a[a0:a1] and b[b0:b1] at the longest increasing run of
// lines that occur exactly once in each, diffs the regions between them,
// and appends the script; it returns false, appending nothing, when no
// line is unique in both.
func (d *differ) patience(a0, a1, b0, b1, depth int) bool {
	type count struct{ na, nb, ia, ib int }
	counts := map[int]*count{}
	for i := a0; i < a1; i++ {
		c := counts[d.a[i]]
		if c == nil {
			c = &count{}
			counts[d.a[i]] = c
		}
		c.na, c.ia = c.na+1, i
	}
	for j := b0; j < b1; j++ {
		if c := counts[d.b[j]]; c != nil {
			c.nb, c.ib = c.nb+1, j
		}
	}
	// The unique pairs in a's order; the anchors are the longest run of
	// them increasing in b too (patience sorting).
	var pairs [][2]int
	for i := a0; i < a1; i++ {
		if c := counts[d.a[i]]; c.na == 1 && c.nb == 1 {
			pairs = append(pairs, [2]int{i, c.ib})
		}
	}
	if len(pairs) == 0 {
		return false
	}
	var tops []int                  // tops[p]: the pair index on top of pile p
	prev := make([]int, len(pairs)) // the pair below on the previous pile
	for i, p := range pairs {
		lo, hi := 0, len(tops)
		for lo < hi {
			mid := (lo + hi) / 2
			if pairs[tops[mid]][1] < p[1] {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		prev[i] = -1
		if lo > 0 {
			prev[i] = tops[lo-1]
		}
		if lo == len(tops) {
			tops = append(tops, i)
		} else {
			tops[lo] = i
		}
	}
	anchors := make([][2]int, len(tops))
	for i, p := len(tops)-1, tops[len(tops)-1]; i >= 0; i, p = i-1, prev[p] {
		anchors[i] = pairs[p]
	}
	for _, an := range anchors {
		d.diff(a0, an[0], b0, an[1], depth+1)
		d.keep(an[0], an[1])
		a0, b0 = an[0]+1, an[1]+1
	}
	d.diff(a0, a1, b0, b1, depth+1)
	return true
}
