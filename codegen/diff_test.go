package codegen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	if d := UnifiedDiff("a", "b", []byte("x\n"), []byte("x\n"), 0); d != nil {
		t.Errorf("equal inputs gave a diff:\n%s", d)
	}
	old := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	new := "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n12\n13"
	want := `--- a/f
+++ b/f
@@ -2,7 +2,7 @@
 2
 3
 4
-5
+five
 6
 7
 8
@@ -10,3 +10,4 @@
 10
 11
 12
+13
\ No newline at end of file
`
	if got := string(UnifiedDiff("a/f", "b/f", []byte(old), []byte(new), 0)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	got := string(UnifiedDiff("a/f", "b/f", nil, []byte("x\ny\n"), 0))
	if want := "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n"; got != want {
		t.Errorf("diff from empty: got:\n%s\nwant:\n%s", got, want)
	}
	got = string(UnifiedDiff("a/f", "b/f", []byte("x\ny\n"), nil, 0))
	if want := "--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-x\n-y\n"; got != want {
		t.Errorf("diff to empty: got:\n%s\nwant:\n%s", got, want)
	}
}

// diffCase is a pair of files for the diff tests.
type diffCase struct {
	name     string
	old, new string
}

// diffCases returns pairs of files: random edits of files made of few
// distinct lines (so that many lines repeat, as "}" and "return err" do in
// Go), missing final newlines, empty files, and unrelated files.
func diffCases() []diffCase {
	r := rand.New(rand.NewPCG(1, 2))
	lines := func(n, alphabet int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "line " + strconv.Itoa(r.IntN(alphabet)) + "\n"
		}
		return out
	}
	edit := func(in []string, edits, alphabet int) []string {
		out := append([]string(nil), in...)
		for range edits {
			i := r.IntN(len(out) + 1)
			switch r.IntN(3) {
			case 0:
				out = append(out[:i], append([]string{"new " + strconv.Itoa(r.IntN(alphabet)) + "\n"}, out[i:]...)...)
			case 1:
				if i < len(out) {
					out = append(out[:i], out[i+1:]...)
				}
			default:
				if i < len(out) {
					out[i] = "changed " + strconv.Itoa(r.IntN(alphabet)) + "\n"
				}
			}
		}
		return out
	}
	var cases []diffCase
	for i := range 40 {
		n, alphabet, edits := 1+r.IntN(200), 1+r.IntN(12), r.IntN(15)
		a := lines(n, alphabet)
		b := edit(a, edits, alphabet)
		old, new := strings.Join(a, ""), strings.Join(b, "")
		if i%5 == 0 && len(new) > 0 {
			new = new[:len(new)-1] // no final newline
		}
		if i%7 == 0 && len(old) > 0 {
			old = old[:len(old)-1]
		}
		cases = append(cases, diffCase{fmt.Sprintf("random%d", i), old, new})
	}
	cases = append(cases,
		diffCase{"from-empty", "", "a\nb\n"},
		diffCase{"to-empty", "a\nb\n", ""},
		diffCase{"unrelated", strings.Join(lines(3000, 5000), ""), strings.Join(lines(3000, 5000), "")},
		diffCase{"same-but-last-newline", "a\nb\nc", "a\nb\nc\n"},
	)
	return cases
}

// counts returns the removed and added lines of a unified diff.
func counts(diff string) (del, add int) {
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-"):
			del++
		case strings.HasPrefix(l, "+"):
			add++
		}
	}
	return del, add
}

// applyPatch applies a unified diff to old with GNU patch and with git
// apply, and returns what each makes of it.
func applyPatch(t *testing.T, name string, old, diff []byte) (byPatch, byGit []byte) {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, name)
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(diff)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s\npatch:\n%s", name, strings.Join(args, " "), err, out, diff)
		}
	}
	for _, tool := range []string{"patch", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: the diff must be applied", tool)
		}
	}
	if err := os.WriteFile(f, old, 0o644); err != nil {
		t.Fatal(err)
	}
	run("patch", "-p1", "--quiet", "--no-backup-if-mismatch", "-r", "-")
	byPatch, _ = os.ReadFile(f)
	if err := os.WriteFile(f, old, 0o644); err != nil {
		t.Fatal(err)
	}
	run("git", "apply", "-p1", "--unsafe-paths", "--directory=.", "-")
	byGit, _ = os.ReadFile(f)
	return byPatch, byGit
}

