package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/keyreg/keyreg/internal/redistest"
)

// TestReportMergeEqualsClusterAudit audits a 3-master cluster, copies each
// master's keys (DUMP/RESTORE, with their TTL) to a standalone server of
// its own, audits those three as separate jobs would, merges the three
// json reports with keyreg report merge, and requires the merged report to
// equal the cluster audit's in every count: totals, families and their TTL
// histograms, unregistered groups, findings, types and their sketches, and
// the largest keys.
func TestReportMergeEqualsClusterAudit(t *testing.T) {
	t.Parallel()
	cs := redistest.Cluster(t)
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cs.Addrs, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
	defer cc.Close()
	// TTLs well inside their histogram buckets, so that the seconds the
	// copy takes move no key to another bucket.
	ttls := []time.Duration{0, 30 * time.Minute, 12 * time.Hour, 3 * 24 * time.Hour, 20 * 24 * time.Hour}
	for i := range 300 {
		ttl := ttls[i%len(ttls)]
		switch i % 6 {
		case 0, 1:
			cc.Set(ctx, fmt.Sprintf("v1:session:%d", i), fmt.Sprintf(`{"user_id":%d}`, i), ttl)
		case 2:
			cc.RPush(ctx, fmt.Sprintf("v1:cart:{%d}:items", i), strings.Repeat("x,", i%9+1))
		case 3:
			cc.Set(ctx, fmt.Sprintf("v1:counter:c%d", i), i, ttl)
		case 4:
			cc.Set(ctx, fmt.Sprintf("tmp:export:%d", i), strings.Repeat("e", 100*i), 0)
		default:
			cc.Set(ctx, fmt.Sprintf("legacy_cache_%d", i), "v", ttl)
		}
	}
	// One key only, so one shard has the family and two report it unused.
	cc.ZAdd(ctx, "v1:feed:7", redis.Z{Score: 1, Member: "a"})

	dir := t.TempDir()
	args := func(url string) []string {
		return []string{"audit", "--registry", auditRegistry, "--url", url, "--format", "json", "--memory", "--db", "0", "--top", "5", "--count", "50"}
	}
	var shards []string
	for i, m := range cs.Masters {
		s := singleNodeCluster(t)
		copyKeys(t, m.Client(t), s.Client(t))
		code, out, errs := cli(t, args(s.URL())...)
		if code != 1 {
			t.Fatalf("shard %d audit: exit %d: %s", i, code, errs)
		}
		f := filepath.Join(dir, fmt.Sprintf("shard%d.json", i))
		if err := os.WriteFile(f, []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, f)
	}
	code, whole, errs := cli(t, args(cs.URL())...)
	if code != 1 {
		t.Fatalf("cluster audit: exit %d: %s", code, errs)
	}
	code, merged, errs := cli(t, append([]string{"report", "merge", "--format", "json", "--top", "5"}, shards...)...)
	if code != 1 {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	want, got := countsOf(t, whole), countsOf(t, merged)
	if !reflect.DeepEqual(got, want) {
		g, w := map[string]string{}, map[string]string{}
		flatten(got, "", g)
		flatten(want, "", w)
		for p, v := range w {
			if g[p] != v {
				t.Errorf("%s: merged %s, cluster %s", p, g[p], v)
			}
		}
		for p, v := range g {
			if _, ok := w[p]; !ok {
				t.Errorf("%s: merged %s, not in the cluster report", p, v)
			}
		}
		t.FailNow()
	}
	var doc struct {
		Scan struct {
			Nodes int `json:"nodes"`
		} `json:"scan"`
		TopKeys []struct {
			Key   string `json:"key"`
			Bytes int64  `json:"bytes"`
		} `json:"top_keys"`
	}
	if err := json.Unmarshal([]byte(merged), &doc); err != nil {
		t.Fatal(err)
	}
	// The first top key is a largest key of the keyspace, by MEMORY USAGE.
	var largest int64
	for _, m := range cs.Masters {
		c := m.Client(t)
		iter := c.Scan(ctx, 0, "", 100).Iterator()
		for iter.Next(ctx) {
			largest = max(largest, c.MemoryUsage(ctx, iter.Val()).Val())
		}
	}
	if doc.Scan.Nodes != 3 || len(doc.TopKeys) != 5 || doc.TopKeys[0].Bytes != largest || cc.MemoryUsage(ctx, doc.TopKeys[0].Key).Val() != largest {
		t.Errorf("merged: %d nodes, top keys %v; want 3 nodes and a key of %d bytes first", doc.Scan.Nodes, doc.TopKeys, largest)
	}
}

// singleNodeCluster starts a cluster node that serves every slot itself:
// MEMORY USAGE counts a cluster node's per-key overhead, so the copy of a
// master's keys must live on a cluster node too to measure the same.
func singleNodeCluster(t *testing.T) *redistest.Server {
	t.Helper()
	s := redistest.Standalone(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	c := s.Client(t)
	ctx := context.Background()
	if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	for {
		info, err := c.ClusterInfo(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, "cluster_state:ok") {
			return s
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond): // polling a state change, not synchronising
		}
	}
}

// copyKeys copies every key of a cluster master (its own slots) to dst,
// with its remaining TTL.
func copyKeys(t *testing.T, src, dst *redis.Client) {
	t.Helper()
	ctx := context.Background()
	iter := src.Scan(ctx, 0, "", 100).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		dump, err := src.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		ttl, err := src.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl < 0 {
			ttl = 0
		}
		if err := dst.Restore(ctx, k, ttl, dump).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
}

// countsOf decodes a json audit report and drops what is not a count of
// the keyspace: where and when it ran, how long it took, what ran it, the
// remaining TTL of each top key (time passes between the audits), and the
// node addresses in notes.
func countsOf(t *testing.T, out string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	for _, k := range []string{"target", "mode", "started", "tool"} {
		delete(doc, k)
	}
	scan := doc["scan"].(map[string]any)
	for _, k := range []string{"duration_ns", "duration_seconds", "keys_per_second", "notes"} {
		delete(scan, k)
	}
	for _, tk := range doc["top_keys"].([]any) {
		delete(tk.(map[string]any), "ttl_ms")
	}
	// Which keys serve as examples depends on the scan order; how many do
	// is a count.
	examples := func(list any) {
		for _, x := range list.([]any) {
			m := x.(map[string]any)
			m["examples"] = len(m["examples"].([]any))
		}
	}
	examples(doc["findings"])
	examples(doc["unregistered"].(map[string]any)["groups"])
	return doc
}

// flatten maps every leaf of v to its path, such as "families.2.keys".
func flatten(v any, p string, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			flatten(x, p+"."+k, out)
		}
	case []any:
		for i, x := range v {
			flatten(x, fmt.Sprintf("%s.%d", p, i), out)
		}
	default:
		b, _ := json.Marshal(v)
		out[p] = string(b)
	}
}

