package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/keyreg/keyreg/source"
	"github.com/redis/go-redis/v9"
)

// TestStreamGroups saves streams with consumer groups in every state the
// stream rules look at and checks what the reader keeps of the planned
// groups against XINFO GROUPS and XINFO CONSUMERS of the live server:
// consumers, pending entries, lag (absent where Redis reports none, after
// a deletion past the group's position) and the longest idle consumer
// holding entries.
func TestStreamGroups(t *testing.T) {
	s, c := startServer(t, "noeviction")
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"s:plain", "s:holes"} {
		for i := range 20 {
			must(c.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: fmt.Sprintf("%d-1", 1000+i), Values: []any{"i", i}}).Err())
		}
		must(c.XGroupCreate(ctx, key, "reading", "0").Err())
		must(c.XGroupCreate(ctx, key, "idle", "0").Err())
		must(c.XGroupCreate(ctx, key, "done", "$").Err())
		must(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "reading", Consumer: "first", Streams: []string{key, ">"}, Count: 3}).Err())
		must(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "reading", Consumer: "second", Streams: []string{key, ">"}, Count: 2}).Err())
		must(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "reading", Consumer: "empty", Streams: []string{key, ">"}, Count: 1}).Err())
	}
	// Acknowledged entries leave the PEL; a consumer without pending
	// entries is never the idle one.
	must(c.XAck(ctx, "s:plain", "reading", "1005-1").Err())
	must(c.XAck(ctx, "s:holes", "reading", "1005-1").Err())
	// A deletion past the groups' positions: Redis cannot tell their lag.
	must(c.XDel(ctx, "s:holes", "1015-1").Err())
	// "first" has not been seen since before "second" read.
	must(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "reading", Consumer: "second", Streams: []string{"s:plain", "s:holes", "0", "0"}, Count: 1}).Err())

	live := map[string]map[string]redis.XInfoGroup{}
	idlest := map[string]string{}
	for _, key := range []string{"s:plain", "s:holes"} {
		gs, err := c.XInfoGroups(ctx, key).Result()
		must(err)
		live[key] = map[string]redis.XInfoGroup{}
		for _, g := range gs {
			live[key][g.Name] = g
		}
		cs, err := c.XInfoConsumers(ctx, key, "reading").Result()
		must(err)
		var longest int64 = -1
		for _, x := range cs {
			if x.Pending > 0 && x.Idle.Milliseconds() > longest {
				longest, idlest[key] = x.Idle.Milliseconds(), x.Name
			}
		}
	}
	// go-redis reads a nil lag as 0: which lags are nil, from the raw reply.
	nilLag := map[string]bool{}
	for _, key := range []string{"s:plain", "s:holes"} {
		raw, err := c.Do(ctx, "XINFO", "GROUPS", key).Slice()
		must(err)
		for _, g := range raw {
			fields, ok := g.(map[any]any) // RESP3
			if !ok {
				t.Fatalf("XINFO GROUPS entry %T", g)
			}
			name, _ := fields["name"].(string)
			lag, ok := fields["lag"]
			nilLag[key+" "+name] = ok && lag == nil
		}
	}
	b := save(t, s, c)

	want := []source.GroupQuery{{Name: "reading", Consumers: true}, {Name: "absent"}, {Name: "idle", Consumers: true}, {Name: "done"}}
	for _, parallel := range []bool{false, true} {
		r, err := NewReader(bytes.NewReader(b), Options{ParallelCRC: parallel})
		must(err)
		seen := 0
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			must(err)
			e.WantGroups(want)
			must(e.Skip())
			key := string(e.Key)
			if !e.HasGroups {
				t.Fatalf("%s: no groups read", key)
			}
			seen++
			var names []string
			for _, g := range e.Groups {
				names = append(names, g.Name)
				l := live[key][g.Name]
				if g.Consumers != l.Consumers || g.Pending != l.Pending {
					t.Errorf("%s %s: %d consumers, %d pending; XINFO GROUPS: %d, %d", key, g.Name, g.Consumers, g.Pending, l.Consumers, l.Pending)
				}
				wantLag := !nilLag[key+" "+g.Name]
				if g.HasLag != wantLag || (g.HasLag && g.Lag != l.Lag) {
					t.Errorf("%s %s: lag %d (%v); XINFO GROUPS lag %d, measurable %v", key, g.Name, g.Lag, g.HasLag, l.Lag, wantLag)
				}
				wantIdle := g.Name == "reading"
				if g.HasIdle != wantIdle || (wantIdle && g.IdleConsumer != idlest[key]) {
					t.Errorf("%s %s: idle consumer %q (%v); XINFO CONSUMERS: %q", key, g.Name, g.IdleConsumer, g.HasIdle, idlest[key])
				}
			}
			if fmt.Sprint(names) != "[reading idle done]" {
				t.Errorf("%s: groups %v, want the planned ones it has, in plan order", key, names)
			}
		}
		r.Close()
		if seen != 2 {
			t.Fatalf("read %d streams, want 2", seen)
		}
	}
	if idlest["s:plain"] != "first" || !nilLag["s:holes reading"] || nilLag["s:plain reading"] || live["s:plain"]["idle"].Lag != 20 {
		t.Fatalf("the keyspace is not what the test means: idlest %q, nil lags %v, idle lag %d", idlest["s:plain"], nilLag, live["s:plain"]["idle"].Lag)
	}
}
