package keys

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
	"github.com/redis/go-redis/v9"
)

// anyKey is what every generated key type has.
type anyKey interface {
	Build() (string, error)
	Family() string
	TTLPolicy() TTLPolicy
}

const (
	sessionID = "0e5b2a9c-8f1e-4c3b-9d2a-1b2c3d4e5f60"
	taskID    = "6f1d3c2b-0a9e-4b8c-8d7e-5f4a3b2c1d0e"
	roomID    = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	hexToken  = "9f86d081884c7d659a2feaa0c55ad015"
	sha256Hex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	when      = "2026-03-01T12:00:00Z"
)

// TestAccessorsAudit writes a key of every live family through the
// generated code into a real Redis, checks each key's TTL against its
// family's policy, and audits the server with keyreg's own audit: the
// generated accessors must produce zero findings.
func TestAccessorsAudit(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx := context.Background()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	str := func(s string) *string { return &s }
	var written []anyKey

	session := UserSessionKey{SessionID: sessionID}
	check(session.Set(ctx, c, UserSessionValue{
		UserID: 42, CreatedAt: when, ExpiresAt: "2026-03-02T12:00:00Z", CsrfToken: sha256Hex,
		AuthMethod: UserSessionAuthMethodPasskey, Roles: []string{"admin"}, IP: str("192.0.2.1"),
	}))
	written = append(written, session)

	short := UserSessionKey{SessionID: strings.Replace(sessionID, "0e5b", "1e5b", 1)}
	check(short.Set(ctx, c, UserSessionValue{
		UserID: 7, CreatedAt: when, ExpiresAt: when, CsrfToken: sha256Hex, AuthMethod: UserSessionAuthMethodSso,
	}, time.Hour))
	written = append(written, short)

	email := EmailVerificationKey{Token: hexToken}
	check(email.Set(ctx, c, EmailVerificationValue{UserID: 42, Email: "ada@example.com"}))
	written = append(written, email)

	product := ProductCacheKey{ProductID: 1001}
	check(product.Set(ctx, c, ProductCacheValue{
		ID: 1001, Sku: "TSHIRT-M", Title: "T-shirt", Price: ProductCachePrice{Amount: 1999, Currency: "EUR"},
		InStock: true, UpdatedAt: when, CategoryIDs: []int64{3, 5},
	}))
	written = append(written, product)

	fragment := HTMLFragmentCacheKey{Template: "header", Locale: "de-DE"}
	check(fragment.Set(ctx, c, "<nav>Start</nav>"))
	written = append(written, fragment)

	django := DjangoCacheKey{Version: 1, Key: "views.decorators.cache.cache_page..GET.abc:def"}
	check(django.Set(ctx, c, json.RawMessage(`{"html":"<p>hi</p>"}`)))
	written = append(written, django)

	idem := IdempotencyKeyKey{ClientID: 9, Key: sessionID}
	check(idem.Set(ctx, c, IdempotencyKeyValue{State: IdempotencyKeyStateInFlight, RequestHash: sha256Hex, CreatedAt: when}))
	written = append(written, idem)

	celery := CeleryTaskResultKey{TaskID: taskID}
	check(celery.Set(ctx, c, CeleryTaskResultValue{Status: CeleryTaskResultStatusSuccess, Result: json.RawMessage(`42`), TaskID: taskID}))
	written = append(written, celery)

	rate := RateLimitKey{APIKey: "cafe01", Window: 29_500_000}
	check(rate.Set(ctx, c, 3))
	written = append(written, rate)

	lock := LockKey{Resource: "invoice-run/2026-03"}
	check(lock.Set(ctx, c, "holder-token", 10*time.Second))
	written = append(written, lock)

	// A persistent family's Set removes a TTL some other writer left.
	fence := LockFenceKey{Resource: "invoice-run/2026-03"}
	check(c.Set(ctx, fence.String(), "1", time.Hour).Err())
	check(fence.Set(ctx, c, 2))
	written = append(written, fence)

	cart := CartItemsKey{UserID: 42}
	check(cart.HSet(ctx, c, map[string]CartItemsField{
		"1001": {Qty: 2, UnitPrice: 1999, AddedAt: when},
		"1002": {Qty: 1, UnitPrice: 500, AddedAt: when, Variant: str("red")},
	}))
	written = append(written, cart)

	flags := FeatureFlagsKey{Service: "checkout"}
	check(c.HSet(ctx, flags.String(), "old", `{"enabled":false}`).Err())
	check(c.Expire(ctx, flags.String(), time.Hour).Err())
	check(flags.HSet(ctx, c, map[string]FeatureFlagsField{"new_checkout": {Enabled: true, AllowUserIDs: []int64{1, 2}}}))
	written = append(written, flags)

	// Other types are written with go-redis directly; ApplyTTL then applies
	// the family's policy.
	index := UserSessionIndexKey{UserID: 42}
	check(c.SAdd(ctx, MustBuildUserSessionIndex(42), sessionID).Err())
	check(index.ApplyTTL(ctx, c))
	written = append(written, index)

	room := ChatMessagesKey{RoomID: roomID}
	check(c.XAdd(ctx, &redis.XAddArgs{Stream: room.String(), Values: []any{"user_id", "42", "kind", "text", "body", "hi"}}).Err())
	for _, g := range []string{"push", "search"} { // the consumer groups keys.yaml declares
		check(c.XGroupCreate(ctx, room.String(), g, "$").Err())
	}
	check(room.ApplyTTL(ctx, c, 0))
	written = append(written, room)

	presence := ChatPresenceKey{RoomID: roomID}
	check(c.SAdd(ctx, presence.String(), "42").Err())
	check(presence.ApplyTTL(ctx, c, 2*time.Minute))
	written = append(written, presence)

	board := LeaderboardKey{Season: 2026}
	check(c.ZAdd(ctx, board.String(), redis.Z{Score: 10, Member: "42"}).Err())
	check(board.ApplyTTL(ctx, c))
	written = append(written, board)

	outbox := MailOutboxKey{}
	check(c.LPush(ctx, outbox.String(), `{"id":"`+roomID+`","template":"welcome","to":"ada@example.com","enqueued_at":"`+when+`"}`).Err())
	check(outbox.ApplyTTL(ctx, c))
	written = append(written, outbox)

	// Every written key obeys its family's TTL policy.
	for _, k := range written {
		key, err := k.Build()
		check(err)
		ttl, err := c.PTTL(ctx, key).Result()
		check(err)
		if ttl == -2 {
			t.Errorf("%s: key %q was not written", k.Family(), key)
			continue
		}
		if p := k.TTLPolicy(); !p.Allows(ttl) {
			t.Errorf("%s: key %q has TTL %v, which policy %v does not allow", k.Family(), key, ttl, p)
		}
	}
	// Defaults and explicit choices land where they should.
	ttlOf := func(k anyKey) time.Duration {
		key, _ := k.Build()
		d, err := c.PTTL(ctx, key).Result()
		check(err)
		return d
	}
	if d := ttlOf(session); d < UserSessionMaxTTL-time.Minute {
		t.Errorf("user-session written without a ttl has TTL %v, want the maximum %v", d, UserSessionMaxTTL)
	}
	if d := ttlOf(short); d > time.Hour {
		t.Errorf("user-session written with ttl 1h has TTL %v", d)
	}
	if d := ttlOf(fence); d != -1 {
		t.Errorf("persistent lock-fence has TTL %v, want none", d)
	}
	if d := ttlOf(flags); d != -1 {
		t.Errorf("persistent feature-flags has TTL %v after HSet, want none", d)
	}
	if d := ttlOf(room); d != -1 {
		t.Errorf("chat-messages with ttl 0 has TTL %v, want none", d)
	}

	// What the accessors wrote reads back.
	got, err := session.Get(ctx, c)
	check(err)
	if got.UserID != 42 || got.AuthMethod != UserSessionAuthMethodPasskey || got.IP == nil || *got.IP != "192.0.2.1" {
		t.Errorf("user-session read back as %+v", got)
	}
	items, err := cart.HGetAll(ctx, c)
	check(err)
	if len(items) != 2 || items["1002"].Variant == nil || items["1001"].Qty != 2 {
		t.Errorf("cart-items read back as %+v", items)
	}
	n, err := rate.Get(ctx, c)
	check(err)
	if n != 3 {
		t.Errorf("rate-limit read back as %d", n)
	}
	if _, err := (UserSessionKey{SessionID: taskID}).Get(ctx, c); !errors.Is(err, redis.Nil) {
		t.Errorf("Get of a missing key: %v, want redis.Nil", err)
	}

	// keyreg's own audit finds nothing wrong.
	reg := loadRegistry(t)
	// AllowTouch: the test server is Redis 7.0, where sampling a primary
	// is refused unless resetting LRU/LFU state is accepted.
	conn, err := scanner.Connect(ctx, scanner.Options{URL: srv.URL(), Plan: audit.Plan(reg, true), AllowTouch: true})
	check(err)
	defer conn.Close()
	o := audit.Defaults()
	o.Filtered = true // families without keys here are not unused
	rep, err := audit.Run(ctx, conn, reg, o)
	check(err)
	for _, f := range rep.Findings {
		t.Errorf("audit finding: %s %s %s: %s (examples %v)", f.Severity, f.Rule, f.Family, f.Message, f.Examples)
	}
	if rep.Totals.Registered != int64(len(written)) || rep.Totals.Unregistered != 0 {
		t.Errorf("audit saw %d registered and %d unregistered keys, want %d and 0", rep.Totals.Registered, rep.Totals.Unregistered, len(written))
	}
	if rep.Scan.Sampled == 0 {
		t.Error("the audit sampled no payloads")
	}

	// Deleting works, and refused writes write nothing.
	check(lock.Delete(ctx, c))
	if n := c.Exists(ctx, lock.String()).Val(); n != 0 {
		t.Errorf("lock still exists after Delete")
	}
	long := UserSessionKey{SessionID: strings.Replace(sessionID, "0e5b", "2e5b", 1)}
	if err := long.Set(ctx, c, got, 25*time.Hour); !errors.Is(err, ErrTTL) {
		t.Errorf("Set with a ttl above the maximum: %v, want ErrTTL", err)
	}
	if err := long.Set(ctx, c, got, 0); !errors.Is(err, ErrTTL) {
		t.Errorf("Set of a max family with ttl 0: %v, want ErrTTL", err)
	}
	if err := room.ApplyTTL(ctx, c, -time.Second); !errors.Is(err, ErrTTL) {
		t.Errorf("ApplyTTL of an optional family with a negative ttl: %v, want ErrTTL", err)
	}
	if n := c.Exists(ctx, long.String()).Val(); n != 0 {
		t.Errorf("a refused Set wrote the key")
	}
	if err := (LockKey{Resource: "a:b"}).Set(ctx, c, "x"); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("Set of an invalid key: %v, want ErrInvalidKey", err)
	}
}

