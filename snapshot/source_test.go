package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/keyreg/keyreg/source"
)

// TestSourceStops checks the read-ahead goroutine of ScanKeys: when the
// callback fails or the context ends after the first batch, ScanKeys returns
// that error with the batches handed over so far counted, and the reader
// stops (a reader that kept going would read the whole file and count it).
func TestSourceStops(t *testing.T) {
	s, c := startServer(t, "noeviction")
	ctx := context.Background()
	p := c.Pipeline()
	for i := range 10 * batchSize {
		p.Set(ctx, fmt.Sprintf("k:%d", i), i, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dump.rdb")
	if err := os.WriteFile(path, save(t, s, c), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := func(string) source.Plan { return source.Plan{} }

	var all int
	st, err := NewSource([]string{path}, SourceOptions{}).ScanKeys(ctx, plan, func(b []source.KeyInfo) error {
		all += len(b)
		return nil
	})
	if err != nil || all != 10*batchSize || st.Keys != int64(all) || st.Scanned != int64(all) || st.Nodes != 1 {
		t.Fatalf("whole file: %v, %d keys handed over, stats %+v", err, all, st)
	}

	boom := errors.New("boom")
	src := NewSource([]string{path}, SourceOptions{})
	calls := 0
	st, err = src.ScanKeys(ctx, plan, func(b []source.KeyInfo) error {
		calls++
		return boom
	})
	if !errors.Is(err, boom) || calls != 1 || st.Keys != batchSize || !st.Partial {
		t.Fatalf("failing callback: %v after %d calls, stats %+v", err, calls, st)
	}
	if st.Scanned >= int64(all) {
		t.Errorf("the reader read on to the end (%d keys) after the callback failed", st.Scanned)
	}

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	calls = 0
	st, err = NewSource([]string{path}, SourceOptions{}).ScanKeys(cctx, plan, func(b []source.KeyInfo) error {
		calls++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || !st.Partial || st.Keys >= int64(all) {
		t.Fatalf("cancelled: %v after %d calls, stats %+v", err, calls, st)
	}
}
