package explain

import (
	"slices"
	"testing"
	"time"

	"github.com/keyreg/keyreg"
	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

func exampleRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg, err := registry.Load(keyreg.Example, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

const session = "v2:user:session:123e4567-e89b-12d3-a456-426614174000"

// TestExplain: a key of a family gets its facts and bound placeholders; a
// key of none, the closest family.
func TestExplain(t *testing.T) {
	reg := exampleRegistry(t)
	e := Explain(reg, session)
	if !e.Matched || e.Family == nil || e.Family.Name != "user-session" || e.Family.Owner != "identity" {
		t.Fatalf("Explain(%q) = %+v", session, e)
	}
	if e.Family.TTL != "max 24h" || e.Family.TTLSource != "family" || e.Family.MaxBytes != 4096 || e.Family.Schema == nil {
		t.Errorf("family facts = %+v", e.Family)
	}
	if len(e.Params) != 1 || e.Params[0] != (ParamValue{Name: "session_id", Type: "uuid", Value: "123e4567-e89b-12d3-a456-426614174000"}) {
		t.Errorf("params = %+v", e.Params)
	}
	u := Explain(reg, "v2:user:session:not-a-uuid")
	if u.Matched || u.Family != nil || u.Closest == nil || u.Closest.Name != "user-session" || u.Closest.Reason == "" {
		t.Errorf("unmatched key: %+v (closest %+v)", u, u.Closest)
	}
}

// TestLive: what CheckKey found becomes the live facts and the verdict.
func TestLive(t *testing.T) {
	reg := exampleRegistry(t)
	kc := &audit.KeyCheck{
		Info: source.KeyInfo{Key: session, Type: "string", PTTL: 90 * time.Minute, Memory: 5000, HasMemory: true, Idle: 2 * time.Hour, HasIdle: true},
		Findings: []audit.KeyFinding{
			{Rule: "value-too-large", Severity: diag.Error, Detail: "5000 bytes"},
			{Rule: "ttl-missing", Severity: diag.Warn, Suppressed: true},
		},
		Detected: "json",
	}
	l := Live(kc, reg, "", false)
	if !l.Exists || l.Type != "string" || l.TTL != "1h30m" || l.Memory != 5000 || l.Encoding != "json" || l.Idle != "2h" || len(l.NotChecked) != 0 {
		t.Errorf("facts = %+v", l)
	}
	if l.Verdict != VerdictFindings {
		t.Errorf("verdict = %q, want %q", l.Verdict, VerdictFindings)
	}
	want := []string{"error: value-too-large (5000 bytes)", "warning: ttl-missing [ignored in keys.yaml]"}
	if !slices.Equal(l.Verdicts, want) {
		t.Errorf("verdicts = %q, want %q", l.Verdicts, want)
	}

	// The value not read under --no-touch: its checks did not run, and
	// with no finding the key is not known to be fine.
	kc = &audit.KeyCheck{Info: source.KeyInfo{Key: session, Type: "string", PTTL: -1, HasMemory: true, HasIdle: true}, NotTouched: true}
	l = Live(kc, reg, "redis 7.0 has no CLIENT NO-TOUCH", false)
	if l.Verdict != VerdictIncomplete || len(l.NotChecked) != 1 || l.NotChecked[0].Fact != "value" || l.NotChecked[0].Reason != ReasonTouch {
		t.Errorf("not touched: verdict %q, not checked %+v", l.Verdict, l.NotChecked)
	}
	if !slices.Equal(l.NotChecked[0].Rules, []string{"encoding-mismatch", "payload-invalid"}) || l.TTL != "none" || l.Idle != "0s" {
		t.Errorf("not touched: rules %q, ttl %q", l.NotChecked[0].Rules, l.TTL)
	}

	if l := Live(&audit.KeyCheck{Info: source.KeyInfo{Key: session, Vanished: true}}, reg, "", false); l.Exists || l.Verdict != VerdictAbsent {
		t.Errorf("vanished key: %+v", l)
	}
}

func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		exists   bool
		findings []audit.KeyFinding
		nc       []NotChecked
		want     string
	}{
		{false, nil, nil, VerdictAbsent},
		{true, nil, nil, VerdictOK},
		{true, []audit.KeyFinding{{Rule: "r", Suppressed: true}}, nil, VerdictOK},
		{true, nil, []NotChecked{{Fact: "idle"}}, VerdictIncomplete},
		{true, []audit.KeyFinding{{Rule: "r"}}, []NotChecked{{Fact: "idle"}}, VerdictFindings},
	} {
		if got := Verdict(tc.exists, tc.findings, tc.nc); got != tc.want {
			t.Errorf("Verdict(%v, %v, %v) = %q, want %q", tc.exists, tc.findings, tc.nc, got, tc.want)
		}
		if !slices.Contains(Verdicts, tc.want) {
			t.Errorf("%q is not in Verdicts", tc.want)
		}
	}
}
