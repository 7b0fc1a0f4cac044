package keys

import (
	"errors"
	"slices"
	"testing"

	"github.com/keyreg/keyreg/registry"
)

// roundTrip is one family in the round-trip fuzz test: build a key from
// the fuzzer's values, and parse a key back.
type roundTrip struct {
	family string
	build  func(s1, s2 string, n1, n2 int64) (anyKey, string, error)
	parse  func(key string) (anyKey, error)
}

func rt[K interface {
	anyKey
	comparable
}](family string, mk func(s1, s2 string, n1, n2 int64) K, parse func(string) (K, error)) roundTrip {
	return roundTrip{
		family: family,
		build: func(s1, s2 string, n1, n2 int64) (anyKey, string, error) {
			k := mk(s1, s2, n1, n2)
			key, err := k.Build()
			return k, key, err
		},
		parse: func(key string) (anyKey, error) { return parse(key) },
	}
}

// roundTrips has one entry per hand-written family of the repository's
// keys.yaml, and a few of its presets' families;
// TestRoundTripCoversRegistry keeps it complete.
var roundTrips = []roundTrip{
	rt("cart-items", func(_, _ string, n, _ int64) CartItemsKey { return CartItemsKey{UserID: n} }, ParseCartItems),
	rt("celery-task-result", func(s, _ string, _, _ int64) CeleryTaskResultKey { return CeleryTaskResultKey{TaskID: s} }, ParseCeleryTaskResult),
	rt("celery-binding", func(s, _ string, _, _ int64) CeleryBindingKey { return CeleryBindingKey{Exchange: s} }, ParseCeleryBinding),
	rt("chat-messages", func(s, _ string, _, _ int64) ChatMessagesKey { return ChatMessagesKey{RoomID: s} }, ParseChatMessages),
	rt("chat-presence", func(s, _ string, _, _ int64) ChatPresenceKey { return ChatPresenceKey{RoomID: s} }, ParseChatPresence),
	rt("django-cache", func(s, _ string, n, _ int64) DjangoCacheKey { return DjangoCacheKey{Version: n, Key: s} }, ParseDjangoCache),
	rt("email-verification", func(s, _ string, _, _ int64) EmailVerificationKey { return EmailVerificationKey{Token: s} }, ParseEmailVerification),
	rt("feature-flags", func(s, _ string, _, _ int64) FeatureFlagsKey { return FeatureFlagsKey{Service: s} }, ParseFeatureFlags),
	rt("html-fragment-cache", func(s1, s2 string, _, _ int64) HTMLFragmentCacheKey {
		return HTMLFragmentCacheKey{Template: s1, Locale: s2}
	}, ParseHTMLFragmentCache),
	rt("idempotency-key", func(s, _ string, n, _ int64) IdempotencyKeyKey { return IdempotencyKeyKey{ClientID: n, Key: s} }, ParseIdempotencyKey),
	rt("leaderboard", func(_, _ string, n, _ int64) LeaderboardKey { return LeaderboardKey{Season: n} }, ParseLeaderboard),
	rt("lock", func(s, _ string, _, _ int64) LockKey { return LockKey{Resource: s} }, ParseLock),
	rt("lock-fence", func(s, _ string, _, _ int64) LockFenceKey { return LockFenceKey{Resource: s} }, ParseLockFence),
	rt("mail-outbox", func(_, _ string, _, _ int64) MailOutboxKey { return MailOutboxKey{} }, ParseMailOutbox),
	rt("product-cache", func(_, _ string, n, _ int64) ProductCacheKey { return ProductCacheKey{ProductID: n} }, ParseProductCache),
	rt("rate-limit", func(s, _ string, _, n int64) RateLimitKey { return RateLimitKey{APIKey: s, Window: n} }, ParseRateLimit),
	rt("user-session", func(s, _ string, _, _ int64) UserSessionKey { return UserSessionKey{SessionID: s} }, ParseUserSession),
	rt("user-session-index", func(_, _ string, n, _ int64) UserSessionIndexKey { return UserSessionIndexKey{UserID: n} }, ParseUserSessionIndex),
	rt("user-session-v1", func(s, _ string, _, _ int64) UserSessionV1Key { return UserSessionV1Key{Token: s} }, ParseUserSessionV1),
}

// seeds give every family at least one valid key.
var seeds = []struct {
	s1, s2 string
	n1, n2 int64
}{
	{"0e5b2a9c-8f1e-4c3b-9d2a-1b2c3d4e5f60", "en", 1, 2},
	{"deadBEEF", "de-DE", -7, 0},
	{"01ARZ3NDEKTSV4RRFFQ69G5FAV", "x", 9223372036854775807, -9223372036854775808},
	{"invoice-run/2026-03", "{}", 0, 42},
	{"views:decorators::cache", ":", 5, 5},
	{"", "", 0, 0},
}

// checkRoundTrip builds every family's key from the values and, when the
// values are valid, checks that Parse returns them and that keyreg's own
// matcher assigns the key to the same family. It returns the families
// whose key was valid.
func checkRoundTrip(t *testing.T, m *registry.Matcher, s1, s2 string, n1, n2 int64) []string {
	var ok []string
	for _, r := range roundTrips {
		k, key, err := r.build(s1, s2, n1, n2)
		if err != nil {
			if !errors.Is(err, ErrInvalidKey) {
				t.Errorf("%s: Build(%+v) = %v, want an error wrapping ErrInvalidKey", r.family, k, err)
			}
			continue
		}
		ok = append(ok, r.family)
		back, err := r.parse(key)
		if err != nil {
			t.Errorf("%s: Parse(%q) = %v", r.family, key, err)
			continue
		}
		if back != k {
			t.Errorf("%s: Parse(Build(%+v)) = %+v", r.family, k, back)
		}
		if f := m.Match(key); f == nil || f.Name != r.family {
			t.Errorf("%s: keyreg matches %q to %v", r.family, key, f)
		}
	}
	return ok
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range seeds {
		f.Add(s.s1, s.s2, s.n1, s.n2)
	}
	m := loadRegistry(f).Matcher()
	f.Fuzz(func(t *testing.T, s1, s2 string, n1, n2 int64) {
		checkRoundTrip(t, m, s1, s2, n1, n2)
	})
}

// TestRoundTripCoversRegistry fails when a family of keys.yaml has no
// round-trip case, or no seed builds a valid key of it.
func TestRoundTripCoversRegistry(t *testing.T) {
	reg := loadRegistry(t)
	m := reg.Matcher()
	valid := map[string]bool{}
	for _, s := range seeds {
		for _, f := range checkRoundTrip(t, m, s.s1, s.s2, s.n1, s.n2) {
			valid[f] = true
		}
	}
	for _, f := range reg.Families {
		has := slices.ContainsFunc(roundTrips, func(r roundTrip) bool { return r.family == f.Name })
		switch {
		case !has && f.FromPreset():
			// A preset's families come from the same templates, and
			// the cases cover every placeholder type; celery-task-result
			// and celery-binding are preset families with cases.
		case !has:
			t.Errorf("family %q has no round-trip case in roundTrips", f.Name)
		case !valid[f.Name]:
			t.Errorf("no seed builds a valid %q key", f.Name)
		}
	}
}
