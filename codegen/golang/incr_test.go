package golang

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// incrYAML has an int-encoded string family of every TTL policy, one with
// a schema, and a fence (which gets no Incr: only its lock's script may
// change it).
const incrYAML = `version: 1
owners:
  o: {contact: o@example.com}
families:
  - {name: max-count, pattern: "v1:max:{id:int}", owner: o, type: string, encoding: int, ttl: {max: 1m}}
  - {name: persistent-count, pattern: "v1:persistent:{id:int}", owner: o, type: string, encoding: int, ttl: persistent}
  - {name: optional-count, pattern: "v1:optional:{id:int}", owner: o, type: string, encoding: int, ttl: optional}
  - {name: bounded-count, pattern: "v1:bounded:{id:int}", owner: o, type: string, encoding: int, ttl: persistent, schema: {type: integer, maximum: 3}}
  - {name: text, pattern: "v1:text:{id:int}", owner: o, type: string, encoding: text, ttl: persistent}
  - {name: job-lock, pattern: "v1:lock:{id:int}", owner: o, kind: lock, encoding: text, ttl: {max: 30s}, fencing: job-fence}
  - {name: job-fence, pattern: "v1:fence:{id:int}", owner: o, kind: fence}
`

// incrTest runs in the generated package against a real redis-server:
// every policy's TTL after Incr, and the schema check after it.
const incrTest = `package keys

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
)

func TestIncr(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx := context.Background()
	pttl := func(key string) time.Duration {
		t.Helper()
		d, err := c.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	must := func(n int64, err error) int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// max: a created key gets the maximum.
	m := MaxCountKey{ID: 1}
	if n := must(m.Incr(ctx, c)); n != 1 {
		t.Errorf("max: %d, want 1", n)
	}
	if d := pttl(m.String()); d <= 0 || d > MaxCountMaxTTL {
		t.Errorf("max: PTTL %v, want within (0, %v]", d, MaxCountMaxTTL)
	}

	// persistent: a key created has no expiry, and one another writer
	// gave a TTL loses it.
	p := PersistentCountKey{ID: 1}
	must(p.Incr(ctx, c))
	if d := pttl(p.String()); d != -1 {
		t.Errorf("persistent, created: PTTL %v, want none (-1)", d)
	}
	if err := c.Set(ctx, p.String(), "10", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if n := must(p.IncrBy(ctx, c, -3)); n != 7 {
		t.Errorf("persistent: %d, want 7", n)
	}
	if d := pttl(p.String()); d != -1 {
		t.Errorf("persistent, had a TTL: PTTL %v, want none (-1)", d)
	}

	// optional: ttl 0 keeps the expiry as it is, a positive ttl is the
	// latest the key may expire, a negative one writes nothing.
	o := OptionalCountKey{ID: 1}
	must(o.Incr(ctx, c, 0))
	if d := pttl(o.String()); d != -1 {
		t.Errorf("optional, created with ttl 0: PTTL %v, want none (-1)", d)
	}
	if err := c.PExpire(ctx, o.String(), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	must(o.Incr(ctx, c, 0))
	if d := pttl(o.String()); d < 59*time.Minute {
		t.Errorf("optional, ttl 0 on a key expiring in 1h: PTTL %v, want it kept", d)
	}
	must(o.Incr(ctx, c, time.Minute))
	if d := pttl(o.String()); d <= 0 || d > time.Minute {
		t.Errorf("optional, ttl 1m: PTTL %v, want within (0, 1m]", d)
	}
	if _, err := o.Incr(ctx, c, -time.Second); !errors.Is(err, ErrTTL) {
		t.Errorf("optional, ttl -1s: %v, want ErrTTL", err)
	}
	if v, _ := c.Get(ctx, o.String()).Int64(); v != 3 {
		t.Errorf("optional: value %d after a refused Incr, want 3", v)
	}

	// A schema is checked after the increment: the value that breaks it
	// stays written, and comes back with ErrSchema.
	b := BoundedCountKey{ID: 1}
	if n := must(b.IncrBy(ctx, c, 3)); n != 3 {
		t.Errorf("bounded: %d, want 3", n)
	}
	n, err := b.Incr(ctx, c)
	if n != 4 || !errors.Is(err, ErrSchema) {
		t.Errorf("bounded: Incr past the maximum = %d, %v; want 4 and ErrSchema", n, err)
	}
}
`

// TestIncrGenerated generates the counters of incrYAML, checks which
// families get Incr, and runs incrTest in the generated package against a
// real redis-server.
func TestIncrGenerated(t *testing.T) {
	out, err := Generate(parseRegistry(t, incrYAML), Options{Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"MaxCountKey", "PersistentCountKey", "OptionalCountKey", "BoundedCountKey"} {
		if !strings.Contains(string(out), "func (k "+typ+") IncrBy(") {
			t.Errorf("%s has no IncrBy", typ)
		}
	}
	for _, typ := range []string{"TextKey", "JobFenceKey", "JobLockKey"} {
		if strings.Contains(string(out), "func (k "+typ+") Incr") {
			t.Errorf("%s has Incr", typ)
		}
	}
	none, err := Generate(parseRegistry(t, incrYAML), Options{Package: "keys", Client: ClientNone})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(none), "Incr") {
		t.Error("--client none has Incr")
	}
	dir := mkTempPackageDir(t)
	for name, data := range map[string]string{goldenOut: string(out), "incr_test.go": incrTest} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go not on PATH: the generated counters must run")
	}
	cmd := exec.Command(gobin, "test", "-count=1", "./"+filepath.ToSlash(dir))
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	if got, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test of the generated counters: %v\n%s", err, got)
	}
}
