package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
)

// explainRegistry has a hash family with max_len, a string family with
// max_bytes and a ttl max, and one with a schema.
const explainRegistry = `version: 1
families:
  - name: profile
    pattern: "v1:profile:{id:int}"
    type: hash
    encoding: json
    ttl: optional
    max_len: 3
  - name: page
    pattern: "v1:page:{id:int}"
    type: string
    encoding: text
    ttl: {max: 1h}
    max_bytes: 300
  - name: session
    pattern: "v1:session:{id:int}"
    type: string
    encoding: json
    ttl: {max: 1h}
    schema: {type: object, properties: {user_id: {type: integer}}, required: [user_id]}
`

// ttlLeft is a TTL left in a finding's detail ("ttl 4h59m59s").
var ttlLeft = regexp.MustCompile(`ttl [0-9]+[0-9hmsµ.]*`)

// TestExplainLiveAgreesWithAudit seeds keys that trigger every kind of
// key rule (an over-long hash, an over-size value, a wrong type, bad
// payloads, TTL problems, a bad placeholder value, an unregistered key)
// and checks that explain --live reports, for each key, exactly the rules
// the audit reports for it.
func TestExplainLiveAgreesWithAudit(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	reg := filepath.Join(t.TempDir(), "keys.yaml")
	if err := os.WriteFile(reg, []byte(explainRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	defer c.Close()
	half := 30 * time.Minute
	p := c.Pipeline()
	p.HSet(ctx, "v1:profile:1", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5")
	p.HSet(ctx, "v1:profile:2", "a", "1")
	p.Set(ctx, "v1:profile:3", "1", 0)
	p.Set(ctx, "v1:page:1", strings.Repeat("x", 2000), half)
	p.Set(ctx, "v1:page:2", "short", 0)
	p.Set(ctx, "v1:session:1", `{"user_id":"x"}`, half)
	p.Set(ctx, "v1:session:2", "\x81\xa7user_id\x01", half)
	p.Set(ctx, "v1:session:3", `{"user_id":3}`, 5*time.Hour)
	p.Set(ctx, "v1:session:4", `{"user_id":4}`, half)
	p.Set(ctx, "v1:session:abc", `{"user_id":5}`, half)
	p.Set(ctx, "tmp:1", "x", 0)
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"v1:profile:1":   {"collection-too-long"},
		"v1:profile:2":   nil,
		"v1:profile:3":   {"type-mismatch"},
		"v1:page:1":      {"value-too-large"},
		"v1:page:2":      {"ttl-missing"},
		"v1:session:1":   {"payload-invalid"},
		"v1:session:2":   {"encoding-mismatch"},
		"v1:session:3":   {"ttl-exceeds-max"},
		"v1:session:4":   nil,
		"v1:session:abc": {"placeholder-invalid"},
		"tmp:1":          {"unregistered-key"},
	}

	// The audit runs with --allow-touch: the test server is Redis 7.0, where
	// it reads no payload or length without it (docs/audit.md); explain
	// --live reads them by default.
	// What the audit says, key by key, from the findings' examples (each
	// rule fires on fewer keys than a finding keeps as examples).
	code, out, errs := cli(t, "audit", "--allow-touch", "--registry", reg, "--url", s.URL(), "--format", "json")
	if code != exitFindings {
		t.Fatalf("audit: exit %d\n%s", code, errs)
	}
	var rep struct {
		Findings []struct {
			Rule     string `json:"rule"`
			Examples []struct {
				Key    string `json:"key"`
				Detail string `json:"detail"`
			} `json:"examples"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	audited := map[string][]string{}
	details := map[string][]string{} // "rule (detail)" per key
	for _, f := range rep.Findings {
		for _, e := range f.Examples {
			audited[e.Key] = append(audited[e.Key], f.Rule)
			d := f.Rule
			if e.Detail != "" {
				d += " (" + e.Detail + ")"
			}
			details[e.Key] = append(details[e.Key], d)
		}
	}
	verdict := regexp.MustCompile(`^[a-z]+: ([a-z-]+)`)
	for key, w := range want {
		slices.Sort(audited[key])
		if !slices.Equal(audited[key], w) {
			t.Errorf("audit: %q: rules %q, want %q", key, audited[key], w)
		}
		code, out, errs := cli(t, "explain", "--registry", reg, "--url", s.URL(), "--live", "--format", "json", key)
		if code == exitUsage || code == exitRuntime {
			t.Fatalf("explain %q: exit %d\n%s", key, code, errs)
		}
		var e struct {
			Live struct {
				Exists   bool     `json:"exists"`
				Verdicts []string `json:"verdicts"`
			} `json:"live"`
		}
		if err := json.Unmarshal([]byte(out), &e); err != nil {
			t.Fatal(err)
		}
		var got, gotDetails []string
		for _, v := range e.Live.Verdicts {
			if m := verdict.FindStringSubmatch(v); m != nil {
				got = append(got, m[1])
				gotDetails = append(gotDetails, v[len(m[0])-len(m[1]):])
			} else {
				t.Errorf("explain %q: verdict %q", key, v)
			}
		}
		slices.Sort(got)
		// A TTL left is read twice, by the audit and then by explain, and
		// may have crossed a second between the two (5h, then 4h59m59s).
		for _, l := range [][]string{gotDetails, details[key]} {
			for i, d := range l {
				l[i] = ttlLeft.ReplaceAllString(d, "ttl <left>")
			}
		}
		slices.Sort(gotDetails)
		slices.Sort(details[key])
		if !e.Live.Exists || !slices.Equal(got, audited[key]) || !slices.Equal(gotDetails, details[key]) {
			t.Errorf("explain --live %q: %q, the audit's %q\n%s", key, gotDetails, details[key], out)
		}
	}
	// The text form shows the length that decided collection-too-long.
	_, out, _ = cli(t, "explain", "--registry", reg, "--url", s.URL(), "--live", "v1:profile:1")
	if !regexp.MustCompile(`(?m)^live length +5$`).MatchString(out) || !regexp.MustCompile(`(?m)^verdict +warning: collection-too-long`).MatchString(out) {
		t.Errorf("explain --live text:\n%s", out)
	}
}

// TestExplainDB checks that explain --live reads the database --db names,
// else the URL's, else 0, and that --help says so.
func TestExplainDB(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	reg := filepath.Join(t.TempDir(), "keys.yaml")
	if err := os.WriteFile(reg, []byte(explainRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 3, DisableIdentity: true})
	defer c.Close()
	if err := c.Set(context.Background(), "v1:page:7", "short", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--db", "3"}, `(?m)^live db +3$`, exitFindings}, // ttl-missing is an error
		{[]string{}, `(?m)^live +the key does not exist in db 0$`, exitClean},
		{[]string{"--db", "5"}, `(?m)^live +the key does not exist in db 5$`, exitClean},
	} {
		args := append([]string{"explain", "--registry", reg, "--url", s.URL(), "--live", "v1:page:7"}, tc.args...)
		code, out, errs := cli(t, args...)
		if code != tc.code || !regexp.MustCompile(tc.want).MatchString(out) {
			t.Errorf("%q: exit %d (want %d)\n%s%s", tc.args, code, tc.code, out, errs)
		}
	}
	code, out, errs := cli(t, "explain", "--registry", reg, "--url", s.URL()+"/3", "--live", "v1:page:7")
	if code != exitFindings || !strings.Contains(out, "verdict") || !regexp.MustCompile(`(?m)^live db +3$`).MatchString(out) {
		t.Errorf("url db 3: exit %d\n%s%s", code, out, errs)
	}
	_, out, _ = cli(t, "explain", "--help")
	if !strings.Contains(out, "logical database to read the key from (default: the URL's, else 0)") || strings.Contains(out, "every database") {
		t.Errorf("explain --help does not tell the database explain reads:\n%s", out)
	}
}