// TestReportMergeExitCodes checks that a file that is not a json audit
// report is a usage error naming the file, and that a partial input makes a
// partial result (exit 3) that says so.
func TestReportMergeExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full, err := os.ReadFile("../../report/testdata/audit.full.json.golden")
	if err != nil {
		t.Fatal(err)
	}
	good := write("full.json", string(full))
	partial := write("partial.json", strings.Replace(string(full), `"partial": false`, `"partial": true`, 1))
	for _, tc := range []struct {
		name  string
		files []string
		code  int
		say   string
	}{
		{"clean merge of two", []string{good, good}, 1, ""},
		{"not json", []string{good, write("bad.json", "{")}, 2, "bad.json: not a json audit report"},
		{"no version", []string{write("nov.json", `{"scan":{}}`)}, 2, `no "version" field`},
		{"other version", []string{write("v2.json", `{"version":"2"}`)}, 2, `version "2"`},
		{"bad sketch", []string{write("sk.json", strings.Replace(string(full), `"zeros": 0`, `"zeros": 99`, 1))}, 2, "sketch"},
		{"missing file", []string{filepath.Join(dir, "nope.json")}, 2, "nope.json"},
		{"partial input", []string{good, partial}, 3, "partial"},
	} {
		code, out, errs := cli(t, append([]string{"report", "merge", "--format", "json"}, tc.files...)...)
		if code != tc.code || !strings.Contains(errs, tc.say) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d saying %q", tc.name, code, errs, tc.code, tc.say)
		}
		if tc.code == 3 && !strings.Contains(out, `"partial": true`) {
			t.Errorf("%s: merged report not marked partial:\n%s", tc.name, out)
		}
		if tc.name == "clean merge of two" && !strings.Contains(out, `"keys": 25000,`) {
			t.Errorf("merging a report with itself does not double its keys:\n%.600s", out)
		}
	}
}
