package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
)

// Bull and BullMQ may share one prefix in one Redis, and a registry may use
// both presets at once: a key both match goes to the family with the most
// literal bytes, ties to the first declared. These tests check that the
// order of the two presets never changes a finding.

// bullOrders are the two orders of the presets in a registry.
var bullOrders = [][]string{{"bull", "bullmq"}, {"bullmq", "bull"}}

// bothPresets writes a registry that uses the named presets, in order, on
// the default prefix, with the capture scripts' limiter duration.
func bothPresets(t *testing.T, names ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("version: 1\nowners:\n  workers: {contact: workers@example.com}\nfamilies: []\npresets:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  - use: %s\n    owner: workers\n    with: {limiter_duration: 1s}\n", n)
	}
	p := filepath.Join(t.TempDir(), "keys.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBullAndBullMQCapturesShareAPrefix restores both captures (queues of
// both libraries under the prefix "bull") into one real redis-server and
// audits them with a registry that uses both presets, in both orders: lint
// is clean, every key lands on a bull or bullmq family of its type, and the
// audit finds nothing above info.
func TestBullAndBullMQCapturesShareAPrefix(t *testing.T) {
	_, bullKeys := readCapture(t, filepath.Join(frameworksDir, "bull.jsonl"))
	_, mqKeys := readCapture(t, filepath.Join(frameworksDir, "bullmq.jsonl"))
	keys := slices.Concat(bullKeys, mqKeys)
	seen := map[string]bool{}
	for _, k := range keys {
		name := k.name(t)
		if seen[name] {
			t.Fatalf("key %q is in both captures: restoring one would overwrite the other", name)
		}
		seen[name] = true
	}
	s := redistest.Standalone(t)
	for _, order := range bullOrders {
		t.Run(strings.Join(order, "-then-"), func(t *testing.T) {
			regPath := bothPresets(t, order...)
			code, out, errb := cli(t, "lint", "--registry", regPath, "--fail-on", "warn")
			if code != 0 || !strings.Contains(out+errb, "0 errors, 0 warnings") {
				t.Fatalf("lint exit %d, want 0 with no error or warning:\n%s%s", code, out, errb)
			}
			reg, err := registry.LoadFile(regPath)
			if err != nil {
				t.Fatal(err)
			}
			m := reg.Matcher()
			for _, k := range keys {
				key := k.name(t)
				f := m.Match(key)
				switch {
				case f == nil:
					t.Errorf("key %q (%s) matches no family", key, k.Type)
				case f.Preset != "bull" && f.Preset != "bullmq":
					t.Errorf("key %q is on family %s of preset %q", key, f.Name, f.Preset)
				case f.Type != k.Type:
					t.Errorf("key %q is a %s, but its family %s declares %s", key, k.Type, f.Name, f.Type)
				}
			}
			if t.Failed() {
				return
			}
			restore(t, s.Addr, keys, nil)
			r := auditClean(t, s.Addr, regPath)
			var total int64
			for _, f := range r.Families {
				total += f.Keys
				if f.Keys > 0 && f.Preset != "bull" && f.Preset != "bullmq" {
					t.Errorf("family %s holds %d keys, but has preset %q", f.Name, f.Keys, f.Preset)
				}
			}
			lasting := int64(0)
			for _, k := range keys {
				if k.PTTL < 0 || k.PTTL > 60_000 {
					lasting++
				}
			}
			if r.Scan.Keys < lasting || total < lasting {
				t.Errorf("audit saw %d keys, %d on families, want at least the %d without a short TTL", r.Scan.Keys, total, lasting)
			}
		})
	}
}

// bullProbe is a key either library (or both) writes, with the family it
// lands on under each preset alone ("" for none) and under both.
type bullProbe struct {
	key          string
	bull, bullmq string
	// both is the family with both presets in either order; "tie" means
	// the first declared preset's (the two families must then agree).
	both string
}

var bullProbes = []bullProbe{
	// Jobs: ids from INCR, custom ids, flow children's UUIDs.
	{"bull:mail:1", "bull-job", "bullmq-job", "tie"},
	{"bull:mail:order-42", "bull-job", "bullmq-job", "tie"},
	{"bull:mail:4930589a-e978-4f62-9857-c963af4e074e", "bull-job", "bullmq-job", "tie"},
	{"bull:mail:a:b:c", "bull-job", "bullmq-job-three-part-id", "bullmq-job-three-part-id"},
	{"bull:mail:5d9c6a2e-uuid:eu-west", "bull-job", "", "bull-job"}, // Bull limiter.groupKey id
	{"bull:mail:repeat:b44bb0942d976294498928898f662f36:1796126400000", "bull-repeat-job", "bullmq-scheduler-job", "tie"},
	{"bull:mail:repeat:hourly-digest:1796124718676", "bull-job", "bullmq-scheduler-job", "bullmq-scheduler-job"},
	{"bull:mail:repeat:tenant:7:daily:1796124718676", "bull-job", "bullmq-scheduler-job", "bullmq-scheduler-job"},
	{"bull:mail:repeat:hourly-digest", "bull-job", "bullmq-scheduler", "bullmq-scheduler"},
	{"bull:mail:repeat:tenant:7:daily", "bull-job", "bullmq-scheduler", "bullmq-scheduler"},
	// Job sub-keys.
	{"bull:mail:1:logs", "bull-job-logs", "bullmq-job-logs", "tie"},
	{"bull:mail:a:b:c:logs", "bull-job-logs", "bullmq-job-logs", "tie"},
	{"bull:mail:repeat:b44bb0942d976294498928898f662f36:1796126400000:logs", "bull-job-logs", "bullmq-scheduler-job-logs", "bullmq-scheduler-job-logs"},
	{"bull:mail:repeat:hourly-digest:1796124718676:logs", "bull-job-logs", "bullmq-scheduler-job-logs", "bullmq-scheduler-job-logs"},
	{"bull:mail:12:lock", "bull-job-lock", "bullmq-job-lock", "tie"},
	{"bull:mail:5d9c6a2e-uuid:eu-west:lock", "bull-job-lock", "bullmq-job-lock", "tie"},
	{"bull:mail:repeat:hourly-digest:1796124718676:lock", "bull-job-lock", "bullmq-scheduler-job-lock", "bullmq-scheduler-job-lock"},
	{"bull:mail:ac9b05e6-57f5-41c7-adf9-b17cd889fb18:dependencies", "bull-job", "bullmq-job-dependencies", "bullmq-job-dependencies"},
	{"bull:mail:ac9b05e6-57f5-41c7-adf9-b17cd889fb18:processed", "bull-job", "bullmq-job-processed", "bullmq-job-processed"},
	{"bull:mail:ac9b05e6-57f5-41c7-adf9-b17cd889fb18:failed", "bull-job", "bullmq-job-failed", "bullmq-job-failed"},
	{"bull:mail:repeat:hourly-digest:1796124718676:failed", "bull-job", "bullmq-scheduler-job-failed", "bullmq-scheduler-job-failed"},
	{"bull:mail:ac9b05e6-57f5-41c7-adf9-b17cd889fb18:unsuccessful", "bull-job", "bullmq-job-unsuccessful", "bullmq-job-unsuccessful"},
	{"bull:mail:repeat:hourly-digest:1796124718676:dependencies", "bull-job", "bullmq-job-dependencies", "bullmq-job-dependencies"},
	// Queue structures both libraries write.
	{"bull:mail:wait", "bull-wait", "bullmq-wait", "tie"},
	{"bull:mail:active", "bull-active", "bullmq-active", "tie"},
	{"bull:mail:paused", "bull-paused", "bullmq-paused", "tie"},
	{"bull:mail:completed", "bull-completed", "bullmq-completed", "tie"},
	{"bull:mail:failed", "bull-failed", "bullmq-failed", "tie"},
	{"bull:mail:delayed", "bull-delayed", "bullmq-delayed", "tie"},
	{"bull:mail:repeat", "bull-repeat", "bullmq-repeat", "tie"},
	{"bull:mail:id", "bull-id", "bullmq-id", "tie"},
	{"bull:mail:meta", "bull-meta", "bullmq-meta", "tie"},
	{"bull:mail:limiter", "bull-limiter", "bullmq-limiter", "tie"},
	{"bull:mail:stalled-check", "bull-stalled-check", "bullmq-stalled-check", "tie"},
	{"bull:mail:stalled", "bull-stalled", "bullmq-stalled", "tie"},
	{"bull:mail:metrics:completed", "bull-metrics-completed", "bullmq-metrics-completed", "tie"},
	{"bull:mail:metrics:completed:data", "bull-metrics-completed-data", "bullmq-metrics-completed-data", "tie"},
	{"bull:mail:metrics:failed", "bull-metrics-failed", "bullmq-metrics-failed", "tie"},
	{"bull:mail:metrics:failed:data", "bull-metrics-failed-data", "bullmq-metrics-failed-data", "tie"},
	{"bull:mail:de:digest-e", "bull-debounce", "bullmq-deduplication", "tie"},
	{"bull:mail:de:tenant:7", "bull-debounce", "bullmq-deduplication", "tie"},
	// Bull only.
	{"bull:mail:priority", "bull-priority", "bullmq-job", "bull-priority"},
	{"bull:mail:meta-paused", "bull-meta-paused", "bullmq-job", "bull-meta-paused"},
	{"bull:mail:limiter:eu-west", "bull-limiter-group", "", "bull-limiter-group"},
	{"bull:mail:limiter:index", "bull-limiter-index", "", "bull-limiter-index"},
	{"bull:mail:limiter:limited", "bull-limiter-limited", "", "bull-limiter-limited"},
	{"bull:mail:limiter:eu-west:limited", "bull-limiter-group-limited", "bullmq-job-three-part-id", "bull-limiter-group-limited"},
	// BullMQ only.
	{"bull:mail:prioritized", "bull-job", "bullmq-prioritized", "bullmq-prioritized"},
	{"bull:mail:waiting-children", "bull-job", "bullmq-waiting-children", "bullmq-waiting-children"},
	{"bull:mail:marker", "bull-job", "bullmq-marker", "bullmq-marker"},
	{"bull:mail:events", "bull-job", "bullmq-events", "bullmq-events"},
	{"bull:mail:pc", "bull-job", "bullmq-pc", "bullmq-pc"},
	{"bull:mail:dn:digest-e", "bull-job", "bullmq-deduplication-next", "bullmq-deduplication-next"},
	{"bull::relay:namespaces", "", "bullmq-relay-namespaces", "bullmq-relay-namespaces"},
	{"bull::relay:{default}:layout", "", "bullmq-relay-layout", "bullmq-relay-layout"},
	{"bull::relay:{default}:nodes", "", "bullmq-relay-nodes", "bullmq-relay-nodes"},
	{"bull::relay:{default}:started", "", "bullmq-relay-started", "bullmq-relay-started"},
	{"bull::relay:{default}:9f3c0a7e5b1d4c2a8e6f0b3d5a7c9e1f:node", "", "bullmq-relay-node", "bullmq-relay-node"},
	{"bull::relay:{default}:9f3c0a7e5b1d4c2a8e6f0b3d5a7c9e1f:inbox", "", "bullmq-relay-inbox", "bullmq-relay-inbox"},
	{"bull::relay:{default}:subs", "", "bullmq-relay-subs", "bullmq-relay-subs"},
	{"bull::relay:{default}:cleanup", "", "bullmq-relay-cleanup", "bullmq-relay-cleanup"},
	{"bull::relay:{default}:retained", "", "bullmq-relay-retained", "bullmq-relay-retained"},
	{"bull::relay:{default}:queues.emails.jobs.42:progress:ret", "", "bullmq-relay-retained-message", "bullmq-relay-retained-message"},
	{"bull::relay:{default}:mid", "", "bullmq-relay-message-id", "bullmq-relay-message-id"},
	// Neither.
	{"bull:mail", "", "", ""},
	{"other:mail:1", "", "", ""},
}

// TestBullPresetsAgreeWhereTheyOverlap checks the family each key of
// either library lands on, under each preset alone and under both in
// either order, and that wherever the order decides, the two families
// agree on type, TTL policy and encoding: attributing the key to either
// gives the same findings.
func TestBullPresetsAgreeWhereTheyOverlap(t *testing.T) {
	load := func(names ...string) *registry.Matcher {
		r, err := registry.LoadFile(bothPresets(t, names...))
		if err != nil {
			t.Fatal(err)
		}
		return r.Matcher()
	}
	name := func(f *registry.Family) string {
		if f == nil {
			return ""
		}
		return f.Name
	}
	bull, mq := load("bull"), load("bullmq")
	bullFirst, mqFirst := load("bull", "bullmq"), load("bullmq", "bull")
	for _, p := range bullProbes {
		fb, fm := bull.Match(p.key), mq.Match(p.key)
		if name(fb) != p.bull {
			t.Errorf("bull alone: key %q is on %q, want %q", p.key, name(fb), p.bull)
		}
		if name(fm) != p.bullmq {
			t.Errorf("bullmq alone: key %q is on %q, want %q", p.key, name(fm), p.bullmq)
		}
		f1, f2 := bullFirst.Match(p.key), mqFirst.Match(p.key)
		want1, want2 := p.both, p.both
		if p.both == "tie" {
			want1, want2 = p.bull, p.bullmq
		}
		if name(f1) != want1 {
			t.Errorf("bull then bullmq: key %q is on %q, want %q", p.key, name(f1), want1)
		}
		if name(f2) != want2 {
			t.Errorf("bullmq then bull: key %q is on %q, want %q", p.key, name(f2), want2)
		}
		if f1 == nil || f2 == nil || f1.Name == f2.Name {
			continue
		}
		if f1.Type != f2.Type || f1.TTL != f2.TTL || !slices.Equal(f1.Encodings(), f2.Encodings()) {
			t.Errorf("key %q: the order of the presets decides between %s (%s, ttl %s, encoding %v) and %s (%s, ttl %s, encoding %v), which disagree",
				p.key, f1.Name, f1.Type, f1.TTL, f1.Encodings(), f2.Name, f2.Type, f2.TTL, f2.Encodings())
		}
	}
}
