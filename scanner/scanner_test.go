package scanner_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

func TestStandaloneAllDBs(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	w0 := seed(t, s.Client(t), "a:", 300)
	var perDB = map[int]map[string]want{0: w0}
	for _, db := range []int{3, 7} {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db, DisableIdentity: true})
		t.Cleanup(func() { _ = c.Close() })
		perDB[db] = seed(t, c, fmt.Sprintf("db%d:", db), 40+db)
	}
	conn := connect(t, scanner.Options{URL: s.URL(), DB: scanner.AllDBs, Count: 10, Idle: true, Memory: true})
	if conn.Mode() != "standalone" {
		t.Errorf("mode %q, want standalone", conn.Mode())
	}
	got, st, err := collect(t, conn)
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	total := 0
	for db, w := range perDB {
		checkKeys(t, got, db, w)
		total += len(w)
	}
	if len(got) != total || st.Keys != int64(total) {
		t.Errorf("got %d keys (stats %d), want %d", len(got), st.Keys, total)
	}
	if st.Partial || st.Nodes != 1 || st.Vanished != 0 || len(st.Errors) != 0 {
		t.Errorf("stats %+v", st)
	}
	if st.Scanned != st.Keys+st.Duplicates {
		t.Errorf("scanned %d != keys %d + duplicates %d", st.Scanned, st.Keys, st.Duplicates)
	}
	for id, k := range got {
		if !k.HasIdle || !k.HasMemory || k.Memory <= 0 || k.Node != s.Addr {
			t.Errorf("%s: idle %v/%v memory %v/%d node %q", id, k.HasIdle, k.Idle, k.HasMemory, k.Memory, k.Node)
			break
		}
	}

	// A single database only sees its own keys.
	one := connect(t, scanner.Options{URL: s.URL() + "/3", Count: 10})
	got, st, err = collect(t, one)
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, got, 3, perDB[3])
	if len(got) != len(perDB[3]) || st.Keys != int64(len(perDB[3])) {
		t.Errorf("db 3: got %d keys, want %d", len(got), len(perDB[3]))
	}
}

func TestMatchPrefixOnServer(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	keys := []string{"a*b:1", "a*bc", "axb:1", "a?b", "azb", "a[b]:x", "ab]:x", "a\\b", "a\\\\b", "a", "b*", "\x00*", "\x00x"}
	for _, k := range keys {
		if err := admin.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, prefix := range []string{"a*b", "a?", "a[b]", "a\\", "a\\\\", "a", "\x00*", "zzz", "ab]"} {
		conn := connect(t, scanner.Options{URL: s.URL(), Match: scanner.PrefixGlob(prefix), Count: 3})
		got, _, err := collect(t, conn)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			_, seen := got[fmt.Sprintf("0/%q", k)]
			if wantSeen := strings.HasPrefix(k, prefix); seen != wantSeen {
				t.Errorf("prefix %q, key %q: seen %v, want %v", prefix, k, seen, wantSeen)
			}
		}
	}
}

// TestMatchGlobOnServer: Options.Match is a Redis glob, passed to SCAN
// MATCH as given (or, for a literal prefix with a trailing *, in its
// canonical form), so the keys seen are exactly those the glob matches.
func TestMatchGlobOnServer(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	keys := []string{"v1:a", "v1:b:x", "v2:a", "v1", "v10:a", "x:v1:a", "v1:*", "v1*", "\\v1:a"}
	for _, k := range keys {
		if err := admin.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for glob, want := range map[string][]string{
		"v1:*":    {"v1:a", "v1:b:x", "v1:*"},
		"v1*":     {"v1:a", "v1:b:x", "v1", "v10:a", "v1:*", "v1*"},
		"v[12]:a": {"v1:a", "v2:a"},
		"v?:*":    {"v1:a", "v1:b:x", "v2:a", "v1:*"},
		"*:a":     {"v1:a", "v2:a", "v10:a", "x:v1:a", "\\v1:a"},
		"v1:\\*":  {"v1:*"},
		"v1\\*":   {"v1*"},
		"v1":      {"v1"},
		"v1:":     nil,
		"*":       keys,
		"":        keys,
	} {
		conn := connect(t, scanner.Options{URL: s.URL(), Match: glob, Count: 2})
		got, _, err := collect(t, conn)
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, k := range keys {
			if _, ok := got[fmt.Sprintf("0/%q", k)]; ok {
				seen = append(seen, k)
			}
		}
		wantSorted, seenSorted := slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(seen))
		if !slices.Equal(seenSorted, wantSorted) {
			t.Errorf("glob %q: saw %q, want %q", glob, seenSorted, wantSorted)
		}
	}
}

