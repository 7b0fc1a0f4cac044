package audit_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
	"github.com/keyreg/keyreg/scanner"
	"github.com/keyreg/keyreg/source"
)

// secret is a payload marker: values holding it break their family's schema
// or encoding, so a report that leaked values would show it.
const secret = "hunter2-PAYLOAD-SECRET"

// Chaos groups: keys changed while the audit runs. Their counts are not
// deterministic, so the tests check invariants for them instead.
const (
	groupDoomed = "doomed"    // deleted after the first batch
	groupEph    = "ephemeral" // PEXPIRE of a few ms just before the scan
	groupFlip   = "flip"      // retyped from string to hash after the first batch
)

// keySpec is one seeded key and what the audit must say about it.
type keySpec struct {
	key string
	db  int
	// family is the family whose Keys count the key; "" when none matches
	// (unregistered and placeholder-invalid keys).
	family string
	// on is the family the key's findings land on: family, the family
	// whose shape a placeholder-invalid key has, or "" for unregistered.
	on    string
	rules []string // the key rules the key triggers
	ttl   bool     // the key has a TTL
	// sampled says the audit reads and checks the payload when the sample
	// quota allows: the family has a schema or encoding and the type fits.
	sampled bool
	size    int    // bytes of a string value, for --max-value-bytes
	group   string // "" for stable keys, else a chaos group
	write   func(ctx context.Context, p redis.Pipeliner)
	// post runs after every write, for RESTORE ... IDLETIME.
	post func(ctx context.Context, c redis.UniversalClient) error
}

func keyID(db int, key string) string { return fmt.Sprintf("%d/%q", db, key) }

// keyspace is a seeded keyspace: every key with its expectations.
type keyspace struct {
	specs []*keySpec
}

func (ks *keyspace) add(s *keySpec) {
	if s.on == "" && s.family != "" {
		s.on = s.family
	}
	ks.specs = append(ks.specs, s)
}

func (ks *keyspace) group(g string) []*keySpec {
	var out []*keySpec
	for _, s := range ks.specs {
		if s.group == g {
			out = append(out, s)
		}
	}
	return out
}

func setKey(k, v string, ttl time.Duration) func(context.Context, redis.Pipeliner) {
	return func(ctx context.Context, p redis.Pipeliner) { p.Set(ctx, k, v, ttl) }
}

// binaryNames are key names that break naive text handling.
var binaryNames = []string{"\x00", "\xff\xfe", "new\nline", "a:b:c", "{tag}", "sp ace", "glob*?[]\\", "\x1b[31mred"}

