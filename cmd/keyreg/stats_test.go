package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
)

// TestStatsOnCaptures audits one Redis holding the keyspaces written by
// every captured client library (testdata/frameworks: ten of them) and by
// go-redis (the app's own keys, as in TestPresetsTogether) with --memory, and
// checks the keyspace statistics against Redis itself: the first of the
// largest keys by bytes is a largest key by MEMORY USAGE, and every TTL
// histogram and the per-type counts add up to the keys they describe.
func TestStatsOnCaptures(t *testing.T) {
	t.Parallel()
	captures, err := filepath.Glob(filepath.Join(frameworksDir, "*.jsonl"))
	if err != nil || len(captures) < 10 {
		t.Fatalf("%d captures, want the ten libraries': %v", len(captures), err)
	}
	var all []capturedKey
	for _, c := range captures {
		_, keys := readCapture(t, c)
		all = append(all, keys...)
	}
	s := redistest.Standalone(t)
	restore(t, s.Addr, all, nil)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	defer c.Close()
	if err := c.HSet(ctx, "v1:cart:{42}:items", "sku-1", `{"qty":1}`, "sku-2", `{"qty":2}`).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "v2:user:session:0b6f1c1e-8a9d-4c47-9f5e-2b1d7a3c9e10", `{"user_id":1}`, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	code, out, errs := cli(t, "audit", "--url", "redis://"+s.Addr, "--registry", frameworksDir+"/all/keys.yaml", "--format", "json", "--memory", "--top", "3")
	if code != 0 && code != 1 {
		t.Fatalf("audit: exit %d: %s", code, errs)
	}
	type hist []struct {
		Bucket string `json:"bucket"`
		Keys   int64  `json:"keys"`
	}
	sum := func(h hist) (n int64) {
		for _, b := range h {
			n += b.Keys
		}
		return n
	}
	var r struct {
		Totals struct {
			Keys int64 `json:"keys"`
		} `json:"totals"`
		TTL      hist `json:"ttl_histogram"`
		Families []struct {
			Name string `json:"name"`
			Keys int64  `json:"keys"`
			TTL  hist   `json:"ttl_histogram"`
		} `json:"families"`
		Unregistered struct {
			Keys int64 `json:"keys"`
			TTL  hist  `json:"ttl_histogram"`
		} `json:"unregistered"`
		Types []struct {
			Type string `json:"type"`
			Keys int64  `json:"keys"`
		} `json:"types"`
		TopKeys []struct {
			By    string `json:"by"`
			Key   string `json:"key"`
			Bytes int64  `json:"bytes"`
		} `json:"top_keys"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Totals.Keys < 100 || sum(r.TTL) != r.Totals.Keys || len(r.TTL) != 7 {
		t.Errorf("ttl_histogram %v adds up to %d, totals.keys %d", r.TTL, sum(r.TTL), r.Totals.Keys)
	}
	for _, f := range r.Families {
		if sum(f.TTL) != f.Keys {
			t.Errorf("family %s: ttl_histogram adds up to %d, keys %d", f.Name, sum(f.TTL), f.Keys)
		}
	}
	if sum(r.Unregistered.TTL) != r.Unregistered.Keys {
		t.Errorf("unregistered: ttl_histogram adds up to %d, keys %d", sum(r.Unregistered.TTL), r.Unregistered.Keys)
	}
	var typed int64
	for _, ty := range r.Types {
		typed += ty.Keys
	}
	if typed != r.Totals.Keys {
		t.Errorf("types count %d keys, totals.keys %d", typed, r.Totals.Keys)
	}
	// The largest key, asked of Redis after the audit.
	var largest int64
	iter := c.Scan(ctx, 0, "", 500).Iterator()
	for iter.Next(ctx) {
		largest = max(largest, c.MemoryUsage(ctx, iter.Val()).Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	if len(r.TopKeys) == 0 || r.TopKeys[0].By != "bytes" || r.TopKeys[0].Bytes != largest || c.MemoryUsage(ctx, r.TopKeys[0].Key).Val() != largest {
		t.Errorf("top keys %+v; want first a key of %d bytes, the keyspace's largest", r.TopKeys, largest)
	}
}
