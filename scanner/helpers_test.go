package scanner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

// want is what the seed wrote for one key.
type want struct {
	typ string
	ttl time.Duration // 0 = no expiry
}

// pipeliner is implemented by *redis.Client and *redis.ClusterClient.
type pipeliner interface {
	Pipeline() redis.Pipeliner
}

// binaryNames are key names that break naive text handling.
var binaryNames = []string{"\x00nul", "\xff\xfebin", "new\nline", "sp ace", "tab\tx", "{tag}a", "glob*?[]\\", ""}

// seed writes n keys of every type under prefix with pipelined writes and
// returns what it wrote. Keys cycle through string (with and without TTL),
// hash, set, zset, list and stream; the binary names are added too.
func seed(t testing.TB, c pipeliner, prefix string, n int) map[string]want {
	t.Helper()
	ctx := context.Background()
	w := map[string]want{}
	pipe := c.Pipeline()
	for i := range n {
		k := fmt.Sprintf("%s%d", prefix, i)
		switch i % 7 {
		case 0:
			pipe.Set(ctx, k, "v", 0)
			w[k] = want{typ: "string"}
		case 1:
			pipe.Set(ctx, k, `{"a":1}`, time.Hour)
			w[k] = want{typ: "string", ttl: time.Hour}
		case 2:
			pipe.HSet(ctx, k, "f", "v", "g", "w")
			w[k] = want{typ: "hash"}
		case 3:
			pipe.SAdd(ctx, k, "a", "b")
			pipe.Expire(ctx, k, 10*time.Minute)
			w[k] = want{typ: "set", ttl: 10 * time.Minute}
		case 4:
			pipe.ZAdd(ctx, k, redis.Z{Score: 1, Member: "m"})
			w[k] = want{typ: "zset"}
		case 5:
			pipe.RPush(ctx, k, "x", "y")
			w[k] = want{typ: "list"}
		case 6:
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []any{"f", "v"}})
			w[k] = want{typ: "stream"}
		}
	}
	for _, b := range binaryNames {
		k := prefix + b
		pipe.Set(ctx, k, "bin", 0)
		w[k] = want{typ: "string"}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("seeding: %v", err)
	}
	return w
}

// collect runs Scan and returns every delivered key; it fails the test when a
// key is delivered twice or a batch is empty.
func collect(t testing.TB, c *scanner.Conn) (map[string]scanner.KeyInfo, scanner.Stats, error) {
	t.Helper()
	got := map[string]scanner.KeyInfo{}
	st, err := c.Scan(context.Background(), func(b []scanner.KeyInfo) error {
		if len(b) == 0 {
			t.Error("fn called with an empty batch")
		}
		for _, k := range b {
			id := fmt.Sprintf("%d/%q", k.DB, k.Key)
			if _, dup := got[id]; dup {
				t.Errorf("key %s delivered twice", id)
			}
			got[id] = k
		}
		return nil
	})
	return got, st, err
}

// checkKeys asserts that got holds exactly the keys of w (all in db) with the
// right type and TTL.
func checkKeys(t testing.TB, got map[string]scanner.KeyInfo, db int, w map[string]want) {
	t.Helper()
	seen := 0
	for k, wk := range w {
		id := fmt.Sprintf("%d/%q", db, k)
		ki, ok := got[id]
		if !ok {
			t.Errorf("key %q (db %d) not seen", k, db)
			continue
		}
		seen++
		if ki.Type != wk.typ {
			t.Errorf("key %q: type %q, want %q", k, ki.Type, wk.typ)
		}
		if wk.ttl == 0 && ki.PTTL != scanner.NoExpiry {
			t.Errorf("key %q: PTTL %v, want NoExpiry", k, ki.PTTL)
		}
		if wk.ttl > 0 && (ki.PTTL <= 0 || ki.PTTL > wk.ttl) {
			t.Errorf("key %q: PTTL %v, want in (0, %v]", k, ki.PTTL, wk.ttl)
		}
		if ki.Vanished {
			t.Errorf("key %q delivered with Vanished set", k)
		}
	}
	if seen != len(w) {
		t.Errorf("saw %d of %d seeded keys in db %d", seen, len(w), db)
	}
}

func connect(t testing.TB, o scanner.Options) *scanner.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := scanner.Connect(ctx, o)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func clusterClient(t testing.TB, cs *redistest.ClusterSrv) *redis.ClusterClient {
	t.Helper()
	c := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                    cs.Addrs,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// errorStats returns the errorstat lines of INFO errorstats and the
// rejected_calls/failed_calls of every command.
func errorStats(t testing.TB, c *redis.Client) []string {
	t.Helper()
	ctx := context.Background()
	info, err := c.Info(ctx, "errorstats").Result()
	if err != nil {
		t.Fatalf("info errorstats: %v", err)
	}
	var out []string
	for line := range strings.SplitSeq(info, "\n") {
		if strings.HasPrefix(line, "errorstat_") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	cs, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatalf("info commandstats: %v", err)
	}
	for line := range strings.SplitSeq(cs, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "cmdstat_") && (!strings.Contains(line, "rejected_calls=0") || !strings.Contains(line, "failed_calls=0")) {
			out = append(out, line)
		}
	}
	return out
}
