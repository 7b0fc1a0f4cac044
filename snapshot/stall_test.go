package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/keyreg/keyreg/source"
)

// manyKeys returns an RDB 9 file of n string keys, without its EOF, and
// the whole file.
func manyKeys(n int) (head, whole []byte) {
	b := &fb{}
	b.raw([]byte("REDIS0009")...)
	for i := range n {
		b.kv(tString, fmt.Sprintf("k:%d", i)).str("value of twenty byte")
	}
	head = append([]byte(nil), b.Bytes()...)
	return head, b.eof(9)
}

type scanResult struct {
	st  source.Stats
	err error
}

// scanAsync runs ScanKeys of paths on a goroutine; batched is closed when
// the first batch was handed over.
func scanAsync(ctx context.Context, paths []string, stdin io.Reader) (_ <-chan scanResult, batched <-chan struct{}) {
	ch := make(chan scanResult, 1)
	first := make(chan struct{})
	go func() {
		n := 0
		st, err := NewSource(paths, SourceOptions{Stdin: stdin}).ScanKeys(ctx, func(string) source.Plan { return source.Plan{} }, func([]source.KeyInfo) error {
			if n++; n == 1 {
				close(first)
			}
			return nil
		})
		ch <- scanResult{st, err}
	}()
	return ch, first
}

// stallAt is what a stalled writer sends: 1,500 keys and half of the next.
// The reader hands over its first batch at 1,000 keys and checks the
// context between batches only, so once the first batch is handed over it
// can meet the end of the context only in a read that waits for more.
func stallAt(head []byte) []byte {
	cut := 9
	for i := 0; i < 1500; i++ {
		cut += 1 + 1 + len(fmt.Sprintf("k:%d", i)) + 1 + 20
	}
	return head[:cut+3]
}

// ended waits for a scan that must end now that its context did. The
// minute is a bound on a failure, not a synchronisation: without the fix
// the scan never ends.
func ended(t *testing.T, ch <-chan scanResult) scanResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(time.Minute):
		t.Fatal("the scan did not end after its context was cancelled")
		return scanResult{}
	}
}

// TestStalledInput reads inputs that stall: a pipe on stdin whose writer
// sent part of a file and then nothing, a FIFO whose writer does the same,
// and a FIFO that no writer ever opens. Cancelling the context ends each
// scan with its error, and the scan is partial.
func TestStalledInput(t *testing.T) {
	head, _ := manyKeys(5000)
	t.Run("stdin", func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch, batched := scanAsync(ctx, []string{"-"}, pr)
		go pw.Write(stallAt(head))
		<-batched
		cancel()
		r := ended(t, ch)
		if !errors.Is(r.err, context.Canceled) || !r.st.Partial {
			t.Fatalf("%v, stats %+v; want context.Canceled and a partial scan", r.err, r.st)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fifo")
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch, batched := scanAsync(ctx, []string{path}, nil)
		// Opening a FIFO for writing waits for its reader.
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Write(stallAt(head)); err != nil {
			t.Fatal(err)
		}
		<-batched
		cancel()
		r := ended(t, ch)
		if !errors.Is(r.err, context.Canceled) || !r.st.Partial {
			t.Fatalf("%v, stats %+v; want context.Canceled and a partial scan", r.err, r.st)
		}
	})
	t.Run("fifo without writer", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fifo")
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		ch, _ := scanAsync(ctx, []string{path}, nil)
		r := ended(t, ch)
		if !errors.Is(r.err, context.DeadlineExceeded) || !r.st.Partial {
			t.Fatalf("%v, stats %+v; want context.DeadlineExceeded and a partial scan", r.err, r.st)
		}
	})
}

// TestPumpReadsWhole reads a whole file through stdin and a FIFO: the
// pump hands over every byte, in order, and the end of the file.
func TestPumpReadsWhole(t *testing.T) {
	_, whole := manyKeys(20000)
	pr, pw := io.Pipe()
	go func() {
		// Uneven writes, so that reads straddle them.
		for b := whole; len(b) > 0; {
			n := min(len(b), 7777)
			if _, err := pw.Write(b[:n]); err != nil {
				return
			}
			b = b[n:]
		}
		pw.Close()
	}()
	ch, _ := scanAsync(context.Background(), []string{"-"}, pr)
	r := ended(t, ch)
	if r.err != nil || r.st.Keys != 20000 {
		t.Fatalf("stdin: %v, %d keys; want 20000", r.err, r.st.Keys)
	}

	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	ch, _ = scanAsync(context.Background(), []string{path}, nil)
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(whole); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r = ended(t, ch)
	if r.err != nil || r.st.Keys != 20000 {
		t.Fatalf("fifo: %v, %d keys; want 20000", r.err, r.st.Keys)
	}
}

// TestDamagedCountsBatch damages a file after 795 keys: the keys read
// before the damage are handed over and counted, not dropped with the
// batch in progress.
func TestDamagedCountsBatch(t *testing.T) {
	head, _ := manyKeys(795)
	bad := append(head, 0x77) // no such opcode or type
	path := filepath.Join(t.TempDir(), "bad.rdb")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	var got int
	st, err := NewSource([]string{path}, SourceOptions{}).ScanKeys(context.Background(), func(string) source.Plan { return source.Plan{} }, func(b []source.KeyInfo) error {
		got += len(b)
		return nil
	})
	var fe *FormatError
	if !errors.As(err, &fe) || !st.Partial {
		t.Fatalf("%v, stats %+v; want a FormatError and a partial scan", err, st)
	}
	if got != 795 || st.Keys != 795 || st.Scanned != 795 {
		t.Fatalf("%d keys handed over, stats %+v; want the 795 keys before the damage", got, st)
	}
}