// newKeyspace builds the keyspace of the tests against testdata/keys.yaml.
// With chaos it includes the doomed, ephemeral and flip groups.
func newKeyspace(chaos bool) *keyspace {
	ks := &keyspace{}
	rng := rand.New(rand.NewPCG(1, 2))
	id := 0
	next := func() int { id++; return id }
	half := 30 * time.Minute
	bad := fmt.Sprintf(`{"user_id":%q,"role":%q,"token":%q,"note":%q}`, secret, secret, secret, secret)

	// session: string, json, ttl max 1h, schema, max_bytes 4096.
	// session adds n session keys holding v, or a valid value when v is "".
	session := func(n int, value string, ttl time.Duration, rs ...string) {
		for range n {
			k := fmt.Sprintf("v1:session:%d", next())
			v := value
			if v == "" {
				v = fmt.Sprintf(`{"user_id":%d}`, id)
			}
			ks.add(&keySpec{key: k, family: "session", rules: rs, ttl: ttl > 0, sampled: true, size: len(v), write: setKey(k, v, ttl)})
		}
	}
	session(1200, "", half)
	session(40, "", 0, rules.TTLMissing.ID)
	session(30, "", 2*time.Hour, rules.TTLExceedsMax.ID)
	session(25, bad, half, rules.PayloadInvalid.ID)
	session(5, bad, 0, rules.TTLMissing.ID, rules.PayloadInvalid.ID)
	session(15, "\x81\xa7user_id\x01", half, rules.EncodingMismatch.ID) // msgpack
	session(10, `{"user_id":1,"pad":"`+strings.Repeat("x", 20000)+`"}`, half, rules.ValueTooLarge.ID)
	for range 20 {
		k := fmt.Sprintf("v1:session:%d", next())
		ks.add(&keySpec{key: k, family: "session", rules: []string{rules.TypeMismatch.ID}, ttl: true,
			write: func(ctx context.Context, p redis.Pipeliner) { p.HSet(ctx, k, "user_id", "1"); p.Expire(ctx, k, half) }})
	}
	for i := range 12 {
		k := fmt.Sprintf("v1:session:abc%d", i)
		ks.add(&keySpec{key: k, on: "session", rules: []string{rules.PlaceholderInvalid.ID}, ttl: true, write: setKey(k, "{}", half)})
	}

	// profile: hash, json, persistent, schema, max_idle 1h.
	profile := func(n int, age string, ttl time.Duration, stale bool, rs ...string) {
		for range n {
			k := fmt.Sprintf("v1:profile:%d", next())
			s := &keySpec{key: k, family: "profile", rules: rs, ttl: ttl > 0, sampled: true,
				write: func(ctx context.Context, p redis.Pipeliner) {
					p.HSet(ctx, k, "name", `"alice"`, "age", age)
					if ttl > 0 {
						p.Expire(ctx, k, ttl)
					}
				}}
			if stale {
				s.post = func(ctx context.Context, c redis.UniversalClient) error {
					dump, err := c.Dump(ctx, k).Result()
					if err != nil {
						return err
					}
					return c.Do(ctx, "RESTORE", k, 0, dump, "REPLACE", "IDLETIME", 7200).Err()
				}
			}
			ks.add(s)
		}
	}
	profile(300, "30", 0, false)
	profile(20, "30", time.Hour, false, rules.TTLUnexpected.ID)
	profile(15, fmt.Sprintf("%q", secret), 0, false, rules.PayloadInvalid.ID)
	profile(10, "30", 0, true, rules.StaleKey.ID)
	for i := range 5 {
		k := fmt.Sprintf("v1:profile:x%d", i)
		ks.add(&keySpec{key: k, on: "profile", rules: []string{rules.PlaceholderInvalid.ID},
			write: func(ctx context.Context, p redis.Pipeliner) { p.HSet(ctx, k, "name", `"bob"`) }})
	}

	// cart: list behind a hash tag, text, optional ttl, max_len 5.
	cart := func(n, members int, rs ...string) {
		for range n {
			k := fmt.Sprintf("v1:cart:{%d}:items", next())
			vals := make([]any, members)
			for i := range vals {
				vals[i] = fmt.Sprintf("item-%d", i)
			}
			ks.add(&keySpec{key: k, family: "cart", rules: rs, sampled: true,
				write: func(ctx context.Context, p redis.Pipeliner) { p.RPush(ctx, k, vals...) }})
		}
	}
	cart(200, 3)
	cart(15, 8, rules.CollectionTooLong.ID)

	// counter: string, int, persistent; ttl-unexpected is ignored.
	counter := func(n int, v string, ttl time.Duration, rs ...string) {
		for range n {
			k := fmt.Sprintf("v1:counter:c%d", next())
			ks.add(&keySpec{key: k, family: "counter", rules: rs, ttl: ttl > 0, sampled: true, size: len(v), write: setKey(k, v, ttl)})
		}
	}
	counter(100, "42", 0)
	counter(10, "7", time.Hour, rules.TTLUnexpected.ID)
	counter(8, "not-a-number", 0, rules.EncodingMismatch.ID)
	counter(2, secret, 0, rules.EncodingMismatch.ID)

	// old-feed: a deprecated zset past its sunset.
	for range 30 {
		k := fmt.Sprintf("v1:feed:%d", next())
		ks.add(&keySpec{key: k, family: "old-feed", rules: []string{rules.DeprecatedLive.ID},
			write: func(ctx context.Context, p redis.Pipeliner) { p.ZAdd(ctx, k, redis.Z{Score: 1, Member: "m"}) }})
	}

	// blob: binary strings, max_bytes 2048.
	blob := func(n, size int, rs ...string) {
		for range n {
			k := fmt.Sprintf("v1:blob:%04x", next())
			v := make([]byte, size)
			for i := range v {
				v[i] = byte(rng.UintN(256))
			}
			ks.add(&keySpec{key: k, family: "blob", rules: rs, sampled: true, size: size, write: setKey(k, string(v), 0)})
		}
	}
	blob(50, 100)
	blob(12, 3000, rules.ValueTooLarge.ID)

	// bin: binary-safe names through an any placeholder.
	bin := func(k string) {
		ks.add(&keySpec{key: k, family: "bin",
			write: func(ctx context.Context, p redis.Pipeliner) { p.SAdd(ctx, k, "m") }})
	}
	for _, b := range binaryNames {
		bin("v1:bin:" + b)
	}
	for range 40 {
		bin(fmt.Sprintf("v1:bin:n%d", next()))
	}

	// events: streams whose entries have a schema.
	events := func(n int, badEntry bool, rs ...string) {
		for range n {
			k := fmt.Sprintf("v1:events:t%d", next())
			ks.add(&keySpec{key: k, family: "events", rules: rs, sampled: true,
				write: func(ctx context.Context, p redis.Pipeliner) {
					for i := range 3 {
						idv := fmt.Sprint(i + 1)
						if badEntry && i == 1 {
							idv = fmt.Sprintf("%q", secret)
						}
						p.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []any{"id", idv, "kind", `"order"`}})
					}
				}})
		}
	}
	events(20, false)
	events(5, true, rules.PayloadInvalid.ID)

	// Unregistered keys, binary names among them.
	unreg := func(k string) {
		ks.add(&keySpec{key: k, rules: []string{rules.UnregisteredKey.ID}, write: setKey(k, "x", 0)})
	}
	for i := range 150 {
		unreg(fmt.Sprintf("tmp:job:%d", i))
	}
	for i := range 60 {
		unreg(fmt.Sprintf("legacy_%d", i))
	}
	for _, b := range binaryNames {
		if b != "a:b:c" {
			unreg(b)
		}
	}
	unreg("")

	if !chaos {
		return ks
	}
	for range 400 {
		k := fmt.Sprintf("v1:doomed:%d", next())
		ks.add(&keySpec{key: k, family: "doomed", group: groupDoomed, write: setKey(k, "x", 0)})
	}
	for range 300 {
		k := fmt.Sprintf("v1:eph:%d", next())
		ks.add(&keySpec{key: k, family: "ephemeral", group: groupEph, ttl: true, rules: []string{rules.TTLUnexpected.ID}, write: setKey(k, "x", 0)})
	}
	for range 200 {
		k := fmt.Sprintf("v1:flip:%d", next())
		ks.add(&keySpec{key: k, family: "flip", group: groupFlip, sampled: true, write: setKey(k, `{"a":1}`, 0)})
	}
	return ks
}

// seed writes the keys of db with c, in pipelines of a few hundred keys.
func (ks *keyspace) seed(t testing.TB, c redis.UniversalClient, db int) {
	t.Helper()
	ctx := context.Background()
	var specs []*keySpec
	for _, s := range ks.specs {
		if s.db == db {
			specs = append(specs, s)
		}
	}
	for chunk := range slices.Chunk(specs, 300) {
		p := c.Pipeline()
		for _, s := range chunk {
			s.write(ctx, p)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("seeding db %d: %v", db, err)
		}
	}
	for _, s := range specs {
		if s.post != nil {
			if err := s.post(ctx, c); err != nil {
				t.Fatalf("seeding %q: %v", s.key, err)
			}
		}
	}
}

// restale runs the post step of the keys of database 0 again: RESTORE
// with IDLETIME makes the stale keys idle again.
func (ks *keyspace) restale(t testing.TB, c redis.UniversalClient) {
	t.Helper()
	for _, s := range ks.specs {
		if s.db == 0 && s.post != nil {
			if err := s.post(context.Background(), c); err != nil {
				t.Fatalf("restaling %q: %v", s.key, err)
			}
		}
	}
}

