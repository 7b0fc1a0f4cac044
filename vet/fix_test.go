package vet_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/vet"
	"golang.org/x/tools/go/analysis/analysistest"
)

func modDir(t *testing.T) string {
	t.Helper()
	t.Setenv("GOFLAGS", "-mod=mod")
	dir, err := filepath.Abs("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSuggestedFixes applies the builder calls key-handbuilt offers to
// testdata/mod/fix and compares with fix.go.golden; then the fixed module
// must build, and its generated keys package must be what keyreg gen go
// writes from keys.yaml (keyreg gen go --check).
func TestSuggestedFixes(t *testing.T) {
	dir := modDir(t)
	a := vet.New(&vet.Config{Registry: filepath.Join(dir, "keys.yaml")})
	analysistest.RunWithSuggestedFixes(t, dir, a, "./fix")

	tmp := t.TempDir()
	if err := os.CopyFS(tmp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join(dir, "fix", "fix.go.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "fix", "fix.go"), golden, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(tmp, "fix", "fix.go.golden"))
	run(t, tmp, "go", "build", "./...")
	run(t, tmp, "go", "run", "github.com/keyreg/keyreg/cmd/keyreg", "gen", "go", "--check",
		"--registry", filepath.Join(tmp, "keys.yaml"), "--package", "keys", "--out", filepath.Join(tmp, "keys", "keys_gen.go"))
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if name == "go" && args[0] == "run" {
		cmd.Dir, _ = filepath.Abs("..") // the keyreg module
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestGoVetAgrees runs the analyzer through go vet -vettool (keyreg-vet,
// built here, under unitchecker) and through vet.Check (keyreg vet's
// driver) over testdata/mod/app: both must give the same diagnostics.
func TestGoVetAgrees(t *testing.T) {
	dir := modDir(t)
	tool := filepath.Join(t.TempDir(), "keyreg-vet")
	run(t, ".", "go", "build", "-o", tool, "github.com/keyreg/keyreg/cmd/keyreg-vet")
	cmd := exec.Command("go", "vet", "-vettool="+tool, "-registry="+filepath.Join(dir, "keys.yaml"), "./app")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("go vet found nothing")
	}
	line := regexp.MustCompile(`^(?:\./)?(app/app\.go:\d+:\d+): (.*)$`)
	var vetLines []string
	for l := range strings.SplitSeq(stderr.String(), "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			vetLines = append(vetLines, m[1]+": "+m[2])
		}
	}
	res, err := vet.Check(&vet.Config{Registry: filepath.Join(dir, "keys.yaml")}, dir, []string{"./app"})
	if err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, d := range res.Diagnostics {
		ours = append(ours, d.Pos.String()+": "+d.Message+" ("+d.Rule+")")
	}
	slices.Sort(vetLines)
	slices.Sort(ours)
	if len(ours) < 20 || !slices.Equal(vetLines, ours) {
		t.Errorf("go vet:\n%s\nkeyreg vet:\n%s\ngo vet stderr:\n%s", strings.Join(vetLines, "\n"), strings.Join(ours, "\n"), stderr.String())
	}
	// vet.GoVet, keyreg vet's driver, runs go vet -json with the same tool
	// and must read back the same diagnostics and the same Stats.
	t.Setenv("GOFLAGS", "-mod=mod")
	gv, err := vet.GoVet(&vet.Config{Registry: filepath.Join(dir, "keys.yaml")}, dir, tool, []string{"./app"})
	if err != nil {
		t.Fatal(err)
	}
	if len(gv.Errors) > 0 {
		t.Fatalf("GoVet errors: %q", gv.Errors)
	}
	var viaJSON []string
	for _, d := range gv.Diagnostics {
		viaJSON = append(viaJSON, d.Pos.String()+": "+d.Message+" ("+d.Rule+")")
	}
	slices.Sort(viaJSON)
	if !slices.Equal(viaJSON, ours) {
		t.Errorf("GoVet:\n%s\nCheck:\n%s", strings.Join(viaJSON, "\n"), strings.Join(ours, "\n"))
	}
	if gv.Stats != res.Stats || gv.Stats.Keys == 0 {
		t.Errorf("GoVet stats %+v, Check stats %+v", gv.Stats, res.Stats)
	}
}

// TestGoVetBuildFailure: a package that does not type-check makes GoVet's
// run partial, naming the package, rather than silently clean.
func TestGoVetBuildFailure(t *testing.T) {
	src := modDir(t)
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum", "keys.yaml"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken", "b.go"), []byte("package broken\n\nvar x int = \"s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(t.TempDir(), "keyreg-vet")
	run(t, ".", "go", "build", "-o", tool, "github.com/keyreg/keyreg/cmd/keyreg-vet")
	t.Setenv("GOFLAGS", "-mod=mod")
	gv, err := vet.GoVet(&vet.Config{Registry: filepath.Join(dir, "keys.yaml")}, dir, tool, []string{"./broken"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(gv.Errors, "\n"), "broken") {
		t.Errorf("errors %q do not name the broken package", gv.Errors)
	}
}