func TestClusterEveryKeyOnce(t *testing.T) {
	t.Parallel()
	cs := redistest.Cluster(t)
	cc := clusterClient(t, cs)
	w := seed(t, cc, "c:", 600)
	// The scan uses an ACL user on every node, so cluster|nodes and the
	// minimal rules are exercised in cluster mode too.
	for _, n := range cs.Nodes {
		redistest.ACLUser(t, n, "keyreg", "pw", strings.Fields(scanner.MinimalACL)...)
	}
	url := strings.Replace(cs.URL(), "redis://", "redis://keyreg:pw@", 1)
	conn := connect(t, scanner.Options{URL: url, Count: 10}) // cluster auto-detected
	if conn.Mode() != "cluster" {
		t.Fatalf("mode %q, want cluster", conn.Mode())
	}
	got, st, err := collect(t, conn)
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, got, 0, w)
	if len(got) != len(w) || st.Nodes != 3 || st.Partial {
		t.Errorf("got %d keys of %d, stats %+v", len(got), len(w), st)
	}
	nodes := map[string]int{}
	for _, k := range got {
		nodes[k.Node]++
	}
	for _, m := range cs.Masters {
		if nodes[m.Addr] == 0 {
			t.Errorf("no keys from master %s (%v)", m.Addr, nodes)
		}
	}
	// Every key came from the master that owns its slot.
	ctx := context.Background()
	for _, k := range got {
		m, err := cc.MasterForKey(ctx, k.Key)
		if err != nil {
			t.Fatal(err)
		}
		if m.Options().Addr != k.Node {
			t.Errorf("key %q from %s, owner is %s", k.Key, k.Node, m.Options().Addr)
			break
		}
	}
	// Probe routes by slot.
	for _, k := range []string{"c:1", "c:2", "c:{tag}a"} {
		ki, err := conn.Probe(ctx, k)
		if err != nil {
			t.Fatalf("probe %q: %v", k, err)
		}
		if ki.Vanished || ki.Type != w[k].typ {
			t.Errorf("probe %q: %+v, want type %q", k, ki, w[k].typ)
		}
	}

	// --parallel 1: the same keys, one shard after another, so the batches
	// of each master arrive as one run.
	seq := connect(t, scanner.Options{URL: url, Count: 10, Parallel: 1})
	var order []string
	n := 0
	if _, err := seq.Scan(ctx, func(b []scanner.KeyInfo) error {
		n += len(b)
		for _, k := range b {
			if len(order) == 0 || order[len(order)-1] != k.Node {
				order = append(order, k.Node)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != len(w) || len(order) != 3 {
		t.Errorf("parallel 1: %d keys of %d, node runs %v (want each of the 3 masters once)", n, len(w), order)
	}
}

func TestClusterReplicas(t *testing.T) {
	t.Parallel()
	cs := redistest.ClusterWithReplicas(t)
	cc := clusterClient(t, cs)
	w := seed(t, cc, "r:", 400)
	ctx := context.Background()
	// Wait until every replica has the writes.
	if err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n, err := m.Do(ctx, "WAIT", 1, 5000).Int()
		if err == nil && n < 1 {
			err = fmt.Errorf("WAIT on %s: %d replicas acknowledged", m.Options().Addr, n)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, scanner.Options{URL: cs.URL(), Cluster: true, Replica: true, Count: 10, Idle: true})
	got, st, err := collect(t, conn)
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, got, 0, w)
	if len(got) != len(w) || st.Nodes != 3 {
		t.Errorf("got %d of %d keys, stats %+v", len(got), len(w), st)
	}
	replicas := map[string]bool{}
	for _, r := range cs.Replicas {
		replicas[r.Addr] = true
	}
	for _, k := range got {
		if !replicas[k.Node] {
			t.Fatalf("key %q read from %s, which is not a replica", k.Key, k.Node)
		}
	}
	// The masters served no SCAN at all.
	for _, m := range cs.Masters {
		if n := redistest.CommandStats(t, m.Client(t))["scan"]; n != 0 {
			t.Errorf("master %s ran SCAN %d times in replica mode", m.Addr, n)
		}
	}
}

func TestStandaloneReplica(t *testing.T) {
	t.Parallel()
	m := redistest.Standalone(t)
	r := redistest.Standalone(t, "--replicaof", "127.0.0.1", fmt.Sprint(m.Port))
	w := seed(t, m.Client(t), "s:", 50)
	ctx := context.Background()
	if n, err := m.Client(t).Do(ctx, "WAIT", 1, 10000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}
	conn := connect(t, scanner.Options{URL: m.URL(), Replica: true})
	got, _, err := collect(t, conn)
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, got, 0, w)
	for _, k := range got {
		if k.Node != r.Addr {
			t.Fatalf("key %q read from %s, want replica %s", k.Key, k.Node, r.Addr)
		}
	}
	if _, err := scanner.Connect(ctx, scanner.Options{URL: r.URL() + "x", Replica: true}); err == nil {
		t.Error("bad port accepted")
	}
	// A master without replicas is an error in replica mode.
	lone := redistest.Standalone(t)
	if _, err := scanner.Connect(ctx, scanner.Options{URL: lone.URL(), Replica: true}); err == nil || !strings.Contains(err.Error(), "no online replica") {
		t.Errorf("replica mode without replica: %v", err)
	}
}

func TestSentinel(t *testing.T) {
	t.Parallel()
	ss := redistest.Sentinel(t)
	w := seed(t, ss.Master.Client(t), "sn:", 80)
	conn := connect(t, scanner.Options{URL: "redis://" + ss.SentinelAddr, SentinelMaster: ss.MasterName, Count: 10})
	if conn.Mode() != "sentinel" {
		t.Errorf("mode %q", conn.Mode())
	}
	got, st, err := collect(t, conn)
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, got, 0, w)
	if len(got) != len(w) || st.Keys != int64(len(w)) {
		t.Errorf("got %d of %d", len(got), len(w))
	}
	ki, err := conn.Probe(context.Background(), "sn:1")
	if err != nil || ki.Type != "string" || ki.PTTL <= 0 {
		t.Errorf("probe: %+v %v", ki, err)
	}
	// An unknown master name fails.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := scanner.Connect(ctx, scanner.Options{URL: "redis://" + ss.SentinelAddr, SentinelMaster: "nope", Timeout: time.Second}); err == nil {
		t.Error("unknown sentinel master accepted")
	}
}

