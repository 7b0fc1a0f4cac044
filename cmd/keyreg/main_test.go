package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/keyreg/keyreg/report"
	"github.com/keyreg/keyreg/scanner"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite golden files and testscript outputs")

func TestMain(m *testing.M) {
	// The test binary is keyreg itself, signal handling included, for the
	// tests that run it as a process (TestRDBSignal).
	if os.Getenv("KEYREG_TEST_MAIN") == "1" {
		main()
	}
	quietRedisLog() // as main does, for run in this process and testscript's
	testscript.Main(m, map[string]func(){
		"keyreg": func() { vetTool(); os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scenarios in testdata/script; each asserts the
// exit code of every command it runs.
func TestScripts(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": exits,
			"rdb":   rdb,
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", root)
			env.Setenv("KEYREG_REGISTRY", "")
			// vet.txtar runs go vet: the real module and build caches,
			// so that go-redis resolves offline from the module cache.
			for k, v := range goEnv(t) {
				env.Setenv(k, v)
			}
			return nil
		},
	})
}

// TestRulesDocFresh fails when docs/rules.md differs from what
// `keyreg rules --format markdown` prints. Refresh it with -update.
func TestRulesDocFresh(t *testing.T) {
	docFresh(t, "../../docs/rules.md", "TestRulesDocFresh", func(w io.Writer) error { return report.Rules(w, report.Markdown, ruleInfos(), report.Options{}) })
}

// docFresh fails when a generated page differs from what render writes;
// with -update it writes the page.
func docFresh(t *testing.T, file, test string, render func(io.Writer) error) {
	t.Helper()
	var b bytes.Buffer
	if err := render(&b); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Errorf("%s is stale: run go test ./cmd/keyreg -run %s -update", file, test)
	}
}

// TestPresetsDocFresh fails when docs/presets.md and the preset
// definitions drift apart: the page is what keyreg presets --format
// markdown prints from the definitions it expands.
func TestPresetsDocFresh(t *testing.T) {
	infos, err := report.PresetInfos()
	if err != nil {
		t.Fatal(err)
	}
	docFresh(t, "../../docs/presets.md", "TestPresetsDocFresh", func(w io.Writer) error { return report.Presets(w, report.Markdown, infos, report.Options{}) })
}

// exits runs a command and asserts its exit code: exits 2 keyreg lint.
// Its output stays available to stdout and stderr checks.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits <code> <command> [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("bad exit code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("running %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// rdb writes an RDB snapshot (format 4, no checksum) holding the string
// keys named, each with the value "x": rdb dump.rdb KEY...
func rdb(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: rdb <file> [key...]")
	}
	b := []byte("REDIS0004")
	for _, k := range args[1:] {
		if len(k) >= 64 {
			ts.Fatalf("rdb: key %q is 64 bytes or longer", k)
		}
		b = append(b, 0, byte(len(k))) // a string, its key's 6-bit length
		b = append(b, k...)
		b = append(b, 1, 'x')
	}
	b = append(b, 0xFF)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
}

// TestDocsACL keeps the ACL documented in docs/audit.md equal to the one the
// tests run the audit under.
func TestDocsACL(t *testing.T) {
	doc, err := os.ReadFile("../../docs/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte(scanner.MinimalACL)) {
		t.Errorf("docs/audit.md does not show scanner.MinimalACL:\n%s", scanner.MinimalACL)
	}
}

var (
	goEnvOnce sync.Once
	goEnvVars map[string]string
	goEnvErr  error
)

// goEnv is the go command's GOCACHE, GOMODCACHE and GOPATH, read once.
func goEnv(t *testing.T) map[string]string {
	goEnvOnce.Do(func() {
		out, err := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
		if err != nil {
			goEnvErr = err
			return
		}
		goEnvErr = json.Unmarshal(out, &goEnvVars)
	})
	if goEnvErr != nil {
		t.Fatalf("go env: %v", goEnvErr)
	}
	return goEnvVars
}
