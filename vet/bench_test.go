package vet

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// benchModule writes the module of docs/benchmarks.md's vet figures
// (internal/benchmod) into a temporary directory, with testdata/mod's
// go.sum (the same go-redis), and returns it.
func benchModule(b *testing.B) string {
	b.Helper()
	b.Setenv("GOFLAGS", "-mod=mod")
	dir := b.TempDir()
	if out, err := exec.Command("go", "run", "./internal/benchmod", dir).CombinedOutput(); err != nil {
		b.Fatalf("benchmod: %v\n%s", err, out)
	}
	sum, err := os.ReadFile("testdata/mod/go.sum")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkLoad is what every go vet tool process pays once: the registry
// loaded and prepared for the analyzer.
func BenchmarkLoad(b *testing.B) {
	dir := benchModule(b)
	path := filepath.Join(dir, "keys.yaml")
	for b.Loop() {
		cacheMu.Lock()
		delete(cache, path)
		cacheMu.Unlock()
		if l := load(path); l.err != nil {
			b.Fatal(l.err)
		}
	}
}

// BenchmarkAnalyzer runs the analyzer over five packages of the module
// (1,200 key arguments), loaded once; the registry is loaded once too.
func BenchmarkAnalyzer(b *testing.B) {
	dir := benchModule(b)
	cfg := &packages.Config{Mode: packages.LoadSyntax | packages.NeedModule, Dir: dir}
	pkgs, err := packages.Load(cfg, "./p0", "./p1", "./p2", "./p3", "./p4")
	if err != nil || packages.PrintErrors(pkgs) > 0 {
		b.Fatal("load failed", err)
	}
	a := New(&Config{Registry: filepath.Join(dir, "keys.yaml")})
	for b.Loop() {
		g, err := checker.Analyze([]*analysis.Analyzer{a}, pkgs, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, act := range g.Roots {
			if act.Err != nil {
				b.Fatal(act.Err)
			}
			if st := act.Result.(*Stats); st.Keys != 240 {
				b.Fatalf("%d keys, want 240", st.Keys)
			}
		}
	}
}
