package scanner_test

import (
	"context"
	"testing"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
)

// TestPatternGlobOnRedis checks Pattern.Glob against a real server's SCAN
// MATCH: every key a pattern matches must be returned by its glob, even when
// literals hold glob metacharacters, and the glob must not match keys of
// unrelated literals.
func TestPatternGlobOnRedis(t *testing.T) {
	s := redistest.Standalone(t)
	c := s.Client(t)
	ctx := context.Background()
	cases := []struct {
		pattern string
		match   []string // keys the pattern matches
		other   []string // keys the glob must not return
	}{
		{"v1:user:{id:int}", []string{"v1:user:1", "v1:user:-42"}, []string{"v2:user:1"}},
		{"a*b:{x}", []string{"a*b:1", "a*b:zz"}, []string{"aXb:1", "ab:1"}},
		{"q?[x]:{id}", []string{"q?[x]:1"}, []string{"qa[x]:1", "q?x:1"}},
		{`back\\slash:{id}`, []string{`back\slash:7`}, []string{"backslash:7"}},
		{"cart:{{user_id:int}}:items", []string{"cart:{42}:items"}, []string{"cart:42:items"}},
		{`lit\{brace\}:{id:hex}`, []string{"lit{brace}:ff"}, []string{"litbrace:ff"}},
		{":1:{key:any}", []string{":1:a:b:c"}, []string{":2:a"}},
	}
	for _, tc := range cases {
		p, err := registry.ParsePattern(tc.pattern, ':')
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		if err := c.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		for _, k := range append(append([]string{}, tc.match...), tc.other...) {
			c.Set(ctx, k, "x", 0)
		}
		got := map[string]bool{}
		iter := c.Scan(ctx, 0, p.Glob(), 10).Iterator()
		for iter.Next(ctx) {
			got[iter.Val()] = true
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		for _, k := range tc.match {
			if !got[k] {
				t.Errorf("pattern %q: glob %q misses key %q", tc.pattern, p.Glob(), k)
			}
		}
		for _, k := range tc.other {
			if got[k] {
				t.Errorf("pattern %q: glob %q returns unrelated key %q", tc.pattern, p.Glob(), k)
			}
		}
	}
}
