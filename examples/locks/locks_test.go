package locks

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/codegen/golang"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/scanner"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

var update = flag.Bool("update", false, "regenerate locks_gen.go")

// TestFresh fails when locks_gen.go is not what keyreg gen go makes of
// keys.yaml (go generate ./examples/locks refreshes it).
func TestFresh(t *testing.T) {
	reg, err := registry.LoadFile("keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := golang.Generate(reg, golang.Options{Package: "locks"})
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("locks_gen.go", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("locks_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("locks_gen.go is stale: run go generate ./examples/locks\n%s",
			codegen.UnifiedDiff("a/locks_gen.go", "b/locks_gen.go", got, want, 64<<10))
	}
}

const (
	goroutines = 16
	rounds     = 200
)

// contend runs goroutines × rounds acquisitions of one fenced lock through
// the generated AcquireInvoiceLock, and checks that no two holders ever
// overlap and that the fence values, in the order the holders got the
// lock, increase by exactly one.
func contend(t *testing.T, c redis.UniversalClient) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const invoice = 42
	fenceKey, err := (InvoiceLockKey{InvoiceID: invoice}).FenceKey()
	if err != nil {
		t.Fatal(err)
	}
	start, err := c.Get(ctx, fenceKey).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	var (
		holders  atomic.Int32
		overlaps atomic.Int32
		mu       sync.Mutex // never contended while the lock works
		fences   []int64
		wg       sync.WaitGroup
		errs     = make(chan error, goroutines)
	)
	opts := LockOptions{RetryMin: time.Millisecond, RetryMax: 4 * time.Millisecond}
	for range goroutines {
		wg.Go(func() {
			for range rounds {
				l, err := AcquireInvoiceLock(ctx, c, invoice, opts)
				if err != nil {
					errs <- err
					return
				}
				if holders.Add(1) != 1 {
					overlaps.Add(1)
				}
				mu.Lock()
				fences = append(fences, l.Fence())
				mu.Unlock()
				holders.Add(-1)
				if err := l.Release(ctx, c); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d acquisitions found another holder inside the lock", n)
	}
	if len(fences) != goroutines*rounds {
		t.Fatalf("%d acquisitions recorded, want %d", len(fences), goroutines*rounds)
	}
	for i, f := range fences {
		if want := start + int64(i) + 1; f != want {
			t.Fatalf("acquisition %d drew fence %d, want %d (strictly increasing, no gap)", i, f, want)
		}
	}
	if n, err := (InvoiceFenceKey{InvoiceID: invoice}).Get(ctx, c); err != nil || n != start+goroutines*rounds {
		t.Errorf("fence reads %d, %v; want %d", n, err, start+goroutines*rounds)
	}
	if n := c.Exists(ctx, MustBuildInvoiceLock(invoice)).Val(); n != 0 {
		t.Errorf("the lock key is left after every holder released it")
	}
}

func TestLockContention(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	contend(t, srv.Client(t))
}

// TestLockContentionCluster runs the same on a three-master Redis Cluster:
// the lock and its fence share a hash tag, so the acquire script's two keys
// are in one slot.
func TestLockContentionCluster(t *testing.T) {
	t.Parallel()
	cs := redistest.Cluster(t)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cs.Addrs, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
	t.Cleanup(func() { _ = cc.Close() })
	contend(t, cc)
	// Locks of other invoices land on other masters and fence on their own.
	slots := map[int64]bool{}
	for id := int64(1); id <= 30; id++ {
		l, err := TryAcquireInvoiceLock(context.Background(), cc, id, LockOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if l.Fence() < 1 {
			t.Errorf("invoice %d: fence %d", id, l.Fence())
		}
		slots[cc.ClusterKeySlot(context.Background(), l.Key()).Val()] = true
		if err := l.Release(context.Background(), cc); err != nil {
			t.Fatal(err)
		}
	}
	masters := map[bool]int{}
	for s := range slots {
		masters[s <= 5460]++
	}
	if len(slots) < 2 || len(masters) < 2 {
		t.Errorf("30 invoice locks hashed to slots %v, want several masters", slots)
	}
}

// TestLockExpiredHolder: a holder whose lease expired cannot release or
// extend the lock another holder took since, and the new holder's fence is
// greater.
func TestLockExpiredHolder(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	old, err := TryAcquireInvoiceLock(ctx, c, 7, LockOptions{Lease: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryAcquireInvoiceLock(ctx, c, 7, LockOptions{}); !errors.Is(err, ErrLockHeld) {
		t.Fatalf("TryAcquire of a held lock: %v, want ErrLockHeld", err)
	}
	// The blocking Acquire returns once the old lease has expired.
	cur, err := AcquireInvoiceLock(ctx, c, 7, LockOptions{RetryMin: time.Millisecond, RetryMax: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if cur.Fence() <= old.Fence() {
		t.Errorf("the new holder's fence %d is not above the expired one's %d", cur.Fence(), old.Fence())
	}
	if err := old.Release(ctx, c); !errors.Is(err, ErrLockLost) {
		t.Errorf("Release by the expired holder: %v, want ErrLockLost", err)
	}
	before := c.PTTL(ctx, cur.Key()).Val()
	if err := old.Extend(ctx, c); !errors.Is(err, ErrLockLost) {
		t.Errorf("Extend by the expired holder: %v, want ErrLockLost", err)
	}
	if got := c.Get(ctx, cur.Key()).Val(); got != cur.Token() {
		t.Errorf("the lock holds %q after the expired holder's calls, want the new token", got)
	}
	if after := c.PTTL(ctx, cur.Key()).Val(); after > before {
		t.Errorf("the expired holder's Extend re-armed the lease: PTTL %v, then %v", before, after)
	}
	// The holder itself can extend and release.
	if err := c.PExpire(ctx, cur.Key(), time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cur.Extend(ctx, c); err != nil {
		t.Fatal(err)
	}
	if d := c.PTTL(ctx, cur.Key()).Val(); d <= time.Second || d > InvoiceLockMaxTTL {
		t.Errorf("PTTL after Extend %v, want the lease %v", d, InvoiceLockMaxTTL)
	}
	if err := cur.Release(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := cur.Release(ctx, c); !errors.Is(err, ErrLockLost) {
		t.Errorf("second Release: %v, want ErrLockLost", err)
	}
}

// TestLockRefusals: the lease cannot exceed the registry's, a blocking
// Acquire ends with its context, and an invalid key is refused.
func TestLockRefusals(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx := context.Background()
	for _, lease := range []time.Duration{ReportLockMaxTTL + time.Millisecond, -time.Second, time.Microsecond} {
		if _, err := TryAcquireReportLock(ctx, c, "monthly", LockOptions{Lease: lease}); !errors.Is(err, ErrTTL) {
			t.Errorf("lease %v: %v, want ErrTTL", lease, err)
		}
	}
	if n := c.DBSize(ctx).Val(); n != 0 {
		t.Errorf("refused acquisitions wrote %d keys", n)
	}
	held, err := TryAcquireReportLock(ctx, c, "monthly", LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := c.PTTL(ctx, held.Key()).Val(); d <= 0 || d > ReportLockMaxTTL {
		t.Errorf("lock PTTL %v, want at most the lease %v", d, ReportLockMaxTTL)
	}
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	_, err = AcquireReportLock(short, c, "monthly", LockOptions{})
	if !errors.Is(err, ErrLockHeld) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire of a held lock until the deadline: %v, want ErrLockHeld and DeadlineExceeded", err)
	}
	if _, err := TryAcquireReportLock(ctx, c, "a:b", LockOptions{}); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("a name with the separator: %v, want ErrInvalidKey", err)
	}
}

// TestLockScriptsAreConstant: after SCRIPT FLUSH the scripts still run
// (EVALSHA fails with NOSCRIPT, EVAL loads them again), and a value full of
// Lua and quotes is only a key: nothing else in the server changes.
func TestLockScriptsAreConstant(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx := context.Background()
	if err := c.Set(ctx, "canary", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	hostile := `x") redis.call("FLUSHALL") --"]]`
	l, err := TryAcquireReportLock(ctx, c, hostile, LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Get(ctx, "v1:lock:report:"+hostile).Val(); got != l.Token() || len(got) < 20 {
		t.Errorf("the lock key holds %q, want the token %q", got, l.Token())
	}
	if c.Exists(ctx, "canary").Val() != 1 || c.DBSize(ctx).Val() != 2 {
		t.Errorf("acquiring a lock with a hostile name changed other keys")
	}
	other, err := TryAcquireReportLock(ctx, c, "other", LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if other.Token() == l.Token() {
		t.Errorf("two acquisitions drew the same token %q", l.Token())
	}
	for _, x := range []*ReportLock{l, other} {
		if err := x.Release(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.DBSize(ctx).Val(); n != 1 {
		t.Errorf("%d keys after releasing both locks, want the canary only", n)
	}
}

// TestStreamGroups: XAdd trims and checks the schema, ReadGroup delivers
// each entry once, Claim moves entries idle longer than max_consumer_idle
// to another consumer, Ack clears them, and undeclared groups are refused.
func TestStreamGroups(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k := BillingJobsKey{Queue: "eu"}
	key := k.String()
	if err := c.XGroupCreateMkStream(ctx, key, BillingJobsGroupWorkers, "$").Err(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, task := range []string{"charge", "refund", "charge"} {
		id, err := k.XAdd(ctx, c, map[string]string{"task": task, "invoice_id": "42"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, bad := range []map[string]string{
		{"invoice_id": "42"},                   // no task
		{"task": "void"},                       // not in the enum
		{"task": "charge", "invoice_id": "0"},  // breaks the pattern
		{"task": "charge", "note": "too much"}, // additionalProperties: false
	} {
		if _, err := k.XAdd(ctx, c, bad); !errors.Is(err, ErrSchema) {
			t.Errorf("XAdd %v: %v, want ErrSchema", bad, err)
		} else if strings.Contains(err.Error(), "void") || strings.Contains(err.Error(), "too much") {
			t.Errorf("the schema error quotes the value: %v", err)
		}
	}
	if n := c.XLen(ctx, key).Val(); n != 3 {
		t.Errorf("XLEN %d after 3 good and 4 refused appends, want 3", n)
	}

	got, err := k.ReadGroup(ctx, c, BillingJobsGroupWorkers, "a", 10, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != ids[0] || got[1].Fields["task"] != "refund" || got[2].Fields["invoice_id"] != "42" {
		t.Fatalf("ReadGroup returned %+v", got)
	}
	if again, err := k.ReadGroup(ctx, c, BillingJobsGroupWorkers, "b", 10, -1); err != nil || len(again) != 0 {
		t.Errorf("a second ReadGroup returned %+v, %v; want nothing new", again, err)
	}
	if n, err := k.Ack(ctx, c, BillingJobsGroupWorkers, ids[0]); err != nil || n != 1 {
		t.Errorf("Ack: %d, %v", n, err)
	}
	// Consumer a stops; once its entries are idle longer than
	// max_consumer_idle (1ms), b claims them. Polls the server's idle time
	// under the context's deadline.
	var claimed []StreamEntry[string]
	for len(claimed) == 0 {
		if claimed, err = k.Claim(ctx, c, BillingJobsGroupWorkers, "b", 10); err != nil {
			t.Fatal(err)
		}
	}
	if len(claimed) != 2 || claimed[0].ID != ids[1] || claimed[1].ID != ids[2] {
		t.Errorf("Claim returned %+v, want the 2 unacknowledged entries", claimed)
	}
	pend, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: BillingJobsGroupWorkers, Start: "-", End: "+", Count: 10}).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pend {
		if p.Consumer != "b" {
			t.Errorf("entry %s is pending at %s after Claim, want b", p.ID, p.Consumer)
		}
	}
	if n, err := k.Ack(ctx, c, BillingJobsGroupWorkers, ids[1], ids[2]); err != nil || n != 2 {
		t.Errorf("Ack of the claimed entries: %d, %v", n, err)
	}
	if _, err := k.Claim(ctx, c, BillingJobsGroupArchive, "b", 10); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("Claim in a group without max_consumer_idle: %v, want ErrInvalidValue", err)
	}
	if _, err := k.ReadGroup(ctx, c, "nope", "a", 1, -1); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("ReadGroup of an undeclared group: %v, want ErrInvalidValue", err)
	}

	// XAdd always trims with MAXLEN ~ max_len.
	for i := range 3 * BillingJobsMaxLen {
		if _, err := k.XAdd(ctx, c, map[string]string{"task": "charge", "invoice_id": "1"}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if n := c.XLen(ctx, key).Val(); n < BillingJobsMaxLen || n >= 2*BillingJobsMaxLen {
		t.Errorf("XLEN %d after %d appends, want about the max_len %d", n, 3*BillingJobsMaxLen, BillingJobsMaxLen)
	}
}

// TestAudit: a held fenced lock, a held unfenced one, a fence and a stream
// with its groups, all written through the generated code, give keyreg's
// own audit nothing to report.
func TestAudit(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx := context.Background()
	reg, err := registry.LoadFile("keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryAcquireInvoiceLock(ctx, c, 9, LockOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := TryAcquireReportLock(ctx, c, "monthly", LockOptions{}); err != nil {
		t.Fatal(err)
	}
	k := BillingJobsKey{Queue: "eu"}
	if _, err := k.XAdd(ctx, c, map[string]string{"task": "charge", "invoice_id": "9"}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{BillingJobsGroupWorkers, BillingJobsGroupArchive} {
		if err := c.XGroupCreate(ctx, k.String(), g, "0").Err(); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := scanner.Connect(ctx, scanner.Options{URL: srv.URL(), Plan: audit.Plan(reg, true), AllowTouch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	o := audit.Defaults()
	o.Filtered = true
	rep, err := audit.Run(ctx, conn, reg, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Errorf("audit finding: %s %s %s: %s (examples %v)", f.Severity, f.Rule, f.Family, f.Message, f.Examples)
	}
	if rep.Totals.Registered != 4 || rep.Totals.Unregistered != 0 {
		t.Errorf("audit saw %d registered and %d unregistered keys, want 4 and 0", rep.Totals.Registered, rep.Totals.Unregistered)
	}
}

// TestLockWaitDeadlineDuringTry: when the deadline passes during a try
// that follows one that found the lock held (the try then fails with the
// context's error, not ErrLockHeld), Acquire still says the lock was
// held. On a loaded machine this is how a 30 ms Acquire of a held lock
// ends, and it returned a bare deadline error before.
func TestLockWaitDeadlineDuringTry(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	tries := 0
	err := keyregLockWait(ctx, LockOptions{RetryMin: time.Millisecond}, func() error {
		tries++
		if tries == 1 {
			return ErrLockHeld
		}
		cancel(context.DeadlineExceeded)
		return ctx.Err()
	})
	if !errors.Is(err, ErrLockHeld) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline during the second try: %v, want ErrLockHeld and DeadlineExceeded", err)
	}
	// Without a held lock first, the try's own error is returned as it is.
	boom := errors.New("boom")
	if err := keyregLockWait(context.Background(), LockOptions{}, func() error { return boom }); err != boom {
		t.Errorf("a failed first try: %v, want it as it is", err)
	}
}
