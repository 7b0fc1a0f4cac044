package scanner_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

// TestKeyCount checks the total of a progress line against the keys
// written: every database of a standalone server, one database, and the
// three shards of a cluster (90 keys spread over their slots).
func TestKeyCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("standalone", func(t *testing.T) {
		t.Parallel()
		s := redistest.Standalone(t)
		n0 := len(seed(t, s.Client(t), "a:", 40))
		c2 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 2, DisableIdentity: true})
		defer c2.Close()
		n2 := len(seed(t, c2, "b:", 15))
		for _, tc := range []struct {
			db   int
			want int
		}{{scanner.AllDBs, n0 + n2}, {2, n2}, {5, 0}} {
			got, err := connect(t, scanner.Options{URL: s.URL(), DB: tc.db}).KeyCount(ctx)
			if err != nil || got != int64(tc.want) {
				t.Errorf("db %d: %d keys, %v; want %d", tc.db, got, err, tc.want)
			}
		}
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		cs := redistest.Cluster(t)
		cc := clusterClient(t, cs)
		n := 0
		for i := range 90 {
			if err := cc.Set(ctx, "k:"+string(rune('a'+i%26))+string(rune('a'+i/26)), "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			n++
		}
		got, err := connect(t, scanner.Options{URL: cs.URL()}).KeyCount(ctx)
		if err != nil || got != int64(n) {
			t.Errorf("cluster: %d keys, %v; want %d", got, err, n)
		}
	})
}
