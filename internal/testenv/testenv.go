// Package testenv decides, once for every test in the module, what a test
// does when a tool it needs is not installed: it skips with an installation
// hint, except under CI=true, where a missing tool fails the test, so that
// CI never turns green by skipping.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// CI reports whether the tests run under CI=true.
func CI() bool { return os.Getenv("CI") == "true" }

// LookPath returns the path of the first of names found on PATH. When none
// is, it fails the test under CI=true and skips it otherwise, with hint
// (how to install the tool) as the message.
func LookPath(t testing.TB, hint string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, hint)
	return ""
}

// Missing ends the test for a missing prerequisite: a failure under CI=true,
// a skip otherwise.
func Missing(t testing.TB, hint string) {
	t.Helper()
	if CI() {
		t.Fatal(hint + " (CI=true, not skipping)")
	}
	t.Skip(hint)
}
