package remedy_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/remedy"
	"github.com/keyreg/keyreg/scanner"
	"github.com/redis/go-redis/v9"
)

// TestExpire gives the TTL-less cart keys a TTL within the policy, spread
// by jitter, and leaves alone a key that got a TTL from the application
// between plan and apply.
func TestExpire(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	for i := range 200 {
		c.HSet(ctx, fmt.Sprintf("v1:cart:%d", i), "n", i)
	}
	reg := loadReg(t)
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	seq := 0.0
	p := build(t, ctx, conn, reg, remedy.KindExpire, remedy.Options{TTL: 2 * time.Hour, Selection: remedy.Selection{SpreadPct: 10},
		Rand: func() float64 { seq += 0.005; return seq - float64(int(seq)) }})
	if len(p.Keys) != 200 {
		t.Fatalf("planned %d keys", len(p.Keys))
	}
	c.Expire(ctx, "v1:cart:7", 5*time.Minute) // the application, meanwhile
	res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Rate: 10000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Expired != 199 || res.SkipCount["ttl-set"] != 1 {
		t.Errorf("expire: %+v", res)
	}
	seconds := map[int64]bool{}
	for i := range 200 {
		ttl := c.TTL(ctx, fmt.Sprintf("v1:cart:%d", i)).Val()
		if i == 7 {
			if ttl > 5*time.Minute {
				t.Errorf("the application's TTL was overwritten: %v", ttl)
			}
			continue
		}
		if ttl > 2*time.Hour || ttl < 108*time.Minute-time.Minute {
			t.Errorf("v1:cart:%d: TTL %v, want 2h minus at most 10%%", i, ttl)
		}
		seconds[int64(ttl/time.Second)] = true
	}
	if len(seconds) < 100 {
		t.Errorf("TTLs fall on %d distinct seconds: not spread", len(seconds))
	}
}

// TestClusterDatabasesAndBigKey prunes on a 3-master cluster (each key on
// its own master, by slot), on two databases of a standalone server, and a
// 50 MB key that --max-key-bytes first skips, then backs up.
func TestClusterDatabasesAndBigKey(t *testing.T) {
	ctx := context.Background()
	reg := loadReg(t)
	t.Run("cluster", func(t *testing.T) {
		cl := redistest.Cluster(t)
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs})
		defer cc.Close()
		for i := range 300 {
			if err := cc.Set(ctx, fmt.Sprintf("tmp:junk:%d", i), "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		conn := connect(t, ctx, cl.URL(), scanner.Options{})
		p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
		if len(p.Keys) != 300 {
			t.Fatalf("planned %d keys", len(p.Keys))
		}
		backup := filepath.Join(t.TempDir(), "b.rdb")
		res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 10000})
		if err != nil || res.Deleted != 300 {
			t.Fatalf("apply: %+v, %v", res, err)
		}
		for _, m := range cl.Masters {
			if n := m.Client(t).DBSize(ctx).Val(); n != 0 {
				t.Errorf("%s holds %d keys", m.Addr, n)
			}
		}
		r, err := remedy.Restore(ctx, backup, conn, remedy.RestoreOptions{})
		if err != nil || r.Restored != 300 {
			t.Fatalf("restore: %+v, %v", r, err)
		}
		for _, m := range cl.Masters {
			if n := m.Client(t).DBSize(ctx).Val(); n < 50 {
				t.Errorf("%s holds %d keys after the restore: not spread by slot", m.Addr, n)
			}
		}
	})
	t.Run("databases-and-50MB", func(t *testing.T) {
		srv := redistest.Standalone(t)
		for db := range 3 {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: db})
			defer c.Close()
			for i := range 10 {
				c.Set(ctx, fmt.Sprintf("tmp:junk:%d", i), fmt.Sprint(db), 0)
			}
		}
		c := srv.Client(t)
		big := strings.Repeat("0123456789", 5<<20) // 50 MiB
		if err := c.Set(ctx, "tmp:big", big, 0).Err(); err != nil {
			t.Fatal(err)
		}
		conn := connect(t, ctx, srv.URL(), scanner.Options{DB: scanner.AllDBs})
		p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
		if len(p.Keys) != 31 {
			t.Fatalf("planned %d keys", len(p.Keys))
		}
		dir := t.TempDir()
		res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: filepath.Join(dir, "1.rdb"), Rate: 10000})
		if err != nil || res.Deleted != 30 || res.SkipCount["too-large"] != 1 || c.Exists(ctx, "tmp:big").Val() != 1 {
			t.Fatalf("apply under the default --max-key-bytes: %+v, %v", res, err)
		}
		p2 := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
		b2 := filepath.Join(dir, "2.rdb")
		res, err = remedy.Apply(ctx, p2, conn, remedy.ApplyOptions{Backup: b2, Rate: 10000, MaxKeyBytes: 60 << 20})
		if err != nil || res.Deleted != 1 || c.Exists(ctx, "tmp:big").Val() != 0 {
			t.Fatalf("apply with --max-key-bytes 60 MiB: %+v, %v", res, err)
		}
		if _, err := remedy.Restore(ctx, b2, conn, remedy.RestoreOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := c.Get(ctx, "tmp:big").Val(); got != big {
			t.Errorf("the 50 MiB key restored as %d bytes", len(got))
		}
		r, err := remedy.Restore(ctx, filepath.Join(dir, "1.rdb"), conn, remedy.RestoreOptions{})
		if err != nil || r.Restored != 30 {
			t.Fatalf("restore: %+v, %v", r, err)
		}
		for db := range 3 {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: db})
			defer c.Close()
			if v := c.Get(ctx, "tmp:junk:3").Val(); v != fmt.Sprint(db) {
				t.Errorf("db %d: restored %q", db, v)
			}
		}
	})
}

