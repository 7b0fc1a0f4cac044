package codegen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/codegen/golang"
	"github.com/keyreg/keyreg/registry"
)

// TestUnifiedDiffOfATTLChange is the case: a TTL change in the
// repository's registry alters a handful of lines of a file of thousands,
// and the diff shows those, not the whole file.
func TestUnifiedDiffOfATTLChange(t *testing.T) {
	src, err := os.ReadFile("../keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	gen := func(src []byte) []byte {
		t.Helper()
		// keys.yaml names schema files under schemas/.
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "keys.yaml"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(filepath.Join(dir, "schemas"), os.DirFS("../schemas")); err != nil {
			t.Fatal(err)
		}
		reg, err := registry.LoadFile(filepath.Join(dir, "keys.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		out, err := golang.Generate(reg, golang.Options{Package: "keys", Scope: codegen.Scope{IncludePresets: true}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	old := gen(src)
	changed := bytes.Replace(src, []byte("ttl: {max: 24h}\n    schema: schemas/user-session.v2.json"), []byte("ttl: {max: 12h}\n    schema: schemas/user-session.v2.json"), 1)
	if bytes.Equal(changed, src) {
		t.Fatal("the user-session TTL is not in keys.yaml as the test expects")
	}
	new := gen(changed)
	d := codegen.UnifiedDiff("a/keys_gen.go", "b/keys_gen.go", old, new, 0)
	if n := bytes.Count(old, []byte("\n")); n < 5000 {
		t.Fatalf("the generated file has %d lines; the case needs a large one", n)
	}
	del, add := codegen.Counts(string(d))
	// The digest, the constant, and the policy in two comments.
	if del != 4 || add != 4 {
		t.Errorf("the TTL change removes %d and adds %d lines, want 4 and 4:\n%s", del, add, d)
	}
	if n := len(codegen.HunkHeader.FindAllString(string(d), -1)); n != 3 {
		t.Errorf("%d hunks, want 3:\n%s", n, d)
	}
	byPatch, byGit := codegen.ApplyPatch(t, "keys_gen.go", old, d)
	if !bytes.Equal(byPatch, new) || !bytes.Equal(byGit, new) {
		t.Error("the diff does not turn the old file into the new one")
	}
}
