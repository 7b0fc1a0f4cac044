package registry

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// kindsYAML is the example of issue 17.
const kindsYAML = `version: 1
defaults:
  ttl: 24h
owners:
  billing: {contact: billing}
  engagement: {contact: engagement}
families:
  - name: invoice-lock
    pattern: "v1:lock:invoice:{{invoice_id:int}}"
    owner: billing
    kind: lock
    ttl: 30s
    fencing: invoice-fence
  - name: invoice-fence
    pattern: "v1:fence:invoice:{{invoice_id:int}}"
    owner: billing
    kind: fence
  - name: chat-messages
    pattern: "v1:chat:{room_id:ulid}:messages"
    owner: engagement
    type: stream
    max_len: 10000
    groups:
      delivery: {max_lag: 1000, max_pending: 500, max_consumer_idle: 10m}
      audit: {}
`

func TestLoadKinds(t *testing.T) {
	r, err := load(t, kindsYAML)
	if err != nil {
		t.Fatal(err)
	}
	lock, fence, chat := r.Families[0], r.Families[1], r.Families[2]
	if lock.Kind != KindLock || lock.Type != "string" || lock.TTL != (TTLPolicy{TTLMax, 30 * time.Second}) {
		t.Errorf("lock: kind %q type %q ttl %v", lock.Kind, lock.Type, lock.TTL)
	}
	if lock.Fencing != "invoice-fence" || lock.FencingFamily != fence {
		t.Errorf("lock fencing %q resolved to %v, want the fence family", lock.Fencing, lock.FencingFamily)
	}
	if p := lock.FencingProblem(); p != "" {
		t.Errorf("FencingProblem() = %q", p)
	}
	// The fence's TTL comes from its kind, not from defaults.ttl.
	if fence.Kind != KindFence || fence.Type != "string" || fence.Encoding != "int" || fence.TTL.Kind != TTLPersistent || fence.TTLDefault {
		t.Errorf("fence: kind %q type %q encoding %q ttl %v default %v", fence.Kind, fence.Type, fence.Encoding, fence.TTL, fence.TTLDefault)
	}
	if chat.Kind != "" || len(chat.Groups) != 2 {
		t.Fatalf("chat: kind %q groups %+v", chat.Kind, chat.Groups)
	}
	audit, delivery := chat.Groups[0], chat.Groups[1]
	if audit.Name != "audit" || audit.MaxLag != NoLimit || audit.MaxPending != NoLimit || audit.MaxConsumerIdle != NoLimit {
		t.Errorf("audit group (sorted first) = %+v", audit)
	}
	if delivery.Name != "delivery" || delivery.MaxLag != 1000 || delivery.MaxPending != 500 || delivery.MaxConsumerIdle != 10*time.Minute {
		t.Errorf("delivery group = %+v", delivery)
	}
	if delivery.Pos.Line != 24 || delivery.Pos.Col != 7 {
		t.Errorf("delivery group at %v, want line 24 col 7", delivery.Pos)
	}
}

