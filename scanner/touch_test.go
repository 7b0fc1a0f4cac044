package scanner_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

// touchKeys are the keys TestTouch reads: one of each type the sampler reads.
var touchKeys = map[string]string{"t:s": "string", "t:h": "hash", "t:l": "list", "t:z": "zset", "t:x": "stream", "t:set": "set"}

// writeTouchKeys writes touchKeys on c and, unless lfu, makes each key look
// idle for two hours (RESTORE ... IDLETIME).
func writeTouchKeys(t *testing.T, c *redis.Client, lfu bool) {
	t.Helper()
	ctx := context.Background()
	p := c.Pipeline()
	p.Set(ctx, "t:s", `{"a":1}`, 0)
	p.HSet(ctx, "t:h", "f", "v")
	p.RPush(ctx, "t:l", "a", "b")
	p.ZAdd(ctx, "t:z", redis.Z{Score: 1, Member: "m"})
	p.XAdd(ctx, &redis.XAddArgs{Stream: "t:x", Values: []any{"f", "v"}})
	p.SAdd(ctx, "t:set", "a")
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if lfu {
		return
	}
	for k := range touchKeys {
		dump, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Do(ctx, "RESTORE", k, 0, dump, "REPLACE", "IDLETIME", 7200).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// evictionState reads OBJECT IDLETIME (or OBJECT FREQ under LFU) of every
// touch key; neither command touches the key.
func evictionState(t *testing.T, c *redis.Client, lfu bool) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for k := range touchKeys {
		var v int64
		var err error
		if lfu {
			v, err = c.ObjectFreq(context.Background(), k).Result()
		} else {
			var d time.Duration
			d, err = c.ObjectIdleTime(context.Background(), k).Result()
			v = int64(d / time.Second)
		}
		if err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	return m
}

// auditRead scans with a length planned for every collection and samples
// every key, as an audit of families with max_len and schemas does.
func auditRead(t *testing.T, o scanner.Options) (*scanner.Conn, []scanner.KeyInfo, []error) {
	t.Helper()
	o.Plan = func(k string) scanner.Plan {
		if typ := touchKeys[k]; typ != "string" {
			return scanner.Plan{Len: typ}
		}
		return scanner.Plan{}
	}
	conn := connect(t, o)
	got, _, err := collect(t, conn)
	if err != nil {
		t.Fatal(err)
	}
	var keys []scanner.KeyInfo
	for _, k := range got {
		keys = append(keys, k)
	}
	if len(keys) != len(touchKeys) {
		t.Fatalf("scanned %d keys, want %d", len(keys), len(touchKeys))
	}
	_, errs := conn.SampleBatch(context.Background(), keys, 10, 1<<20)
	return conn, keys, errs
}

// TestTouch measures, with OBJECT IDLETIME and OBJECT FREQ on the primary
// before and after, that a scan with length probes and sampling leaves a
// redis 7.0 primary's eviction state alone by default, changes it under
// AllowTouch (and counts the keys), and leaves it alone when a replica is
// read.
func TestTouch(t *testing.T) {
	t.Parallel()
	for _, lfu := range []bool{false, true} {
		name := map[bool]string{false: "lru idle time", true: "lfu counter"}[lfu]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var args []string
			if lfu {
				args = []string{"--maxmemory-policy", "allkeys-lfu"}
			}
			s := redistest.Standalone(t, args...)
			admin := s.Client(t)
			writeTouchKeys(t, admin, lfu)
			before := evictionState(t, admin, lfu)

			// Default: nothing that touches is sent.
			conn, keys, errs := auditRead(t, scanner.Options{URL: s.URL()})
			for i, err := range errs {
				if !errors.Is(err, scanner.ErrTouch) {
					t.Errorf("%s: sample error %v, want ErrTouch", keys[i].Key, err)
				}
				if keys[i].HasLen {
					t.Errorf("%s: length read on a primary without NO-TOUCH", keys[i].Key)
				}
			}
			st := conn.Touch()
			if !st.Touches || st.Allowed || st.Touched != 0 || st.LenSkipped != int64(len(touchKeys)-1) || st.Version == "" {
				t.Errorf("touch state %+v", st)
			}
			after := evictionState(t, admin, lfu)
			for k, b := range before {
				if a := after[k]; a < b || (lfu && a != b) {
					t.Errorf("%s: %s %d before, %d after the default audit reads", k, name, b, a)
				}
			}
			t.Logf("default: %s before %v, after %v", name, before, after)

			// AllowTouch: read, touched, counted once per key.
			conn, keys, errs = auditRead(t, scanner.Options{URL: s.URL(), AllowTouch: true})
			for i, err := range errs {
				if err != nil {
					t.Errorf("%s: sample error %v", keys[i].Key, err)
				}
			}
			if st := conn.Touch(); !st.Touches || !st.Allowed || st.Touched != int64(len(touchKeys)) || st.LenSkipped != 0 {
				t.Errorf("touch state with AllowTouch %+v, want %d keys touched", st, len(touchKeys))
			}
			touched := evictionState(t, admin, lfu)
			for k, b := range before {
				if a := touched[k]; (lfu && a <= b) || (!lfu && a >= 10) {
					t.Errorf("%s: %s %d before, %d after reads with AllowTouch: not touched", k, name, b, a)
				}
			}
			t.Logf("allow touch: %s before %v, after %v", name, before, touched)
		})
	}
	t.Run("replica", func(t *testing.T) {
		t.Parallel()
		m := redistest.Standalone(t)
		redistest.Standalone(t, "--replicaof", "127.0.0.1", fmt.Sprint(m.Port))
		admin := m.Client(t)
		writeTouchKeys(t, admin, false)
		if n, err := admin.Do(context.Background(), "WAIT", 1, 10000).Int(); err != nil || n != 1 {
			t.Fatalf("WAIT: %d %v", n, err)
		}
		before := evictionState(t, admin, false)
		conn, keys, errs := auditRead(t, scanner.Options{URL: m.URL(), Replica: true})
		for i, err := range errs {
			if err != nil || !keys[i].HasLen && keys[i].Type != "string" {
				t.Errorf("%s: sample error %v, length read %v", keys[i].Key, err, keys[i].HasLen)
			}
		}
		if st := conn.Touch(); st.Touches {
			t.Errorf("reading a replica counts as touching the primary: %+v", st)
		}
		after := evictionState(t, admin, false)
		for k, b := range before {
			if a := after[k]; a < b {
				t.Errorf("%s: primary idle time %d before, %d after reading the replica", k, b, a)
			}
		}
	})
}

