package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/explain"
	"github.com/keyreg/keyreg/internal/redistest"
)

const explainLocksRegistry = `version: 1
families:
  - {name: job-lock, pattern: "v2:jobs:lock:{{job:int}}", kind: lock, ttl: 45s, fencing: job-fence}
  - {name: job-fence, pattern: "v2:jobs:fence:{{job:int}}", kind: fence}
  - name: job-events
    pattern: "v2:jobs:events:{job:int}"
    type: stream
    max_len: 1000
    ttl: persistent
    groups:
      workers: {max_lag: 100, max_consumer_idle: 1h}
      archive: {}
`

// TestExplainLiveLocks explains a lock, its fence and a stream with groups
// on a real redis-server: the lock's lease left, its token's shape (never
// the token) and its fence's value; the fence's value; the stream's
// groups with lag, pending entries and the idlest consumer holding some.
// With --no-touch on Redis 7.0, what would touch the key is said to be
// unread, and the rules it decides are listed as not checked.
func TestExplainLiveLocks(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	reg := filepath.Join(t.TempDir(), "keys.yaml")
	if err := os.WriteFile(reg, []byte(explainLocksRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	defer c.Close()
	const token = "5e0c4b1a-9d3f-4e2a-8b7c-6a5f4e3d2c1b"
	for _, args := range [][]any{
		{"SET", "v2:jobs:lock:{9}", token, "PX", 40000},
		{"INCRBY", "v2:jobs:fence:{9}", 17},
		{"XADD", "v2:jobs:events:9", "1-1", "a", "1"},
		{"XADD", "v2:jobs:events:9", "1-2", "a", "2"},
		{"XADD", "v2:jobs:events:9", "1-3", "a", "3"},
		{"XGROUP", "CREATE", "v2:jobs:events:9", "workers", "0"},
		{"XREADGROUP", "GROUP", "workers", "w1", "COUNT", 1, "STREAMS", "v2:jobs:events:9", ">"},
	} {
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	explainKey := func(key string, extra ...string) (*explain.LiveFacts, string) {
		t.Helper()
		code, out, errs := cli(t, append([]string{"explain", "--registry", reg, "--url", s.URL(), "--live", "--format", "json", key}, extra...)...)
		if code != 0 && code != exitFindings && (code != exitRuntime || !slices.Contains(extra, "--no-touch")) {
			t.Fatalf("explain %q: exit %d\n%s", key, code, errs)
		}
		var e struct {
			Live *explain.LiveFacts `json:"live"`
		}
		if err := json.Unmarshal([]byte(out), &e); err != nil || e.Live == nil {
			t.Fatalf("explain %q: %v\n%s", key, err, out)
		}
		_, text, _ := cli(t, append([]string{"explain", "--registry", reg, "--url", s.URL(), "--live", key}, extra...)...)
		if strings.Contains(out+text, token) {
			t.Errorf("explain %q prints the lock's token", key)
		}
		return e.Live, strings.Join(strings.Fields(text), " ")
	}

	l, text := explainKey("v2:jobs:lock:{9}")
	if l.Token != "uuid" || !strings.HasSuffix(l.Lease, " left of 45s") || l.Fence == nil ||
		l.Fence.Key != "v2:jobs:fence:{9}" || l.Fence.Exists == nil || !*l.Fence.Exists || l.Fence.Value != "17" {
		t.Errorf("lock: token %q, lease %q, fence %+v", l.Token, l.Lease, l.Fence)
	}
	for _, want := range []string{"live token uuid", `live fence "v2:jobs:fence:{9}" = 17`, "live lease "} {
		if !strings.Contains(text, want) {
			t.Errorf("explain text of the lock lacks %q:\n%s", want, text)
		}
	}
	if l, _ := explainKey("v2:jobs:fence:{9}"); l.Fence == nil || l.Fence.Value != "17" {
		t.Errorf("fence: %+v", l.Fence)
	}
	l, text = explainKey("v2:jobs:events:9")
	if len(l.Groups) != 2 || l.Groups[0].Name != "archive" || l.Groups[0].Exists {
		t.Fatalf("stream groups %+v, want archive (missing) and workers", l.Groups)
	}
	w := l.Groups[1]
	if !w.Exists || w.Lag == nil || *w.Lag != 2 || w.Pending != 1 || w.Consumers != 1 || w.IdleConsumer != "w1" || w.Idle == "" {
		t.Errorf("workers group %+v", w)
	}
	if !strings.Contains(text, `"archive": missing`) || !strings.Contains(text, `"workers": lag 2, 1 pending, 1 consumers; "w1" idle`) {
		t.Errorf("explain text of the stream:\n%s", text)
	}

	// --show-values adds the token, and only then.
	_, out, _ := cli(t, "explain", "--registry", reg, "--url", s.URL(), "--live", "--show-values", "v2:jobs:lock:{9}")
	if !strings.Contains(out, `uuid "`+token+`"`) {
		t.Errorf("explain --show-values does not show the token:\n%s", out)
	}

	// With --no-touch: the token, the length and the groups are not read,
	// and the stream's length and group rules are listed as not checked
	// (exit 3).
	if l, _ := explainKey("v2:jobs:lock:{9}", "--no-touch"); !strings.HasPrefix(l.Token, "(not read") || l.Fence == nil || !*l.Fence.Exists {
		t.Errorf("lock with --no-touch: token %q, fence %+v", l.Token, l.Fence)
	}
	l, text = explainKey("v2:jobs:events:9", "--no-touch")
	if l.Groups != nil || !strings.HasPrefix(l.GroupsNote, "(not read") || l.Verdict != explain.VerdictIncomplete ||
		len(l.NotChecked) != 2 || l.NotChecked[0].Fact != "length" || l.NotChecked[1].Fact != "groups" ||
		l.NotChecked[1].Reason != explain.ReasonTouch || !slices.Contains(l.NotChecked[1].Rules, "stream-group-missing") || l.Touched != 0 {
		t.Errorf("stream with --no-touch: groups %+v, note %q, verdict %q, not checked %+v, touched %d", l.Groups, l.GroupsNote, l.Verdict, l.NotChecked, l.Touched)
	}
	if !strings.Contains(text, "verdict incomplete: no rule fired, but 2 checks were not run") || !strings.Contains(text, "not checked stream-group-missing") {
		t.Errorf("stream with --no-touch, text:\n%s", text)
	}
}
