package remedy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/internal/testenv"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/remedy"
	"github.com/keyreg/keyreg/scanner"
	"github.com/redis/go-redis/v9"
)

func loadRegB() (*registry.Registry, error) { return registry.LoadFile("testdata/keys.yaml") }

func loadReg(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.LoadFile("testdata/keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// setIdle gives key an idle time of sec seconds with RESTORE … IDLETIME,
// keeping its value and expiry.
func setIdle(t testing.TB, ctx context.Context, c *redis.Client, key string, sec int) {
	t.Helper()
	d, err := c.Dump(ctx, key).Result()
	if err != nil {
		t.Fatalf("dump %s: %v", key, err)
	}
	abs, err := c.PExpireTime(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	ttl := int64(0)
	if abs > 0 {
		ttl = abs.Milliseconds()
	}
	if err := c.Do(ctx, "RESTORE", key, ttl, d, "ABSTTL", "REPLACE", "IDLETIME", sec).Err(); err != nil {
		t.Fatalf("restore %s: %v", key, err)
	}
}

// seeded is the keyspace of the tests, with the keys each reason selects.
type seeded struct {
	unregistered, junk, deprecated, stale, live []string
}

// seed writes: 20 unregistered keys in two prefix groups (tmp:junk:, and
// old:x: which is idle 2 days), 5 keys of the deprecated family, 6 session
// keys of which 4 are idle 2 hours (over max_idle 1h), and 5 cart keys
// without TTL.
func seed(t testing.TB, ctx context.Context, c *redis.Client) seeded {
	t.Helper()
	var s seeded
	for i := range 10 {
		k := fmt.Sprintf("tmp:junk:%d", i)
		c.Set(ctx, k, strings.Repeat("j", i+1), 0)
		setIdle(t, ctx, c, k, 86400)
		s.unregistered = append(s.unregistered, k)
		s.junk = append(s.junk, k)
	}
	for i := range 10 {
		k := fmt.Sprintf("old:x:%d", i)
		c.Set(ctx, k, "x", time.Duration(i+1)*time.Hour)
		setIdle(t, ctx, c, k, 2*86400)
		s.unregistered = append(s.unregistered, k)
	}
	for i := range 5 {
		k := fmt.Sprintf("v1:feed:%d", i)
		c.ZAdd(ctx, k, redis.Z{Score: float64(i), Member: "m"})
		setIdle(t, ctx, c, k, 86400)
		s.deprecated = append(s.deprecated, k)
	}
	for i := range 6 {
		k := fmt.Sprintf("v1:session:%d", i)
		c.Set(ctx, k, "s", 0)
		if i < 4 {
			setIdle(t, ctx, c, k, 7200)
			s.stale = append(s.stale, k)
		} else {
			s.live = append(s.live, k)
		}
	}
	for i := range 5 {
		k := fmt.Sprintf("v1:cart:%d", i)
		c.HSet(ctx, k, "n", i)
		s.live = append(s.live, k)
	}
	return s
}

func connect(t testing.TB, ctx context.Context, url string, o scanner.Options) *scanner.Conn {
	t.Helper()
	o.URL = url
	conn, err := scanner.Connect(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func build(t testing.TB, ctx context.Context, conn *scanner.Conn, reg *registry.Registry, kind string, o remedy.Options) *remedy.Plan {
	t.Helper()
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	p, err := remedy.Build(ctx, conn, reg, kind, o, remedy.Server{Target: conn.Target(), Mode: conn.Mode()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func keysOf(p *remedy.Plan, reason string) []string {
	var out []string
	for i := range p.Keys {
		if reason == "" || p.Keys[i].Reason == reason {
			out = append(out, p.Keys[i].KeyName())
		}
	}
	return out
}

func sameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := map[string]bool{}, map[string]bool{}
	for _, k := range got {
		g[k] = true
	}
	for _, k := range want {
		w[k] = true
	}
	for k := range w {
		if !g[k] {
			t.Errorf("%s: %q missing", what, k)
		}
	}
	for k := range g {
		if !w[k] {
			t.Errorf("%s: %q not expected", what, k)
		}
	}
}

// writeCommands sums the calls of the write commands in INFO commandstats.
func writeCommands(t testing.TB, c *redis.Client) map[string]int {
	out := map[string]int{}
	for cmd, n := range redistest.CommandStats(t, c) {
		switch cmd {
		case "set", "del", "unlink", "expire", "pexpire", "restore", "setrange", "eval", "evalsha", "script|load", "hset", "zadd", "flushall", "flushdb", "persist", "rename", "copy":
			out[cmd] = n
		}
	}
	return out
}

func TestPlanSelectsByReason(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	s := seed(t, ctx, c)
	reg := loadReg(t)
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	before := writeCommands(t, c)

	all := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true, Deprecated: true, Stale: true}})
	sameSet(t, "unregistered", keysOf(all, remedy.ReasonUnregistered), s.unregistered)
	sameSet(t, "deprecated", keysOf(all, remedy.ReasonDeprecated), s.deprecated)
	if got := keysOf(all, remedy.ReasonStale); len(got) != 0 {
		t.Errorf("stale keys of a live family selected without --include-live: %q", got)
	}
	group := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true, Group: "tmp:junk:"}})
	sameSet(t, "group tmp:junk:", keysOf(group, ""), s.junk)
	idle := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Stale: true}, IdleOver: 24 * time.Hour})
	sameSet(t, "unregistered idle over 1d", keysOf(idle, remedy.ReasonStale), s.unregistered[10:])
	// Only named, with --include-live, do a live family's stale keys go.
	named := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Stale: true, Families: []string{"session"}}})
	if len(named.Keys) != 0 {
		t.Errorf("--family session without --include-live selected %q", keysOf(named, ""))
	}
	live := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Stale: true, Families: []string{"session"}, IncludeLive: true}})
	sameSet(t, "session stale with --include-live", keysOf(live, remedy.ReasonStale), s.stale)
	exp := build(t, ctx, conn, reg, remedy.KindExpire, remedy.Options{})
	sameSet(t, "expire ttl-missing", keysOf(exp, remedy.ReasonTTLMissing), s.live[2:])
	for _, k := range exp.Keys {
		if k.TTLSet > 24*3600*1000 || k.TTLSet < 1000 {
			t.Errorf("%s: ttl_set_ms %d outside the policy", k.KeyName(), k.TTLSet)
		}
	}

	k := all.Keys[0]
	if k.Type == "" || k.Size <= 0 || k.IdleSec < 0 || k.Group == "" {
		t.Errorf("a planned key lacks facts: %+v", k)
	}
	if after := writeCommands(t, c); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("planning sent write commands: before %v, after %v", before, after)
	}

	// The plan survives its own reader, and an edit breaks its digest.
	var buf bytes.Buffer
	if err := all.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := remedy.ReadPlan(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("reading the plan back: %v", err)
	}
	if len(back.Keys) != len(all.Keys) || back.Digest != all.Digest {
		t.Errorf("read back %d keys, digest %s; wrote %d, %s", len(back.Keys), back.Digest, len(all.Keys), all.Digest)
	}
	edited := bytes.Replace(buf.Bytes(), []byte(`"tmp:junk:1"`), []byte(`"v1:session:4"`), 1)
	if _, err := remedy.ReadPlan(bytes.NewReader(edited)); err == nil || !strings.Contains(err.Error(), "digest") {
		t.Errorf("an edited plan: %v, want a digest error", err)
	}
}

