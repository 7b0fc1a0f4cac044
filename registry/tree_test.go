package registry

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/gitfs"
)

// symlinkTree writes a registry whose families name schema files through
// symbolic links, some of which leave the registry's directory, and
// returns the directory holding keys.yaml. The test of each family is in
// its name: ok-* must load, the others must fail at their schema: line.
func symlinkTree(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "reg")
	for _, d := range []string{"reg/schemas/real", "outside"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(top, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(top, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("reg/schemas/real/int.json", `{"type":"integer"}`)
	write("reg/schemas/ref-out.json", `{"$ref":"pw.json"}`)
	write("outside/secret.json", `{"type":"string"}`)
	link("real/int.json", "reg/schemas/in.json")             // stays inside
	link("real", "reg/schemas/dir")                          // a directory link inside
	link("/etc/passwd", "reg/schemas/pw.json")               // absolute, outside
	link("/etc", "reg/schemas/etc")                          // a directory link outside
	link("../../outside/secret.json", "reg/schemas/up.json") // relative, outside
	link("loop.json", "reg/schemas/loop.json")
	write("reg/keys.yaml", `version: 1
families:
  - {name: ok-in, pattern: "a:{x}", schema: schemas/in.json}
  - {name: ok-dir, pattern: "b:{x}", schema: schemas/dir/int.json}
  - {name: passwd, pattern: "c:{x}", schema: schemas/pw.json}
  - {name: etc, pattern: "d:{x}", schema: schemas/etc/passwd}
  - {name: up, pattern: "e:{x}", schema: schemas/up.json}
  - {name: ref-out, pattern: "f:{x}", schema: schemas/ref-out.json}
  - {name: loop, pattern: "g:{x}", schema: schemas/loop.json}
`)
	return dir
}

// checkSymlinks checks the diagnostics of the registry symlinkTree writes.
func checkSymlinks(t *testing.T, err error, file string) {
	t.Helper()
	var le *diag.ListError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want diagnostics", err)
	}
	var all []string
	for _, d := range le.List {
		all = append(all, d.String())
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{
		file + `:5:46: error: schema file "schemas/pw.json": leaves the registry's directory tree: symbolic link "schemas/pw.json" points to "/etc/passwd" (payload-schema-invalid)`,
		file + `:6:43: error: schema file "schemas/etc/passwd": leaves the registry's directory tree: symbolic link "schemas/etc" points to "/etc" (payload-schema-invalid)`,
		file + `:7:42: error: schema file "schemas/up.json": leaves the registry's directory tree: symbolic link "schemas/up.json" points to "../../outside/secret.json" (payload-schema-invalid)`,
		file + `:8:47: error: schema "schemas/ref-out.json" does not compile:`,
		`symbolic link "schemas/pw.json" points to "/etc/passwd"`,
		file + `:9:44: error: schema file "schemas/loop.json": more than 40 symbolic links (payload-schema-invalid)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diagnostics:\n%s\nwant one containing:\n%s", got, want)
		}
	}
	if strings.Contains(got, "ok-") || strings.Contains(got, "root:") {
		t.Errorf("diagnostics mention a good family or the content of /etc/passwd:\n%s", got)
	}
	if n := strings.Count(got, "\n") + 1; n != 5 {
		t.Errorf("%d diagnostics, want 5:\n%s", n, got)
	}
}

// TestLoadSymlinks: a schema: path or a $ref that is, or goes through, a
// symbolic link out of the registry's directory is refused; links inside
// it are followed (issue 10 item 3).
func TestLoadSymlinks(t *testing.T) {
	dir := symlinkTree(t)
	p := filepath.Join(dir, "keys.yaml")
	_, err := LoadFile(p)
	checkSymlinks(t, err, filepath.ToSlash(p))
	_, err = Load(os.DirFS(dir), "keys.yaml")
	checkSymlinks(t, err, "keys.yaml")

	// The same registry at a git ref: git stores links as their targets.
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "core.symlinks=true"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "registry")
	fsys, err := gitfs.Open(context.Background(), dir, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(fsys, "keys.yaml")
	checkSymlinks(t, err, "keys.yaml")

	// keys.yaml in a subdirectory may not reach its parent, at a ref as
	// in the working tree.
	if err := os.MkdirAll(filepath.Join(dir, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deploy", "keys.yaml"), []byte("version: 1\nfamilies:\n  - {name: a, pattern: \"a:{x}\", schema: ../schemas/in.json}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "deploy")
	fsys, _ = gitfs.Open(context.Background(), dir, "HEAD")
	for _, load := range []func() error{
		func() error { _, err := Load(fsys, "deploy/keys.yaml"); return err },
		func() error { _, err := LoadFile(filepath.Join(dir, "deploy", "keys.yaml")); return err },
	} {
		if err := load(); err == nil || !strings.Contains(err.Error(), `keys.yaml:3:41: error: schema path "../schemas/in.json" leaves the registry's directory tree`) {
			t.Errorf("err = %v, want the path refused", err)
		}
	}
}

// TestLoadGitBlobTooLarge: at a git ref (keyreg breaking --against), an
// oversized keys.yaml is refused from the tree's size column.
func TestLoadGitBlobTooLarge(t *testing.T) {
	dir := t.TempDir()
	big := "version: 1\n# " + strings.Repeat("x", MaxFileSize) + "\nfamilies: []\n"
	if err := os.WriteFile(filepath.Join(dir, "keys.yaml"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "keys.yaml"}, {"commit", "-q", "-m", "big"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	fsys, err := gitfs.Open(context.Background(), dir, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(fsys, "keys.yaml")
	var le *diag.ListError
	want := "keys.yaml:1:1: error: file is 4194331 bytes, larger than the 4194304-byte limit for a registry (schema-invalid)"
	if !errors.As(err, &le) || le.List[0].String() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}