// TestACL applies, restores and expires as a user with exactly remedy.ACL:
// nothing is refused, and INFO errorstats stays empty.
func TestACL(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	s := seed(t, ctx, c)
	reg := loadReg(t)
	redistest.ACLUser(t, srv, "remedy", "pw", strings.Fields(remedy.ACL)...)
	url := "redis://remedy:pw@" + srv.Addr
	plan := build(t, ctx, connect(t, ctx, srv.URL(), scanner.Options{}), reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	conn := connect(t, ctx, url, scanner.Options{})
	backup := filepath.Join(t.TempDir(), "b.rdb")
	res, err := remedy.Apply(ctx, plan, conn, remedy.ApplyOptions{Backup: backup, Rate: 10000})
	if err != nil || res.Deleted != len(s.unregistered) {
		t.Fatalf("apply as the remedy user: %+v, %v", res, err)
	}
	if r, err := remedy.Restore(ctx, backup, conn, remedy.RestoreOptions{}); err != nil || r.Restored != len(s.unregistered) {
		t.Fatalf("restore as the remedy user: %+v, %v", r, err)
	}
	if r, err := remedy.Restore(ctx, backup, conn, remedy.RestoreOptions{DryRun: true}); err != nil || r.Exists != len(s.unregistered) {
		t.Fatalf("restore --dry-run as the remedy user: %+v, %v", r, err)
	}
	ex := build(t, ctx, connect(t, ctx, srv.URL(), scanner.Options{}), reg, remedy.KindExpire, remedy.Options{})
	if r, err := remedy.Apply(ctx, ex, conn, remedy.ApplyOptions{Rate: 10000}); err != nil || r.Expired != len(ex.Keys) {
		t.Fatalf("expire as the remedy user: %+v, %v", r, err)
	}
	info := c.Info(ctx, "errorstats").Val()
	if strings.Contains(info, "errorstat_") {
		t.Errorf("errors under remedy.ACL:\n%s", info)
	}
	if log := c.Do(ctx, "ACL", "LOG").Val(); fmt.Sprint(log) != "[]" {
		t.Errorf("ACL LOG: %v", log)
	}
}

// TestNothingToBackUp: a run whose keys are all skipped writes no backup,
// and runs again as a resumed run.
func TestNothingToBackUp(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	c.Set(ctx, "tmp:a", "1", 0)
	setIdle(t, ctx, c, "tmp:a", 100)
	reg := loadReg(t)
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	c.Set(ctx, "tmp:a", "2", 0)
	backup := filepath.Join(t.TempDir(), "b.rdb")
	for run := range 2 {
		res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 100})
		if err != nil || res.Deleted != 0 || res.SkipCount["touched"] != 1 || res.Resumed != (run == 1) {
			t.Fatalf("run %d: %+v, %v", run, res, err)
		}
	}
}

// TestIdleSincePlan: apply asks for the planned idle time plus the time
// since the plan. With the clock an hour ahead, keys idle only as long as
// planned look touched an hour after the plan, and are kept.
func TestIdleSincePlan(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	for i := range 5 {
		k := fmt.Sprintf("tmp:a:%d", i)
		c.Set(ctx, k, "v", 0)
		setIdle(t, ctx, c, k, 100)
	}
	reg := loadReg(t)
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	later := func() time.Time { return time.Now().Add(time.Hour) }
	res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: filepath.Join(t.TempDir(), "1.rdb"), Rate: 100, Now: later})
	if err != nil || res.Deleted != 0 || res.SkipCount["touched"] != 5 {
		t.Fatalf("an hour later by the clock: %+v, %v", res, err)
	}
	res, err = remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: filepath.Join(t.TempDir(), "2.rdb"), Rate: 100})
	if err != nil || res.Deleted != 5 {
		t.Fatalf("right after the plan: %+v, %v", res, err)
	}
}