func dumps(t testing.TB, ctx context.Context, c *redis.Client, keys []string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		d, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatalf("dump %s: %v", k, err)
		}
		out[k] = d
	}
	return out
}

func TestApplyRaceAndRestore(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	s := seed(t, ctx, c)
	reg := loadReg(t)
	conn := connect(t, ctx, srv.URL(), scanner.Options{})
	p := build(t, ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true, Deprecated: true}})

	// A concurrent writer between plan and apply: changes one key,
	// touches one idle key, adds a TTL to one.
	c.Set(ctx, "tmp:junk:3", "changed to a longer value", 0)
	c.Get(ctx, "old:x:4")
	c.Expire(ctx, "tmp:junk:5", time.Hour)
	c.ZAdd(ctx, "v1:feed:1", redis.Z{Score: 9, Member: "n"})
	want := map[string]string{"tmp:junk:3": "changed", "old:x:4": "touched", "tmp:junk:5": "ttl-changed", "v1:feed:1": "changed"}
	var untouched []string
	for _, k := range append(append([]string{}, s.unregistered...), s.deprecated...) {
		if want[k] == "" {
			untouched = append(untouched, k)
		}
	}
	orig := dumps(t, ctx, c, untouched)
	for _, k := range untouched {
		setIdle(t, ctx, c, k, 3*86400) // DUMP reset it (Redis before 7.2)
	}
	ttls := map[string]time.Time{}
	for _, k := range untouched {
		if e, _ := c.PExpireTime(ctx, k).Result(); e > 0 {
			ttls[k] = time.UnixMilli(e.Milliseconds())
		}
	}

	backup := filepath.Join(t.TempDir(), "backup.rdb")
	res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: backup, Rate: 10000})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if res.Deleted != len(untouched) {
		t.Errorf("deleted %d, want %d", res.Deleted, len(untouched))
	}
	got := map[string]string{}
	for _, sk := range res.Skipped {
		got[strings.Trim(sk.Key, `"`)] = sk.Reason
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("skipped %v, want %v", got, want)
	}
	for _, k := range untouched {
		if n := c.Exists(ctx, k).Val(); n != 0 {
			t.Errorf("%s still exists", k)
		}
	}
	for k := range want {
		if n := c.Exists(ctx, k).Val(); n != 1 {
			t.Errorf("skipped %s was deleted", k)
		}
	}
	for _, k := range s.live {
		if c.Exists(ctx, k).Val() != 1 {
			t.Errorf("live key %s deleted", k)
		}
	}

	// redis-check-rdb accepts the backup.
	check := testenv.LookPath(t, "apt-get install redis-tools", "redis-check-rdb")
	if out, err := exec.Command(check, backup).CombinedOutput(); err != nil || !bytes.Contains(out, []byte("RDB looks OK")) {
		t.Errorf("redis-check-rdb: %v\n%s", err, out)
	}
	if n, err := remedy.VerifyBackup(backup, remedy.Limits{}); err != nil || n != len(untouched) {
		t.Errorf("verify: %d keys, %v; want %d", n, err, len(untouched))
	}

	// Restore into a fresh server: byte-identical DUMPs, TTLs within a second.
	fresh := redistest.Standalone(t)
	fc := fresh.Client(t)
	fconn := connect(t, ctx, fresh.URL(), scanner.Options{})
	dry, err := remedy.Restore(ctx, backup, fconn, remedy.RestoreOptions{DryRun: true})
	if err != nil || dry.Restored != len(untouched) || fc.DBSize(ctx).Val() != 0 {
		t.Fatalf("dry run: %+v, %v, dbsize %d", dry, err, fc.DBSize(ctx).Val())
	}
	r, err := remedy.Restore(ctx, backup, fconn, remedy.RestoreOptions{})
	if err != nil || r.Restored != len(untouched) {
		t.Fatalf("restore: %+v, %v", r, err)
	}
	for k, d := range dumps(t, ctx, fc, untouched) {
		if d != orig[k] {
			t.Errorf("%s: restored DUMP differs", k)
		}
		e, _ := fc.PExpireTime(ctx, k).Result()
		if w, ok := ttls[k]; ok {
			if diff := time.UnixMilli(e.Milliseconds()).Sub(w); diff > time.Second || diff < -time.Second {
				t.Errorf("%s: expiry %v, want %v", k, e, w)
			}
		} else if e != -1 {
			t.Errorf("%s: expiry %v, want none", k, e)
		}
	}
	// No overwrite without --replace.
	fc.Set(ctx, "tmp:junk:0", "new", 0)
	again, err := remedy.Restore(ctx, backup, fconn, remedy.RestoreOptions{})
	if err != nil || again.Restored != 0 || again.Exists != len(untouched) || fc.Get(ctx, "tmp:junk:0").Val() != "new" {
		t.Errorf("restore over existing keys: %+v, %v, value %q", again, err, fc.Get(ctx, "tmp:junk:0").Val())
	}
	rep, err := remedy.Restore(ctx, backup, fconn, remedy.RestoreOptions{Replace: true})
	if err != nil || rep.Restored != len(untouched) || fc.Get(ctx, "tmp:junk:0").Val() != "j" {
		t.Errorf("restore --replace: %+v, %v", rep, err)
	}
	_ = os.Remove
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
