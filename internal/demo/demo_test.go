package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/keyreg/keyreg"
	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/internal/demo"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/report"
	"github.com/keyreg/keyreg/rules"
	"github.com/keyreg/keyreg/scanner"
)

// now is after the sunset of user-session-v1 in the example registry.
var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func exampleRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(keyreg.Example, "keys.yaml")
	if err != nil {
		t.Fatalf("loading the embedded example registry: %v", err)
	}
	return reg
}

// seeded starts miniredis, seeds it and connects the real scanner to it.
func seeded(t *testing.T, reg *registry.Registry, o demo.Options) (*miniredis.Miniredis, demo.Planted, *scanner.Conn) {
	t.Helper()
	m := miniredis.RunT(t)
	p, err := demo.Seed(m, reg, o)
	if err != nil {
		t.Fatalf("Seed: %v", err)
	}
	conn, err := scanner.Connect(context.Background(), scanner.Options{URL: "redis://" + m.Addr(), Plan: audit.Plan(reg, true), AllowTouch: true})
	if err != nil {
		t.Fatalf("Connect to miniredis: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return m, p, conn
}

func runAudit(t *testing.T, conn *scanner.Conn, reg *registry.Registry, p demo.Planted) *audit.Report {
	t.Helper()
	ao := audit.Defaults()
	ao.Now = now
	ao.Sample = p.MaxFamilyKeys()
	rep, err := audit.Run(context.Background(), conn, reg, ao)
	if err != nil {
		t.Fatalf("audit.Run: %v", err)
	}
	return rep
}

// TestAuditFindsExactlyThePlanted seeds the example registry, audits it
// through the real scanner and checks every (family, rule) count, every
// family's key count and the unregistered prefix groups against Planted.
func TestAuditFindsExactlyThePlanted(t *testing.T) {
	reg := exampleRegistry(t)
	for _, o := range []demo.Options{{Now: now}, {Seed: 7, Keys: 5, Now: now}, {Seed: 99, Keys: 40, Now: now}} {
		t.Run(fmt.Sprintf("seed=%d,keys=%d", o.Seed, o.Keys), func(t *testing.T) {
			_, p, conn := seeded(t, reg, o)
			rep := runAudit(t, conn, reg, p)
			if rep.Partial {
				t.Fatalf("partial report: %s", rep.PartialReason)
			}

			got, suppressed := map[demo.Problem]int{}, map[demo.Problem]int{}
			for _, f := range rep.Findings {
				pr := demo.Problem{Family: f.Family, Rule: f.Rule}
				if f.Suppressed {
					suppressed[pr] = int(f.Count)
				} else {
					got[pr] = int(f.Count)
				}
			}
			if d := cmp.Diff(p.Findings, got); d != "" {
				t.Errorf("findings (-planted +audit):\n%s", d)
			}
			if d := cmp.Diff(p.Suppressed, suppressed); d != "" {
				t.Errorf("suppressed findings (-planted +audit):\n%s", d)
			}

			// Every kind of problem the demo promises is planted.
			for _, r := range []string{"unregistered-key", "placeholder-invalid", "ttl-missing", "ttl-exceeds-max",
				"ttl-unexpected", "type-mismatch", "payload-invalid", "encoding-mismatch", "value-too-large",
				"collection-too-long", "stale-key", "deprecated-live", "fence-missing", "fence-invalid",
				"stream-group-missing", "stream-group-lag", "stream-pending", "stream-consumer-idle"} {
				if !slices.ContainsFunc(slices.Collect(maps.Keys(p.Findings)), func(pr demo.Problem) bool { return pr.Rule == r }) &&
					!slices.ContainsFunc(slices.Collect(maps.Keys(p.Suppressed)), func(pr demo.Problem) bool { return pr.Rule == r }) {
					t.Errorf("no %s planted", r)
				}
			}

			// Keys per family, and keys with findings: a clean key adds none.
			bad := map[string]int{}
			for _, k := range p.Keys {
				if len(k.Rules) > 0 {
					bad[k.Family]++
				}
			}
			for _, fr := range rep.Families {
				if want := p.FamilyKeys(fr.Name); int(fr.Keys) != want {
					t.Errorf("family %s: audit counted %d keys, seeded %d", fr.Name, fr.Keys, want)
				}
				if int(fr.Findings) != bad[fr.Name] {
					t.Errorf("family %s: %d keys with findings, planted %d", fr.Name, fr.Findings, bad[fr.Name])
				}
				// Keys with a bad placeholder value are not sampled.
				shaped := int64(p.Findings[demo.Problem{Family: fr.Name, Rule: rules.PlaceholderInvalid.ID}])
				if fr.Keys > 0 && fr.Sampled != fr.Keys-shaped && !hasType(p, fr.Name) {
					t.Errorf("family %s: sampled %d of %d keys (%d placeholder-invalid)", fr.Name, fr.Sampled, fr.Keys, shaped)
				}
			}
			if int(rep.Totals.Keys) != len(p.Keys) {
				t.Errorf("audit saw %d keys, seeded %d", rep.Totals.Keys, len(p.Keys))
			}

			groups := map[string]int{}
			for _, g := range rep.Unregistered.Groups {
				groups[g.Prefix] = int(g.Keys)
			}
			if d := cmp.Diff(p.Unregistered, groups); d != "" {
				t.Errorf("unregistered groups (-planted +audit):\n%s", d)
			}
			if len(groups) < 3 {
				t.Errorf("want at least 3 unregistered prefix groups, got %v", groups)
			}
		})
	}
}

// hasType reports whether a family has a type-mismatch key, which the
// audit does not sample.
func hasType(p demo.Planted, family string) bool {
	return p.Findings[demo.Problem{Family: family, Rule: rules.TypeMismatch.ID}] > 0
}

// TestCleanKeysHaveNoFindings checks every clean key on its own with the
// audit's single-key check.
func TestCleanKeysHaveNoFindings(t *testing.T) {
	reg := exampleRegistry(t)
	_, p, conn := seeded(t, reg, demo.Options{Keys: 10, Now: now})
	ao := audit.Defaults()
	ao.Now = now
	clean := 0
	for _, k := range p.Keys {
		if !k.Clean() {
			continue
		}
		clean++
		kc, err := audit.CheckKey(context.Background(), conn, reg, k.Name, ao)
		if err != nil {
			t.Fatalf("CheckKey(%q): %v", k.Name, err)
		}
		for _, f := range kc.Findings {
			t.Errorf("clean key %q (%s): %s %s", k.Name, k.Family, f.Rule, f.Detail)
		}
	}
	if clean < 10*len(reg.Families)/2 {
		t.Errorf("only %d clean keys", clean)
	}
}

// TestDeterministic seeds twice with one seed and compares the keyspaces.
func TestDeterministic(t *testing.T) {
	reg := exampleRegistry(t)
	dump := func(seed uint64) (string, demo.Planted) {
		m := miniredis.RunT(t)
		p, err := demo.Seed(m, reg, demo.Options{Seed: seed, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, k := range m.Keys() {
			fmt.Fprintf(&b, "%q ttl=%s\n", k, m.TTL(k))
		}
		miniredis.DumpMaxLineLen = 1 << 20
		return b.String() + m.Dump(), p
	}
	a, pa := dump(3)
	b, pb := dump(3)
	if a != b {
		t.Error("two seeds with the same Options differ")
	}
	if d := cmp.Diff(pa, pb); d != "" {
		t.Errorf("Planted differs:\n%s", d)
	}
	if c, _ := dump(4); c == a {
		t.Error("seeds 3 and 4 give the same keyspace")
	}
}

// TestReportsCarryNoValues renders the demo report as text and json and
// checks that no payload value reaches them.
func TestReportsCarryNoValues(t *testing.T) {
	reg := exampleRegistry(t)
	m, p, conn := seeded(t, reg, demo.Options{Now: now})
	rep := runAudit(t, conn, reg, p)
	var out bytes.Buffer
	for _, f := range []report.Format{report.Text, report.JSON} {
		if err := report.Audit(&out, f, rep, report.Options{Summary: &bytes.Buffer{}}); err != nil {
			t.Fatal(err)
		}
	}
	text := out.String()
	// Key names and schema literals (enum values a violation lists) are
	// not payload values.
	var names strings.Builder
	for _, k := range p.Keys {
		names.WriteString(k.Name + "\n")
	}
	for _, f := range reg.Families {
		if f.Schema != nil {
			names.WriteString(strings.Join(strs(f.Schema.Doc), "\n"))
		}
	}
	checked := 0
	for _, k := range p.Keys {
		for _, v := range leaves(t, m, k.Name) {
			// Short strings and strings that are part of a key name (a
			// task's UUID) or of a schema may appear for other reasons.
			if len(v) < 8 || strings.Contains(names.String(), v) {
				continue
			}
			checked++
			if strings.Contains(text, v) {
				t.Errorf("report holds a payload value of %q: %q", k.Name, v)
			}
		}
	}
	if checked < 500 {
		t.Errorf("only %d values checked", checked)
	}
}

// leaves returns the raw values stored under key and, for JSON values,
// every string inside them.
func leaves(t *testing.T, m *miniredis.Miniredis, key string) []string {
	t.Helper()
	var raw []string
	switch m.Type(key) {
	case "string":
		v, _ := m.Get(key)
		raw = append(raw, v)
	case "hash":
		fs, _ := m.HKeys(key)
		for _, f := range fs {
			raw = append(raw, m.HGet(key, f))
		}
	case "list":
		raw, _ = m.List(key)
	case "set":
		raw, _ = m.Members(key)
	case "zset":
		raw, _ = m.ZMembers(key)
	case "stream":
		es, _ := m.Stream(key)
		for _, e := range es {
			for i := 1; i < len(e.Values); i += 2 {
				raw = append(raw, e.Values[i])
			}
		}
	}
	out := slices.Clone(raw)
	for _, r := range raw {
		var v any
		if json.Unmarshal([]byte(r), &v) == nil {
			out = append(out, strs(v)...)
		}
	}
	return out
}

func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, strs(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range x {
			out = append(out, strs(e)...)
		}
		return out
	}
	return nil
}