// arm sets the PEXPIRE of a few ms on the ephemeral keys; call it right
// before the audit. Whether SCAN reaches a key before it expires depends on
// the machine's load: through Sentinel, on a busy machine, all of them
// could expire first, and family-unused then rightly fires on the family
// (the test failed about one run in eight). So the first key lives an hour:
// the family always has a key, and the others still expire during the scan.
func (ks *keyspace) arm(t testing.TB, c redis.Cmdable) {
	t.Helper()
	ctx := context.Background()
	p := c.Pipeline()
	for i, s := range ks.group(groupEph) {
		ttl := time.Duration(1+i%40) * time.Millisecond
		if i == 0 {
			ttl = time.Hour
		}
		p.PExpire(ctx, s.key, ttl)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatalf("arming ephemeral keys: %v", err)
	}
}

// wreck deletes the doomed keys and atomically retypes the flip keys (DEL
// and HSET in one MULTI), as other clients would during an audit.
func (ks *keyspace) wreck(c redis.Cmdable) error {
	ctx := context.Background()
	p := c.Pipeline()
	for _, s := range ks.group(groupDoomed) {
		p.Del(ctx, s.key)
	}
	if _, err := p.Exec(ctx); err != nil {
		return fmt.Errorf("deleting doomed keys: %w", err)
	}
	// One MULTI per key: a cluster refuses transactions across slots.
	for _, s := range ks.group(groupFlip) {
		tx := c.TxPipeline()
		tx.Del(ctx, s.key)
		tx.HSet(ctx, s.key, "f", "v")
		if _, err := tx.Exec(ctx); err != nil {
			return fmt.Errorf("retyping %q: %w", s.key, err)
		}
	}
	return nil
}

// expectation is what an audit of the stable keys must report exactly.
type expectation struct {
	keys, withTTL, findings, sampled, skipped map[string]int64 // by family
	shaped                                    map[string]int64 // by family: placeholder-invalid keys
	hits                                      map[[2]string]int64
	unregistered                              int64
	groups                                    map[string]int64
	total                                     int64
	errors, warnings                          int64
}

// expect computes the expectation of the stable keys of the databases in
// dbs (all when nil) from the seeding records, for an audit that samples
// every key and skips string values over maxValue bytes (0: none). keep,
// when set, filters the keys further (for --match).
func (ks *keyspace) expect(reg *registry.Registry, maxValue int64, keep func(*keySpec) bool) expectation {
	e := expectation{
		keys: map[string]int64{}, withTTL: map[string]int64{}, findings: map[string]int64{},
		sampled: map[string]int64{}, skipped: map[string]int64{}, shaped: map[string]int64{},
		hits: map[[2]string]int64{}, groups: map[string]int64{},
	}
	sev := map[string]diag.Severity{}
	for _, r := range rules.KeyRules() {
		sev[r.ID] = r.Severity
	}
	for _, s := range ks.specs {
		if s.group != "" || (keep != nil && !keep(s)) {
			continue
		}
		e.total++
		switch {
		case s.family == "" && s.on == "":
			e.unregistered++
			e.groups[audit.InferPrefix(s.key, reg.Separator)]++
		case s.family == "":
			// placeholder-invalid: a key of the family whose shape it has,
			// which no other rule checks.
			e.keys[s.on]++
			e.shaped[s.on]++
			if s.ttl {
				e.withTTL[s.on]++
			}
		default:
			e.keys[s.family]++
			if s.ttl {
				e.withTTL[s.family]++
			}
			if s.sampled {
				if maxValue > 0 && int64(s.size) > maxValue {
					e.skipped[s.family]++
				} else {
					e.sampled[s.family]++
				}
			}
		}
		active := false
		for _, r := range s.rules {
			if r == rules.PayloadInvalid.ID && maxValue > 0 && int64(s.size) > maxValue {
				continue // not read
			}
			e.hits[[2]string{s.on, r}]++
			suppressed := false
			if f, ok := reg.Family(s.on); ok {
				_, suppressed = f.Ignored(r)
			}
			if !suppressed {
				active = true
				switch sev[r] {
				case diag.Error:
					e.errors++
				case diag.Warn:
					e.warnings++
				}
			}
		}
		if active {
			e.findings[s.on]++
		}
	}
	return e
}

// observer wraps the scanner connection to watch the audit: it records
// every key delivered and every sample that found its key gone, and runs
// after once the audit has processed a batch.
type observer struct {
	audit.Source
	after func(batch int) error

	mu             sync.Mutex
	batches        int
	delivered      map[string]scanner.KeyInfo
	twice          []string
	dbs            map[int]bool
	samples        map[string]int // samples read by Redis type
	sampleVanished map[string]bool
	stats          scanner.Stats
}

func newObserver(src audit.Source) *observer {
	return &observer{Source: src, delivered: map[string]scanner.KeyInfo{}, dbs: map[int]bool{},
		samples: map[string]int{}, sampleVanished: map[string]bool{}}
}

func (o *observer) ScanKeys(ctx context.Context, plan source.Planner, fn func([]scanner.KeyInfo) error) (scanner.Stats, error) {
	st, err := o.Source.ScanKeys(ctx, plan, func(b []scanner.KeyInfo) error {
		o.mu.Lock()
		for _, k := range b {
			id := keyID(k.DB, k.Key)
			if _, ok := o.delivered[id]; ok {
				o.twice = append(o.twice, id)
			}
			o.delivered[id] = k
			o.dbs[k.DB] = true
		}
		o.mu.Unlock()
		if err := fn(b); err != nil {
			return err
		}
		o.batches++
		if o.after != nil {
			return o.after(o.batches)
		}
		return nil
	})
	o.stats = st
	return st, err
}

// Touch reports no eviction-state policy, as these tests' sources did
// before the Source interface had Touch: they opt in to touching (dial),
// and the report note that says so is TestTouch's subject.
func (o *observer) Touch() source.TouchState { return source.TouchState{} }

// SampleEach records every sample read, and every one that found its key
// gone.
func (o *observer) SampleEach(ctx context.Context, keys []scanner.KeyInfo, n int, maxBytes int64, fn func([]int, []payload.Sample, []error)) {
	o.Source.SampleEach(ctx, keys, n, maxBytes, func(idx []int, ss []payload.Sample, errs []error) {
		o.mu.Lock()
		for j, i := range idx {
			switch err, k := errs[j], keys[i]; {
			case errors.Is(err, scanner.ErrVanished):
				o.sampleVanished[keyID(k.DB, k.Key)] = true
			case err == nil:
				o.samples[k.Type]++
			}
		}
		o.mu.Unlock()
		fn(idx, ss, errs)
	})
}

