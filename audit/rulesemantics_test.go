package audit

import (
	"context"
	"testing"
	"testing/fstest"
	"time"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
	"github.com/keyreg/keyreg/scanner"
	"github.com/redis/go-redis/v9"
)

// TestNewRuleOwnsItsSemantics adds key rules the audit has never heard of
// and checks that it runs and counts each as the rule declares: a sample
// rule only on sampled keys and against them, a key rule against every
// key audited, a run rule once per family. Nothing in the audit names
// these rules, so a wrong "N of M" here means the driver guesses.
func TestNewRuleOwnsItsSemantics(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	for _, k := range []string{"v1:s:1", "v1:s:2", "v1:s:3", "v1:s:4", "v1:s:5"} {
		if err := c.Set(ctx, k, `{"n":1}`, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Set(ctx, "junk:1", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(`version: 1
families:
  - name: s
    pattern: "v1:s:{id:int}"
    type: string
    encoding: json
    ttl: optional
  - name: empty
    pattern: "v1:empty:{id:int}"
    ttl: optional
`)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	everySample := &rules.Rule{ID: "test-every-sample", Kind: rules.KindKey, Severity: diag.Warn,
		Phase: rules.PhaseSample, Unit: rules.UnitSamples, Reads: rules.FactPayload,
		Key:     func(*rules.KeyFacts) bool { return true },
		Detail:  func(k *rules.KeyFacts) string { return "checked" },
		Summary: func(*registry.Family) string { return "sampled keys" }}
	everyKey := &rules.Rule{ID: "test-every-key", Kind: rules.KindKey, Severity: diag.Warn,
		Phase: rules.PhaseKey, Unit: rules.UnitAllKeys,
		Key:     func(k *rules.KeyFacts) bool { return k.Family != nil },
		Summary: func(*registry.Family) string { return "registered keys" }}
	perRun := &rules.Rule{ID: "test-per-run", Kind: rules.KindKey, Severity: diag.Info,
		Phase: rules.PhaseRun, Unit: rules.UnitNone,
		Run:     func(r *rules.RunFacts) bool { return r.Complete && r.Sampled > 0 },
		Summary: func(f *registry.Family) string { return "family " + f.Name + " was sampled" }}

	conn, err := scanner.Connect(ctx, scanner.Options{URL: srv.URL(), Count: 50, Timeout: 2 * time.Second,
		Plan: Plan(reg, false), AllowTouch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	o := Defaults()
	o.Sample = 2
	rep, err := runRules(ctx, conn, reg, o, []*rules.Rule{everySample, everyKey, perRun})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*Finding{}
	for _, f := range rep.Findings {
		got[f.Rule+"/"+f.Family] = f
	}
	for _, w := range []struct {
		id, family string
		count, of  int64
		msg        string
	}{
		{"test-every-sample", "s", 2, 2, "sampled keys: 2 of 2"},
		{"test-every-key", "s", 5, 6, "registered keys: 5 of 6"},
		{"test-per-run", "s", 0, 0, "family s was sampled"},
	} {
		f := got[w.id+"/"+w.family]
		if f == nil {
			t.Errorf("%s on %s: no finding (got %v)", w.id, w.family, got)
			continue
		}
		if f.Count != w.count || f.Of != w.of || f.Message != w.msg {
			t.Errorf("%s on %s: count %d of %d, message %q; want %d of %d, %q", w.id, w.family, f.Count, f.Of, f.Message, w.count, w.of, w.msg)
		}
	}
	if len(got) != 3 {
		t.Errorf("got %d findings, want 3: %v", len(got), got)
	}
}
