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

	// A counter created by Incr gets its family's TTL in the same script.
	counted := RateLimitKey{APIKey: "cafe02", Window: 29_500_000}
	if _, err := counted.Incr(ctx, c); err != nil {
		t.Fatal(err)
	}
	written = append(written, counted)

	// A lock and its fence are written only by the generated acquire: one
	// script sets the lock with its lease and increments the fence.
	held, err := TryAcquireLock(ctx, c, "invoice-run/2026-03", LockOptions{})
	check(err)
	if held.Fence() != 1 {
		t.Fatalf("first acquisition: fence %d, want 1", held.Fence())
	}
	written = append(written, LockKey{Resource: "invoice-run/2026-03"}, LockFenceKey{Resource: "invoice-run/2026-03"})

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

	// Collections through their typed writers, which apply the TTL in the
	// same transaction.
	index := UserSessionIndexKey{UserID: 42}
	check(index.SAdd(ctx, c, []string{sessionID}))
	written = append(written, index)

	room := ChatMessagesKey{RoomID: roomID}
	_, err = room.XAdd(ctx, c, map[string]string{"user_id": "42", "kind": "text", "body": "hi"}, 0)
	check(err)
	for _, g := range []string{"push", "search"} { // the consumer groups keys.yaml declares
		check(c.XGroupCreate(ctx, room.String(), g, "$").Err())
	}
	written = append(written, room)

	presence := ChatPresenceKey{RoomID: roomID}
	check(presence.SAdd(ctx, c, []int64{42}, 2*time.Minute))
	written = append(written, presence)

	board := LeaderboardKey{Season: 2026}
	check(board.ZAdd(ctx, c, []ZMember[int64]{{Score: 10, Member: 42}}))
	written = append(written, board)

	outbox := MailOutboxKey{}
	check(outbox.LPush(ctx, c, []MailOutboxItem{{ID: roomID, Template: "welcome", To: "ada@example.com", EnqueuedAt: when}}))
	written = append(written, outbox)

	// ApplyTTL applies the policy after a write made with go-redis directly.
	check(c.SAdd(ctx, index.String(), taskID).Err())
	check(index.ApplyTTL(ctx, c))

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
	if d := ttlOf(LockFenceKey{Resource: "invoice-run/2026-03"}); d != -1 {
		t.Errorf("persistent lock-fence has TTL %v, want none", d)
	}
	if d := ttlOf(LockKey{Resource: "invoice-run/2026-03"}); d <= 0 || d > LockMaxTTL {
		t.Errorf("lock has TTL %v, want its lease of at most %v", d, LockMaxTTL)
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

	// Releasing works, and refused writes write nothing.
	check(held.Release(ctx, c))
	if n := c.Exists(ctx, held.Key()).Val(); n != 0 {
		t.Errorf("lock still exists after Release")
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
	if _, err := TryAcquireLock(ctx, c, "a:b", LockOptions{}); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("acquiring a lock of an invalid key: %v, want ErrInvalidKey", err)
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

// TestCollectionWriters: every write re-applies the family's TTL, and a
// value that breaks the family's schema is refused with ErrSchema before
// anything is written, for every collection type, a string and a hash.
func TestCollectionWriters(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx := context.Background()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The TTL is re-armed by every write, not only by the first.
	presence := ChatPresenceKey{RoomID: roomID}
	check(presence.SAdd(ctx, c, []int64{1, 2}))
	check(c.PExpire(ctx, presence.String(), time.Second).Err())
	check(presence.SAdd(ctx, c, []int64{3}))
	if d := c.PTTL(ctx, presence.String()).Val(); d <= time.Second || d > ChatPresenceMaxTTL {
		t.Errorf("chat-presence PTTL %v after a second SAdd, want about %v", d, ChatPresenceMaxTTL)
	}
	if err := presence.SAdd(ctx, c, []int64{4}, ChatPresenceMaxTTL+time.Second); !errors.Is(err, ErrTTL) {
		t.Errorf("SAdd with a ttl above the maximum: %v, want ErrTTL", err)
	}
	// A persistent family's write removes a TTL another writer left.
	board := LeaderboardKey{Season: 2025}
	check(c.ZAdd(ctx, board.String(), redis.Z{Score: 1, Member: "9"}).Err())
	check(c.Expire(ctx, board.String(), time.Hour).Err())
	check(board.ZAdd(ctx, c, []ZMember[int64]{{Score: 5, Member: 9}, {Score: 2, Member: 10}}))
	if d := c.PTTL(ctx, board.String()).Val(); d != -1 {
		t.Errorf("persistent leaderboard has PTTL %v after ZAdd, want none", d)
	}
	if s := c.ZScore(ctx, board.String(), "9").Val(); s != 5 {
		t.Errorf("ZAdd left member 9 at score %v, want 5", s)
	}
	outbox := MailOutboxKey{}
	job := func(id string) MailOutboxItem {
		return MailOutboxItem{ID: id, Template: "welcome", To: "ada@example.com", EnqueuedAt: when}
	}
	check(outbox.RPush(ctx, c, []MailOutboxItem{job("01ARZ3NDEKTSV4RRFFQ69G5FA1"), job("01ARZ3NDEKTSV4RRFFQ69G5FA2")}))
	check(outbox.LPush(ctx, c, []MailOutboxItem{job("01ARZ3NDEKTSV4RRFFQ69G5FA0")}))
	if l := c.LRange(ctx, outbox.String(), 0, -1).Val(); len(l) != 3 || !strings.Contains(l[0], "FA0") || !strings.Contains(l[2], "FA2") {
		t.Errorf("outbox holds %q", l)
	}

	// Refused writes: each breaks one constraint of its family's schema
	// and nothing of the batch is written.
	room := ChatMessagesKey{RoomID: "01ARZ3NDEKTSV4RRFFQ69G5FB0"}
	_, roomErr := room.XAdd(ctx, c, map[string]string{"user_id": "042", "kind": "text", "body": "hi"}, 0)
	minusOne := int64(-1)
	for name, err := range map[string]error{
		"set member below minimum":  (ChatPresenceKey{RoomID: "01ARZ3NDEKTSV4RRFFQ69G5FB1"}).SAdd(ctx, c, []int64{5, 0}),
		"set member not a uuid":     (UserSessionIndexKey{UserID: 5}).SAdd(ctx, c, []string{"SECRET-NOT-A-UUID"}),
		"zset member below minimum": (LeaderboardKey{Season: 1999}).ZAdd(ctx, c, []ZMember[int64]{{Score: 1, Member: 1}, {Score: 1, Member: -3}}),
		"list item bad pattern":     (MailOutboxKey{}).LPush(ctx, c, []MailOutboxItem{job("not-a-ulid")}),
		"list item bad minimum":     (MailOutboxKey{}).RPush(ctx, c, []MailOutboxItem{{ID: roomID, Template: "welcome", To: "a@example.com", EnqueuedAt: when, Attempts: &minusOne}}),
		"stream entry bad pattern":  roomErr,
		"hash field name":           (CartItemsKey{UserID: 77}).HSet(ctx, c, map[string]CartItemsField{"sku-1": {Qty: 1, UnitPrice: 1, AddedAt: when}}),
		"hash field value":          (CartItemsKey{UserID: 77}).HSet(ctx, c, map[string]CartItemsField{"1": {Qty: 1000, UnitPrice: 1, AddedAt: when}}),
		"string value":              (EmailVerificationKey{Token: hexToken}).Set(ctx, c, EmailVerificationValue{UserID: 0, Email: "ada@example.com"}),
	} {
		if !errors.Is(err, ErrSchema) {
			t.Errorf("%s: %v, want ErrSchema", name, err)
		} else if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: the error quotes the value: %v", name, err)
		}
	}
	for _, k := range []string{"v1:chat:room:01ARZ3NDEKTSV4RRFFQ69G5FB0:messages", "v1:chat:room:01ARZ3NDEKTSV4RRFFQ69G5FB1:online",
		MustBuildUserSessionIndex(5), MustBuildLeaderboard(1999), MustBuildCartItems(77), MustBuildEmailVerification(hexToken)} {
		if c.Exists(ctx, k).Val() != 0 {
			t.Errorf("a refused write created %q", k)
		}
	}
	if l := c.LLen(ctx, outbox.String()).Val(); l != 3 {
		t.Errorf("outbox has %d items after refused pushes, want 3", l)
	}
	// MAXLEN ~ keeps the stream near max_len.
	pipe := ChatMessagesKey{RoomID: "01ARZ3NDEKTSV4RRFFQ69G5FB2"}
	for i := range ChatMessagesMaxLen + 500 {
		if _, err := pipe.XAdd(ctx, c, map[string]string{"user_id": "1", "kind": "text", "body": "x"}, 0); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if l := c.XLen(ctx, pipe.String()).Val(); l < ChatMessagesMaxLen || l >= ChatMessagesMaxLen+500 {
		t.Errorf("XLEN %d after %d appends, want trimmed to about %d", l, ChatMessagesMaxLen+500, ChatMessagesMaxLen)
	}
}