// inGroup counts the delivered keys of the specs, and those delivered with
// Redis type typ (any when "").
func (o *observer) inGroup(specs []*keySpec, typ string) (delivered, ofType, sampleVanished int64) {
	for _, s := range specs {
		id := keyID(s.db, s.key)
		k, ok := o.delivered[id]
		if !ok {
			continue
		}
		delivered++
		if typ == "" || k.Type == typ {
			ofType++
		}
		if o.sampleVanished[id] {
			sampleVanished++
		}
	}
	return
}

// dial connects to Redis for an audit of reg.
func dial(t testing.TB, reg *registry.Registry, so scanner.Options) *scanner.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if so.Count == 0 {
		so.Count = 50
	}
	if so.Timeout == 0 {
		// A command timeout, not a synchronisation: under -race with the
		// other packages' tests running, a sample read once took over 2 s.
		so.Timeout = 10 * time.Second
	}
	so.Plan = audit.Plan(reg, false)
	// These tests check what sampling and length reads find on a primary
	// of redis 7.0, which has no CLIENT NO-TOUCH: they opt in to touching
	// (TestTouch checks the default, which does not touch).
	so.AllowTouch = true
	c, err := scanner.Connect(ctx, so)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// bounded returns a context that ends with the test or after a minute, so a
// hung audit fails instead of stalling the run.
func bounded(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func loadRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(os.DirFS("testdata"), "keys.yaml")
	if err != nil {
		t.Fatalf("loading testdata/keys.yaml: %v", err)
	}
	return reg
}

// allOf returns the options that sample every key.
func allOf() audit.Options {
	o := audit.Defaults()
	o.Sample = 1 << 30
	return o
}

