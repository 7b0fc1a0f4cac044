// Package plugin is keyreg vet as a golangci-lint module plugin: importing
// it registers the linter "keyreg" with golangci-lint's plugin registry
// (github.com/golangci/plugin-module-register), which a custom golangci-lint
// binary built by `golangci-lint custom` calls. docs/vet.md has the
// .custom-gcl.yml and .golangci.yml snippets.
package plugin

import (
	"errors"

	"github.com/golangci/plugin-module-register/register"
	"github.com/keyreg/keyreg/vet"
	"golang.org/x/tools/go/analysis"
)

// Name is the linter's name in .golangci.yml.
const Name = "keyreg"

// Settings are the linter's settings under linters.settings.custom.keyreg.settings.
type Settings struct {
	Registry string `json:"registry"` // path of keys.yaml; required
	Strict   bool   `json:"strict"`
}

// golangci-lint's registry is a process-wide table filled by init, the way
// the plugin interface is designed.
func init() { register.Plugin(Name, New) }

// New builds the plugin from its settings.
func New(settings any) (register.LinterPlugin, error) {
	s, err := register.DecodeSettings[Settings](settings)
	if err != nil {
		return nil, err
	}
	if s.Registry == "" {
		return nil, errors.New("keyreg: settings.registry (the path of keys.yaml) is required")
	}
	return &plugin{s: s}, nil
}

type plugin struct{ s Settings }

// BuildAnalyzers returns the keyreg analyzer for the settings.
func (p *plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	return []*analysis.Analyzer{vet.New(&vet.Config{Registry: p.s.Registry, Strict: p.s.Strict})}, nil
}

// GetLoadMode asks for type information: key shapes need constant values
// and the go-redis methods' signatures.
func (p *plugin) GetLoadMode() string { return register.LoadModeTypesInfo }
