package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
)

// TestAuditCountsAgree audits a keyspace with registered keys, keys with a
// family's shape but a bad placeholder value, and unregistered keys under
// several prefixes, and checks that every format gives one number per
// concept: keys = registered + unregistered, and the unregistered keys of
// the header, of the unregistered section and of the unregistered-key
// finding are the same, the number seeded.
func TestAuditCountsAgree(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	defer c.Close()
	const sessions, shaped = 20, 4
	unregistered := 0
	p := c.Pipeline()
	for i := range sessions {
		p.Set(ctx, fmt.Sprintf("v1:session:%d", i+1), fmt.Sprintf(`{"user_id":%d}`, i+1), 30*time.Minute)
	}
	for i := range shaped {
		p.Set(ctx, fmt.Sprintf("v1:session:abc%d", i), `{"user_id":1}`, 30*time.Minute)
	}
	for _, k := range []string{"tmp:x:1", "tmp:x:2", "tmp:x:3", "legacy_1", "legacy_2", "sessions", "cache"} {
		p.Set(ctx, k, "v", 0)
		unregistered++
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	keys := sessions + shaped + unregistered
	registered := sessions + shaped

	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	// find returns the numbers the first match of re captures in out.
	find := func(f, out, re string) []int {
		m := regexp.MustCompile(re).FindStringSubmatch(out)
		if m == nil {
			t.Errorf("%s: no match for %s in:\n%s", f, re, out)
			return nil
		}
		var ns []int
		for _, g := range m[1:] {
			ns = append(ns, num(g))
		}
		return ns
	}
	want := func(f, what string, got []int, want ...int) {
		if got != nil && fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %s = %v, want %v", f, what, got, want)
		}
	}
	const (
		header  = `(?m)^\|? ?keys[ |]+(\d+) \((\d+) registered, (\d+) unregistered\)`
		section = `(?m)unregistered: (\d+) keys in (\d+) prefix groups`
		finding = `keys that match no family: (\d+) of (\d+)`
	)
	for _, f := range []string{"text", "table", "markdown", "github", "sarif", "json", "prometheus"} {
		code, out, errs := cli(t, "audit", "--registry", auditRegistry, "--url", s.URL(), "--format", f)
		if code != exitFindings {
			t.Errorf("%s: exit %d, want 1\n%s", f, code, errs)
		}
		switch f {
		case "text", "table":
			want(f, "header", find(f, out, header), keys, registered, unregistered)
			want(f, "section", find(f, out, section), unregistered, 3)
			if f == "text" {
				want(f, "finding", find(f, out, finding), unregistered, keys)
			}
		case "markdown":
			want(f, "header", find(f, out, `\| (\d+) \((\d+) registered, (\d+) unregistered\) \|`), keys, registered, unregistered)
			want(f, "section", find(f, out, `### Unregistered keys\n\n(\d+) keys in (\d+) prefix groups`), unregistered, 3)
			want(f, "finding", find(f, out, finding), unregistered, keys)
		case "github", "sarif":
			want(f, "finding", find(f, out, finding), unregistered, keys)
		case "prometheus":
			want(f, "unregistered", find(f, out, `(?m)^keyreg_audit_unregistered_keys (\d+)$`), unregistered)
			want(f, "finding", find(f, out, `(?m)^keyreg_findings\{rule="unregistered-key",family="",severity="error"\} (\d+)$`), unregistered)
			want(f, "keys", find(f, out, `(?m)^keyreg_audit_keys_scanned (\d+)$`), keys)
			sum := 0
			for _, m := range regexp.MustCompile(`(?m)^keyreg_keys\{[^}]*\} (\d+)$`).FindAllStringSubmatch(out, -1) {
				sum += num(m[1])
			}
			want(f, "family keys", []int{sum}, registered)
			var groups int
			for _, m := range regexp.MustCompile(`(?m)^keyreg_unregistered_keys\{[^}]*\} (\d+)$`).FindAllStringSubmatch(out, -1) {
				groups += num(m[1])
			}
			want(f, "grouped keys", []int{groups}, unregistered)
		case "json":
			var r struct {
				Totals struct {
					Keys, Registered, Unregistered int
				} `json:"totals"`
				Families []struct {
					Name string `json:"name"`
					Keys int    `json:"keys"`
				} `json:"families"`
				Unregistered struct {
					Keys   int `json:"keys"`
					Other  int `json:"other"`
					Groups []struct {
						Keys int `json:"keys"`
					} `json:"groups"`
				} `json:"unregistered"`
				Findings []struct {
					Rule  string `json:"rule"`
					Count int    `json:"count"`
					Of    int    `json:"of"`
				} `json:"findings"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			want(f, "totals", []int{r.Totals.Keys, r.Totals.Registered, r.Totals.Unregistered}, keys, registered, unregistered)
			fams, grouped := 0, r.Unregistered.Other
			for _, fr := range r.Families {
				fams += fr.Keys
			}
			for _, g := range r.Unregistered.Groups {
				grouped += g.Keys
			}
			want(f, "families, unregistered.keys, grouped", []int{fams, r.Unregistered.Keys, grouped}, registered, unregistered, unregistered)
			for _, fd := range r.Findings {
				switch fd.Rule {
				case "unregistered-key":
					want(f, "unregistered-key", []int{fd.Count, fd.Of}, unregistered, keys)
				case "placeholder-invalid":
					want(f, "placeholder-invalid", []int{fd.Count, fd.Of}, shaped, registered)
				}
			}
		}
		if strings.Contains(out, "bad placeholder value") {
			t.Errorf("%s: placeholder-invalid keys counted apart:\n%s", f, out)
		}
	}
}
