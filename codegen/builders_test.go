package codegen

import (
	"strings"
	"testing"

	"github.com/keyreg/keyreg"
	"github.com/keyreg/keyreg/registry"
)

// TestBuilders checks that Builders names the functions Generate writes,
// with their parameters.
func TestBuilders(t *testing.T) {
	reg, err := registry.Load(keyreg.Example, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src, err := Generate(reg, Options{Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := Builders(reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != len(reg.Families) {
		t.Errorf("%d builders for %d families", len(bs), len(reg.Families))
	}
	for name, b := range bs {
		decl := "func " + b.Func + "(" + strings.Join(b.Params, ", ") + ") (string, error) {"
		if !strings.Contains(string(src), decl) {
			t.Errorf("family %q: generated code has no %q", name, decl)
		}
	}
}
