package testenv

import (
	"testing"
)

// recorder stands in for the test, recording how Missing ended it.
type recorder struct {
	testing.TB
	failed, skipped string
}

type ended struct{}

func (r *recorder) Helper()           {}
func (r *recorder) Fatal(args ...any) { r.failed = args[0].(string); panic(ended{}) }
func (r *recorder) Skip(args ...any)  { r.skipped = args[0].(string); panic(ended{}) }
func (r *recorder) lookPath(names ...string) (path string) {
	defer func() {
		if v := recover(); v != nil && v != (ended{}) {
			panic(v)
		}
	}()
	return LookPath(r, "install it", names...)
}

func TestLookPath(t *testing.T) {
	const missing = "keyreg-no-such-tool-7f3a"
	t.Run("found", func(t *testing.T) {
		t.Setenv("CI", "true")
		r := &recorder{TB: t}
		if p := r.lookPath(missing, "sh"); p == "" || r.failed != "" || r.skipped != "" {
			t.Fatalf("sh on PATH: got %q, failed %q, skipped %q", p, r.failed, r.skipped)
		}
	})
	t.Run("ci fails", func(t *testing.T) {
		t.Setenv("CI", "true")
		r := &recorder{TB: t}
		r.lookPath(missing)
		if r.failed != "install it (CI=true, not skipping)" || r.skipped != "" {
			t.Fatalf("under CI=true a missing tool must fail the test: failed %q, skipped %q", r.failed, r.skipped)
		}
	})
	t.Run("elsewhere skips", func(t *testing.T) {
		t.Setenv("CI", "")
		r := &recorder{TB: t}
		r.lookPath(missing)
		if r.skipped != "install it" || r.failed != "" {
			t.Fatalf("without CI a missing tool skips: failed %q, skipped %q", r.failed, r.skipped)
		}
	})
}
