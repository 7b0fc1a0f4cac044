package scanner_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

// cancelBound is how soon a cancelled call must return.
const cancelBound = time.Second

// blockedTimeout is the command timeout of the cancellation tests: far
// above cancelBound, so only the cancellation can end a blocked call in
// time.
const blockedTimeout = 20 * time.Second

// cancelWhenBlocked waits until a client waits on the paused server s,
// cancels, and returns when cancel was called.
func cancelWhenBlocked(t *testing.T, s *redistest.Server, cancel context.CancelFunc) time.Time {
	t.Helper()
	s.WaitUnread(t)
	at := time.Now()
	cancel()
	return at
}

// gate stops a scan callback the first time it is called, until the test
// has paused the server on the test goroutine (redistest helpers call
// t.Fatal, which only the test goroutine may).
type gate struct {
	first          sync.Once
	reached, freed chan struct{}
	free           func()
}

func newGate() *gate {
	g := &gate{reached: make(chan struct{}), freed: make(chan struct{})}
	g.free = sync.OnceFunc(func() { close(g.freed) })
	return g
}

// stop blocks the first call until release and reports whether this was
// the first call.
func (g *gate) stop() (first bool) {
	g.first.Do(func() {
		first = true
		close(g.reached)
		<-g.freed
	})
	return first
}

// at waits until the callback stopped; the test's end releases it, so a
// failing test cannot leave it blocked.
func (g *gate) at(t *testing.T) {
	t.Helper()
	t.Cleanup(g.free)
	<-g.reached
}

func (g *gate) release() { g.free() }

// TestCancelConnect cancels a Connect blocked on a server that stopped
// answering (its INFO is sent, never answered).
func TestCancelConnect(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	s.Pause(t)
	defer s.Resume(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := scanner.Connect(ctx, scanner.Options{URL: s.URL(), Timeout: blockedTimeout})
		done <- err
	}()
	at := cancelWhenBlocked(t, s, cancel)
	err := <-done
	took := time.Since(at)
	t.Logf("connect returned %v after cancel: %v", took, err)
	if took > cancelBound || !errors.Is(err, context.Canceled) {
		t.Errorf("connect returned %v after cancel with %v; want context.Canceled within %v", took, err, cancelBound)
	}
}

// TestCancelScan pauses the server once the first batch arrived: the SCAN
// loop and the probes block on it, and cancelling must end Scan at once,
// partial.
func TestCancelScan(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	seed(t, s.Client(t), "c:", 3000)
	c := connect(t, scanner.Options{URL: s.URL(), Count: 50, Timeout: blockedTimeout})
	ctx, cancel := context.WithCancel(context.Background())
	g := newGate()
	type result struct {
		st  scanner.Stats
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := c.Scan(ctx, func([]scanner.KeyInfo) error {
			g.stop()
			return nil
		})
		done <- result{st, err}
	}()
	g.at(t)
	s.Pause(t)
	defer s.Resume(t)
	g.release()
	at := cancelWhenBlocked(t, s, cancel)
	r := <-done
	took := time.Since(at)
	t.Logf("scan returned %v after cancel: %v (%d keys)", took, r.err, r.st.Keys)
	if took > cancelBound || !errors.Is(r.err, context.Canceled) || !r.st.Partial {
		t.Errorf("scan returned %v after cancel with %v, partial %v; want a partial context.Canceled within %v", took, r.err, r.st.Partial, cancelBound)
	}
}

// TestCancelSample blocks a sampling pipeline (go-redis) inside the scan's
// callback, as the audit samples, and cancels it.
func TestCancelSample(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	seed(t, s.Client(t), "c:", 500)
	// AllowTouch: on redis 7.0 the scanner would refuse the read before it
	// reached the server, and this test would cancel the SCAN instead.
	c := connect(t, scanner.Options{URL: s.URL(), Count: 50, Timeout: blockedTimeout, AllowTouch: true})
	ctx, cancel := context.WithCancel(context.Background())
	g := newGate()
	done := make(chan error, 1)
	go func() {
		_, err := c.Scan(ctx, func(b []scanner.KeyInfo) error {
			if !g.stop() {
				return nil
			}
			_, errs := c.SampleBatch(ctx, b, 10, 1<<20)
			return errs[0]
		})
		done <- err
	}()
	g.at(t)
	s.Pause(t)
	defer s.Resume(t)
	g.release()
	at := cancelWhenBlocked(t, s, cancel)
	err := <-done
	took := time.Since(at)
	t.Logf("sampling returned %v after cancel: %v", took, err)
	if took > cancelBound || !errors.Is(err, context.Canceled) {
		t.Errorf("sampling returned %v after cancel with %v; want context.Canceled within %v", took, err, cancelBound)
	}
}

// TestCancelProbe cancels a Probe (the probe's own RESP connection) and
// checks that the Conn works again once the server answers.
func TestCancelProbe(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	seed(t, s.Client(t), "c:", 10)
	c := connect(t, scanner.Options{URL: s.URL(), Timeout: blockedTimeout})
	s.Pause(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Probe(ctx, "c:1")
		done <- err
	}()
	at := cancelWhenBlocked(t, s, cancel)
	err := <-done
	took := time.Since(at)
	t.Logf("probe returned %v after cancel: %v", took, err)
	if took > cancelBound || !errors.Is(err, context.Canceled) {
		t.Errorf("probe returned %v after cancel with %v; want context.Canceled within %v", took, err, cancelBound)
	}
	s.Resume(t)
	if ki, err := c.Probe(context.Background(), "c:1"); err != nil || ki.Type != "string" {
		t.Errorf("probe after resume: %+v, %v", ki, err)
	}
	if _, err := c.Scan(context.Background(), func([]scanner.KeyInfo) error { return nil }); err != nil {
		t.Errorf("scan after resume: %v", err)
	}
}
