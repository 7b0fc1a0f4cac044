package vet_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/vet"
)

// TestBaseline: a finding the baseline knows is suppressed, once per
// recorded copy, whatever its line; a new one stays active.
func TestBaseline(t *testing.T) {
	d := func(line int, msg string) diag.Diagnostic {
		return diag.Diagnostic{Pos: diag.Pos{File: "a.go", Line: line}, Severity: diag.Error, Rule: vet.RuleUnregistered, Message: msg}
	}
	b := vet.NewBaseline(diag.List{d(3, "key \"x\" matches no family of the registry")})
	data, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "b.json")
	if err := writeFile(p, data); err != nil {
		t.Fatal(err)
	}
	b, err = vet.LoadBaseline(p)
	if err != nil {
		t.Fatal(err)
	}
	l := diag.List{d(9, "key \"x\" matches no family of the registry"), d(10, "key \"x\" matches no family of the registry"), d(11, "key \"y\" matches no family of the registry")}
	if n := b.Apply(l); n != 1 {
		t.Fatalf("suppressed %d, want 1", n)
	}
	if !l[0].Suppressed || l[1].Suppressed || l[2].Suppressed {
		t.Errorf("suppressed %v %v %v, want only the first", l[0].Suppressed, l[1].Suppressed, l[2].Suppressed)
	}
}

func writeFile(p string, data []byte) error { return os.WriteFile(p, data, 0o644) }
