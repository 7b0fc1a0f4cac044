package keys

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestIncrTTLPolicy increments rate-limit counters (ttl max 2m) on a real
// redis-server: a key created by Incr gets the family's TTL, a key another
// writer left without an expiry or with a longer one is brought within the
// policy, an earlier expiry is kept (the window does not slide), and a
// ttl the policy refuses writes nothing.
func TestIncrTTLPolicy(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx := context.Background()
	k := RateLimitKey{APIKey: "cafe01", Window: 1}
	key := k.String()
	state := func() (string, time.Duration) {
		t.Helper()
		v, err := c.Get(ctx, key).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		d, err := c.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return v, d
	}
	within := func(what string, max time.Duration) {
		t.Helper()
		if _, d := state(); d <= 0 || d > max {
			t.Errorf("%s: PTTL %v, want within (0, %v]", what, d, max)
		}
	}
	incr := func(want int64, ttl ...time.Duration) {
		t.Helper()
		n, err := k.Incr(ctx, c, ttl...)
		if err != nil || n != want {
			t.Fatalf("Incr(%v) = %d, %v; want %d", ttl, n, err, want)
		}
	}

	incr(1)
	within("created by Incr", RateLimitMaxTTL)
	if d, _ := c.PTTL(ctx, key).Result(); d < RateLimitMaxTTL-time.Minute {
		t.Errorf("created by Incr: PTTL %v, want about %v", d, RateLimitMaxTTL)
	}
	if n, err := k.IncrBy(ctx, c, 5); err != nil || n != 6 {
		t.Fatalf("IncrBy(5) = %d, %v; want 6", n, err)
	}

	// An earlier expiry is kept: re-arming it on every hit would keep a
	// busy window open forever.
	if err := c.PExpire(ctx, key, 10*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	incr(7)
	within("an earlier expiry", 10*time.Second)

	// Another writer left the key without an expiry, or with a longer one.
	if err := c.Set(ctx, key, "40", 0).Err(); err != nil {
		t.Fatal(err)
	}
	incr(41)
	within("no expiry before", RateLimitMaxTTL)
	if err := c.Set(ctx, key, "50", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	incr(51)
	within("a longer expiry before", RateLimitMaxTTL)

	// A shorter ttl is the latest the key may expire.
	incr(52, 30*time.Second)
	within("ttl 30s", 30*time.Second)

	// A ttl the policy refuses writes nothing.
	before, beforeTTL := state()
	for _, ttl := range []time.Duration{RateLimitMaxTTL + time.Second, 0, -time.Second} {
		if _, err := k.Incr(ctx, c, ttl); !errors.Is(err, ErrTTL) {
			t.Errorf("Incr(%v): %v, want ErrTTL", ttl, err)
		}
	}
	if v, d := state(); v != before || d > beforeTTL {
		t.Errorf("refused Incr changed the key: %q %v, was %q %v", v, d, before, beforeTTL)
	}

	// A value that is not an integer is an error, and the script stops
	// before touching the expiry.
	if err := c.Set(ctx, key, "abc", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Incr(ctx, c); err == nil {
		t.Error("Incr of a non-integer value succeeded")
	}
	if v, d := state(); v != "abc" || d < 59*time.Minute {
		t.Errorf("a failed Incr changed the key: %q %v", v, d)
	}

	// Values above 2^53 come back exact (a Lua number would round them).
	big := int64(1)<<53 + 1
	if err := c.Set(ctx, key, strconv.FormatInt(big, 10), 0).Err(); err != nil {
		t.Fatal(err)
	}
	incr(big + 1)

	// The script is loaded again when the server has lost it.
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	incr(big + 2)
	within("after SCRIPT FLUSH", RateLimitMaxTTL)
}
