package audit_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
	"github.com/keyreg/keyreg/scanner"
	"github.com/keyreg/keyreg/snapshot"
)

// locksYAML declares, for payments, a healthy lock, fence and stream, and
// one family per defect of issue 17, each with the one defect that
// lockKeyspace plants: the audit must report exactly wantLockFindings.
const locksYAML = `version: 1
owners:
  payments: {contact: "#payments"}
families:
  - {name: ok-lock, owner: payments, pattern: "v3:pay:lock:{{order:int}}", kind: lock, ttl: 1m, fencing: ok-fence}
  - {name: ok-fence, owner: payments, pattern: "v3:pay:fence:{{order:int}}", kind: fence}
  - name: ok-stream
    owner: payments
    pattern: "v3:pay:events:{shard:int}"
    type: stream
    max_len: 100
    ttl: persistent
    groups:
      ship: {max_lag: 10, max_pending: 10, max_consumer_idle: 1h}
      bill: {}
  - {name: lock-no-ttl, owner: payments, pattern: "v3:pay:mutex:{name}", kind: lock, ttl: 1m}
  - {name: lock-long, owner: payments, pattern: "v3:pay:lease:{name}", kind: lock, ttl: 10s}
  - {name: lock-unfenced, owner: payments, pattern: "v3:pay:refund-lock:{{refund:int}}", kind: lock, ttl: 1m, fencing: refund-fence}
  - {name: refund-fence, owner: payments, pattern: "v3:pay:refund-fence:{{refund:int}}", kind: fence}
  - {name: fence-ttl, owner: payments, pattern: "v3:pay:epoch:{name}", kind: fence}
  - {name: fence-text, owner: payments, pattern: "v3:pay:token:{name}", kind: fence}
  - {name: stream-untrimmed, owner: payments, pattern: "v3:pay:log:{day:int}", type: stream, max_len: 5, ttl: persistent}
  - name: stream-lagging
    owner: payments
    pattern: "v3:pay:ledger:{day:int}"
    type: stream
    max_len: 100
    ttl: persistent
    groups: {ship: {max_lag: 2}}
  - name: stream-dead-consumer
    owner: payments
    pattern: "v3:pay:payouts:{day:int}"
    type: stream
    max_len: 100
    ttl: persistent
    groups: {ship: {max_consumer_idle: 1ms}}
  - name: stream-backlog
    owner: payments
    pattern: "v3:pay:disputes:{day:int}"
    type: stream
    max_len: 100
    ttl: persistent
    groups: {ship: {max_pending: 1}}
  - name: stream-missing-group
    owner: payments
    pattern: "v3:pay:chargebacks:{day:int}"
    type: stream
    max_len: 100
    ttl: persistent
    groups: {ship: {}}
`

// wantLockFindings is the (family, rule) of every finding the audit must
// report on lockKeyspace, and nothing else.
var wantLockFindings = []string{
	"fence-text fence-invalid",
	"fence-ttl fence-invalid",
	"lock-long ttl-exceeds-max",
	"lock-no-ttl ttl-missing",
	"lock-unfenced fence-missing",
	"stream-backlog stream-pending",
	"stream-dead-consumer stream-consumer-idle",
	"stream-lagging stream-group-lag",
	"stream-missing-group stream-group-missing",
	"stream-untrimmed collection-too-long",
}

// lockKeyspace writes healthy keys for every family and the defects.
func lockKeyspace(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	do := func(args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	// A stream of n entries with group ship created at the start; each
	// consumer reads its count of entries and keeps them pending.
	stream := func(key string, n int, groups []string, reads map[string]int) {
		for i := range n {
			do("XADD", key, fmt.Sprintf("1-%d", i+1), "amount", i)
		}
		for _, g := range groups {
			do("XGROUP", "CREATE", key, g, "0")
		}
		for consumer, count := range reads {
			do("XREADGROUP", "GROUP", "ship", consumer, "COUNT", count, "STREAMS", key, ">")
		}
	}
	// Healthy: a fenced lock, its fence, a stream whose groups keep up.
	for i := range 3 {
		do("SET", fmt.Sprintf("v3:pay:lock:{%d}", i), "0d9f8e07-64a5-4c1b-9b1e-6f1f3b7c2a10", "PX", 50000)
		do("INCR", fmt.Sprintf("v3:pay:fence:{%d}", i))
		stream(fmt.Sprintf("v3:pay:events:%d", i), 20, []string{"ship", "bill"}, map[string]int{"w1": 19})
		do("XACK", fmt.Sprintf("v3:pay:events:%d", i), "ship", "1-1", "1-2", "1-3", "1-4", "1-5", "1-6", "1-7", "1-8", "1-9", "1-10")
		do("XREADGROUP", "GROUP", "bill", "b1", "COUNT", 20, "STREAMS", fmt.Sprintf("v3:pay:events:%d", i), ">")
		do("XACK", fmt.Sprintf("v3:pay:events:%d", i), "bill", "1-1", "1-2", "1-3", "1-4", "1-5", "1-6", "1-7", "1-8", "1-9", "1-10", "1-11", "1-12", "1-13", "1-14", "1-15", "1-16", "1-17", "1-18", "1-19", "1-20")
	}
	// The defects, one per family.
	do("SET", "v3:pay:mutex:settle", "holder") // a lock with no TTL
	do("SET", "v3:pay:lease:payout", "holder", "PX", 60000)
	do("SET", "v3:pay:refund-lock:{7}", "holder", "PX", 30000) // its fence v3:pay:refund-fence:{7} is missing
	do("INCR", "v3:pay:refund-fence:{8}")                      // the fence of no live lock: healthy
	do("INCR", "v3:pay:epoch:east")
	do("PEXPIRE", "v3:pay:epoch:east", 3600000) // a fence with a TTL
	do("SET", "v3:pay:token:west", "not-a-number")
	stream("v3:pay:log:1", 5+rules.StreamTrimSlack+1, nil, nil)               // untrimmed: max_len 5, past what MAXLEN ~ 5 keeps
	stream("v3:pay:ledger:1", 5, []string{"ship"}, map[string]int{"w1": 1})   // lag 4, max 2
	stream("v3:pay:payouts:1", 5, []string{"ship"}, map[string]int{"w1": 2})  // w1 holds 2 entries, idle > 1ms
	stream("v3:pay:disputes:1", 5, []string{"ship"}, map[string]int{"w1": 3}) // 3 pending, max 1
	stream("v3:pay:chargebacks:1", 5, nil, nil)                               // no group ship

	// The dead consumer's idle time must exceed 1ms: poll the server.
	deadline := time.Now().Add(5 * time.Second)
	for {
		cs, err := c.XInfoConsumers(ctx, "v3:pay:payouts:1", "ship").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) == 1 && cs[0].Idle > 2*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer not idle: %+v", cs)
		}
	}
}

