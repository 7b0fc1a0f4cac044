package remedy_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/remedy"
	"github.com/keyreg/keyreg/scanner"
	"github.com/redis/go-redis/v9"
)

// TestChildApply is the process TestKill9Resume kills: it applies the plan
// in $REMEDY_CHILD_PLAN and sends itself SIGKILL at the step and key count
// the environment names.
func TestChildApply(t *testing.T) {
	planPath := os.Getenv("REMEDY_CHILD_PLAN")
	if planPath == "" {
		return // not the child
	}
	step := os.Getenv("REMEDY_CHILD_STEP")
	at, _ := strconv.Atoi(os.Getenv("REMEDY_CHILD_AT"))
	f, err := os.Open(planPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := remedy.ReadPlan(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn := connect(t, ctx, os.Getenv("REMEDY_CHILD_URL"), scanner.Options{})
	_, err = remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: os.Getenv("REMEDY_CHILD_BACKUP"), Rate: 2000,
		Hook: func(s string, handled int) error {
			if s == step && handled >= at {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal arrives
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
}

func seedJunk(t testing.TB, c *redis.Client, n int) {
	ctx := context.Background()
	p := c.Pipeline()
	for i := range n {
		ttl := time.Duration(0)
		if i%3 == 0 {
			ttl = time.Duration(i+1) * time.Hour
		}
		p.Set(ctx, fmt.Sprintf("tmp:junk:%04d", i), bytes.Repeat([]byte{byte(i)}, i%50+1), ttl)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

func backupKeys(t testing.TB, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var keys []string
	if err := remedy.ReadBackup(f, remedy.Limits{}, func(e *remedy.BackupEntry) error {
		keys = append(keys, e.Key)
		return nil
	}); err != nil {
		t.Fatalf("reading the backup: %v", err)
	}
	slices.Sort(keys)
	return keys
}

// TestKill9Resume kills an apply with SIGKILL at every step of a batch,
// then resumes it: the keyspace and the backup end as an uninterrupted run
// leaves them, every deleted key is in the backup exactly once, and no key
// is deleted before its backup is on disk.
func TestKill9Resume(t *testing.T) {
	const n = 300
	ctx := context.Background()
	reg := loadReg(t)
	for _, step := range []string{"read", "synced", "backed", "unlinked", "deleted"} {
		t.Run(step, func(t *testing.T) {
			srv := redistest.Standalone(t)
			c := srv.Client(t)
			seedJunk(t, c, n)
			conn := connect(t, ctx, srv.URL(), scanner.Options{})
			p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
			dir := t.TempDir()
			planPath, backup := filepath.Join(dir, "plan.json"), filepath.Join(dir, "b.rdb")
			var buf bytes.Buffer
			p.Write(&buf)
			os.WriteFile(planPath, buf.Bytes(), 0o600)

			cmd := exec.Command(os.Args[0], "-test.run=^TestChildApply$")
			cmd.Env = append(os.Environ(), "REMEDY_CHILD_PLAN="+planPath, "REMEDY_CHILD_URL="+srv.URL(),
				"REMEDY_CHILD_BACKUP="+backup, "REMEDY_CHILD_STEP="+step, "REMEDY_CHILD_AT=150")
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errorsAs(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed: %v\n%s", err, out)
			}
			left := c.DBSize(ctx).Val()
			if left == 0 || left == n {
				t.Fatalf("killed at %s: %d keys left, want a run stopped part-way", step, left)
			}
			// Every key deleted so far is in the backup on disk.
			inBackup := map[string]bool{}
			for _, k := range backupKeys(t, backup) {
				inBackup[k] = true
			}
			for i := range n {
				k := fmt.Sprintf("tmp:junk:%04d", i)
				if c.Exists(ctx, k).Val() == 0 && !inBackup[k] {
					t.Errorf("%s deleted without its backup", k)
				}
			}
			res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 5000})
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			if !res.Resumed || res.Deleted+res.Gone != n || len(res.Skipped) != 0 {
				t.Errorf("resume: %+v", res)
			}
			if step == "unlinked" && res.Gone == 0 {
				t.Errorf("killed after UNLINK, before the journal: the resumed run found no key gone")
			}
			if left := c.DBSize(ctx).Val(); left != 0 {
				t.Errorf("%d keys left after the resume", left)
			}
			keys := backupKeys(t, backup)
			if len(keys) != n || slices.Compact(slices.Clone(keys)) == nil || len(slices.Compact(slices.Clone(keys))) != n {
				t.Errorf("the backup holds %d keys (%d distinct), want %d", len(keys), len(slices.Compact(slices.Clone(keys))), n)
			}
			if _, err := remedy.VerifyBackup(backup, remedy.Limits{}); err != nil {
				t.Errorf("verify: %v", err)
			}
		})
	}
}
