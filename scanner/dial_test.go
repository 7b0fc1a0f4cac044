package scanner

import (
	"context"
	"errors"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestWatcherSticky checks the race the watcher closes: a deadline set
// after the abort began (go-redis sets one before every read) is moved into
// the past too, until the aborted operation has returned.
func TestWatcherSticky(t *testing.T) {
	var w watcher
	a, b := net.Pipe()
	defer b.Close()
	ac := w.track(a)
	ctx, cancel := context.WithCancel(context.Background())
	done := w.watch(ctx)
	cancel()
	// AfterFunc runs in its own goroutine: wait until it has counted the
	// abort, through the state it sets rather than a timer.
	for w.aborting.Load() == 0 {
		runtime.Gosched()
	}
	// A byte is waiting to be read, yet the read must fail: its deadline
	// was moved into the past.
	go func() { _, _ = b.Write([]byte("x")) }()
	_ = ac.SetReadDeadline(time.Now().Add(time.Hour))
	if _, err := ac.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read during the abort: %v, want a deadline error", err)
	}
	done()
	if w.aborting.Load() != 0 {
		t.Fatalf("aborting %d after the operation returned", w.aborting.Load())
	}
	// Once it returned, deadlines apply as set.
	_ = ac.SetReadDeadline(time.Now().Add(time.Hour))
	if _, err := ac.Read(make([]byte, 1)); err != nil {
		t.Fatalf("read after the abort: %v", err)
	}
	_ = ac.Close()
	if len(w.conns) != 0 {
		t.Errorf("%d connections still tracked after Close", len(w.conns))
	}
}

// BenchmarkDeadline measures what the watcher adds to setting a deadline,
// which go-redis does before every read and write.
func BenchmarkDeadline(b *testing.B) {
	c1, c2 := net.Pipe()
	defer c2.Close()
	var w watcher
	ac := w.track(c1)
	dl := time.Now().Add(time.Hour)
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			_ = c1.SetReadDeadline(dl)
		}
	})
	b.Run("watched", func(b *testing.B) {
		for b.Loop() {
			_ = ac.SetReadDeadline(dl)
		}
	})
}