func familyOf(t testing.TB, rep *audit.Report, name string) *audit.FamilyReport {
	t.Helper()
	for _, f := range rep.Families {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("family %q not in the report", name)
	return nil
}

func findingsOf(rep *audit.Report) map[[2]string]*audit.Finding {
	m := map[[2]string]*audit.Finding{}
	for _, f := range rep.Findings {
		m[[2]string{f.Family, f.Rule}] = f
	}
	return m
}

// checkStable asserts that rep reports exactly what e expects for the
// stable keys: keys, TTLs, samples and findings per family, finding counts
// per (family, rule), unregistered keys and their groups. Families in
// chaos are left to checkChaos.
func checkStable(t *testing.T, reg *registry.Registry, rep *audit.Report, e expectation, chaos map[string]bool) {
	t.Helper()
	for _, f := range reg.Families {
		if chaos[f.Name] {
			continue
		}
		fr := familyOf(t, rep, f.Name)
		got := [4]int64{fr.Keys, fr.WithTTL, fr.Sampled, fr.Findings}
		want := [4]int64{e.keys[f.Name], e.withTTL[f.Name], e.sampled[f.Name], e.findings[f.Name]}
		if got != want {
			t.Errorf("family %s: keys, with ttl, sampled, findings = %v, want %v", f.Name, got, want)
		}
	}
	found := findingsOf(rep)
	for k, n := range e.hits {
		f := found[k]
		if f == nil {
			t.Errorf("no %s finding on family %q; want count %d", k[1], k[0], n)
			continue
		}
		if f.Count != n {
			t.Errorf("%s on family %q: count %d, want %d (%s)", k[1], k[0], f.Count, n, f.Message)
		}
		fam, _ := reg.Family(k[0])
		if fam != nil {
			_, ignored := fam.Ignored(k[1])
			if f.Suppressed != ignored {
				t.Errorf("%s on family %q: suppressed %v, want %v", k[1], k[0], f.Suppressed, ignored)
			}
		}
		var of int64
		switch k[1] {
		case rules.PayloadInvalid.ID, rules.EncodingMismatch.ID:
			of = e.sampled[k[0]]
		case rules.PlaceholderInvalid.ID:
			of = e.keys[k[0]]
		case rules.UnregisteredKey.ID:
			of = rep.Totals.Keys
		default:
			of = e.keys[k[0]] - e.shaped[k[0]]
		}
		if !chaos[k[0]] && f.Of != of {
			t.Errorf("%s on family %q: of %d, want %d", k[1], k[0], f.Of, of)
		}
		if len(f.Examples) == 0 || len(f.Examples) > 3 {
			t.Errorf("%s on family %q: %d examples", k[1], k[0], len(f.Examples))
		}
	}
	for k, f := range found {
		if _, ok := e.hits[k]; ok || chaos[k[0]] {
			continue
		}
		if k[1] == rules.FamilyUnused.ID && e.keys[k[0]] == 0 {
			continue // checked by the caller
		}
		t.Errorf("unexpected finding %s on family %q: %d of %d", k[1], k[0], f.Count, f.Of)
	}
	if rep.Totals.Unregistered != e.unregistered || rep.Unregistered.Keys != e.unregistered {
		t.Errorf("unregistered %d (report %d), want %d", rep.Totals.Unregistered, rep.Unregistered.Keys, e.unregistered)
	}
	checkCounts(t, rep)
	groups := map[string]int64{}
	for _, g := range rep.Unregistered.Groups {
		groups[g.Prefix] = g.Keys
	}
	if rep.Unregistered.Other != 0 || !mapsEqual(groups, e.groups) {
		t.Errorf("unregistered groups %v (other %d), want %v", groups, rep.Unregistered.Other, e.groups)
	}
}

// checkCounts asserts that rep has one number per concept: registered +
// unregistered = keys, registered = the families' keys, unregistered = the
// groups plus other = the unregistered-key finding's count.
func checkCounts(t *testing.T, rep *audit.Report) {
	t.Helper()
	var fams, grouped int64
	for _, f := range rep.Families {
		fams += f.Keys
	}
	for _, g := range rep.Unregistered.Groups {
		grouped += g.Keys
	}
	tot := rep.Totals
	unreg := int64(0)
	if f := findingsOf(rep)[[2]string{"", rules.UnregisteredKey.ID}]; f != nil {
		unreg = f.Count
	}
	if tot.Registered+tot.Unregistered != tot.Keys || tot.Registered != fams ||
		tot.Unregistered != rep.Unregistered.Keys || grouped+rep.Unregistered.Other != tot.Unregistered || unreg != tot.Unregistered {
		t.Errorf("counts disagree: keys %d = registered %d + unregistered %d; families %d; unregistered %d = groups %d + other %d = finding %d",
			tot.Keys, tot.Registered, tot.Unregistered, fams, rep.Unregistered.Keys, grouped, rep.Unregistered.Other, unreg)
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// checkChaos asserts the invariants of the chaos groups and the global
// accounting: every key SCAN returned is audited once or counted vanished
// once, never both; a retyped key has one type, never two.
func checkChaos(t *testing.T, ks *keyspace, rep *audit.Report, o *observer, e expectation) {
	t.Helper()
	if len(o.twice) > 0 {
		t.Errorf("keys delivered twice: %q", o.twice)
	}
	sampleVanished := int64(len(o.sampleVanished))
	delivered := int64(len(o.delivered))
	sc := rep.Scan
	if sc.Keys != delivered-sampleVanished || rep.Totals.Keys != sc.Keys {
		t.Errorf("scan keys %d, totals keys %d; want %d delivered - %d vanished before sampling", sc.Keys, rep.Totals.Keys, delivered, sampleVanished)
	}
	if sc.Keys+sc.Vanished != sc.Scanned-sc.Duplicates {
		t.Errorf("audited %d + vanished %d != scanned %d - duplicates %d: a key was counted twice or lost", sc.Keys, sc.Vanished, sc.Scanned, sc.Duplicates)
	}
	if sc.Vanished != o.stats.Vanished+sampleVanished {
		t.Errorf("vanished %d, want %d at the probe + %d at sampling", sc.Vanished, o.stats.Vanished, sampleVanished)
	}

	// Doomed keys: audited before their deletion, or vanished, or never
	// returned by SCAN (deleted before the cursor reached them).
	doomed := ks.group(groupDoomed)
	d, _, dv := o.inGroup(doomed, "")
	fd := familyOf(t, rep, "doomed")
	if fd.Keys != d-dv || fd.Keys >= int64(len(doomed)) {
		t.Errorf("doomed: %d audited, %d delivered, %d vanished at sampling, %d seeded: the deletion had no effect or keys were double-counted", fd.Keys, d, dv, len(doomed))
	}
	// Ephemeral keys: audited (with their TTL, so ttl-unexpected), vanished
	// or never returned.
	eph := ks.group(groupEph)
	ed, _, ev := o.inGroup(eph, "")
	fe := familyOf(t, rep, "ephemeral")
	if fe.Keys != ed-ev || fe.WithTTL != fe.Keys || fe.Keys > int64(len(eph)) || fe.Keys < 1 {
		t.Errorf("ephemeral: %d audited (%d with ttl), %d delivered, %d seeded", fe.Keys, fe.WithTTL, ed, len(eph))
	}
	found := findingsOf(rep)
	if f := found[[2]string{"ephemeral", rules.TTLUnexpected.ID}]; (f == nil) != (fe.Keys == 0) || (f != nil && f.Count != fe.Keys) {
		t.Errorf("ephemeral: ttl-unexpected %+v for %d audited keys", f, fe.Keys)
	}
	// Flip keys always exist (retyped in one MULTI), so SCAN returns each
	// exactly once: as the old string (sampled, unless retyped before the
	// sample read it, which makes it vanished) or as the new hash
	// (type-mismatch), never both.
	flip := ks.group(groupFlip)
	fdl, asHash, fv := o.inGroup(flip, "hash")
	_, asString, _ := o.inGroup(flip, "string")
	ff := familyOf(t, rep, "flip")
	if fdl != int64(len(flip)) || asHash+asString != fdl {
		t.Errorf("flip: %d delivered (%d hash, %d string) of %d seeded", fdl, asHash, asString, len(flip))
	}
	if ff.Keys+fv != int64(len(flip)) || ff.Sampled != asString-fv {
		t.Errorf("flip: %d audited + %d vanished at sampling != %d seeded, or sampled %d != %d strings - %d vanished", ff.Keys, fv, len(flip), ff.Sampled, asString, fv)
	}
	if f := found[[2]string{"flip", rules.TypeMismatch.ID}]; (f == nil) != (asHash == 0) || (f != nil && f.Count != asHash) {
		t.Errorf("flip: type-mismatch %+v for %d keys delivered as hash", f, asHash)
	}
	for k, f := range found {
		switch {
		case k[0] == "doomed", k[0] == "ephemeral" && k[1] != rules.TTLUnexpected.ID, k[0] == "flip" && k[1] != rules.TypeMismatch.ID:
			t.Errorf("unexpected finding %s on family %q: %d", k[1], k[0], f.Count)
		}
	}
	// Stable keys exactly, chaos keys as audited.
	if want := e.total + fd.Keys + fe.Keys + ff.Keys; rep.Totals.Keys != want {
		t.Errorf("totals keys %d, want %d", rep.Totals.Keys, want)
	}
	if want := e.errors + asHash; rep.Totals.Errors != want {
		t.Errorf("totals errors %d, want %d", rep.Totals.Errors, want)
	}
	if want := e.warnings + fe.Keys; rep.Totals.Warnings != want {
		t.Errorf("totals warnings %d, want %d", rep.Totals.Warnings, want)
	}
	t.Logf("doomed %d/%d audited, ephemeral %d/%d audited, flip %d string + %d hash (%d retyped before sampling), vanished %d, batches %d",
		fd.Keys, len(doomed), fe.Keys, len(eph), asString-fv, asHash, fv, sc.Vanished, o.batches)
}

// TestSeededKeyspace audits the same seeded keyspace on a standalone
// server, a 3-master cluster and a sentinel-managed master, while keys are
// deleted, retyped and expire during the scan. Stable keys must yield
// exactly the counts the seeding recorded; keys in flux must obey the
// accounting invariants.
func TestSeededKeyspace(t *testing.T) {
	t.Parallel()
	reg := loadRegistry(t)
	type setup struct {
		admin redis.UniversalClient
		opts  scanner.Options
		nodes int
	}
	topologies := map[string]func(t *testing.T) setup{
		"standalone": func(t *testing.T) setup {
			s := redistest.Standalone(t)
			return setup{s.Client(t), scanner.Options{URL: s.URL(), DB: scanner.AllDBs}, 1}
		},
		"cluster": func(t *testing.T) setup {
			cs := redistest.Cluster(t)
			cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cs.Addrs, DisableIdentity: true,
				MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
			t.Cleanup(func() { _ = cc.Close() })
			return setup{cc, scanner.Options{URL: cs.URL()}, 3}
		},
		"sentinel": func(t *testing.T) setup {
			ss := redistest.Sentinel(t)
			return setup{ss.Master.Client(t), scanner.Options{URL: "redis://" + ss.SentinelAddr, SentinelMaster: ss.MasterName}, 1}
		},
	}
	for name, start := range topologies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			su := start(t)
			ks := newKeyspace(true)
			ks.seed(t, su.admin, 0)
			conn := dial(t, reg, su.opts)
			o := newObserver(conn)
			var wreckErr error
			o.after = func(n int) error {
				if n == 1 {
					wreckErr = ks.wreck(su.admin)
				}
				return nil
			}
			ks.arm(t, su.admin)
			opts := allOf()
			opts.Mode = conn.Mode()
			rep, err := audit.Run(bounded(t), o, reg, opts)
			if err != nil {
				t.Fatalf("audit: %v", err)
			}
			if wreckErr != nil {
				t.Fatal(wreckErr)
			}
			if rep.Partial || rep.Mode != name || rep.Scan.Nodes != su.nodes || len(rep.Scan.Notes) != 0 {
				t.Errorf("partial %v (%s), mode %q, nodes %d, notes %q", rep.Partial, rep.PartialReason, rep.Mode, rep.Scan.Nodes, rep.Scan.Notes)
			}
			if o.batches < 20 {
				t.Errorf("%d batches: the SCAN cursor did not loop", o.batches)
			}
			e := ks.expect(reg, 0, nil)
			checkStable(t, reg, rep, e, map[string]bool{"doomed": true, "ephemeral": true, "flip": true})
			checkChaos(t, ks, rep, o, e)
			if f := findingsOf(rep)[[2]string{"ghost", rules.FamilyUnused.ID}]; f == nil || f.Severity != diag.Info {
				t.Errorf("family-unused on ghost: %+v", f)
			}
			if rep.Totals.Infos != 1 {
				t.Errorf("infos %d, want 1 (family-unused on ghost)", rep.Totals.Infos)
			}
			// Binary names arrive byte for byte, as examples too.
			for _, b := range binaryNames {
				if _, ok := o.delivered[keyID(0, "v1:bin:"+b)]; !ok {
					t.Errorf("binary key %q not delivered", "v1:bin:"+b)
				}
			}
			if f := findingsOf(rep)[[2]string{"", rules.UnregisteredKey.ID}]; f != nil {
				for _, ex := range f.Examples {
					if _, ok := o.delivered[keyID(0, ex.Key)]; !ok {
						t.Errorf("example key %q was never delivered", ex.Key)
					}
				}
			}
		})
	}
}

