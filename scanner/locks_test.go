package scanner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
	"github.com/keyreg/keyreg/source"
)

// writeLockKeys writes locks, fences and streams with consumer groups, and
// makes every key look idle for two hours (RESTORE ... IDLETIME keeps
// the groups: DUMP carries them).
func writeLockKeys(t *testing.T, c *redis.Client) []string {
	t.Helper()
	ctx := context.Background()
	do := func(args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	do("SET", "l:{1}", "tok", "PX", 60000)
	do("INCR", "f:{1}")
	do("SET", "l:{2}", "tok", "PX", 60000) // no fence
	do("SET", "f:{3}", "abc")
	do("SET", "f:{4}", "12345678901")
	do("XADD", "s:1", "1-1", "a", "1")
	do("XADD", "s:1", "1-2", "a", "2")
	do("XADD", "s:1", "1-3", "a", "3")
	do("XGROUP", "CREATE", "s:1", "delivery", "0")
	do("XGROUP", "CREATE", "s:1", "other", "$")
	do("XREADGROUP", "GROUP", "delivery", strings.Repeat("w", 100), "COUNT", "2", "STREAMS", "s:1", ">")
	do("XREADGROUP", "GROUP", "delivery", "idle-no-pending", "COUNT", "1", "STREAMS", "s:1", "0")
	do("XADD", "s:2", "1-1", "a", "1")
	keys := []string{"l:{1}", "f:{1}", "l:{2}", "f:{3}", "f:{4}", "s:1", "s:2"}
	for _, k := range keys {
		dump, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		pttl := c.PTTL(ctx, k).Val()
		if pttl < 0 {
			pttl = 0
		}
		do("RESTORE", k, int64(pttl/time.Millisecond), dump, "REPLACE", "IDLETIME", 7200)
	}
	return keys
}

// lockPlan plans the facts of writeLockKeys' keys as audit.Plan does for
// a registry of locks l:{{id}} fenced by f:{{id}}, fences, and streams
// with groups delivery (consumers read) and audit.
func lockPlan(k string) scanner.Plan {
	switch {
	case strings.HasPrefix(k, "l:"):
		return scanner.Plan{Fence: "f:" + k[2:]}
	case strings.HasPrefix(k, "f:"):
		return scanner.Plan{Encoding: true}
	case strings.HasPrefix(k, "s:"):
		return scanner.Plan{Groups: []source.GroupQuery{{Name: "audit"}, {Name: "delivery", Consumers: true}}}
	}
	return scanner.Plan{}
}

// TestProbeLocksAndGroups reads fences, fence encodings and consumer
// groups from a real redis 7.0, and checks with OBJECT IDLETIME that EXISTS
// and OBJECT ENCODING leave the keys' LRU state alone (the groups are not
// read on a primary without CLIENT NO-TOUCH) and that XINFO, under
// AllowTouch, does read them.
func TestProbeLocksAndGroups(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	keys := writeLockKeys(t, admin)
	idle := func() map[string]time.Duration {
		m := map[string]time.Duration{}
		for _, k := range keys {
			m[k] = admin.ObjectIdleTime(context.Background(), k).Val()
		}
		return m
	}

	conn := connect(t, scanner.Options{URL: s.URL(), Plan: lockPlan})
	got, st, err := collect(t, conn)
	if err != nil || len(st.Errors) != 0 {
		t.Fatalf("scan: %v, notes %q", err, st.Errors)
	}
	key := func(k string) scanner.KeyInfo { return got["0/"+`"`+k+`"`] }
	if k := key("l:{1}"); !k.HasFence || !k.FenceExists || k.Fence != "f:{1}" {
		t.Errorf("l:{1}: fence %q exists %v (read %v), want f:{1} existing", k.Fence, k.FenceExists, k.HasFence)
	}
	if k := key("l:{2}"); !k.HasFence || k.FenceExists {
		t.Errorf("l:{2}: fence exists %v (read %v), want missing", k.FenceExists, k.HasFence)
	}
	for k, want := range map[string]string{"f:{1}": "int", "f:{3}": "embstr", "f:{4}": "int", "l:{1}": ""} {
		if got := key(k).Encoding; got != want {
			t.Errorf("%s: encoding %q, want %q", k, got, want)
		}
	}
	if k := key("s:1"); k.HasGroups || k.Groups != nil {
		t.Errorf("s:1: groups read on a primary without NO-TOUCH: %+v", k.Groups)
	}
	if ts := conn.Touch(); ts.GroupsSkipped != 2 || ts.LenSkipped != 0 {
		t.Errorf("touch state %+v, want the 2 streams' groups skipped", ts)
	}
	for k, d := range idle() {
		if d < 7200*time.Second {
			t.Errorf("%s: idle %v after the scan: EXISTS, OBJECT ENCODING or XINFO touched it", k, d)
		}
	}

	conn = connect(t, scanner.Options{URL: s.URL(), Plan: lockPlan, AllowTouch: true})
	got, st, err = collect(t, conn)
	if err != nil || len(st.Errors) != 0 {
		t.Fatalf("scan with AllowTouch: %v, notes %q", err, st.Errors)
	}
	s1 := key("s:1")
	if !s1.HasGroups || len(s1.Groups) != 1 {
		t.Fatalf("s:1: groups %+v (read %v), want delivery only (other is not planned, audit does not exist)", s1.Groups, s1.HasGroups)
	}
	g := s1.Groups[0]
	if g.Name != "delivery" || g.Consumers != 2 || g.Pending != 2 || !g.HasLag || g.Lag != 1 {
		t.Errorf("delivery group %+v, want 2 consumers, 2 pending, lag 1", g)
	}
	if !g.HasIdle || g.IdleConsumer != strings.Repeat("w", source.MaxConsumerName) || g.IdlePending < 0 {
		t.Errorf("delivery: idlest consumer with pending entries %q (idle %v, read %v), want the w… one clipped to %d bytes", g.IdleConsumer, g.IdlePending, g.HasIdle, source.MaxConsumerName)
	}
	if s2 := key("s:2"); !s2.HasGroups || len(s2.Groups) != 0 {
		t.Errorf("s:2: groups %+v (read %v), want read and none", s2.Groups, s2.HasGroups)
	}
	if ts := conn.Touch(); ts.Touched != 2 || ts.GroupsSkipped != 0 {
		t.Errorf("touch state with AllowTouch %+v, want the 2 streams touched", ts)
	}
	if d := idle()["s:1"]; d >= 7200*time.Second {
		t.Errorf("s:1: idle %v after XINFO with AllowTouch: not read", d)
	}
}