// TestUnifiedDiffApplies applies every diff with GNU patch and with git
// apply, which must both give the new file, and checks that it removes
// and adds as many lines as diff -u does (both are minimal edit scripts).
func TestUnifiedDiffApplies(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		t.Fatal("diff is not on PATH: the diff is compared with diff -u")
	}
	for _, c := range diffCases() {
		t.Run(c.name, func(t *testing.T) {
			d := UnifiedDiff("a/f", "b/f", []byte(c.old), []byte(c.new), 0)
			if d == nil {
				if c.old != c.new {
					t.Fatal("no diff for different files")
				}
				return
			}
			byPatch, byGit := applyPatch(t, "f", []byte(c.old), d)
			if string(byPatch) != c.new {
				t.Errorf("patch made %q, want %q\n%s", byPatch, c.new, d)
			}
			if string(byGit) != c.new {
				t.Errorf("git apply made %q, want %q\n%s", byGit, c.new, d)
			}
			if c.name == "unrelated" {
				return // diff -u takes its own shortcuts on files that share nothing
			}
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			os.WriteFile(a, []byte(c.old), 0o644)
			os.WriteFile(b, []byte(c.new), 0o644)
			ref, _ := exec.Command("diff", "-u", a, b).Output()
			if gd, ga := counts(string(d)); true {
				if rd, ra := counts(string(ref)); gd != rd || ga != ra {
					t.Errorf("-%d +%d lines, diff -u has -%d +%d\n%s\ndiff -u:\n%s", gd, ga, rd, ra, d, ref)
				}
			}
		})
	}
}

var hunkHeader = regexp.MustCompile(`(?m)^@@ -\d+(,\d+)? \+\d+(,\d+)? @@$`)

// TestUnifiedDiffBounded cuts a large diff: the output stays within the
// bound plus the last line, that line says what was left out, and what is
// printed still applies.
func TestUnifiedDiffBounded(t *testing.T) {
	var old, new strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&old, "line %d\n", i)
		if i%10 == 0 {
			fmt.Fprintf(&new, "changed %d\n", i)
		} else {
			fmt.Fprintf(&new, "line %d\n", i)
		}
	}
	full := UnifiedDiff("a/f", "b/f", []byte(old.String()), []byte(new.String()), 0)
	const limit = 4096
	d := UnifiedDiff("a/f", "b/f", []byte(old.String()), []byte(new.String()), limit)
	body, last, ok := cutLastLine(d)
	if !ok || len(body) > limit {
		t.Fatalf("%d bytes before the last line, want at most %d", len(body), limit)
	}
	m := regexp.MustCompile(`^\[keyreg: the diff is cut at 4096 bytes: (the rest of this hunk and )?(\d+) more hunks? left out, with (\d+) lines? removed and (\d+) lines? added\]$`).FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("last line %q does not say what was left out", last)
	}
	shownDel, shownAdd := counts(string(body))
	fullDel, fullAdd := counts(string(full))
	if del, _ := strconv.Atoi(m[3]); shownDel+del != fullDel {
		t.Errorf("%d lines removed shown and %d said left out, of %d", shownDel, del, fullDel)
	}
	if add, _ := strconv.Atoi(m[4]); shownAdd+add != fullAdd {
		t.Errorf("%d lines added shown and %d said left out, of %d", shownAdd, add, fullAdd)
	}
	// "The rest of this hunk" is the hunk printed in part, so the hunks
	// printed and those said left out are all hunks.
	shownHunks := len(hunkHeader.FindAllString(string(body), -1))
	fullHunks := len(hunkHeader.FindAllString(string(full), -1))
	if left, _ := strconv.Atoi(m[2]); shownHunks+left != fullHunks {
		t.Errorf("%d hunks shown, %d said left out (%q), of %d", shownHunks, left, last, fullHunks)
	}
	// What is printed is a valid patch: applied, it makes the new file up
	// to the cut, and the old one after it.
	byPatch, byGit := applyPatch(t, "f", []byte(old.String()), d)
	if !bytes.Equal(byPatch, byGit) || bytes.Equal(byPatch, []byte(old.String())) {
		t.Errorf("the cut diff does not apply as a patch")
	}
	// One hunk larger than the bound: only a part of it is printed.
	d = UnifiedDiff("a/f", "b/f", nil, []byte(new.String()), limit)
	if body, last, _ := cutLastLine(d); len(body) > limit || !strings.Contains(last, "the rest of this hunk and 0 more hunks left out") {
		t.Errorf("a file created: %d bytes, last line %q", len(body), last)
	}
	// Nothing fits: the headers and the line.
	d = UnifiedDiff("a/f", "b/f", nil, []byte(new.String()), 10)
	if want := "--- a/f\n+++ b/f\n[keyreg: the diff is cut at 10 bytes: 1 more hunk left out, with 0 lines removed and 2000 lines added]\n"; string(d) != want {
		t.Errorf("got %q, want %q", d, want)
	}
}

// cutLastLine splits a text into everything before its last line and
// that line.
func cutLastLine(b []byte) (body []byte, last string, ok bool) {
	b = bytes.TrimSuffix(b, []byte("\n"))
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		return nil, string(b), false
	}
	return b[:i+1], string(b[i+1:]), true
}