// commandFlags returns the flags COMMAND INFO gives a command (such as
// "readonly" or "write"); name may be "container|subcommand".
func commandFlags(t testing.TB, c *redis.Client, name string) []string {
	t.Helper()
	reply, err := c.Do(context.Background(), "COMMAND", "INFO", name).Slice()
	if err != nil || len(reply) != 1 {
		t.Fatalf("command info %s: %v %v", name, reply, err)
	}
	info, ok := reply[0].([]any)
	if !ok || len(info) < 3 {
		t.Fatalf("command info %s: %v", name, reply)
	}
	var flags []string
	switch fs := info[2].(type) {
	case []any:
		for _, f := range fs {
			flags = append(flags, fmt.Sprint(f))
		}
	case map[any]bool:
		for f := range fs {
			flags = append(flags, fmt.Sprint(f))
		}
	}
	return flags
}

// TestReadOnlyACL audits as a user with exactly scanner.MinimalACL, with
// every payload sampled and two databases, and proves from the server's
// own statistics that the audit sent only read commands and was denied
// nothing.
func TestReadOnlyACL(t *testing.T) {
	t.Parallel()
	reg := loadRegistry(t)
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ctx := context.Background()
	ks := newKeyspace(false)
	ks.seed(t, admin, 0)
	db2 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 2, DisableIdentity: true})
	defer db2.Close()
	for i := range 25 {
		k := fmt.Sprintf("v1:session:%d", 900000+i)
		ks.add(&keySpec{key: k, db: 2, family: "session", ttl: true, sampled: true, write: setKey(k, `{"user_id":7}`, time.Hour)})
	}
	ks.seed(t, db2, 2)
	redistest.ACLUser(t, s, "audit", "pw", strings.Fields(scanner.MinimalACL)...)

	// From here on, the admin sends CONFIG RESETSTAT and ACL LOG RESET
	// before the audit, then INFO commandstats first: the statistics hold
	// the audit's commands plus exactly those two.
	if err := admin.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "ACL", "LOG", "RESET").Err(); err != nil {
		t.Fatal(err)
	}
	conn := dial(t, reg, scanner.Options{URL: "redis://audit:pw@" + s.Addr, DB: scanner.AllDBs})
	o := newObserver(conn)
	rep, err := audit.Run(bounded(t), o, reg, allOf())
	if err != nil {
		t.Fatalf("audit as the read-only user: %v", err)
	}
	stats := redistest.CommandStats(t, admin)
	stats["config|resetstat"]--
	stats["acl|log"]--

	if rep.Partial || len(rep.Scan.Notes) != 0 || !o.dbs[0] || !o.dbs[2] {
		t.Errorf("partial %v, notes %q, dbs %v", rep.Partial, rep.Scan.Notes, o.dbs)
	}
	checkStable(t, reg, rep, ks.expect(reg, 0, nil), nil)

	allowed := map[string]bool{"hello": true, "auth": true, "ping": true, "info": true, "select": true}
	for _, c := range strings.Fields(scanner.MinimalACL) {
		if cmd, ok := strings.CutPrefix(c, "+"); ok {
			allowed[cmd] = true
		}
	}
	for name, calls := range stats {
		if calls == 0 {
			continue
		}
		if !allowed[name] {
			t.Errorf("the audit sent %q (%d calls), which MinimalACL does not grant", name, calls)
		}
		if flags := commandFlags(t, admin, name); !slices.Contains(flags, "readonly") || slices.Contains(flags, "write") {
			if name != "ping" && name != "info" && name != "select" && name != "hello" && name != "auth" && name != "cluster|nodes" && name != "readonly" {
				t.Errorf("the audit sent %q (%d calls), flagged %q", name, calls, flags)
			}
		}
	}
	// The reads really happened: one GET per sampled string, and the
	// collection reads, under the ACL.
	if stats["get"] != o.samples["string"] {
		t.Errorf("GET ran %d times for %d sampled strings", stats["get"], o.samples["string"])
	}
	for _, name := range []string{"scan", "type", "pttl", "object|idletime", "memory|usage", "select", "strlen", "hscan", "lrange", "xrange", "llen"} {
		if stats[name] == 0 {
			t.Errorf("command %q never ran: %v", name, stats)
		}
	}
	if log, err := admin.Do(ctx, "ACL", "LOG").Slice(); err != nil || len(log) != 0 {
		t.Errorf("ACL LOG after the audit: %v %v", log, err)
	}
	info, err := admin.Info(ctx, "errorstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(info, "errorstat_") {
		t.Errorf("the server recorded errors: %s", info)
	}
	// The ACL, not luck, kept writes out.
	user := redis.NewClient(&redis.Options{Addr: s.Addr, Username: "audit", Password: "pw", DisableIdentity: true})
	defer user.Close()
	if err := user.Set(ctx, "v1:session:1", "x", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("SET as the audit user: %v, want NOPERM", err)
	}
}

