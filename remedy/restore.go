package remedy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/keyreg/keyreg/snapshot"
	"github.com/redis/go-redis/v9"
)

// RestoreOptions say how to restore a backup.
type RestoreOptions struct {
	Replace bool // overwrite existing keys
	DryRun  bool // say what would be restored, write nothing
	// Now is the clock expiries are compared with; nil for time.Now.
	Now func() time.Time
	// Limits bound the backup reader.
	Limits Limits
	// Rate caps the keys restored per second; 0 for DefaultRate.
	Rate int
}

// RestoreResult counts what a restore did (or would do, under DryRun).
type RestoreResult struct {
	Restored, Expired, Exists int
	Skipped                   []Skip // at most MaxListed
}

// VerifyBackup reads the whole backup twice before anything is restored:
// with ReadBackup (the framing this package writes, and the checksum) and
// with the snapshot reader, which walks every value's encoding, so that a
// payload damaged or forged inside a valid frame is refused here rather
// than handed to RESTORE. It returns the number of keys.
func VerifyBackup(path string, lim Limits) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	if err := ReadBackup(f, lim, func(*BackupEntry) error { n++; return nil }); err != nil {
		return 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	r, err := snapshot.NewReader(f, snapshot.Options{MaxKeyBytes: max(lim.MaxKeyBytes, MaxKeyName), MaxValueBytes: MaxBackupValue})
	if err != nil {
		return 0, fmt.Errorf("the RDB reader: %w", err)
	}
	defer r.Close()
	m := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("the RDB reader: %w", err)
		}
		if err := e.Skip(); err != nil {
			return 0, fmt.Errorf("the RDB reader: key %d: %w", m, err)
		}
		m++
	}
	if m != n {
		return 0, fmt.Errorf("the RDB reader found %d keys, the backup reader %d", m, n)
	}
	return n, nil
}

// Restore puts the keys of a verified backup back with RESTORE … ABSTTL
// (and IDLETIME), skipping keys whose expiry has passed and, without
// Replace, keys that exist.
func Restore(ctx context.Context, path string, t Target, o RestoreOptions) (*RestoreResult, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if _, err := VerifyBackup(path, o.Limits); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if o.Rate <= 0 {
		o.Rate = DefaultRate
	}
	// A replica is the wrong target, not a failure of the run: refused
	// before the first key, dry run included (nothing would be restored
	// there). Every database of a server is on the same nodes, so the
	// primaries of database 0 are all there are.
	nodes, err := primaries(ctx, t, 0, "restore")
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if known(n.version) && !atLeast(n.version, 5, 0) {
			return nil, tooOld(n, "restore")
		}
	}
	res := &RestoreResult{}
	start, sent := time.Now(), 0
	pace := func() error {
		sent++
		d := time.Until(start.Add(time.Duration(float64(sent) / float64(o.Rate) * float64(time.Second))))
		if d <= 0 {
			return nil
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	skip := func(e *BackupEntry, why string) {
		if len(res.Skipped) < MaxListed {
			res.Skipped = append(res.Skipped, Skip{Key: quoteKey(e.Key), DB: e.DB, Reason: why})
		}
	}
	err = ReadBackup(f, o.Limits, func(e *BackupEntry) error {
		if e.ExpireAtMs >= 0 && e.ExpireAtMs <= o.Now().UnixMilli() {
			res.Expired++
			skip(e, "expired")
			return nil
		}
		cl, err := t.WriteClient(e.Key, e.DB)
		if err != nil {
			return err
		}
		if err := pace(); err != nil {
			return err
		}
		if o.DryRun {
			n, err := cl.Exists(ctx, e.Key).Result()
			if err != nil {
				return err
			}
			if n > 0 && !o.Replace {
				res.Exists++
				skip(e, "exists")
				return nil
			}
			res.Restored++
			return nil
		}
		args := []any{"RESTORE", e.Key, max(e.ExpireAtMs, 0), e.Payload.Dump(), "ABSTTL"}
		if e.IdleSec >= 0 {
			args = append(args, "IDLETIME", e.IdleSec)
		}
		if o.Replace {
			args = append(args, "REPLACE")
		}
		err = cl.Do(ctx, args...).Err()
		switch {
		case err == nil:
			res.Restored++
		case strings.HasPrefix(err.Error(), "BUSYKEY"):
			res.Exists++
			skip(e, "exists")
		default:
			var re redis.Error
			if errors.As(err, &re) {
				return fmt.Errorf("restoring %s: %w", quoteKey(e.Key), err)
			}
			return err
		}
		return nil
	})
	return res, err
}
