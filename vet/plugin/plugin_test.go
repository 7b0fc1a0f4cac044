package plugin_test

import (
	"path/filepath"
	"testing"

	"github.com/golangci/plugin-module-register/register"
	"github.com/keyreg/keyreg/vet/plugin"
	"golang.org/x/tools/go/analysis/analysistest"
)

// TestPlugin builds the analyzer as golangci-lint does, through the
// registered plugin's BuildAnalyzers with settings as .golangci.yml gives
// them (the custom golangci-lint binary needs golangci-lint's module, which
// the test does not build), and runs it over the same module and // want
// comments as the vet package's TestAnalyzer.
func TestPlugin(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod")
	dir, err := filepath.Abs("../testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	newPlugin, err := register.GetPlugin(plugin.Name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newPlugin(map[string]any{}); err == nil {
		t.Error("a plugin without settings.registry was accepted")
	}
	p, err := newPlugin(map[string]any{"registry": filepath.Join(dir, "keys.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if p.GetLoadMode() != register.LoadModeTypesInfo {
		t.Errorf("load mode %q", p.GetLoadMode())
	}
	as, err := p.BuildAnalyzers()
	if err != nil || len(as) != 1 {
		t.Fatalf("BuildAnalyzers: %v, %d analyzers", err, len(as))
	}
	analysistest.Run(t, dir, as[0], "./app")
}
