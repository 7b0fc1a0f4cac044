package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/report"
)

// TestAuditOutputsScanOnce is the bar of --output: one audit with three
// outputs sends exactly the SCAN (and TYPE, PTTL) calls of a single-format
// run, counted by the real server in INFO commandstats, and each file holds
// its format: JSON that parses, SARIF, and JUnit with one testsuite per
// family.
func TestAuditOutputsScanOnce(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	seedAudit(t, s.Addr, 300)
	admin := s.Client(t)
	calls := func(run func()) map[string]int {
		before := redistest.CommandStats(t, admin)
		run()
		after := redistest.CommandStats(t, admin)
		d := map[string]int{}
		for _, c := range []string{"scan", "type", "pttl"} {
			d[c] = after[c] - before[c]
		}
		return d
	}
	args := []string{"audit", "--registry", auditRegistry, "--url", s.URL(), "--count", "10", "--sample", "0"}
	var single map[string]int
	var code1 int
	single = calls(func() {
		var errs string
		code1, _, errs = cli(t, append(args, "--format", "json")...)
		if code1 != exitFindings {
			t.Fatalf("single format: exit %d, want 1\n%s", code1, errs)
		}
	})
	if single["scan"] < 30 {
		t.Fatalf("single-format run sent %d SCAN calls; the seed is too small to tell", single["scan"])
	}
	dir := t.TempDir()
	many := calls(func() {
		code, out, errs := cli(t, append(args,
			"--output", "json="+filepath.Join(dir, "audit.json"),
			"--output", "junit="+filepath.Join(dir, "audit.xml"),
			"--output", "sarif="+filepath.Join(dir, "audit.sarif"))...)
		if code != code1 {
			t.Fatalf("three outputs: exit %d, want %d as with one\n%s", code, code1, errs)
		}
		if out != "" {
			t.Errorf("--output without --format wrote to stdout:\n%s", out)
		}
	})
	if !maps.Equal(single, many) {
		t.Errorf("three outputs sent %v, one sent %v: the audit ran more than once", many, single)
	}

	data, err := os.ReadFile(filepath.Join(dir, "audit.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r := parseAudit(t, string(data)); r.Totals.Keys == 0 {
		t.Errorf("json report counts no keys")
	}
	data, err = os.ReadFile(filepath.Join(dir, "audit.sarif"))
	if err != nil {
		t.Fatal(err)
	}
	var sarif struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &sarif); err != nil || sarif.Version != "2.1.0" || len(sarif.Runs) != 1 || len(sarif.Runs[0].Results) == 0 {
		t.Errorf("sarif: %v, %+v", err, sarif)
	}
	data, err = os.ReadFile(filepath.Join(dir, "audit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var junit struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Tests int    `xml:"tests,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &junit); err != nil {
		t.Fatalf("junit does not parse: %v\n%s", err, data)
	}
	reg, err := registry.LoadFile(auditRegistry)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range junit.Suites {
		got = append(got, s.Name)
		if s.Tests == 0 {
			t.Errorf("testsuite %q has no testcase", s.Name)
		}
	}
	want := append(familyNames(reg), "(unregistered keys)", "(scan)")
	if !slices.Equal(got, want) {
		t.Errorf("junit testsuites = %q, want one per family: %q", got, want)
	}
	if junit.Failures == 0 {
		t.Errorf("junit has no failure, but the audit exits 1")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("the output directory holds %d entries, want the 3 reports (temporary files left?)", len(entries))
	}
}

// TestOutputWriteFails: an output that cannot be written after the run
// exits 3, leaves what was there alone, and the other outputs are still
// written. The path is made a directory while the audit runs, from the
// audit's progress hook.
func TestOutputWriteFails(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	seedAudit(t, s.Addr, 100)
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "audit.json"), filepath.Join(dir, "audit.xml")
	if err := os.WriteFile(good, []byte("old report\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	r := startFault(t, context.Background(), 10, "audit", "--registry", auditRegistry, "--url", s.URL(), "--count", "5",
		"--output", "json="+good, "--output", "junit="+bad, "--fail-on", "never")
	r.at(t)
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errs := r.finish()
	if code != exitRuntime || !strings.Contains(errs, "--output junit="+bad) {
		t.Errorf("exit %d, want 3 naming the output\n%s", code, errs)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if rep := parseAudit(t, string(data)); rep.Totals.Keys == 0 {
		t.Errorf("json report not written")
	}
	// The report replaced the file in place and kept its mode.
	if st, err := os.Stat(good); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode after replace: %v, %v", st.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d entries in the output directory, want 2 (temporary files left?)", len(entries))
	}
}

