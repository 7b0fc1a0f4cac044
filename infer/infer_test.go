package infer

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/payload"
)

func TestTTLPolicy(t *testing.T) {
	for _, tc := range []struct {
		ttls []time.Duration // -1: none
		want string
	}{
		{[]time.Duration{-1, -1}, "persistent"},
		{[]time.Duration{50 * time.Minute, 59 * time.Minute}, "max 1h"},
		{[]time.Duration{86399 * time.Second}, "max 24h"},
		{[]time.Duration{3 * 24 * time.Hour, -1}, "optional"},
		{[]time.Duration{500 * 24 * time.Hour}, "max 730d"},
	} {
		var st Stats
		for i, d := range tc.ttls {
			st.Add(Fact{Key: string(rune('a' + i)), Type: "string", TTL: d, Memory: -1, Len: -1})
		}
		if got, _ := ttlPolicy(&st); got.String() != tc.want {
			t.Errorf("TTLs %v: policy %s, want %s", tc.ttls, got, tc.want)
		}
	}
}

func TestFamilyName(t *testing.T) {
	used := map[string]bool{}
	for _, tc := range []struct{ pattern, want string }{
		{"v2:user:session:{session_id:uuid}", "user-session"},
		{"celery-task-meta-{id:uuid}", "celery-task-meta"},
		{"{a:word}:{b:int}", "keys"},
		{"v2:user:session:{id:int}:x", "user-session-x"},
		{"v1:user:session:{x:hex}", "user-session-2"},
		{"9lives:{n:int}", "keys-9lives"},
	} {
		if got := uniqueName(familyName(tc.pattern, ':'), used); got != tc.want {
			t.Errorf("familyName(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}

// TestInferenceDraft feeds a small keyspace with samples through an
// Inference and checks the draft loads, names its families, and holds a
// schema that validates the samples.
func TestInferenceDraft(t *testing.T) {
	in := New(Options{})
	for i := range 40 {
		in.Add(Fact{Key: "v1:order:" + string(rune('0'+i%10)) + strings.Repeat("1", i/10+1), Type: "string", TTL: time.Hour, Memory: -1, Len: -1})
	}
	targets := in.Candidates(5)
	if len(targets) == 0 {
		t.Fatal("no keys to sample")
	}
	var keys []string
	var ss []payload.Sample
	for _, tg := range targets {
		keys = append(keys, tg.Key)
		ss = append(ss, payload.Sample{Type: "string", String: []byte(`{"id":1,"state":"new"}`)})
	}
	in.AddSamples(targets[0].Candidate, keys, ss)
	d, schemas, sum := in.Draft()
	if sum.Families != 1 || sum.Registered != 40 || len(schemas) != 1 {
		t.Fatalf("summary %+v, %d schemas", sum, len(schemas))
	}
	f := d.Families[0]
	if f.Name != "order" || f.Pattern != "v1:order:{order_id:int}" || f.Version != 1 || !slices.Equal(f.Encodings, []string{"json"}) || f.TTL.String() != "max 1h" {
		t.Errorf("family %+v", f)
	}
	if _, ok := schemas["schemas/order.json"]; !ok {
		t.Errorf("schemas %v", schemas)
	}
	if _, err := d.Marshal(); err != nil {
		t.Fatal(err)
	}
}
