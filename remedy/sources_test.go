package remedy_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/remedy"
	"github.com/keyreg/keyreg/scanner"
	"github.com/keyreg/keyreg/snapshot"
	"github.com/redis/go-redis/v9"
)

// TestPlanFromSnapshotAppliedLive plans from the server's own RDB file and
// applies live: the selection is the same as a live plan's, and keys
// changed since the snapshot are skipped by the live re-check (the file
// of a server under an LRU policy holds idle times; the type is checked
// whatever the policy).
func TestPlanFromSnapshotAppliedLive(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t, "--maxmemory-policy", "allkeys-lru")
	c := srv.Client(t)
	s := seed(t, ctx, c)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	reg := loadReg(t)
	src := snapshot.NewSource([]string{filepath.Join(srv.Dir(), "dump.rdb")}, snapshot.SourceOptions{})
	o := remedy.Options{Selection: remedy.Selection{Unregistered: true, Deprecated: true}}
	p, err := remedy.Build(ctx, src, reg, remedy.KindPrune, o, remedy.Server{Target: "rdb:dump.rdb", Mode: "snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	sameSet(t, "snapshot plan", keysOf(p, ""), append(append([]string{}, s.unregistered...), s.deprecated...))
	c.Set(ctx, "tmp:junk:2", 42, 0) // written since: its idle time is reset
	c.Set(ctx, "v1:feed:3", "s", 0) // a string now, planned as a zset
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: filepath.Join(t.TempDir(), "b.rdb"), Rate: 10000})
	if err != nil {
		t.Fatal(err)
	}
	total := len(s.unregistered) + len(s.deprecated)
	if res.Deleted+res.Gone+len(res.Skipped) != total || res.Deleted == 0 {
		t.Errorf("apply of a snapshot plan: %+v", res)
	}
	got := map[string]string{}
	for _, sk := range res.Skipped {
		got[sk.Key] = sk.Reason
	}
	if got[`"tmp:junk:2"`] != "touched" || got[`"v1:feed:3"`] != "changed" || len(got) != 2 {
		t.Errorf("skips %v, want tmp:junk:2 touched and v1:feed:3 changed", got)
	}
	if res.Deleted != total-2 {
		t.Errorf("deleted %d of %d", res.Deleted, total)
	}
}

// TestSentinel plans and applies through a Sentinel: the writes go to the
// master it names.
func TestSentinel(t *testing.T) {
	ctx := context.Background()
	ss := redistest.Sentinel(t)
	c := ss.Master.Client(t)
	s := seed(t, ctx, c)
	reg := loadReg(t)
	conn := connect(t, ctx, "redis://"+ss.SentinelAddr, scanner.Options{SentinelMaster: ss.MasterName})
	p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	sameSet(t, "sentinel plan", keysOf(p, ""), s.unregistered)
	res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: filepath.Join(t.TempDir(), "b.rdb"), Rate: 10000})
	if err != nil || res.Deleted != len(s.unregistered) {
		t.Fatalf("apply through the sentinel: %+v, %v", res, err)
	}
}

// TestChangedBetweenBackupAndDelete writes to keys after their backup and
// before their delete (from the apply's own hook): the delete script
// finds the DUMP's hash or the expiry changed and keeps them.
func TestChangedBetweenBackupAndDelete(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	s := seed(t, ctx, c)
	reg := loadReg(t)
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	done := false
	res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: filepath.Join(t.TempDir(), "b.rdb"), Rate: 10000,
		Hook: func(step string, _ int) error {
			if step == "backed" && !done {
				done = true
				c.Append(ctx, "tmp:junk:1", "x")                                    // same type, new bytes
				c.PExpire(ctx, "old:x:2", 12345678)                                 // another expiry
				c.SetArgs(ctx, "tmp:junk:4", "jjjjj", redis.SetArgs{KeepTTL: true}) // same value rewritten
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, sk := range res.Skipped {
		got[sk.Key] = sk.Reason
	}
	want := map[string]string{`"tmp:junk:1"`: "changed", `"old:x:2"`: "ttl-changed"}
	for k, why := range want {
		if got[k] != why {
			t.Errorf("%s: skipped as %q, want %q (all skips %v)", k, got[k], why, got)
		}
	}
	// A rewrite with the same bytes is the same value: it goes.
	if c.Exists(ctx, "tmp:junk:4").Val() != 0 || res.Deleted != len(s.unregistered)-2 {
		t.Errorf("deleted %d, want %d; tmp:junk:4 exists %d", res.Deleted, len(s.unregistered)-2, c.Exists(ctx, "tmp:junk:4").Val())
	}
}