// TestRestoreSkipsExpired: keys whose absolute expiry has passed by the
// time of the restore are skipped, the others restored.
func TestRestoreSkipsExpired(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	s := seed(t, ctx, c)
	reg := loadReg(t)
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	backup := filepath.Join(t.TempDir(), "b.rdb")
	if res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 10000}); err != nil || res.Deleted != len(s.unregistered) {
		t.Fatalf("apply: %+v, %v", res, err)
	}
	// old:x:N expire after N+1 hours: 5h30m later, old:x:0 to old:x:4 have.
	r, err := remedy.Restore(ctx, backup, conn, remedy.RestoreOptions{Now: func() time.Time { return time.Now().Add(5*time.Hour + 30*time.Minute) }})
	if err != nil || r.Expired != 5 || r.Restored != len(s.unregistered)-5 {
		t.Fatalf("restore: %+v, %v", r, err)
	}
	for i := range 10 {
		if got, want := c.Exists(ctx, fmt.Sprintf("old:x:%d", i)).Val(), int64(0); i >= 5 && got == want || i < 5 && got != want {
			t.Errorf("old:x:%d exists: %d", i, got)
		}
	}
}

// TestRestartedServerStopsTheRun: a server that restarts mid-apply has
// forgotten the scripts (NOSCRIPT): the run stops with an error, keys are
// not marked as skipped, and the next run resumes and finishes.
func TestRestartedServerStopsTheRun(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	seedJunk(t, c, 100)
	reg := loadReg(t)
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	backup := filepath.Join(t.TempDir(), "b.rdb")
	flushed := false
	res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 400,
		Hook: func(step string, n int) error {
			if step == "deleted" && n >= 40 && !flushed {
				flushed = true
				return c.ScriptFlush(ctx).Err() // as a restart does
			}
			return nil
		}})
	if err == nil || !strings.Contains(err.Error(), "NOSCRIPT") || len(res.Skipped) != 0 {
		t.Fatalf("apply after SCRIPT FLUSH: %+v, %v", res, err)
	}
	res, err = remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 1000})
	if err != nil || res.Deleted != 100 {
		t.Fatalf("resume: %+v, %v", res, err)
	}
}

// TestSecondRunRefused: while one run holds a backup's journal, a second
// run on the same backup is refused before it writes.
func TestSecondRunRefused(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	seedJunk(t, c, 50)
	reg := loadReg(t)
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	backup := filepath.Join(t.TempDir(), "b.rdb")
	var second error
	res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 200,
		Hook: func(step string, n int) error {
			if step == "deleted" && second == nil {
				_, second = remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 200})
			}
			return nil
		}})
	if err != nil || res.Deleted != 50 {
		t.Fatalf("first run: %+v, %v", res, err)
	}
	var re *remedy.RefusedError
	if !errors.As(second, &re) || !strings.Contains(second.Error(), "locked") {
		t.Errorf("second run: %v, want a refusal", second)
	}
}

// TestFileErrorEndsTheRun: an error of the backup or journal file (here the
// backup path taken by someone else before the first key is backed up; a
// full disk gives the same kind of error) ends the run at once, nothing
// deleted. It is not a server stall: retrying it would loop, pausing,
// until the deadline, and rewrite a journal buffer a short write had
// already half written.
func TestFileErrorEndsTheRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	for i := range 2 {
		k := fmt.Sprintf("tmp:a:%d", i)
		c.Set(ctx, k, "v", 0)
		setIdle(t, ctx, c, k, 100)
	}
	reg := loadReg(t)
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	c.Set(ctx, "tmp:a:0", "w", 0) // touched: the first batch backs up nothing
	backup := filepath.Join(t.TempDir(), "b.rdb")
	res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 20, MaxPause: 10 * time.Second,
		Hook: func(step string, n int) error {
			if step == "read" && n == 1 {
				return os.WriteFile(backup, []byte("someone else's"), 0o600)
			}
			return nil
		}})
	if !errors.Is(err, fs.ErrExist) || ctx.Err() != nil {
		t.Fatalf("want the file error at once, got %v (context: %v): %+v", err, ctx.Err(), res)
	}
	if res.Paused != 0 || res.Deleted != 0 {
		t.Errorf("a file error was taken for a stall: %+v", res)
	}
	if n := c.Exists(ctx, "tmp:a:1").Val(); n != 1 {
		t.Errorf("tmp:a:1 deleted without its backup")
	}
}

