package audit_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/scanner"
	"github.com/keyreg/keyreg/source"
)

func TestInferPrefix(t *testing.T) {
	for key, want := range map[string]string{
		"sidekiq:queue:default": "sidekiq:queue:",
		"tmp:job:42":            "tmp:job:",
		"tmp:42":                "tmp:",
		"user:0b6f1c1e8a9d:x":   "user:",
		"celery-task-meta-0b6f1c1e-8a9d-4c47-9f5e": "celery-task-meta-",
		"legacy_17":   "legacy_",
		"abc123":      "abc",
		"a:b:":        "a:",
		"a:b:c":       "a:b:",
		"\x1b[31mred": "\x1b[",
		"x.y":         "x.",
		// Single-segment keys have no prefix: never the whole name.
		"sessions": "",
		"a:":       "",
		"abc-":     "",
		"x.":       "",
		"{tag}":    "",
		"\x00":     "",
		"42":       "",
		"":         "",
	} {
		if got := audit.InferPrefix(key, ':'); got != want {
			t.Errorf("InferPrefix(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestInferPrefixNeverWholeKey checks on random keys over a small alphabet
// that the prefix is always a proper prefix of the key, or empty.
func TestInferPrefixNeverWholeKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "ab1:-_.f"
	for range 20000 {
		b := make([]byte, rng.IntN(8))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		key := string(b)
		p := audit.InferPrefix(key, ':')
		if !strings.HasPrefix(key, p) || (p != "" && len(p) >= len(key)) {
			t.Fatalf("InferPrefix(%q) = %q: not a proper prefix", key, p)
		}
	}
}

// listSource is an in-memory audit.Source: it delivers keys in batches of
// batch keys and has no payloads.
type listSource struct {
	keys  []scanner.KeyInfo
	batch int
}

func (s listSource) ScanKeys(ctx context.Context, _ source.Planner, fn func([]scanner.KeyInfo) error) (scanner.Stats, error) {
	var st scanner.Stats
	for b := range slices.Chunk(s.keys, max(s.batch, 1)) {
		if err := fn(slices.Clone(b)); err != nil {
			return st, err
		}
		st.Keys += int64(len(b))
		st.Scanned += int64(len(b))
	}
	return st, nil
}

func (listSource) SampleEach(_ context.Context, keys []scanner.KeyInfo, _ int, _ int64, fn func([]int, []payload.Sample, []error)) {
	vanishAll(keys, fn)
}

func (listSource) Touch() source.TouchState { return source.TouchState{} }

// vanishAll hands fn every key as vanished: a fake source without payloads.
func vanishAll(keys []scanner.KeyInfo, fn func([]int, []payload.Sample, []error)) {
	idx := make([]int, len(keys))
	errs := make([]error, len(keys))
	for i := range keys {
		idx[i], errs[i] = i, scanner.ErrVanished
	}
	fn(idx, make([]payload.Sample, len(keys)), errs)
}

func stringKeys(names ...string) []scanner.KeyInfo {
	out := make([]scanner.KeyInfo, len(names))
	for i, n := range names {
		out[i] = scanner.KeyInfo{Key: n, Type: "string", PTTL: -1}
	}
	return out
}

func testRegistry(t testing.TB, yaml string) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(yaml)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestBaselineHoldsNoKeyName audits single-segment unregistered keys and
// checks that the baseline records none of their names as a prefix.
func TestBaselineHoldsNoKeyName(t *testing.T) {
	reg := testRegistry(t, "version: 1\nfamilies:\n  - name: s\n    pattern: \"v1:s:{id}\"\n")
	names := []string{"sessions", "cache", "a:", "ab-", "{tag}", "tmp:x:1"}
	rep, err := audit.Run(context.Background(), listSource{keys: stringKeys(names...), batch: 2}, reg, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := audit.NewBaseline(rep)
	data, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	prefixes := map[string]bool{}
	for _, e := range b.Findings {
		if e.Group {
			prefixes[e.Prefix] = true
			if slices.Contains(names, e.Prefix) {
				t.Errorf("baseline records key name %q as a prefix:\n%s", e.Prefix, data)
			}
		}
	}
	if !prefixes[""] || !prefixes["tmp:x:"] || len(prefixes) != 2 {
		t.Errorf("baseline prefixes %v, want \"\" and \"tmp:x:\":\n%s", prefixes, data)
	}
}