// BenchmarkUnifiedDiffUnrelated diffs two unrelated generated-size files,
// the worst case: the work is bounded, not quadratic.
func BenchmarkUnifiedDiffUnrelated(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	mk := func() []byte {
		var s strings.Builder
		for range 20000 {
			fmt.Fprintf(&s, "line %d\n", r.IntN(30))
		}
		return []byte(s.String())
	}
	old, new := mk(), mk()
	b.ReportAllocs()
	for b.Loop() {
		UnifiedDiff("a", "b", old, new, 0)
	}
}

// applyUnified applies a unified diff to old as patch would, checking
// that every hunk's header counts its lines and that its context and
// removed lines are those of old.
func applyUnified(old, diff []byte) ([]byte, error) {
	a := splitLines(old)
	d := splitLines(diff)
	if len(d) < 2 || !strings.HasPrefix(d[0], "--- ") || !strings.HasPrefix(d[1], "+++ ") {
		return nil, fmt.Errorf("no --- and +++ lines")
	}
	header := regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n$`)
	var out []string
	pos := 0 // lines of a copied or consumed
	atoi := func(s string, def int) int {
		if s == "" {
			return def
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	for i := 2; i < len(d); {
		m := header.FindStringSubmatch(d[i])
		if m == nil {
			return nil, fmt.Errorf("line %d: %q is not a hunk header", i+1, d[i])
		}
		aStart, aN, bN := atoi(m[1], 0), atoi(m[2], 1), atoi(m[4], 1)
		if aN > 0 {
			aStart-- // 1-based, or the line before an empty range
		}
		if aStart < pos || aStart > len(a) {
			return nil, fmt.Errorf("hunk at %d overlaps or is out of range", aStart)
		}
		out = append(out, a[pos:aStart]...)
		pos = aStart
		i++
		for aN > 0 || bN > 0 {
			if i >= len(d) {
				return nil, fmt.Errorf("hunk ends early")
			}
			l := d[i]
			i++
			body := l[1:]
			if i < len(d) && d[i] == "\\ No newline at end of file\n" {
				body = strings.TrimSuffix(body, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(a) || a[pos] != body || aN == 0 {
					return nil, fmt.Errorf("line %q does not match old line %d", body, pos+1)
				}
				pos++
				aN--
				if l[0] == ' ' {
					out = append(out, body)
					bN--
				}
			case '+':
				out = append(out, body)
				bN--
			default:
				return nil, fmt.Errorf("bad line %q", l)
			}
			if aN < 0 || bN < 0 {
				return nil, fmt.Errorf("a hunk holds more lines than its header counts")
			}
		}
	}
	out = append(out, a[pos:]...)
	return []byte(strings.Join(out, "")), nil
}

// FuzzUnifiedDiff checks that the diff of any two texts applies and gives
// the new text, and that a cut diff stays within its bound and still
// applies: go test ./codegen -run '^$' -fuzz FuzzUnifiedDiff -fuzztime 30s
func FuzzUnifiedDiff(f *testing.F) {
	for _, c := range diffCases()[:10] {
		f.Add([]byte(c.old), []byte(c.new), 0)
	}
	f.Add([]byte("a\nb"), []byte("a\nb\n"), 30)
	f.Fuzz(func(t *testing.T, old, new []byte, limit int) {
		if len(old) > 1024 || len(new) > 1024 {
			return
		}
		// Lines of few distinct values, so that they repeat.
		shrink := func(b []byte) []byte {
			for i := range b {
				if b[i] != '\n' {
					b[i] = 'a' + b[i]%4
				}
			}
			return b
		}
		old, new = shrink(old), shrink(new)
		d := UnifiedDiff("a/f", "b/f", old, new, 0)
		if bytes.Equal(old, new) {
			if d != nil {
				t.Fatal("a diff of equal texts")
			}
			return
		}
		got, err := applyUnified(old, d)
		if err != nil || !bytes.Equal(got, new) {
			t.Fatalf("applied: %q, %v; want %q\n%s", got, err, new, d)
		}
		limit = 64 + abs(limit)%2048
		cut := UnifiedDiff("a/f", "b/f", old, new, limit)
		body, last, _ := cutLastLine(cut)
		if strings.HasPrefix(last, "[keyreg: the diff is cut") {
			if len(body) > limit {
				t.Fatalf("cut at %d: %d bytes", limit, len(body))
			}
			cut = body
		} else if !bytes.Equal(cut, d) {
			t.Fatal("a diff within the bound differs from the whole one")
		}
		if _, err := applyUnified(old, cut); err != nil {
			t.Fatalf("the cut diff does not apply: %v\n%s", err, cut)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