func TestMinimalACLAndNoWrites(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	w0 := seed(t, admin, "acl:", 100)
	c2 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 2, DisableIdentity: true})
	defer c2.Close()
	w2 := seed(t, c2, "two:", 30)
	redistest.ACLUser(t, s, "keyreg", "s3cret", strings.Fields(scanner.MinimalACL)...)
	if err := admin.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "ACL", "LOG", "RESET").Err(); err != nil {
		t.Fatal(err)
	}
	url := "redis://keyreg:s3cret@" + s.Addr
	conn := connect(t, scanner.Options{URL: url, DB: scanner.AllDBs, Count: 7, Idle: true, Memory: true})
	got, st, err := collect(t, conn)
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, got, 0, w0)
	checkKeys(t, got, 2, w2)
	if len(st.Errors) != 0 {
		t.Errorf("notes: %v", st.Errors)
	}
	if _, err := conn.Probe(ctx, "acl:3"); err != nil {
		t.Errorf("probe: %v", err)
	}
	if _, err := conn.Probe(ctx, "missing"); err != nil {
		t.Errorf("probe missing: %v", err)
	}

	// Nothing was denied by ACL, nothing failed or was rejected.
	log, err := admin.Do(ctx, "ACL", "LOG").Slice()
	if err != nil || len(log) != 0 {
		t.Errorf("ACL LOG after scan: %v %v", log, err)
	}
	if e := errorStats(t, admin); len(e) != 0 {
		t.Errorf("server recorded errors: %v", e)
	}
	// Only read commands ran (config|resetstat and info are the test's own).
	allowed := map[string]bool{
		"scan": true, "type": true, "pttl": true, "object|idletime": true, "memory|usage": true,
		"info": true, "ping": true, "hello": true, "auth": true, "select": true, "config|resetstat": true,
		"cluster|nodes": true, "readonly": true, "acl|log": true,
	}
	stats := redistest.CommandStats(t, admin)
	for name := range stats {
		if !allowed[name] {
			t.Errorf("command %q ran during the scan", name)
		}
	}
	for _, name := range []string{"scan", "type", "pttl", "object|idletime", "memory|usage", "select"} {
		if stats[name] == 0 {
			t.Errorf("command %q never ran: %v", name, stats)
		}
	}
	if n := int64(stats["type"]); n < st.Keys {
		t.Errorf("TYPE ran %d times for %d keys", n, st.Keys)
	}

	// The user really is read-only: the ACL is what keeps writes out.
	user := redis.NewClient(&redis.Options{Addr: s.Addr, Username: "keyreg", Password: "s3cret", DisableIdentity: true})
	defer user.Close()
	if err := user.Set(ctx, "x", "y", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("SET as keyreg user: %v, want NOPERM", err)
	}
	if err := user.Do(ctx, "KEYS", "*").Err(); err == nil {
		t.Error("KEYS allowed for keyreg user")
	}
}