// TestEnumForwardCompatible: a value written by a newer writer (an unknown
// enum value, an unknown field) decodes; the unknown value becomes the
// Unknown constant, and encoding it fails instead of writing garbage.
func TestEnumForwardCompatible(t *testing.T) {
	var v UserSessionValue
	in := `{"user_id":1,"created_at":"x","expires_at":"y","csrf_token":"z","auth_method":"webauthn","new_field":true}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if v.AuthMethod != UserSessionAuthMethodUnknown || v.AuthMethod.Known() {
		t.Errorf("auth_method = %q, want UserSessionAuthMethodUnknown", v.AuthMethod)
	}
	if _, err := json.Marshal(v); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("encoding an unknown enum value: %v, want ErrInvalidValue", err)
	}
	v.AuthMethod = UserSessionAuthMethodMagicLink
	b, err := json.Marshal(v)
	if err != nil || !strings.Contains(string(b), `"auth_method":"magic_link"`) || strings.Contains(string(b), "mfa") {
		t.Errorf("encoded %s, %v", b, err)
	}
}

func TestBuildValidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  func() error
	}{
		{"separator in a word", func() error { _, err := BuildLock("a:b"); return err }},
		{"empty word", func() error { _, err := BuildLock(""); return err }},
		{"not a uuid", func() error { _, err := BuildUserSession("not-a-uuid"); return err }},
		{"not hex", func() error { _, err := BuildEmailVerification("xyz"); return err }},
		{"not a ulid", func() error { _, err := BuildChatMessages("01ARZ3NDEKTSV4RRFFQ69G5FAU"); return err }},
		{"empty any", func() error { _, err := BuildDjangoCache(1, ""); return err }},
		{"key of another family", func() error { _, err := ParseUserSession("v1:lock:x"); return err }},
		{"int overflow", func() error { _, err := ParseLeaderboard("v1:leaderboard:99999999999999999999"); return err }},
	} {
		if err := tc.err(); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("%s: %v, want ErrInvalidKey", tc.name, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("MustBuildLock with a separator did not panic")
		}
	}()
	MustBuildLock("a:b")
}
