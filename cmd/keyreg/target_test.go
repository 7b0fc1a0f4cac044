package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/internal/redistest"
)

func TestReadTargets(t *testing.T) {
	got, err := readTargets("t.txt", strings.NewReader("# fleet\n\ncache-0 --db 2\n  eu.sessions   --cluster --parallel 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "cache-0" || strings.Join(got[0].Args, "|") != "--db|2" || got[1].Line != 4 ||
		strings.Join(got[1].Args, "|") != "--cluster|--parallel|2" {
		t.Errorf("%+v", got)
	}
	for _, c := range []struct{ in, want string }{
		{"a\na\n", "t.txt:2:1: target a is already on line 1"},
		{"../etc x\n", `t.txt:1:1: target name "../etc"`},
		{"a --url redis://u:p@h\n", "t.txt:1: target a: --url does not belong"},
		{"a --url=redis://u:p@h\n", "t.txt:1: target a: --url does not belong"},
		{"a -u=x\n", "does not belong"},
		{"a -uredis://u:p@h\n", "t.txt:1: target a: -u does not belong"},
		{"a --sentinel-password=p\n", "does not belong"},
		{"a --target-list=other\n", "does not belong"},
		{strings.Repeat("x", 70) + "\n", "at most 63"},
		{"a\n" + strings.Repeat(" ", 70<<10), "t.txt:2: bufio.Scanner: token too long"},
		{"a\n" + strings.Repeat("# "+strings.Repeat(" ", 1000)+"\n", maxTargetListBytes/1000+1), "larger than"},
	} {
		_, err := readTargets("t.txt", strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40q: %v, want %q", c.in, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "u:p@") {
			t.Errorf("the error repeats a password: %v", err)
		}
	}
}

func FuzzReadTargets(f *testing.F) {
	for _, s := range []string{"a\n", "# c\nb --cluster\n", "a\na\n", "x --url y\n", "\xff\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := readTargets("f", strings.NewReader(s))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, tg := range ts {
			if !targetName.MatchString(tg.Name) || seen[tg.Name] {
				t.Fatalf("bad or repeated name %q", tg.Name)
			}
			seen[tg.Name] = true
		}
	})
}

// TestTargetWithoutURLFile: with --secrets-dir, a target whose NAME.url is
// missing is a usage error. Falling back to $REDIS_URL or localhost would
// audit another server (a CI service container, another target) and file
// its report under this target's name.
func TestTargetWithoutURLFile(t *testing.T) {
	srv := redistest.Standalone(t)
	t.Setenv("REDIS_URL", srv.URL())
	dir := t.TempDir()
	list := filepath.Join(dir, "targets.txt")
	secrets := filepath.Join(dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(list, []byte("a\nb\n"), 0o644)
	os.WriteFile(filepath.Join(secrets, "a.url"), []byte(srv.URL()+"\n"), 0o600)
	out := filepath.Join(dir, "{target}.json")
	code, _, stderr := cli(t, "audit", "--registry", auditRegistry, "--target-list", list, "--target-index", "1",
		"--secrets-dir", secrets, "--fail-on", "never", "--output", "json="+out)
	if code != 2 || !strings.Contains(stderr, "b.url") {
		t.Errorf("target b without b.url: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.json")); err == nil {
		t.Errorf("a report was written for target b (exit %d, %s)", code, stderr)
	}
	if code, _, stderr := cli(t, "audit", "--registry", auditRegistry, "--target-list", list, "--target-index", "0",
		"--secrets-dir", secrets, "--fail-on", "never", "--output", "json="+out); code != 0 {
		t.Errorf("target a: exit %d, %s", code, stderr)
	}
}
