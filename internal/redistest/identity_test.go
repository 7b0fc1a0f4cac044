package redistest

import (
	"strings"
	"testing"
)

// TestStartRefusesAnotherServersPort starts a second process on a port that a
// running server already holds, as happens when two test binaries pick the
// same free port. start must not take the first server's replies as its own.
func TestStartRefusesAnotherServersPort(t *testing.T) {
	first := Standalone(t)
	intruder := &Server{Addr: first.Addr, Port: first.Port, bin: first.bin, dir: t.TempDir()}
	err := intruder.start()
	if err == nil {
		intruder.Stop()
		t.Fatalf("start on the port of a running server succeeded; want an error")
	}
	if !strings.Contains(err.Error(), "Address already in use") {
		t.Fatalf("start error = %v; want one that tryStart retries (Address already in use)", err)
	}
	if pid, ok := serverPID(first.Addr); !ok || pid != first.cmd.Process.Pid {
		t.Fatalf("first server no longer answers as itself: pid %d, ok %v", pid, ok)
	}
}