// TestTouchClusterReplicas samples a cluster through one replica per shard
// (Options.Replica): every value is read, and the masters' idle times are
// what they were, with no GET run on any master.
func TestTouchClusterReplicas(t *testing.T) {
	t.Parallel()
	cs := redistest.ClusterWithReplicas(t)
	cc := clusterClient(t, cs)
	ctx := context.Background()
	var names []string
	for i := range 60 {
		k := fmt.Sprint("ct:", i)
		names = append(names, k)
		if err := cc.Set(ctx, k, `{"a":1}`, 0).Err(); err != nil {
			t.Fatal(err)
		}
		dump, err := cc.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := cc.Do(ctx, "RESTORE", k, 0, dump, "REPLACE", "IDLETIME", 7200).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		if n, err := m.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n < 1 {
			return fmt.Errorf("WAIT on %s: %d, %v", m.Options().Addr, n, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	idle := func() map[string]time.Duration {
		m := map[string]time.Duration{}
		for _, k := range names {
			d, err := cc.ObjectIdleTime(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			m[k] = d
		}
		return m
	}
	before := idle()
	conn := connect(t, scanner.Options{URL: cs.URL(), Replica: true, Count: 10})
	if st := conn.Touch(); st.Touches {
		t.Fatalf("replica mode counts as touching the masters: %+v", st)
	}
	got, _, err := collect(t, conn)
	if err != nil {
		t.Fatal(err)
	}
	var keys []scanner.KeyInfo
	for _, k := range got {
		keys = append(keys, k)
	}
	ss, errs := conn.SampleBatch(ctx, keys, 10, 1<<20)
	for i, err := range errs {
		if err != nil || string(ss[i].String) != `{"a":1}` {
			t.Errorf("%s: %q, %v", keys[i].Key, ss[i].String, err)
		}
	}
	after := idle()
	for k, b := range before {
		if after[k] < b {
			t.Errorf("%s: master idle %v before, %v after sampling the replicas", k, b, after[k])
		}
	}
	for _, m := range cs.Masters {
		if n := redistest.CommandStats(t, m.Client(t))["get"]; n != 0 {
			t.Errorf("master %s ran GET %d times", m.Addr, n)
		}
	}
	if len(keys) != len(names) {
		t.Errorf("sampled %d of %d keys", len(keys), len(names))
	}
}

// TestReplicaIdleFromPrimaryCluster: in cluster replica mode, idle times
// are read on each shard's master, where an application's GET resets
// them, while the keys come from the replicas.
func TestReplicaIdleFromPrimaryCluster(t *testing.T) {
	t.Parallel()
	cs := redistest.ClusterWithReplicas(t)
	cc := clusterClient(t, cs)
	ctx := context.Background()
	for i := range 30 {
		k := fmt.Sprint("ri:", i)
		if err := cc.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		dump, err := cc.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := cc.Do(ctx, "RESTORE", k, 0, dump, "REPLACE", "IDLETIME", 7200).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range cs.Masters {
		if err := m.Client(t).Do(ctx, "WAIT", 1, 10000).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cc.Get(ctx, "ri:7").Err(); err != nil { // on its master
		t.Fatal(err)
	}
	conn := connect(t, scanner.Options{URL: cs.URL(), Replica: true, Idle: true})
	got, st, err := collect(t, conn)
	if err != nil || len(st.Refused) > 0 {
		t.Fatalf("scan: %v, refused %+v", err, st.Refused)
	}
	for _, k := range got {
		fresh := k.Key == "ri:7"
		if !k.HasIdle || (fresh && k.Idle > time.Minute) || (!fresh && k.Idle < time.Hour) {
			t.Errorf("%s: idle %v (has %v), fresh on the master: %v", k.Key, k.Idle, k.HasIdle, fresh)
		}
	}
	if len(got) != 30 {
		t.Errorf("%d keys", len(got))
	}
}
