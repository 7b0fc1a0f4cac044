package golang

import (
	"strings"
	"testing"

	"github.com/keyreg/keyreg"
	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

// TestBuilders checks that Builders names the functions Generate writes,
// with their parameters, for every family, whatever the scope.
func TestBuilders(t *testing.T) {
	reg, err := registry.Load(keyreg.Example, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src, err := Generate(reg, Options{Package: "keys", Scope: codegen.Scope{IncludePresets: true}})
	if err != nil {
		t.Fatal(err)
	}
	// The names do not depend on the scope: the default one (no preset
	// families) declares its families' builders under the same names.
	own, err := Generate(reg, Options{Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := codegen.NewRequest(reg, codegen.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := Generator{Package: "keys"}.Builders(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != len(reg.Families) {
		t.Errorf("%d builders for %d families", len(bs), len(reg.Families))
	}
	presets := 0
	for _, f := range reg.Families {
		sig, ok := strings.CutPrefix(bs[f.Name], "keys.")
		if !ok {
			t.Errorf("family %q: builder %q is not qualified by the package", f.Name, bs[f.Name])
		}
		decl := "func " + sig + " {"
		if !strings.Contains(string(src), decl) {
			t.Errorf("family %q: generated code has no %q", f.Name, decl)
		}
		if got := strings.Contains(string(own), decl); got != (f.Preset == "") {
			t.Errorf("family %q (preset %q): the default scope declares %q: %v", f.Name, f.Preset, decl, got)
		}
		if f.Preset != "" {
			presets++
		}
	}
	if presets == 0 {
		t.Error("the example registry has no preset family: the scope is not tested")
	}
	if got := bs["user-session"]; got != "keys.BuildUserSession(sessionID string) (string, error)" {
		t.Errorf("user-session's builder = %q", got)
	}
}
