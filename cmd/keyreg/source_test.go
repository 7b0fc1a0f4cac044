package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanSourceFlags: audit, init and suggest check the flags of their
// source the same way, before any connection (the URL is a closed port,
// so a check that did not run would show as a connection failure, exit 3).
func TestScanSourceFlags(t *testing.T) {
	const closed = "redis://127.0.0.1:1"
	out := filepath.Join(t.TempDir(), "keys.yaml")
	cmds := map[string][]string{
		"audit":   {"audit", "--registry", auditRegistry, "--url", closed},
		"init":    {"init", "--out", out, "--url", closed},
		"suggest": {"suggest", "--registry", auditRegistry, "--url", closed},
	}
	for name, args := range cmds {
		for _, c := range []struct {
			extra []string
			want  string
		}{
			{[]string{"--match", strings.Repeat("a", maxMatchBytes+1)}, "over the limit"},
			{[]string{"--rdb", "dump.rdb", "--match", "v1:*"}, "are for a live scan, not --rdb"},
			{[]string{"--rdb", "-", "--rdb", "-"}, "more than once"},
		} {
			code, _, errs := cli(t, append(append([]string{}, args...), c.extra...)...)
			if code != exitUsage || !strings.Contains(errs, c.want) {
				t.Errorf("%s %q: exit %d, want %d saying %q:\n%s", name, c.extra, code, exitUsage, c.want, errs)
			}
		}
	}
}

// TestScanSourceFlagsShared: the flags a scan shares are registered by
// scanSourceFlags for every command, with the same help, and explain,
// which reads one key, gets --rdb and the connection flags but none that
// shapes a scan.
func TestScanSourceFlagsShared(t *testing.T) {
	a := &app{}
	cmds := map[string]map[string]string{}
	for _, c := range []string{"audit", "init", "suggest", "explain"} {
		cmd, _, err := a.rootCmd().Find([]string{c})
		if err != nil {
			t.Fatal(err)
		}
		use := map[string]string{}
		for _, f := range []string{"url", "rdb", "match", "count", "rate", "parallel", "max-keys", "timeout"} {
			if fl := cmd.Flags().Lookup(f); fl != nil {
				use[f] = fl.Usage
			}
		}
		cmds[c] = use
	}
	for _, f := range []string{"url", "count", "rate", "parallel"} {
		if u := cmds["audit"][f]; u == "" || cmds["init"][f] != u || cmds["suggest"][f] != u {
			t.Errorf("--%s: audit %q, init %q, suggest %q", f, u, cmds["init"][f], cmds["suggest"][f])
		}
	}
	if len(cmds["explain"]) != 2 || cmds["explain"]["rdb"] == "" || cmds["explain"]["url"] == "" {
		t.Errorf("explain's scan flags: %q, want --url and --rdb only", cmds["explain"])
	}
}

// TestMainQuietsRedis: the keyreg process prints no go-redis log line when
// a connection fails (go-redis logs failed dials through its process-wide
// logger, which main replaces); its own error says what failed.
func TestMainQuietsRedis(t *testing.T) {
	var errb bytes.Buffer
	cmd := exec.Command(os.Args[0], "audit", "--registry", auditRegistry, "--url", "redis://127.0.0.1:1")
	cmd.Env = append(os.Environ(), "KEYREG_TEST_MAIN=1")
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitRuntime {
		t.Fatalf("exit: %v, want %d\n%s", err, exitRuntime, errb.String())
	}
	if !strings.Contains(errb.String(), "127.0.0.1:1") || strings.Contains(errb.String(), "pool.go") || strings.Contains(errb.String(), "redis: 20") {
		t.Errorf("stderr, want keyreg's error and no go-redis log line:\n%s", errb.String())
	}
}
