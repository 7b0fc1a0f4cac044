package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stalledRDB is what a writer that stalls sends: an RDB 9 file of 40
// string keys of 512 KiB names and the first bytes of the next, with no
// end. The reader hands a batch over every 8 MiB (16 of these keys) and
// checks the context itself only every 1,000 keys, and the audit evaluates
// a batch when the next arrives: once it evaluated the first, the
// interruption can only be met in a read that waits for more.
func stalledRDB() []byte {
	var b bytes.Buffer
	b.WriteString("REDIS0009")
	name := make([]byte, 512<<10)
	for i := range 40 {
		copy(name, fmt.Sprintf("k:%d:", i))
		b.WriteByte(0)
		b.Write([]byte{0x80, 0, 8, 0, 0}) // 512 KiB
		b.Write(name)
		b.WriteByte(1)
		b.WriteByte('v')
	}
	b.Write([]byte{0, 4, 'k'})
	return b.Bytes()
}

// runEnded waits for a CLI run that must end now that it was interrupted.
// The minute bounds a failure; it is not a synchronisation: without the
// fix the run never ends.
func runEnded(t *testing.T, done <-chan int) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(time.Minute):
		t.Fatal("the command did not end after it was interrupted")
		return 0
	}
}

// TestRDBStalledStdin interrupts an audit of --rdb - whose writer stalls
// after 40 keys, once the first batch was audited, as Ctrl-C does: it
// ends with exit 3 and a partial report that counts the keys read.
func TestRDBStalledStdin(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write(stalledRDB())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	audited := make(chan struct{})
	var once sync.Once
	var out, errb bytes.Buffer
	a := &app{stdin: pr, stdout: &out, stderr: &errb, audited: func(total int64) {
		if total >= 16 {
			once.Do(func() { close(audited) })
		}
	}}
	done := make(chan int, 1)
	go func() {
		done <- a.run(ctx, []string{"audit", "--registry", auditRegistry, "--rdb", "-", "--format", "json"})
	}()
	select {
	case <-audited:
	case <-time.After(time.Minute):
		t.Fatal("the first batch was never audited")
	}
	cancel()
	if code := runEnded(t, done); code != exitRuntime {
		t.Fatalf("exit %d, want %d\n%s", code, exitRuntime, errb.String())
	}
	rep := parseAudit(t, out.String())
	if !rep.Partial || !strings.Contains(rep.PartialReason, "interrupted") || rep.Totals.Keys < 16 {
		t.Errorf("partial=%v reason=%q keys=%d; want a partial report of the keys read, that says it was interrupted", rep.Partial, rep.PartialReason, rep.Totals.Keys)
	}
}

// TestRDBStalledFIFO reads a FIFO that no writer opens, in audit (with
// --timeout), init (with --timeout) and explain (interrupted): each ends
// with exit 3.
func TestRDBStalledFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"audit", []string{"audit", "--registry", auditRegistry, "--rdb", path, "--timeout", "200ms", "--format", "json"}},
		{"init", []string{"init", "--rdb", path, "--timeout", "200ms", "--sample", "0", "--out", filepath.Join(t.TempDir(), "keys.yaml")}},
		{"explain", []string{"explain", "--registry", auditRegistry, "--rdb", path, "k:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.name == "explain" {
				// explain has no --timeout: this is what SIGINT does.
				ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
			}
			var out, errb bytes.Buffer
			a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
			done := make(chan int, 1)
			go func() { done <- a.run(ctx, tc.args) }()
			if code := runEnded(t, done); code != exitRuntime {
				t.Fatalf("exit %d, want %d\n%s", code, exitRuntime, errb.String())
			}
		})
	}
}

// TestRDBSignal sends SIGINT and SIGTERM to a keyreg process auditing a
// FIFO whose writer stalled after 40 keys: it ends with exit 3 and a
// partial report, not at the writer's end or by the signal.
func TestRDBSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			cmd := exec.Command(os.Args[0], "audit", "--registry", auditRegistry, "--rdb", path, "--format", "json")
			cmd.Env = append(os.Environ(), "KEYREG_TEST_MAIN=1")
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan int, 1)
			go func() {
				err := cmd.Wait()
				var ee *exec.ExitError
				switch {
				case err == nil:
					done <- 0
				case errors.As(err, &ee):
					done <- ee.ExitCode() // -1 when killed by the signal
				default:
					done <- -2
				}
			}()
			// The FIFO opens for writing once keyreg opened it for
			// reading, after main installed its signal handler.
			w, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if _, err := w.Write(stalledRDB()); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code := runEnded(t, done)
			if code == -1 || code != exitRuntime {
				t.Fatalf("exit %d after %v, want %d\n%s", code, sig, exitRuntime, errb.String())
			}
			if rep := parseAudit(t, out.String()); !rep.Partial {
				t.Errorf("the report after %v is not partial:\n%s", sig, out.String())
			}
		})
	}
}