// TestJournalCutBeforeItsFirstLine: a kill -9 between the journal's
// creation and its first line's fsync leaves an empty journal (or part of
// its first line) and no backup. Nothing can have been deleted then, and
// the next run starts afresh instead of refusing for ever.
func TestJournalCutBeforeItsFirstLine(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	for i := range 3 {
		k := fmt.Sprintf("tmp:a:%d", i)
		c.Set(ctx, k, "v", 0)
		setIdle(t, ctx, c, k, 100)
	}
	reg := loadReg(t)
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	for _, cut := range []string{"", `{"plan":"` + p.Digest[:10]} {
		backup := filepath.Join(t.TempDir(), "b.rdb")
		if err := os.WriteFile(backup+".journal", []byte(cut), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 1000})
		if err != nil {
			t.Fatalf("journal %q: %v", cut, err)
		}
		if res.Deleted != 3 || len(backupKeys(t, backup)) != 3 {
			t.Fatalf("journal %q: %+v", cut, res)
		}
		for i := range 3 {
			c.Set(ctx, fmt.Sprintf("tmp:a:%d", i), "v", 0)
			setIdle(t, ctx, c, fmt.Sprintf("tmp:a:%d", i), 100)
		}
	}
	// With a backup beside it, an empty journal is not a cut run's: refused.
	backup := filepath.Join(t.TempDir(), "b.rdb")
	os.WriteFile(backup, []byte("REDIS0011"), 0o600)
	os.WriteFile(backup+".journal", nil, 0o600)
	var re *remedy.RefusedError
	if _, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 1000}); !errors.As(err, &re) {
		t.Fatalf("an empty journal beside a backup: %v", err)
	}
}

// TestGrownKeyNotDumped: keys that grew past --max-key-bytes (by MEMORY
// USAGE, the plan's measure) since the plan are skipped as too-large
// before their DUMP, which for a big key would hold the server (the DUMP of
// a 65M-item list takes seconds); and one whose DUMP compresses under the
// limit is not deleted either. Under an LFU policy no idle time stops them
// earlier.
func TestGrownKeyNotDumped(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t, "--maxmemory-policy", "allkeys-lfu")
	c := srv.Client(t)
	c.RPush(ctx, "tmp:big", "a")
	c.RPush(ctx, "tmp:big2", "a")
	c.Set(ctx, "tmp:small", "s", 0)
	reg := loadReg(t)
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	if len(p.Keys) != 3 || p.Keys[0].IdleSec != -1 {
		t.Fatalf("plan: %+v", p.Keys)
	}
	for range 20 {
		random, same := make([]any, 1000), make([]any, 1000)
		for i := range random {
			b := make([]byte, 100)
			rand.Read(b)
			random[i] = b
			same[i] = strings.Repeat("x", 200)
		}
		c.RPush(ctx, "tmp:big", random...)
		c.RPush(ctx, "tmp:big2", same...)
	}
	c.ConfigResetStat(ctx)
	res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: filepath.Join(t.TempDir(), "b.rdb"), Rate: 1000, MaxKeyBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.SkipCount["too-large"] != 2 || res.Deleted != 1 || c.Exists(ctx, "tmp:big", "tmp:big2").Val() != 2 {
		t.Errorf("apply: %+v", res)
	}
	if n := redistest.CommandStats(t, c)["dump"]; n != 2 {
		t.Errorf("%d DUMPs, want 2 (tmp:small's, to back it up and to check it before the UNLINK): a grown key was dumped", n)
	}
}

// TestResumeOnAnotherServerRefused: a journal records the server it was
// applied to. Resuming it on another server (the same plan and --backup
// given for a second server) would skip every key the first run decided
// and report them deleted, though they are all still there.
func TestResumeOnAnotherServerRefused(t *testing.T) {
	ctx := context.Background()
	a, b := redistest.Standalone(t), redistest.Standalone(t)
	for _, s := range []*redistest.Server{a, b} {
		c := s.Client(t)
		for i := range 3 {
			k := fmt.Sprintf("tmp:a:%d", i)
			c.Set(ctx, k, "v", 0)
			setIdle(t, ctx, c, k, 100)
		}
	}
	reg := loadReg(t)
	connA := connect(t, ctx, a.URL(), scanner.Options{})
	p := build(t, ctx, connA, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	backup := filepath.Join(t.TempDir(), "b.rdb")
	if res, err := remedy.Apply(ctx, p, connA, remedy.ApplyOptions{Backup: backup, Rate: 1000}); err != nil || res.Deleted != 3 {
		t.Fatalf("on a: %+v, %v", res, err)
	}
	connB := connect(t, ctx, b.URL(), scanner.Options{})
	res, err := remedy.Apply(ctx, p, connB, remedy.ApplyOptions{Backup: backup, Rate: 1000})
	var re *remedy.RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), a.Addr) {
		t.Errorf("the journal of a resumed on b: %+v, %v", res, err)
	}
	if n := b.Client(t).DBSize(ctx).Val(); n != 3 {
		t.Errorf("b has %d keys", n)
	}
}
