package keys

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/codegen/golang"
	"github.com/keyreg/keyreg/registry"
)

var update = flag.Bool("update", false, "regenerate keys_gen.go")

const registryFile = "../../keys.yaml"

func loadRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.LoadFile(registryFile)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestFresh fails when keys_gen.go is not what keyreg gen go makes of the
// repository's keys.yaml. Refresh it with go test ./examples/keys -update
// (or go generate ./examples/keys).
func TestFresh(t *testing.T) {
	want, err := golang.Generate(loadRegistry(t), golang.Options{Package: "keys", Scope: codegen.Scope{IncludePresets: true}})
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("keys_gen.go", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("keys_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("keys_gen.go is stale: run go test ./examples/keys -run TestFresh -update\n%s",
			codegen.UnifiedDiff("a/keys_gen.go", "b/keys_gen.go", got, want, 64<<10))
	}
	if RegistryDigest != codegen.Digest(loadRegistry(t)) {
		t.Errorf("RegistryDigest %s is not the digest of %s", RegistryDigest, registryFile)
	}
}
