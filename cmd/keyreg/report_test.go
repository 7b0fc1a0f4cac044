package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/keyreg/keyreg/audit"
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
	for _, k := range []string{"target", "targets", "mode", "started", "tool"} {
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

// setJSON returns doc, a json document, with the value at path (keys and
// indexes, such as families 0 keys) replaced by v.
func setJSON(t *testing.T, doc []byte, v any, path ...any) []byte {
	t.Helper()
	var root any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		t.Fatal(err)
	}
	cur := root
	for i, p := range path {
		last := i == len(path)-1
		switch p := p.(type) {
		case string:
			m := cur.(map[string]any)
			if last {
				m[p] = v
			}
			cur = m[p]
		case int:
			a := cur.([]any)
			if last {
				a[p] = v
			}
			cur = a[p]
		}
	}
	out, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReportMergeValidates merges reports holding numbers no audit writes:
// a count of 2^63-1, which merging with itself would overflow to -2, a
// negative count, and a count past audit.MaxCount. Each is a usage error
// (exit 2) that names the file and the JSON path of the number. Counts of
// MaxCount each still merge, to 2^49, without overflow.
func TestReportMergeValidates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	full, err := os.ReadFile("../../report/testdata/audit.full.json.golden")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, body []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		v    any
		path []any
		say  string
	}{
		{"max.json", int64(math.MaxInt64), []any{"families", 0, "keys"}, "max.json: $.families[0].keys is 9223372036854775807, out of range"},
		{"neg.json", -3, []any{"unregistered", "groups", 1, "keys"}, "neg.json: $.unregistered.groups[1].keys is -3, out of range"},
		{"over.json", int64(audit.MaxCount) + 1, []any{"findings", 2, "count"}, "over.json: $.findings[2].count is 281474976710657"},
		{"ttl.json", -2, []any{"ttl_histogram", 0, "keys"}, "ttl.json: $.ttl_histogram[0].keys is -2"},
		{"sketch.json", -1, []any{"types", 0, "bytes", "sketch", "count"}, "sketch.json: $.types[0].bytes.sketch.count is -1"},
		{"float.json", -1.5, []any{"scan", "keys_per_second"}, "float.json: $.scan.keys_per_second is -1.5"},
	} {
		bad := write(tc.name, setJSON(t, full, tc.v, tc.path...))
		code, out, errs := cli(t, "report", "merge", "--format", "json", bad, bad)
		if code != exitUsage || !strings.Contains(errs, tc.say) || out != "" {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 saying %q", tc.name, code, errs, tc.say)
		}
	}
	big := write("big.json", setJSON(t, full, int64(audit.MaxCount), "scan", "scanned"))
	code, out, errs := cli(t, "report", "merge", "--format", "json", big, big)
	if code == exitUsage || code == exitRuntime || !strings.Contains(out, fmt.Sprintf(`"scanned": %d,`, 2*audit.MaxCount)) {
		t.Errorf("merging two reports of MaxCount scanned keys: exit %d\n%s", code, errs)
	}
}

// TestReportMergeTargets merges the reports of two instances whose URLs
// carry passwords: the merged report lists both, each redacted on its
// own (joined, they read as one URL, and one instance vanished), and
// every example of a finding names the instance it comes from.
func TestReportMergeTargets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	full, err := os.ReadFile("../../report/testdata/audit.full.json.golden")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for i, u := range []string{"redis://:s3cret@10.0.0.1:8110", "redis://app:hunter2@10.0.0.2:8120/0"} {
		p := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		if err := os.WriteFile(p, setJSON(t, full, u, "target"), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	code, out, errs := cli(t, append([]string{"report", "merge", "--format", "json"}, files...)...)
	if code != exitFindings {
		t.Fatalf("merge: exit %d\n%s", code, errs)
	}
	var doc struct {
		Target   string   `json:"target"`
		Targets  []string `json:"targets"`
		Findings []struct {
			Examples []struct {
				Instance string `json:"instance"`
			} `json:"examples"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := []string{"redis://:xxxxx@10.0.0.1:8110", "redis://app:xxxxx@10.0.0.2:8120/0"}
	if !slices.Equal(doc.Targets, want) || doc.Target != strings.Join(want, ", ") || strings.Contains(out, "s3cret") || strings.Contains(out, "hunter2") {
		t.Errorf("merged target %q, targets %q; want %q", doc.Target, doc.Targets, want)
	}
	instances := map[string]int{}
	for _, f := range doc.Findings {
		for _, e := range f.Examples {
			instances[e.Instance]++
		}
	}
	if len(instances) != 2 || instances[want[0]] == 0 || instances[want[1]] == 0 {
		t.Errorf("examples name the instances %v; want both of %q and nothing else", instances, want)
	}
	_, text, _ := cli(t, append([]string{"report", "merge", "--format", "text"}, files...)...)
	if !regexp.MustCompile(`(?m)^target +redis://:xxxxx@10\.0\.0\.1:8110, redis://app:xxxxx@10\.0\.0\.2:8120/0 \(`).MatchString(text) {
		t.Errorf("text target line:\n%.400s", text)
	}
	_, md, _ := cli(t, append([]string{"report", "merge", "--format", "markdown"}, files...)...)
	if !strings.Contains(md, "on redis://:xxxxx@10.0.0.1:8110") || strings.Contains(md, "s3cret") {
		t.Errorf("the markdown findings do not name their examples' instance:\n%s", md)
	}
}
