package rules

import (
	"os"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/synth"
	"github.com/keyreg/keyreg/registry"
)

// BenchmarkLint1000 measures what keyreg lint does in CI on a large
// registry: registry.Load and Lint of 1,000 synthetic families.
func BenchmarkLint1000(b *testing.B) { benchLint(b, synth.YAML(1000), 1000) }

// benchLint measures registry.Load and Lint of data, a registry of n
// families.
func benchLint(b *testing.B, data []byte, n int) {
	fsys := fstest.MapFS{"keys.yaml": &fstest.MapFile{Data: data}}
	if reg, err := registry.Load(fsys, "keys.yaml"); err != nil {
		b.Fatal(err)
	} else if got := len(reg.Families); got != n {
		b.Fatalf("the registry has %d families, want %d", got, n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		reg, err := registry.Load(fsys, "keys.yaml")
		if err != nil {
			b.Fatal(err)
		}
		Lint(reg)
	}
}

// TestLintSynthetic checks the benchmark's input: the synthetic registry
// loads and lints without errors or warnings, so the benchmark measures a
// clean run rather than the cost of reporting.
func TestLintSynthetic(t *testing.T) {
	fsys := fstest.MapFS{"keys.yaml": &fstest.MapFile{Data: synth.YAML(1000)}}
	reg, err := registry.Load(fsys, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range Lint(reg) {
		if !d.Suppressed && d.Severity >= diag.Warn {
			t.Errorf("%s", d)
		}
	}
}

// TestRepositoryRegistry lints the repository's own keys.yaml, which is the
// worked example in the docs: it must have no error or warning findings.
func TestRepositoryRegistry(t *testing.T) {
	reg, err := registry.Load(os.DirFS(".."), "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range Lint(reg) {
		if d.Suppressed || d.Severity < diag.Warn {
			continue
		}
		t.Errorf("%s", d)
	}
}