func TestLoadKindErrors(t *testing.T) {
	fam := func(fields string) string {
		return "version: 1\nfamilies:\n  - name: f\n    pattern: \"v1:f:{id}\"\n" + fields
	}
	tests := []struct{ name, yaml, want string }{
		{"lock of another type", fam("    kind: lock\n    type: hash\n"), `keys.yaml:6:11: error: type "hash" contradicts kind: lock, which implies type: string (remove the type field or the kind) (schema-invalid)`},
		{"fence of another encoding", fam("    kind: fence\n    encoding: json\n"), `keys.yaml:6:15: error: encoding "json" contradicts kind: fence, which implies encoding: int`},
		{"fence with a ttl", fam("    kind: fence\n    ttl: 1h\n"), `keys.yaml:6:10: error: ttl "max 1h" contradicts kind: fence, which implies ttl: persistent`},
		{"fence of another type", fam("    kind: fence\n    type: list\n"), `keys.yaml:6:11: error: type "list" contradicts kind: fence`},
		{"unknown kind", fam("    kind: mutex\n"), `keys.yaml:5:11: error: families[0].kind: value must be one of 'lock', 'fence' (schema-invalid)`},
		{"groups on a hash", fam("    type: hash\n    groups: {g: {}}\n"), `keys.yaml:6:13: error: groups: consumer groups need type: stream (the family declares type: hash) (schema-invalid)`},
		{"groups without a type", fam("    groups: {g: {}}\n"), `groups: consumer groups need type: stream (the family declares no type)`},
		{"negative max_lag", fam("    type: stream\n    groups: {g: {max_lag: -1}}\n"), `keys.yaml:6:27: error: families[0].groups.g.max_lag: `},
		{"huge max_pending", fam("    type: stream\n    groups: {g: {max_pending: 99999999999999999999}}\n"), `keys.yaml:6:31: error: families[0].groups.g.max_pending: 99999999999999999999 is more than the maximum, 9223372036854775807 (schema-invalid)`},
		{"unknown group field", fam("    type: stream\n    groups: {g: {max_lagg: 1}}\n"), `unknown field "max_lagg"`},
		{"fencing on a non-lock", fam("    fencing: other\n"), `keys.yaml:5:14: error: fencing: only a kind: lock family has a fencing counter (schema-invalid)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var all []string
			for _, d := range loadErrors(t, tt.yaml) {
				all = append(all, d.String())
			}
			if got := strings.Join(all, "\n"); !strings.Contains(got, tt.want) {
				t.Errorf("diagnostics:\n%s\nwant one containing:\n%s", got, tt.want)
			}
		})
	}
}

func TestLoadKindConsistentDeclarations(t *testing.T) {
	src := "version: 1\nfamilies:\n" +
		"  - {name: l, pattern: \"l:{id}\", kind: lock, type: string, ttl: 5s}\n" +
		"  - {name: f, pattern: \"f:{id}\", kind: fence, type: string, encoding: int, ttl: persistent}\n" +
		"  - {name: s, pattern: \"s:{id}\", type: stream, groups: {}}\n"
	if _, err := load(t, src); err != nil {
		t.Fatalf("declarations that agree with the kind are refused: %v", err)
	}
}

func TestFencingProblem(t *testing.T) {
	reg := func(lock, fence, fenceKind string) *Registry {
		t.Helper()
		src := fmt.Sprintf("version: 1\nfamilies:\n  - {name: l, pattern: %q, kind: lock, ttl: 5s, fencing: f}\n  - {name: f, pattern: %q%s}\n", lock, fence, fenceKind)
		r, err := load(t, src)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct{ lock, fence, kind, want string }{
		{"l:{{id:int}}", "f:{{id:int}}", ", kind: fence", ""},
		{"l:{a}:{b:int}", "f:{b}:{a:any}", ", kind: fence", ""},
		{"l:{id:ulid}", "f:{id}", ", kind: fence", ""},
		{"l:{id}", "f:{id}", "", `fencing "f" names a family that is not kind: fence`},
		{"l:{id}", "f:{id}:{shard:int}", ", kind: fence", `the fence pattern's placeholder {shard} is not in the lock pattern "l:{id}"`},
		{"l:{id}", "f:{id:int}", ", kind: fence", `the lock's {id:word} values do not all fit the fence's {id:int}`},
		{"l:{id:any}", "f:{id}", ", kind: fence", `the lock's {id:any} values do not all fit the fence's {id:word}`},
		{"l:{id:int}", "f:{id:hex}", ", kind: fence", `do not all fit`},
	}
	for _, tt := range tests {
		lock := reg(tt.lock, tt.fence, tt.kind).Families[0]
		if got := lock.FencingProblem(); !strings.Contains(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("lock %q fence %q%s: FencingProblem() = %q, want %q", tt.lock, tt.fence, tt.kind, got, tt.want)
		}
	}
	r, err := load(t, "version: 1\nfamilies:\n  - {name: l, pattern: \"l:{id}\", kind: lock, ttl: 5s, fencing: nosuch}\n")
	if err != nil {
		t.Fatal(err)
	}
	if l := r.Families[0]; l.FencingFamily != nil || l.FencingProblem() != `fencing "nosuch" names no family` {
		t.Errorf("unknown fence: FencingFamily %v, FencingProblem %q", l.FencingFamily, l.FencingProblem())
	}
	if _, ok := r.Families[0].FenceKey("l:1"); ok {
		t.Errorf("FenceKey of a lock whose fence is unknown is ok")
	}
}

func TestFenceKey(t *testing.T) {
	src := "version: 1\nfamilies:\n" +
		"  - {name: l, pattern: \"v1:lock:{tenant}:invoice:{{id:int}}\", kind: lock, ttl: 5s, fencing: f}\n" +
		"  - {name: f, pattern: \"v1:fence:{{id:int}}:{tenant}\", kind: fence}\n" +
		"  - {name: w, pattern: \"v1:lock:{tenant}:other:{id}\", kind: lock, ttl: 5s, fencing: g}\n" +
		"  - {name: g, pattern: \"v1:fence:other:{id:int}\", kind: fence}\n" +
		"  - {name: plain, pattern: \"v1:plain:{id}\"}\n"
	r, err := load(t, src)
	if err != nil {
		t.Fatal(err)
	}
	l, w, plain := r.Families[0], r.Families[2], r.Families[4]
	tests := []struct {
		f       *Family
		key     string
		want    string
		wantOK  bool
		comment string
	}{
		{l, "v1:lock:acme:invoice:{42}", "v1:fence:{42}:acme", true, "values bound by name, in the fence's order"},
		{l, "v1:lock:acme:invoice:{-7}", "v1:fence:{-7}:acme", true, "a negative int"},
		{l, "v1:lock:acme:invoice:{x}", "", false, "not a key of the lock family"},
		{l, "v1:plain:1", "", false, "a key of another family"},
		{w, "v1:lock:acme:other:42", "v1:fence:other:42", true, "a word that fits the fence's int"},
		{w, "v1:lock:acme:other:abc", "", false, "a word the fence's int does not accept"},
		{plain, "v1:plain:1", "", false, "not a lock"},
	}
	for _, tt := range tests {
		got, ok := tt.f.FenceKey(tt.key)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s.FenceKey(%q) = %q, %v; want %q, %v (%s)", tt.f.Name, tt.key, got, ok, tt.want, tt.wantOK, tt.comment)
		}
	}
	// A family built without Load has no cached matcher: same answer.
	bare := *l
	bare.lockMatcher = nil
	if got, ok := bare.FenceKey("v1:lock:acme:invoice:{42}"); !ok || got != "v1:fence:{42}:acme" {
		t.Errorf("FenceKey without the cached matcher = %q, %v", got, ok)
	}
}