// runFaulted runs the audit in the background and stops it at its progress
// hook once it has audited at least n keys; fault runs then, on the test
// goroutine, and the audit goes on once it returned. It returns the report,
// the keys audited when the fault came, and the audit's error. Faults come at
// a known point of the audit, however loaded the machine, never from a timer.
func runFaulted(t *testing.T, src audit.Source, reg *registry.Registry, opts audit.Options, n int64, fault func()) (*audit.Report, int64, error) {
	t.Helper()
	reached, resume := make(chan int64, 1), make(chan struct{})
	release := sync.OnceFunc(func() { close(resume) })
	var total int64 // the hook runs on one goroutine at a time
	var stop sync.Once
	opts.Progress = func(keys int) {
		if total += int64(keys); total >= n {
			stop.Do(func() { reached <- total; <-resume })
		}
	}
	type result struct {
		rep *audit.Report
		err error
	}
	done, finished := make(chan result, 1), make(chan struct{})
	ctx := bounded(t)
	go func() {
		defer close(finished)
		rep, err := audit.Run(ctx, src, reg, opts)
		done <- result{rep, err}
	}()
	// A test that fails in fault still lets the audit end.
	t.Cleanup(func() { release(); <-finished })
	var at int64
	select {
	case at = <-reached:
	case r := <-done:
		t.Fatalf("the audit ended before its fault: %d keys, %v", r.rep.Totals.Keys, r.err)
	}
	fault()
	release()
	r := <-done
	return r.rep, at, r.err
}

// TestNodeFailure breaks the server under a running audit, once it has
// audited 50 keys: a cluster master is killed, a standalone server restarted
// (losing its keys). The audit must end in an error with a partial report,
// never in a complete looking one, and count the keys audited before.
func TestNodeFailure(t *testing.T) {
	t.Parallel()
	reg := loadRegistry(t)
	t.Run("cluster master killed", func(t *testing.T) {
		t.Parallel()
		cs := redistest.Cluster(t)
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cs.Addrs, DisableIdentity: true,
			MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
		t.Cleanup(func() { _ = cc.Close() })
		ks := newKeyspace(false)
		ks.seed(t, cc, 0)
		conn := dial(t, reg, scanner.Options{URL: cs.URL(), Timeout: time.Second})
		dead := cs.Masters[2]
		start := time.Now()
		rep, at, err := runFaulted(t, conn, reg, allOf(), 50, dead.Stop)
		if err == nil {
			t.Fatalf("audit with a killed master succeeded: %d of %d keys", rep.Totals.Keys, len(ks.specs))
		}
		if rep == nil || !rep.Partial || !strings.Contains(rep.PartialReason, dead.Addr) || !strings.Contains(err.Error(), dead.Addr) {
			t.Fatalf("err %v; report partial %v (%q): want both to name %s", err, rep != nil && rep.Partial, rep.PartialReason, dead.Addr)
		}
		if rep.Scan.Keys < at || rep.Totals.Keys >= int64(len(ks.specs)) {
			t.Errorf("partial report counts %d of %d keys (%d scanned), the master was killed after %d", rep.Totals.Keys, len(ks.specs), rep.Scan.Keys, at)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("failing took %v", d)
		}
	})
	t.Run("standalone restarted", func(t *testing.T) {
		t.Parallel()
		s := redistest.Standalone(t)
		ks := newKeyspace(false)
		ks.seed(t, s.Client(t), 0)
		conn := dial(t, reg, scanner.Options{URL: s.URL(), Timeout: time.Second})
		rep, at, err := runFaulted(t, conn, reg, allOf(), 50, func() { s.Restart(t) })
		if err == nil && !rep.Partial {
			t.Fatalf("audit across a restart looks complete: %d of %d keys, no error", rep.Totals.Keys, len(ks.specs))
		}
		if !rep.Partial || rep.PartialReason == "" {
			t.Errorf("err %v, but the report is not marked partial: %q", err, rep.PartialReason)
		}
		if rep.Scan.Keys < at || rep.Totals.Keys >= int64(len(ks.specs)) {
			t.Errorf("partial report counts %d of %d keys (%d scanned), the server restarted after %d", rep.Totals.Keys, len(ks.specs), rep.Scan.Keys, at)
		}
		t.Logf("err %v; partial reason %q; restarted after %d keys, %d of %d in the report", err, rep.PartialReason, at, rep.Totals.Keys, len(ks.specs))
	})
}