// TestAuditMatchGlob: --match is a Redis glob. A prefix without its *
// (the old reading of --match) audits no key: the run says so, on stderr
// with a hint and in the report's notes, rather than looking clean.
func TestAuditMatchGlob(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	sd := seedAudit(t, s.Addr, 40)
	args := []string{"audit", "--registry", auditRegistry, "--url", s.URL(), "--db", "0", "--format", "json", "--fail-on", "never"}
	for glob, want := range map[string]int64{
		"v1:session:*":   sd.sessions,
		"v1:sess[i]on:*": sd.sessions,
		"tmp:?:*":        sd.unregistered,
	} {
		code, out, errs := cli(t, append(args, "--match", glob)...)
		if code != exitClean {
			t.Fatalf("--match %q: exit %d\n%s", glob, code, errs)
		}
		if r := parseAudit(t, out); r.Totals.Keys != want {
			t.Errorf("--match %q: %d keys, want %d", glob, r.Totals.Keys, want)
		}
		if strings.Contains(errs, "matched no key") {
			t.Errorf("--match %q: says it matched nothing:\n%s", glob, errs)
		}
	}
	code, out, errs := cli(t, append(args, "--match", "v1:session:")...)
	if code != exitClean {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, `keyreg: --match "v1:session:" matched no key`) || !strings.Contains(errs, `pass --match "v1:session:*"`) {
		t.Errorf("no note or hint on stderr:\n%s", errs)
	}
	var rep struct {
		Scan struct {
			Keys  int64    `json:"keys"`
			Notes []string `json:"notes"`
		} `json:"scan"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Scan.Keys != 0 || !slices.Contains(rep.Scan.Notes, `--match "v1:session:" matched no key`) {
		t.Errorf("report: %d keys, notes %q", rep.Scan.Keys, rep.Scan.Notes)
	}
	if code, _, errs := cli(t, append(args, "--match", strings.Repeat("a", maxMatchBytes+1))...); code != exitUsage || !strings.Contains(errs, "over the limit") {
		t.Errorf("a huge --match: exit %d\n%s", code, errs)
	}
}

// TestOutputsWrite: each output gets its own render, the first of each
// format alone is first (side outputs go there once), a render that fails
// leaves its path alone while the others are written, and no temporary
// file outlives the run.
func TestOutputsWrite(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(p("b.json"), []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := &outputOptions{doc: report.DocDiagnostics, outputs: []string{"json=" + p("a.json"), "JSON=" + p("b.json"), "sarif=" + p("c.sarif"), "text=-"}}
	outs, err := o.open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer outs.discard()
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Fatalf("%d entries after open, want b.json and 3 temporary files", len(entries))
	}
	var stdout strings.Builder
	var firsts []string
	errBoom := errors.New("boom")
	err = outs.write(&stdout, func(w io.Writer, f report.Format, first bool) error {
		if first {
			firsts = append(firsts, string(f))
		}
		if f == report.SARIF {
			io.WriteString(w, "half a rep")
			return errBoom
		}
		_, err := io.WriteString(w, "report "+string(f)+"\n")
		return err
	})
	if !errors.Is(err, errBoom) || !strings.Contains(err.Error(), "--output sarif="+p("c.sarif")) {
		t.Errorf("err = %v, want boom naming the sarif output", err)
	}
	if got, want := strings.Join(firsts, ","), "json,sarif,text"; got != want {
		t.Errorf("first renders: %s, want %s", got, want)
	}
	if stdout.String() != "report text\n" {
		t.Errorf("stdout = %q", stdout.String())
	}
	for name, want := range map[string]string{"a.json": "report json\n", "b.json": "report json\n"} {
		if b, err := os.ReadFile(p(name)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v", name, b, err)
		}
	}
	if st, err := os.Stat(p("b.json")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("b.json mode %v, %v: want the old 0600", st.Mode(), err)
	}
	if _, err := os.Stat(p("c.sarif")); !os.IsNotExist(err) {
		t.Errorf("c.sarif exists after its render failed: %v", err)
	}
	outs.discard()
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d entries at the end, want a.json and b.json", len(entries))
	}
}

func TestOutputsLimit(t *testing.T) {
	o := &outputOptions{doc: report.DocDiagnostics}
	for i := range maxOutputs + 1 {
		o.outputs = append(o.outputs, fmt.Sprintf("json=%s/%d.json", t.TempDir(), i))
	}
	var ee *exitError
	if _, err := o.open(nil); !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("%d outputs: err = %v, want a usage error", len(o.outputs), err)
	}
}

// TestOutputsSameFile gives two --output paths that name one file through
// a symbolic link to it, a link to its directory, and a hard link: each is
// a usage error (exit 2) before any run, and no file is written or left.
func TestOutputsSameFile(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(p("a.json"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.json", p("alink.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(p("a.json"), p("hard.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p("d1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d1", p("d2")); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{
		{"json=" + p("a.json"), "sarif=" + p("alink.json")},
		{"json=" + p("alink.json"), "sarif=" + p("a.json")},
		{"json=" + p("a.json"), "sarif=" + p("hard.json")},
		{"json=" + p("d1/new.json"), "sarif=" + p("d2/new.json")},
		{"json=" + p("a.json"), "sarif=" + p("d1/../a.json")},
	} {
		before, _ := os.ReadDir(dir)
		o := &outputOptions{doc: report.DocDiagnostics, outputs: pair[:]}
		outs, err := o.open(nil)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "two outputs write to") {
			t.Errorf("%q: err = %v, want a usage error", pair, err)
			outs.discard()
		}
		if after, _ := os.ReadDir(dir); len(after) != len(before) {
			t.Errorf("%q: %d entries after, %d before", pair, len(after), len(before))
		}
	}
	if b, _ := os.ReadFile(p("a.json")); string(b) != "old\n" {
		t.Errorf("a.json = %q", b)
	}
}

// TestOutputsStaleTemps leaves temporary siblings of an output as a run
// killed with kill -9 leaves them (old, no process holding them), one that
// a live run holds locked, and one just created: the next run removes only
// the stale one, and leaves no file of its own.
func TestOutputsStaleTemps(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	old := time.Now().Add(-time.Hour)
	mk := func(name string, mtime time.Time) *os.File {
		f, err := os.Create(p(name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p(name), mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return f
	}
	mk(".a.json.keyreg-111.tmp", old).Close()
	held := mk(".a.json.keyreg-222.tmp", old)
	defer held.Close()
	lockFile(held)
	mk(".a.json.keyreg-333.tmp", time.Now()).Close()
	mk(".b.json.keyreg-444.tmp", old).Close() // another output's
	mk("a.json.keyreg-555.tmp", old).Close()  // not our naming

	o := &outputOptions{doc: report.DocDiagnostics, outputs: []string{"json=" + p("a.json")}}
	outs, err := o.open(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := outs.write(io.Discard, func(w io.Writer, _ report.Format, _ bool) error {
		_, err := io.WriteString(w, "{}\n")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{".a.json.keyreg-222.tmp", ".a.json.keyreg-333.tmp", ".b.json.keyreg-444.tmp", "a.json", "a.json.keyreg-555.tmp"}
	if !slices.Equal(names, want) {
		t.Errorf("entries %q, want %q", names, want)
	}
}

// TestOutputsTempAfterKill runs a real keyreg audit that blocks reading
// its snapshot from a pipe nobody writes, kills it with SIGKILL once its
// temporary output file exists, and runs again: the file the killed run
// left (its lock went with it) is removed once stale, and no temporary
// file remains.
func TestOutputsTempAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "keyreg")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte("version: 1\nfamilies: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", "a.json")
	if err := os.Mkdir(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	temps := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "out", ".a.json.keyreg-*.tmp"))
		return m
	}
	cmd := exec.Command(bin, "audit", "--registry", reg, "--rdb", "-", "--output", "json="+out)
	stdin, err := cmd.StdinPipe() // never written: the audit blocks reading it
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(temps()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling for the file, not synchronising
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	left := temps()
	if len(left) != 1 {
		t.Fatalf("after kill -9: temporary files %q, want the one the run made", left)
	}
	// Aged past staleAge, as a file left an hour ago would be.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(left[0], old, old); err != nil {
		t.Fatal(err)
	}
	code, _, errs := cli(t, "lint", "--registry", reg, "--output", "json="+out)
	if code != exitClean {
		t.Fatalf("lint: exit %d\n%s", code, errs)
	}
	if got := temps(); len(got) != 0 {
		t.Errorf("after the next run: temporary files %q remain", got)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the next run did not write %s: %v", out, err)
	}
}
