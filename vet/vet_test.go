package vet_test

import (
	"path/filepath"
	"testing"

	"github.com/keyreg/keyreg/vet"
	"golang.org/x/tools/go/analysis/analysistest"
)

// TestAnalyzer runs the analyzer over testdata/mod, a module that uses
// the real go-redis v9 from the module cache, with the // want comments of
// testdata/mod/app as the exact expected diagnostics.
func TestAnalyzer(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod")
	dir, err := filepath.Abs("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	a := vet.New(&vet.Config{Registry: filepath.Join(dir, "keys.yaml")})
	res := analysistest.Run(t, dir, a, "./app")
	if len(res) != 1 {
		t.Fatalf("%d results, want 1", len(res))
	}
	st := res[0].Result.(*vet.Stats)
	if st.Unknown != 1 || st.Generated != 3 {
		t.Errorf("stats %+v, want 1 unknown and 3 generated", st)
	}
}

// TestCoverage runs the analyzer over testdata/mod/cover: the keys of MSet,
// Do and go-redis's argument structs, and the Pub/Sub channels checked
// against keys-cover.yaml's channels.
func TestCoverage(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod")
	dir, err := filepath.Abs("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	a := vet.New(&vet.Config{Registry: filepath.Join(dir, "keys-cover.yaml")})
	res := analysistest.Run(t, dir, a, "./cover")
	if len(res) != 1 {
		t.Fatalf("%d results, want 1", len(res))
	}
	// The unknown: MSet of a map variable, Do of an unknown and of a
	// computed command, an XAddArgs changed after its literal.
	if st := res[0].Result.(*vet.Stats); st.Unknown != 4 {
		t.Errorf("stats %+v, want 4 unknown", st)
	}
}

// TestCoverageStrict: with Strict, the keys the new sources know are there
// but cannot read are reported, and so is a channel of unknown shape.
func TestCoverageStrict(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod")
	dir, err := filepath.Abs("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	a := vet.New(&vet.Config{Registry: filepath.Join(dir, "keys-cover.yaml"), Strict: true})
	analysistest.Run(t, dir, a, "./strict")
}
