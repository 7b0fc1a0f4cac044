package gitfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/internal/testenv"
)

// git runs git in dir and fails the test on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a repository with two commits on main: the first holds
// deploy/keys.yaml "v1" and deploy/schemas/a.json, the second changes
// keys.yaml to "v2" and adds top.txt. It returns the directory and the two
// commit IDs.
func newRepo(t *testing.T) (dir, first, second string) {
	t.Helper()
	testenv.LookPath(t, "git not installed", "git")
	dir = t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "config", "user.name", "Test")
	git(t, dir, "config", "user.email", "test@example.com")
	git(t, dir, "config", "commit.gpgsign", "false")
	write(t, dir, "deploy/keys.yaml", "v1\n")
	write(t, dir, "deploy/schemas/a.json", `{"type":"object"}`)
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "first")
	first = git(t, dir, "rev-parse", "HEAD")
	write(t, dir, "deploy/keys.yaml", "v2\n")
	write(t, dir, "top.txt", "top")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "second")
	second = git(t, dir, "rev-parse", "HEAD")
	return dir, first, second
}

func TestOpen(t *testing.T) {
	dir, first, _ := newRepo(t)
	ctx := context.Background()
	// Run from a subdirectory: paths stay relative to the repository root.
	fsys, err := Open(ctx, filepath.Join(dir, "deploy"), "main~1")
	if err != nil {
		t.Fatal(err)
	}
	if got := fsys.(*FS).Commit(); got != first {
		t.Errorf("Commit() = %s, want %s", got, first)
	}
	data, err := fs.ReadFile(fsys, "deploy/keys.yaml")
	if err != nil || string(data) != "v1\n" {
		t.Errorf("ReadFile(deploy/keys.yaml) = %q, %v; want the first commit's content", data, err)
	}
	if _, err := fs.ReadFile(fsys, "top.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("top.txt at the first commit: err = %v, want fs.ErrNotExist", err)
	}
	if _, err := fs.ReadFile(fsys, "deploy"); err == nil {
		t.Error("ReadFile of a directory succeeded")
	}
	if _, err := fsys.Open("../x"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Open(../x): err = %v, want fs.ErrInvalid", err)
	}
	// fstest.TestFS walks the tree through every interface FS implements.
	if err := fstest.TestFS(fsys, "deploy/keys.yaml", "deploy/schemas/a.json"); err != nil {
		t.Error(err)
	}
	sub, err := fs.Sub(fsys, "deploy")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := fs.ReadFile(sub, "schemas/a.json"); err != nil || !strings.Contains(string(data), "object") {
		t.Errorf("fs.Sub: ReadFile(schemas/a.json) = %q, %v", data, err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir, _, _ := newRepo(t)
	ctx := context.Background()
	for _, ref := range []string{"no-such-branch", "-x", "", "HEAD~5"} {
		_, err := Open(ctx, dir, ref)
		if !errors.Is(err, ErrRefNotFound) || errors.Is(err, ErrShallow) {
			t.Errorf("Open(%q): err = %v, want ErrRefNotFound and not ErrShallow", ref, err)
		}
	}
	_, err := Open(ctx, t.TempDir(), "main")
	if !errors.Is(err, ErrNotRepository) {
		t.Errorf("Open outside a repository: err = %v, want ErrNotRepository", err)
	}
}

func TestShallow(t *testing.T) {
	src, first, second := newRepo(t)
	dir := filepath.Join(t.TempDir(), "clone")
	git(t, filepath.Dir(dir), "clone", "-q", "--depth", "1", "--no-local", "file://"+src, dir)
	ctx := context.Background()
	_, err := Open(ctx, dir, first)
	if !errors.Is(err, ErrShallow) || !errors.Is(err, ErrRefNotFound) {
		t.Fatalf("Open(first commit) in a shallow clone: err = %v, want ErrShallow", err)
	}
	if !strings.Contains(err.Error(), "shallow clone") {
		t.Errorf("error %q does not mention the shallow clone", err)
	}
	if _, err := Open(ctx, dir, second); err != nil {
		t.Errorf("Open(HEAD) in a shallow clone: %v", err)
	}
}

func TestMergeBase(t *testing.T) {
	dir, first, second := newRepo(t)
	ctx := context.Background()
	git(t, dir, "checkout", "-q", "-b", "feature", first)
	write(t, dir, "feature.txt", "f")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "feature")
	got, err := MergeBase(ctx, dir, "HEAD", "main")
	if err != nil || got != first {
		t.Errorf("MergeBase(HEAD, main) = %s, %v; want %s", got, err, first)
	}
	if got, err := MergeBase(ctx, dir, "main", second); err != nil || got != second {
		t.Errorf("MergeBase(main, main) = %s, %v; want %s", got, err, second)
	}
	if _, err := MergeBase(ctx, dir, "HEAD", "origin/main"); !errors.Is(err, ErrRefNotFound) {
		t.Errorf("MergeBase with a missing ref: err = %v, want ErrRefNotFound", err)
	}
	// An unrelated history has no merge base.
	git(t, dir, "checkout", "-q", "--orphan", "other")
	git(t, dir, "commit", "-q", "-m", "orphan")
	_, err = MergeBase(ctx, dir, "other", "main")
	if !errors.Is(err, ErrRefNotFound) || !strings.Contains(err.Error(), "no merge base of other and main") {
		t.Errorf("MergeBase of unrelated histories: err = %v", err)
	}
}

func TestLocate(t *testing.T) {
	dir, _, _ := newRepo(t)
	ctx := context.Background()
	gotDir, name, err := Locate(ctx, filepath.Join(dir, "deploy", "keys.yaml"))
	if err != nil || name != "deploy/keys.yaml" || gotDir != filepath.Join(dir, "deploy") {
		t.Errorf("Locate = %q, %q, %v; want deploy/keys.yaml", gotDir, name, err)
	}
	if _, name, err := Locate(ctx, filepath.Join(dir, "top.txt")); err != nil || name != "top.txt" {
		t.Errorf("Locate(top.txt) = %q, %v", name, err)
	}
	if _, _, err := Locate(ctx, filepath.Join(t.TempDir(), "keys.yaml")); !errors.Is(err, ErrNotRepository) {
		t.Errorf("Locate outside a repository: err = %v, want ErrNotRepository", err)
	}
}