func TestDeleteDuringScan(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	const n = 3000
	pipe := admin.Pipeline()
	for i := range n {
		pipe.Set(ctx, fmt.Sprintf("k:%d", i), "v", 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, scanner.Options{URL: s.URL(), Count: 10})
	deleted := map[string]bool{}
	got := map[string]int{}
	calls, late := 0, 0
	st, err := conn.Scan(ctx, func(b []scanner.KeyInfo) error {
		calls++
		for _, k := range b {
			got[k.Key]++
			if k.Type != "string" || k.PTTL != scanner.NoExpiry || k.Vanished {
				t.Errorf("key %q delivered as %+v", k.Key, k)
			}
			if deleted[k.Key] {
				// Probed before the delete: only batches already in
				// flight (one buffered, one waiting to be sent) can hold
				// such keys.
				late++
			}
		}
		if calls%5 == 1 {
			// Delete every odd key not yet seen: some are already in the
			// next SCAN reply the scanner is probing.
			p := admin.Pipeline()
			for i := 1; i < n; i += 2 {
				k := fmt.Sprintf("k:%d", i)
				if got[k] == 0 && !deleted[k] {
					p.Del(ctx, k)
					deleted[k] = true
				}
			}
			if _, err := p.Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		k := fmt.Sprintf("k:%d", i)
		if got[k] > 1 {
			t.Errorf("key %q delivered %d times", k, got[k])
		}
		if !deleted[k] && got[k] != 1 {
			t.Errorf("surviving key %q delivered %d times", k, got[k])
		}
	}
	if late > 2*3*10*(calls/5+1) {
		t.Errorf("%d keys delivered after deletion over %d deletion rounds; more than the in-flight batches", late, calls/5+1)
	}
	if st.Keys != int64(len(got)) || st.Vanished > int64(len(deleted)) {
		t.Errorf("stats %+v, delivered %d, deleted %d", st, len(got), len(deleted))
	}
	t.Logf("deleted %d, delivered %d (%d probed before their deletion), vanished %d", len(deleted), len(got), late, st.Vanished)
}

func TestMaxKeysCancelAndFnError(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	seed(t, s.Client(t), "m:", 200)
	conn := connect(t, scanner.Options{URL: s.URL(), Count: 10, MaxKeys: 25})
	got, st, err := collect(t, conn)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 25 || st.Keys != 25 || !st.Partial {
		t.Errorf("MaxKeys 25: got %d, stats %+v", len(got), st)
	}

	conn = connect(t, scanner.Options{URL: s.URL(), Count: 10})
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	st, err = conn.Scan(ctx, func([]scanner.KeyInfo) error {
		calls++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || !st.Partial || calls != 1 {
		t.Errorf("cancel: err %v, partial %v, calls %d", err, st.Partial, calls)
	}

	boom := errors.New("boom")
	st, err = conn.Scan(context.Background(), func([]scanner.KeyInfo) error { return boom })
	if !errors.Is(err, boom) || !st.Partial || st.Keys != 0 {
		t.Errorf("fn error: %v, stats %+v", err, st)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	w := seed(t, s.Client(t), "rt:", 292) // 300 keys with the binary names
	conn := connect(t, scanner.Options{URL: s.URL(), Count: 50, Rate: 200})
	start := time.Now()
	got, _, err := collect(t, conn)
	if err != nil {
		t.Fatal(err)
	}
	// The bucket starts empty: 300 keys at 200/s take 1.5 s (the last
	// batch's wait included), never the 0.5 s a one-second burst allowed.
	if d := time.Since(start); d < 1300*time.Millisecond || d > 5*time.Second {
		t.Errorf("300 keys at 200/s took %v", d)
	}
	if len(got) != len(w) {
		t.Errorf("got %d of %d", len(got), len(w))
	}
}

func TestIdleUnderLFU(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t, "--maxmemory-policy", "allkeys-lfu")
	w := seed(t, s.Client(t), "lfu:", 20)
	conn := connect(t, scanner.Options{URL: s.URL(), Idle: true})
	got, st, err := collect(t, conn)
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, got, 0, w)
	for _, k := range got {
		if k.HasIdle {
			t.Fatalf("key %q has idle time under LFU", k.Key)
		}
	}
	// The refusal is counted, not merely noted: the audit makes it partial.
	if len(st.Refused) != 1 || st.Refused[0].Command != "object idletime" || st.Refused[0].Keys != int64(len(w)) ||
		!strings.Contains(st.Refused[0].Err, "LFU") {
		t.Errorf("refused %+v, want object idletime on all %d keys", st.Refused, len(w))
	}
}

func TestProbe(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	if err := admin.Set(ctx, "p:ttl", "v", 90*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.HSet(ctx, "p:\xffh", "f", "v").Err(); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, scanner.Options{URL: s.URL(), Idle: true, Memory: true})
	ki, err := conn.Probe(ctx, "p:ttl")
	if err != nil || ki.Type != "string" || ki.PTTL <= 80*time.Second || ki.PTTL > 90*time.Second || !ki.HasIdle || !ki.HasMemory {
		t.Errorf("probe p:ttl: %+v %v", ki, err)
	}
	ki, err = conn.Probe(ctx, "p:\xffh")
	if err != nil || ki.Type != "hash" || ki.PTTL != scanner.NoExpiry || ki.Key != "p:\xffh" {
		t.Errorf("probe hash: %+v %v", ki, err)
	}
	ki, err = conn.Probe(ctx, "p:missing")
	if err != nil || !ki.Vanished {
		t.Errorf("probe missing: %+v %v", ki, err)
	}
}

func TestUnreachableRedacted(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	s.Stop()
	url := fmt.Sprintf("redis://admin:hunter2@%s/0", s.Addr)
	start := time.Now()
	_, err := scanner.Connect(context.Background(), scanner.Options{URL: url, Timeout: time.Second})
	if err == nil {
		t.Fatal("connect to a stopped server succeeded")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("failing took %v", d)
	}
	msg := err.Error()
	if strings.Contains(msg, "hunter2") || !strings.Contains(msg, "admin:xxxxx@") {
		t.Errorf("error %q leaks or lacks the redacted URL", msg)
	}
	var ue *scanner.UsageError
	if errors.As(err, &ue) {
		t.Errorf("unreachable server reported as usage error: %v", err)
	}

	for _, bad := range []string{"redis://u:hunter2@host:notaport/0", "http://u:hunter2@h/0", "redis://u:hunter2@h:1/0?bogus=1"} {
		_, err = scanner.Connect(context.Background(), scanner.Options{URL: bad})
		if err == nil || !errors.As(err, &ue) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("bad url %q: %v (usage error: %v)", bad, err, errors.As(err, &ue))
		}
	}
	if _, err = scanner.Connect(context.Background(), scanner.Options{URL: s.URL(), Count: -1}); !errors.As(err, &ue) {
		t.Errorf("negative count: %v", err)
	}
}

func TestClusterMasterKilledMidScan(t *testing.T) {
	t.Parallel()
	cs := redistest.Cluster(t)
	cc := clusterClient(t, cs)
	seed(t, cc, "kill:", 3000)
	conn := connect(t, scanner.Options{URL: cs.URL(), Count: 10, Timeout: time.Second})
	var killed atomic.Bool
	start := time.Now()
	st, err := conn.Scan(context.Background(), func(b []scanner.KeyInfo) error {
		if killed.CompareAndSwap(false, true) {
			cs.Masters[2].Stop()
		}
		return nil
	})
	if err == nil {
		t.Fatalf("scan with a killed master succeeded: %+v", st)
	}
	if errors.Is(err, context.Canceled) || !st.Partial {
		t.Errorf("err %v, partial %v", err, st.Partial)
	}
	if !strings.Contains(err.Error(), cs.Masters[2].Addr) {
		t.Errorf("error %q does not name the failed node %s", err, cs.Masters[2].Addr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("failure took %v", d)
	}
	t.Logf("error: %v (after %d keys)", err, st.Keys)
}

// TestSampleBatch checks that SampleBatch answers for every key exactly what
// Sample answers: payloads of every type, a value over the byte limit, a
// vanished key and a key whose type changed since the probe.
func TestSampleBatch(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	seed(t, admin, "sb:", 14)
	if err := admin.Set(ctx, "sb:big", strings.Repeat("x", 1<<20+1), 0).Err(); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, scanner.Options{URL: s.URL(), AllowTouch: true}) // redis 7.0: sampling touches
	var keys []scanner.KeyInfo
	for _, k := range []string{"sb:0", "sb:1", "sb:2", "sb:3", "sb:4", "sb:5", "sb:6", "sb:big", "sb:gone", "sb:retyped"} {
		ki, err := conn.Probe(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, ki)
	}
	keys[8] = scanner.KeyInfo{Key: "sb:gone", Node: s.Addr, Type: "string"}       // deleted after the probe
	keys[9] = scanner.KeyInfo{Key: "sb:2", Node: s.Addr, Type: "string"}          // a hash now
	keys = append(keys, scanner.KeyInfo{Key: "sb:6", Node: s.Addr, Type: "list"}) // a stream now
	ss, errs := conn.SampleBatch(ctx, keys, 10, 1<<20)
	if len(ss) != len(keys) || len(errs) != len(keys) {
		t.Fatalf("%d samples, %d errors for %d keys", len(ss), len(errs), len(keys))
	}
	for i, k := range keys {
		one, err := conn.Sample(ctx, k, 10, 1<<20)
		if !errors.Is(errs[i], err) && (errs[i] == nil) != (err == nil) {
			t.Errorf("%s: batch error %v, single error %v", k.Key, errs[i], err)
		}
		if fmt.Sprint(ss[i]) != fmt.Sprint(one) && err == nil {
			t.Errorf("%s: batch %+v, single %+v", k.Key, ss[i], one)
		}
	}
	if !errors.Is(errs[7], scanner.ErrTooLarge) {
		t.Errorf("sb:big: %v, want ErrTooLarge", errs[7])
	}
	for _, i := range []int{8, 9, 10} {
		if !errors.Is(errs[i], scanner.ErrVanished) {
			t.Errorf("%s (%s): %v, want ErrVanished", keys[i].Key, keys[i].Type, errs[i])
		}
	}
	if string(ss[1].String) != `{"a":1}` || len(ss[2].Fields) != 2 || len(ss[6].Entries) != 1 || len(ss[3].Members) != 2 {
		t.Errorf("samples: %+v", ss[:7])
	}
}

// TestSampleReusesProbe checks that the size check sends only what the probe
// did not measure, and that a probed size over the limit still stops the
// read.
func TestSampleReusesProbe(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	if err := admin.Set(ctx, "rp:s", strings.Repeat("s", 100), 0).Err(); err != nil {
		t.Fatal(err)
	}
	fields := make([]any, 0, 40)
	for i := range 20 {
		fields = append(fields, fmt.Sprint("f", i), "v")
	}
	if err := admin.HSet(ctx, "rp:h", fields...).Err(); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, scanner.Options{URL: s.URL(), AllowTouch: true}) // redis 7.0: sampling touches
	str := scanner.KeyInfo{Key: "rp:s", Node: s.Addr, Type: "string"}
	hash := scanner.KeyInfo{Key: "rp:h", Node: s.Addr, Type: "hash"}
	cases := []struct {
		name    string
		k       scanner.KeyInfo
		tooBig  bool
		sent    map[string]int // size-check commands expected
		notSent []string
	}{
		{"string, memory probed small", with(str, 200, -1), false, nil, []string{"strlen"}},
		{"string, memory probed large", with(str, 2<<20, -1), false, map[string]int{"strlen": 1}, nil},
		{"string, nothing probed", str, false, map[string]int{"strlen": 1}, nil},
		{"hash, both probed", with(hash, 10<<20, 20), true, nil, []string{"memory|usage", "hlen", "hscan"}},
		{"hash, length probed", with(hash, -1, 20), false, map[string]int{"memory|usage": 1}, []string{"hlen"}},
		{"hash, memory probed", with(hash, 500, -1), false, map[string]int{"hlen": 1}, []string{"memory|usage"}},
	}
	for _, c := range cases {
		before := redistest.CommandStats(t, admin)
		ss, errs := conn.SampleBatch(ctx, []scanner.KeyInfo{c.k}, 10, 1<<20)
		after := redistest.CommandStats(t, admin)
		if got := errors.Is(errs[0], scanner.ErrTooLarge); got != c.tooBig || (!c.tooBig && errs[0] != nil) {
			t.Errorf("%s: error %v, want too large %v", c.name, errs[0], c.tooBig)
		}
		if !c.tooBig && len(ss[0].String)+len(ss[0].Fields) == 0 {
			t.Errorf("%s: nothing read: %+v", c.name, ss[0])
		}
		for cmd, n := range c.sent {
			if d := after[cmd] - before[cmd]; d != n {
				t.Errorf("%s: %d %s calls, want %d", c.name, d, cmd, n)
			}
		}
		for _, cmd := range c.notSent {
			if d := after[cmd] - before[cmd]; d != 0 {
				t.Errorf("%s: %d %s calls, want none", c.name, d, cmd)
			}
		}
	}
}

// with returns k with a probed MEMORY USAGE and length; -1 leaves either
// unmeasured.
func with(k scanner.KeyInfo, mem, n int64) scanner.KeyInfo {
	if mem >= 0 {
		k.Memory, k.HasMemory = mem, true
	}
	if n >= 0 {
		k.Len, k.HasLen = n, true
	}
	return k
}

// TestProbeTypedLength checks that a planned length command stands in for
// TYPE: a length above 0 proves the type, and only the keys it cannot settle
// (another type, an empty stream, a missing key) cost a TYPE.
func TestProbeTypedLength(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	if err := admin.HSet(ctx, "tl:hash", "a", 1, "b", 2, "c", 3).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Set(ctx, "tl:string", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	id, err := admin.XAdd(ctx, &redis.XAddArgs{Stream: "tl:stream", Values: []any{"f", "v"}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.XDel(ctx, "tl:stream", id).Err(); err != nil { // an empty stream stays
		t.Fatal(err)
	}
	plan := map[string]string{"tl:hash": "hash", "tl:string": "hash", "tl:stream": "stream", "tl:missing": "set"}
	// Length commands touch keys on redis 7.0: opt in (TestTouch checks the default).
	conn := connect(t, scanner.Options{URL: s.URL(), AllowTouch: true, Plan: func(k string) scanner.Plan { return scanner.Plan{Len: plan[k]} }})
	want := map[string]struct {
		typ    string
		n      int64
		hasLen bool
		gone   bool
	}{
		"tl:hash":    {"hash", 3, true, false},
		"tl:string":  {"string", 0, false, false},
		"tl:stream":  {"stream", 0, true, false},
		"tl:missing": {"", 0, false, true},
	}
	before := redistest.CommandStats(t, admin)
	for k, w := range want {
		ki, err := conn.Probe(ctx, k)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if ki.Vanished != w.gone || (!w.gone && (ki.Type != w.typ || ki.Len != w.n || ki.HasLen != w.hasLen)) {
			t.Errorf("%s: type %q len %d (has %v) vanished %v, want %+v", k, ki.Type, ki.Len, ki.HasLen, ki.Vanished, w)
		}
	}
	after := redistest.CommandStats(t, admin)
	if d := after["type"] - before["type"]; d != 3 {
		t.Errorf("%d TYPE calls, want 3 (string, empty stream, missing key)", d)
	}
	if d := after["hlen"] + after["xlen"] + after["scard"] - before["hlen"] - before["xlen"] - before["scard"]; d != 4 {
		t.Errorf("%d length calls, want 4", d)
	}
}
