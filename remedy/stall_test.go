package remedy_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/remedy"
	"github.com/keyreg/keyreg/scanner"
)

// TestStalledServerPausesThenAborts stops the server with SIGSTOP in the
// middle of an apply, before a batch's PING and before a batch's deletes:
// the run pauses, then aborts with ErrLatency, and its journal lets a
// second run finish with every key deleted once and backed up once.
func TestStalledServerPausesThenAborts(t *testing.T) {
	const n = 200
	ctx := context.Background()
	reg := loadReg(t)
	for _, step := range []string{"deleted", "backed"} {
		t.Run(step, func(t *testing.T) {
			srv := redistest.Standalone(t)
			c := srv.Client(t)
			seedJunk(t, c, n)
			conn := connect(t, ctx, srv.URL(), scanner.Options{Timeout: 300 * time.Millisecond})
			p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
			backup := filepath.Join(t.TempDir(), "b.rdb")
			stopped := false
			res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 1000, MaxLatency: 50 * time.Millisecond, MaxPause: time.Second,
				Hook: func(s string, handled int) error {
					if s == step && handled >= 100 && !stopped {
						srv.Pause(t)
						stopped = true
					}
					return nil
				}})
			srv.Resume(t)
			if !errors.Is(err, remedy.ErrLatency) {
				t.Fatalf("apply on a stopped server: %v, want ErrLatency", err)
			}
			if res.Paused == 0 || res.Deleted == 0 || res.Deleted >= n {
				t.Errorf("stopped run: %+v", res)
			}
			res2, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 5000})
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			if !res2.Resumed || res2.Deleted+res2.Gone != n || res2.Deleted < res.Deleted {
				t.Errorf("resume: %+v after %+v", res2, res)
			}
			if left := c.DBSize(ctx).Val(); left != 0 {
				t.Errorf("%d keys left", left)
			}
			if keys := backupKeys(t, backup); len(keys) != n {
				t.Errorf("backup holds %d keys, want %d", len(keys), n)
			}
		})
	}
}