func BenchmarkFenceKey(b *testing.B) {
	r, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(kindsYAML))
	if err != nil {
		b.Fatal(err)
	}
	lock := r.Families[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := lock.FenceKey("v1:lock:invoice:{12345}"); !ok {
			b.Fatal("no fence key")
		}
	}
}

func TestMarshalKinds(t *testing.T) {
	r, err := load(t, kindsYAML)
	if err != nil {
		t.Fatal(err)
	}
	out, err := MarshalFamilies(r.Families)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: lock", "fencing: invoice-fence", "kind: fence", "delivery: {max_lag: 1000, max_pending: 500, max_consumer_idle: 10m}", "audit: {}"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("written families lack %q:\n%s", want, out)
		}
	}
	src := "version: 1\ndefaults:\n  ttl: 24h\nowners:\n  billing: {contact: billing}\n  engagement: {contact: engagement}\nfamilies:\n" + indent(string(out))
	back, err := load(t, src)
	if err != nil {
		t.Fatalf("written families do not load: %v\n%s", err, src)
	}
	for i, f := range r.Families {
		g := back.Families[i]
		a := fmt.Sprintf("%s %s %s %s %s %s %v", f.Kind, f.Type, f.Encoding, f.TTL, f.Fencing, fmtGroups(f.Groups), f.TTLDefault)
		b := fmt.Sprintf("%s %s %s %s %s %s %v", g.Kind, g.Type, g.Encoding, g.TTL, g.Fencing, fmtGroups(g.Groups), g.TTLDefault)
		if a != b {
			t.Errorf("%s written and loaded back:\n got %s\nwant %s", f.Name, b, a)
		}
	}
}

func fmtGroups(gs []StreamGroup) string {
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "%s/%d/%d/%v ", g.Name, g.MaxLag, g.MaxPending, g.MaxConsumerIdle)
	}
	return b.String()
}
