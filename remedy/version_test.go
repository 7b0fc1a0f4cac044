package remedy_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/remedy"
	"github.com/keyreg/keyreg/scanner"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// fakeTarget is a remedy.Target of one fake server.
type fakeTarget struct{ cl *redis.Client }

func (f fakeTarget) WriteClient(string, int) (*redis.Client, error) { return f.cl, nil }
func (f fakeTarget) WriteNodes(int) ([]*redis.Client, error)        { return []*redis.Client{f.cl}, nil }
func (f fakeTarget) Target() string                                 { return "fake" }

// oldServer is a fake Redis primary of a given redis_version that runs
// apply's scripts as a server would on the one key of the test: the check
// script answers "ok" (not a shared integer), the read script "ok" with
// dump and the expiry abs, the delete script "deleted". It records every command, and the ARGV of each delete.
type oldServer struct {
	mu      sync.Mutex
	cmds    []string
	deletes [][]string
}

func startOld(t *testing.T, version, dump string, abs int64) (*oldServer, remedy.Target) {
	t.Helper()
	s := &oldServer{}
	scripts := map[string]string{} // sha -> "check", "read", "delete" or "expire"
	fake := redistest.StartFake(t, func(args []string) (string, bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		cmd := strings.ToUpper(args[0])
		s.cmds = append(s.cmds, cmd)
		switch {
		case cmd == "INFO":
			return redistest.Bulk("# Server\r\nredis_version:" + version + "\r\n# Replication\r\nrole:master\r\n"), true
		case cmd == "SCRIPT" && len(args) == 3:
			sum := sha1.Sum([]byte(args[2]))
			sha := hex.EncodeToString(sum[:])
			switch {
			case strings.Contains(args[2], "REFCOUNT") && !strings.Contains(args[2], "DUMP"):
				scripts[sha] = "check"
			case strings.Contains(args[2], "DUMP"):
				scripts[sha] = map[bool]string{true: "delete", false: "read"}[strings.Contains(args[2], "UNLINK")]
			default:
				scripts[sha] = "expire"
			}
			return redistest.Bulk(sha), true
		case cmd == "SETRANGE":
			return ":0\r\n", true
		case cmd == "EVALSHA":
			switch scripts[args[1]] {
			case "check":
				return "*2\r\n" + redistest.Bulk("ok") + ":0\r\n", true
			case "read":
				return "*4\r\n" + redistest.Bulk("ok") + ":100\r\n:" + strconv.FormatInt(abs, 10) + "\r\n" + redistest.Bulk(dump), true
			case "delete":
				s.deletes = append(s.deletes, args[4:])
				return redistest.Bulk("deleted"), true
			}
			return "-NOSCRIPT fake\r\n", true
		}
		return "", false
	})
	cl := redis.NewClient(&redis.Options{Addr: fake.Addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
	t.Cleanup(func() { cl.Close() })
	return s, fakeTarget{cl}
}

func (s *oldServer) sent(cmd string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.cmds {
		if c == cmd {
			return true
		}
	}
	return false
}

// TestOldServerVersions: what apply and restore do on servers before Redis
// 7.0, decided from INFO server's redis_version. Only Redis 7.0.15 is
// installed here, so the version is a fake server's (the scripts' replies
// are what a server sends for the test's key, whose DUMP comes from the
// real server): from 5.0 the run goes ahead, and the delete script is
// given its tolerance of 5 ms, which it applies where PEXPIRETIME fails (as
// before 7.0; the real server takes that path in
// TestExpiryWithoutPEXPIRETIME) and 0 ms made it skip keys with a TTL as
// ttl-changed; before 5.0, prune and restore are refused (exit 2) before
// anything is written.
func TestOldServerVersions(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	c.Set(ctx, "tmp:old", "v", time.Hour)
	dump := c.Dump(ctx, "tmp:old").Val()
	abs := c.PExpireTime(ctx, "tmp:old").Val().Milliseconds()
	plan := build(t, ctx, connect(t, ctx, srv.URL(), scanner.Options{}), loadReg(t), remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	if len(plan.Keys) != 1 {
		t.Fatalf("plan of %d keys", len(plan.Keys))
	}
	dir := t.TempDir()
	var backup string
	for _, tc := range []struct{ version, tolerance string }{{"6.2.14", "5"}, {"5.0.14", "5"}, {"7.0.0", "5"}} {
		s, target := startOld(t, tc.version, dump, abs)
		backup = filepath.Join(dir, tc.version+".rdb")
		res, err := remedy.Apply(ctx, plan, target, remedy.ApplyOptions{Backup: backup, Rate: 10000})
		if err != nil || res.Deleted != 1 {
			t.Fatalf("Redis %s: %+v, %v", tc.version, res, err)
		}
		if len(s.deletes) != 1 || len(s.deletes[0]) != 4 || s.deletes[0][3] != tc.tolerance {
			t.Errorf("Redis %s: delete script ARGV %q, want the tolerance %s ms last", tc.version, s.deletes, tc.tolerance)
		}
	}
	s, target := startOld(t, "4.0.14", dump, abs)
	_, err := remedy.Apply(ctx, plan, target, remedy.ApplyOptions{Backup: filepath.Join(dir, "4.rdb"), Rate: 10000})
	var re *remedy.RefusedError
	if !errorsAs(err, &re) || !strings.Contains(err.Error(), "Redis 5.0 or later") {
		t.Errorf("prune on Redis 4.0: %v, want a refusal naming 5.0", err)
	}
	if _, err := remedy.Restore(ctx, backup, target, remedy.RestoreOptions{}); !errorsAs(err, &re) || !strings.Contains(err.Error(), "Redis 5.0 or later") {
		t.Errorf("restore on Redis 4.0: %v, want a refusal naming 5.0", err)
	}
	for _, cmd := range []string{"SCRIPT", "EVALSHA", "SETRANGE", "RESTORE", "EXISTS"} {
		if s.sent(cmd) {
			t.Errorf("Redis 4.0: %s sent before the refusal", cmd)
		}
	}
}

// TestExpiryWithoutPEXPIRETIME runs apply on the real server as a user
// that may not call PEXPIRETIME, so that both scripts take the path of
// servers before 7.0 (TIME plus PTTL): every key with a TTL is deleted,
// none skipped as ttl-changed, and a key whose TTL is moved by a second
// between its backup and its delete is still caught.
func TestExpiryWithoutPEXPIRETIME(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	for i := range 300 {
		c.Set(ctx, "tmp:ttl:"+strconv.Itoa(i), "v", time.Duration(i+1)*time.Hour)
	}
	redistest.ACLUser(t, srv, "noexpiretime", "pw", append(strings.Fields(remedy.ACL), "-pexpiretime")...)
	plan := build(t, ctx, connect(t, ctx, srv.URL(), scanner.Options{}), loadReg(t), remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}})
	conn := connect(t, ctx, "redis://noexpiretime:pw@"+srv.Addr, scanner.Options{})
	moved := plan.Keys[7].KeyName()
	res, err := remedy.Apply(ctx, plan, conn, remedy.ApplyOptions{Backup: filepath.Join(t.TempDir(), "b.rdb"), Rate: 100000,
		Hook: func(step string, _ int) error {
			if step == "backed" {
				return c.PExpire(ctx, moved, c.PTTL(ctx, moved).Val()+time.Second).Err()
			}
			return nil
		}})
	if err != nil || res.Deleted != 299 || res.SkipCount["ttl-changed"] != 1 || len(res.Skipped) != 1 || res.Skipped[0].Key != strconv.Quote(moved) {
		t.Fatalf("apply without PEXPIRETIME: %+v, %v", res, err)
	}
	if log := fmt.Sprint(c.Do(ctx, "ACL", "LOG").Val()); !strings.Contains(log, "pexpiretime") {
		t.Error("PEXPIRETIME was not refused: the scripts did not take the path of servers before 7.0")
	}
}