// TestAuditOptions checks the options that bound an audit on one seeded
// server, each against counts computed from the seeding: the sample quota
// per family, the value size limit, a key prefix, a key limit and the
// database selection.
func TestAuditOptions(t *testing.T) {
	t.Parallel()
	reg := loadRegistry(t)
	s := redistest.Standalone(t)
	admin := s.Client(t)
	ks := newKeyspace(false)
	ks.seed(t, admin, 0)
	extra := map[int]int{3: 17, 7: 5}
	for db, n := range extra {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db, DisableIdentity: true})
		t.Cleanup(func() { _ = c.Close() })
		for i := range n {
			k := fmt.Sprintf("v1:counter:db%d-%d", db, i)
			ks.add(&keySpec{key: k, db: db, family: "counter", sampled: true, size: 2, write: setKey(k, "42", 0)})
		}
		ks.seed(t, c, db)
	}
	inDB := func(db int) func(*keySpec) bool { return func(s *keySpec) bool { return s.db == db } }
	audit1 := func(t *testing.T, so scanner.Options, o audit.Options) (*audit.Report, *observer) {
		t.Helper()
		so.URL = s.URL()
		// Sampling reads reset idle times on Redis before 7.2: make the
		// stale keys stale again.
		ks.restale(t, admin)
		obs := newObserver(dial(t, reg, so))
		rep, err := audit.Run(bounded(t), obs, reg, o)
		if err != nil {
			t.Fatalf("audit: %v", err)
		}
		return rep, obs
	}
	unused := func(rep *audit.Report) []string {
		var fs []string
		for _, f := range rep.Findings {
			if f.Rule == rules.FamilyUnused.ID {
				fs = append(fs, f.Family)
			}
		}
		return fs
	}

	t.Run("sample quota", func(t *testing.T) {
		const n = 3
		o := audit.Defaults()
		o.Sample = n
		rep, _ := audit1(t, scanner.Options{DB: 0}, o)
		e := ks.expect(reg, 0, inDB(0))
		var want int64
		for _, f := range rep.Families {
			if w := min(n, e.sampled[f.Name]); f.Sampled != w {
				t.Errorf("family %s: %d sampled, want min(%d, %d eligible)", f.Name, f.Sampled, n, e.sampled[f.Name])
			}
			want += min(n, e.sampled[f.Name])
		}
		if rep.Scan.Sampled != want || rep.Scan.Sampled > n*int64(len(reg.Families)) {
			t.Errorf("scan sampled %d, want %d (at most %d per family)", rep.Scan.Sampled, want, n)
		}
		for _, f := range rep.Findings {
			if (f.Rule == rules.PayloadInvalid.ID || f.Rule == rules.EncodingMismatch.ID) && (f.Count > n || f.Of != min(n, e.sampled[f.Family])) {
				t.Errorf("%s on %s: %d of %d with --sample %d", f.Rule, f.Family, f.Count, f.Of, n)
			}
		}
	})
	t.Run("max value bytes", func(t *testing.T) {
		// Over the big sessions (20 kB), under everything else: MEMORY
		// USAGE of a small stream is about 5 kB.
		o := allOf()
		o.MaxValueBytes = 10000
		rep, _ := audit1(t, scanner.Options{DB: 0}, o)
		e := ks.expect(reg, 10000, inDB(0))
		checkStable(t, reg, rep, e, nil)
		var skipped int64
		for _, n := range e.skipped {
			skipped += n
		}
		if skipped == 0 || rep.Scan.Skipped != skipped {
			t.Errorf("skipped %d, want %d", rep.Scan.Skipped, skipped)
		}
	})
	t.Run("match", func(t *testing.T) {
		o := allOf()
		o.Filtered = true
		rep, obs := audit1(t, scanner.Options{DB: 0, Match: "v1:profile:*"}, o)
		e := ks.expect(reg, 0, func(s *keySpec) bool { return s.db == 0 && strings.HasPrefix(s.key, "v1:profile:") })
		checkStable(t, reg, rep, e, nil)
		if rep.Totals.Keys != e.total || int64(len(obs.delivered)) != e.total || e.total == 0 {
			t.Errorf("%d keys audited, %d delivered, want %d", rep.Totals.Keys, len(obs.delivered), e.total)
		}
		if fs := unused(rep); len(fs) != 0 || rep.Partial {
			t.Errorf("a filtered audit reports family-unused on %q (partial %v)", fs, rep.Partial)
		}
	})
	t.Run("max keys", func(t *testing.T) {
		rep, obs := audit1(t, scanner.Options{DB: scanner.AllDBs, MaxKeys: 120}, allOf())
		if !rep.Partial || rep.PartialReason == "" || rep.Totals.Keys != 120 || len(obs.delivered) != 120 {
			t.Errorf("max keys 120: partial %v (%q), %d keys, %d delivered", rep.Partial, rep.PartialReason, rep.Totals.Keys, len(obs.delivered))
		}
		if fs := unused(rep); len(fs) != 0 {
			t.Errorf("a partial audit reports family-unused on %q", fs)
		}
	})
	t.Run("every database", func(t *testing.T) {
		rep, obs := audit1(t, scanner.Options{DB: scanner.AllDBs}, allOf())
		checkStable(t, reg, rep, ks.expect(reg, 0, nil), nil)
		if len(obs.dbs) != 3 || !obs.dbs[0] || !obs.dbs[3] || !obs.dbs[7] {
			t.Errorf("databases scanned: %v, want 0, 3 and 7", obs.dbs)
		}
		for db := range extra {
			rep, obs := audit1(t, scanner.Options{DB: db}, allOf())
			checkStable(t, reg, rep, ks.expect(reg, 0, inDB(db)), nil)
			if len(obs.dbs) != 1 || !obs.dbs[db] {
				t.Errorf("db %d: databases scanned: %v", db, obs.dbs)
			}
		}
	})
}