func lockFindings(rep *audit.Report) []string {
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Family+" "+f.Rule)
	}
	slices.Sort(got)
	return got
}

// TestAuditLocksAndStreams seeds every defect of issue 17 next to healthy
// locks, fences and streams on a real redis-server, and checks that the
// audit reports exactly those families under exactly those rules. It runs
// as a user with exactly scanner.MinimalACL and checks that the new
// commands ran and that the server rejected nothing.
func TestAuditLocksAndStreams(t *testing.T) {
	t.Parallel()
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(locksYAML)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := redistest.Standalone(t)
	admin := s.Client(t)
	lockKeyspace(t, admin)
	redistest.ACLUser(t, s, "audit", "pw", strings.Fields(scanner.MinimalACL)...)
	ctx := context.Background()
	if err := admin.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "ACL", "LOG", "RESET").Err(); err != nil {
		t.Fatal(err)
	}

	conn := dial(t, reg, scanner.Options{URL: "redis://audit:pw@" + s.Addr})
	rep, err := audit.Run(bounded(t), conn, reg, allOf())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Partial || len(rep.Scan.Notes) != 1 || !strings.Contains(rep.Scan.Notes[0], "--allow-touch") {
		t.Errorf("partial %v, notes %q (want only the --allow-touch count)", rep.Partial, rep.Scan.Notes)
	}
	if got := lockFindings(rep); !slices.Equal(got, wantLockFindings) {
		t.Errorf("findings (family rule):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantLockFindings, "\n"))
	}
	for _, f := range rep.Findings {
		t.Logf("%s %s: %d of %d, %+v", f.Family, f.Rule, f.Count, f.Of, f.Examples)
		if f.Count != 1 || len(f.Examples) != 1 || f.Examples[0].Detail == "" {
			t.Errorf("%s %s: %d keys, examples %+v, want one key with a detail", f.Family, f.Rule, f.Count, f.Examples)
		}
		if d := f.Examples[0].Detail; strings.Contains(d, "not-a-number") || strings.Contains(d, "holder") {
			t.Errorf("%s %s: detail %q quotes a value", f.Family, f.Rule, d)
		}
	}

	stats := redistest.CommandStats(t, admin)
	for _, cmd := range []string{"exists", "object|encoding", "xinfo|groups", "xinfo|consumers"} {
		if stats[cmd] == 0 {
			t.Errorf("%s never ran: %v", cmd, stats)
		}
	}
	if log, err := admin.Do(ctx, "ACL", "LOG").Slice(); err != nil || len(log) != 0 {
		t.Errorf("ACL LOG after the audit: %v %v", log, err)
	}
	if info, err := admin.Info(ctx, "errorstats").Result(); err != nil || strings.Contains(info, "errorstat_") {
		t.Errorf("the server recorded errors: %s %v", info, err)
	}

	// A snapshot of the same keyspace has each key's TTL, length, string
	// encoding and consumer groups, but no fence lookups: the audit of the
	// file finds the rest and stays silent on fence-missing.
	if err := admin.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	dir := admin.ConfigGet(ctx, "dir").Val()["dir"]
	file := admin.ConfigGet(ctx, "dbfilename").Val()["dbfilename"]
	o := allOf()
	src := snapshot.NewSource([]string{filepath.Join(dir, file)}, snapshot.SourceOptions{Sample: 100, SampleLen: o.SampleLen, MaxValueBytes: o.MaxValueBytes})
	rep, err = audit.Run(bounded(t), src, reg, o)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range wantLockFindings {
		if !strings.Contains(f, "fence-missing") {
			want = append(want, f)
		}
	}
	notes := strings.Join(rep.Scan.Notes, "\n")
	if !strings.Contains(notes, "fence-missing not checked on 4 locks") || strings.Contains(notes, "streams") {
		t.Errorf("the snapshot's notes do not count the unchecked locks, or speak of streams:\n%s", notes)
	}
	if got := lockFindings(rep); !slices.Equal(got, want) {
		t.Errorf("findings of the snapshot (family rule):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
