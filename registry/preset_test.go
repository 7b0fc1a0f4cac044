package registry

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/keyreg/keyreg/diag"
)

// presetRegistry is a registry with the given presets: entries (YAML text
// of the list items, indented by two spaces).
func presetRegistry(entries string) string {
	return `version: 1
owners:
  web: {contact: web@example.com}
  ops: {contact: ops@example.com}
families:
  - name: own-cache
    pattern: "v1:cache:{id:int}"
    owner: web
presets:
` + entries
}

func loadErrors(t *testing.T, src string) diag.List {
	t.Helper()
	_, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
	var le *diag.ListError
	if !errors.As(err, &le) {
		t.Fatalf("want load errors, got %v", err)
	}
	return le.List
}

var kebab = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// TestPresetDefinitions checks every built-in preset: it is documented,
// expands with its defaults into valid families named <prefix>-<part>, and
// gives every family a description, a type, an encoding and a TTL policy.
func TestPresetDefinitions(t *testing.T) {
	if len(Presets()) == 0 {
		t.Fatal("no presets")
	}
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			if p.Summary == "" || len(p.Tested) == 0 || len(p.Sources) == 0 {
				t.Errorf("preset %s lacks a summary, tested versions or sources", p.Name)
			}
			for _, q := range p.Params {
				if q.Doc == "" {
					t.Errorf("parameter %s has no doc", q.Name)
				}
			}
			for _, c := range p.Coexists {
				if _, ok := LookupPreset(c); !ok {
					t.Errorf("coexists names %q, no preset", c)
				}
			}
			reg, err := ExpandPreset(p.Name, "team", nil)
			if err != nil {
				t.Fatalf("expanding with defaults: %v", err)
			}
			parts := map[string]bool{}
			for _, f := range reg.Families {
				if !kebab.MatchString(f.Name) || !strings.HasPrefix(f.Name, p.FamilyPrefix+"-") {
					t.Errorf("family name %q is not <%s>-<part> in kebab case", f.Name, p.FamilyPrefix)
				}
				if f.Preset != p.Name || f.ManagedBy != p.Library || f.Owner != "team" {
					t.Errorf("family %s: preset %q, managed_by %q, owner %q", f.Name, f.Preset, f.ManagedBy, f.Owner)
				}
				if f.Description == "" || f.Type == "" || f.Encoding == "" || f.TTL.Kind == TTLUnset {
					t.Errorf("family %s lacks a description, type, encoding or TTL policy", f.Name)
				}
				for _, ph := range f.Pattern.Placeholders() {
					if !strings.Contains(f.Pattern.Source, "{"+ph.Name+":") && !strings.Contains(f.Pattern.Source, "{{"+ph.Name+":") {
						t.Errorf("family %s: placeholder %s is untyped", f.Name, ph.Name)
					}
				}
				parts[f.PresetPart] = true
			}
			for _, part := range p.Parts {
				if !parts[p.FamilyPrefix+"-"+part.Name] {
					t.Errorf("part %s expands into no family", part.Name)
				}
			}
		})
	}
}

// TestPresetNaming checks the names list parameters give, and that they do
// not change when a value is added: a family renamed by a new queue would
// read as removed to keyreg breaking.
func TestPresetNaming(t *testing.T) {
	names := func(with map[string]string) []string {
		reg, err := ExpandPreset("celery", "team", with)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range reg.Families {
			if strings.Contains(f.Name, "queue") {
				out = append(out, f.Name+"="+f.Pattern.Source)
			}
		}
		return out
	}
	got := names(map[string]string{"queues": "[celery, Reports.High, '***']", "priority_steps": "[5]"})
	want := []string{
		"celery-queue=celery", "celery-queue-reports-high=Reports.High", "celery-queue-3=***",
		`celery-priority-queue-5=celery\x06\x165`, `celery-priority-queue-reports-high-5=Reports.High\x06\x165`, `celery-priority-queue-3-5=***\x06\x165`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("names:\n got %q\nwant %q", got, want)
	}
	one := names(nil)
	two := names(map[string]string{"queues": "[celery, reports]"})
	for _, n := range one {
		if !slices.Contains(two, n) {
			t.Errorf("adding a queue renamed %s", n)
		}
	}
}

func TestPresetSuffixAndSigns(t *testing.T) {
	reg, err := ExpandPreset("sidekiq", "team", map[string]string{"namespace": "myapp"})
	if err != nil {
		t.Fatal(err)
	}
	if f := reg.Matcher().Match("myapp:queue:default"); f == nil || f.Name != "sidekiq-queue" {
		t.Errorf("namespace myapp: myapp:queue:default matches %v", f)
	}
	reg, err = ExpandPreset("sidekiq", "team", nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := reg.Matcher().Match("queue:default"); f == nil || f.Name != "sidekiq-queue" {
		t.Errorf("no namespace: queue:default matches %v", f)
	}
	reg, err = ExpandPreset("django", "team", map[string]string{"versions": "[1, -1]"})
	if err != nil {
		t.Fatalf("versions 1 and -1: %v", err)
	}
	if _, ok := reg.Family("django-cache-minus-1"); !ok {
		t.Error("no family django-cache-minus-1")
	}
}

func TestPresetSchemaNull(t *testing.T) {
	src := presetRegistry(`  - use: celery
    owner: web
    families:
      celery-task-result: {schema: null, encoding: pickle}
`)
	reg, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := reg.Family("celery-task-result")
	if f.Schema != nil || f.Encoding != "pickle" {
		t.Errorf("schema %v, encoding %q", f.Schema, f.Encoding)
	}
}

// TestPresetValuesAreLiterals checks that parameter values are escaped into
// patterns: braces, backslashes and control bytes match themselves only.
func TestPresetValuesAreLiterals(t *testing.T) {
	for _, q := range []string{"a{b}", `back\slash`, "ctl\x06\x16x", "{{tag}}", "é", "x:y", "*?["} {
		reg, err := ExpandPreset("celery", "team", map[string]string{"queues": fmt.Sprintf("[%q]", q), "global_keyprefix": fmt.Sprintf("%q", q+":")})
		if err != nil {
			t.Fatalf("queue %q: %v", q, err)
		}
		m := reg.Matcher()
		f := m.Match(q + ":" + q)
		if f == nil || f.PresetPart != "celery-queue" {
			t.Errorf("queue %q: key %q matches %v", q, q+":"+q, f)
		}
		if g := m.Match(q + ":" + q + "x"); g != nil && g.PresetPart == "celery-queue" {
			t.Errorf("queue %q: a longer key matches the queue family", q)
		}
	}
}

func TestPresetOverrides(t *testing.T) {
	src := presetRegistry(`  - use: celery
    owner: ops
    with: {queues: [celery, reports]}
    families:
      celery-queue: {max_len: 100, description: all queues}
      celery-queue-reports: {max_len: 5}
      celery-task-result: {ttl: 2d, encoding: [json, msgpack], ignore: [{rule: ttl-missing, reason: legacy}]}
`)
	reg, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	fam := func(name string) *Family {
		f, ok := reg.Family(name)
		if !ok {
			t.Fatalf("no family %s", name)
		}
		return f
	}
	if f := fam("celery-queue"); f.MaxLen != 100 || f.Description != "all queues" {
		t.Errorf("part override: max_len %d, description %q", f.MaxLen, f.Description)
	}
	if f := fam("celery-queue-reports"); f.MaxLen != 5 || f.Description != "all queues" {
		t.Errorf("family override over part override: max_len %d, description %q", f.MaxLen, f.Description)
	}
	f := fam("celery-task-result")
	if f.TTL.String() != "max 2d" || f.Encoding != "json|msgpack" || len(f.Ignore) != 1 {
		t.Errorf("task result: ttl %s, encoding %q, ignore %v", f.TTL, f.Encoding, f.Ignore)
	}
	// Positions: the family and the fields the preset sets point at the
	// entry; an override points at itself.
	if f.Pos.Line != 10 || f.Pos.Col != 5 || f.PosOf("pattern").Line != 10 {
		t.Errorf("family position %s, pattern at %s, want the entry at 10:5", f.Pos, f.PosOf("pattern"))
	}
	if got := f.PosOf("ttl"); got.Line != 16 || got.Col != 33 {
		t.Errorf("override ttl at %s, want 16:33", got)
	}
	if fam("own-cache").Index != 0 || f.Index <= 0 {
		t.Errorf("hand-written families come first")
	}
}

func TestPresetErrors(t *testing.T) {
	for _, tc := range []struct {
		name, entries string
		want          string // substring of one diagnostic, with its position
	}{
		{"unknown preset", "  - use: celry\n    owner: web\n", `keys.yaml:10:10: error: unknown preset "celry"; did you mean "celery"?`},
		{"unknown parameter", "  - use: celery\n    owner: web\n    with: {queus: [a]}\n", `keys.yaml:12:12: error: preset celery has no parameter "queus"; did you mean "queues"?`},
		{"bad kind", "  - use: celery\n    owner: web\n    with: {priority_steps: [a]}\n", `keys.yaml:12:28: error: preset celery, parameter priority_steps: "a" is not an integer`},
		{"bad duration", "  - use: celery\n    owner: web\n    with: {result_expires: soon}\n", `keys.yaml:12:28: error: preset celery, parameter result_expires: bad duration`},
		{"list for a string", "  - use: celery\n    owner: web\n    with: {global_keyprefix: [a]}\n", `keys.yaml:12:30: error: preset celery, parameter global_keyprefix: want a string`},
		{"repeated value", "  - use: celery\n    owner: web\n    with: {queues: [a, a]}\n", `"a" is listed twice`},
		{"too many values", "  - use: celery\n    owner: web\n    with: {queues: [" + strings.Repeat("q,", MaxPresetValues) + "z]}\n", "more than the limit of 64"},
		{"value too long", "  - use: celery\n    owner: web\n    with: {global_keyprefix: " + strings.Repeat("x", MaxPresetValueLen+1) + "}\n", "more than the 256-byte limit"},
		{"unknown family", "  - use: celery\n    owner: web\n    families:\n      celery-task-resutl: {ttl: 1h}\n", `keys.yaml:13:7: error: preset celery has no family "celery-task-resutl"; did you mean "celery-task-result"?`},
		{"override of the pattern", "  - use: celery\n    owner: web\n    families:\n      celery-task-result: {pattern: x}\n", `unknown field "pattern"`},
		{"used twice", "  - use: celery\n    owner: web\n  - use: celery\n    owner: ops\n", `keys.yaml:12:5: error: families named celery-* are already expanded by the entry at line 10: give this entry its own name:`},
		{"named like another", "  - use: celery\n    owner: web\n  - use: celery\n    name: celery\n    owner: ops\n", `keys.yaml:12:5: error: families named celery-*`},
		{"no owner", "  - use: celery\n", `missing required field "owner"`},
		{"too many in all", manyEntries(80), "more than the limit of 10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := loadErrors(t, presetRegistry(tc.entries))
			var all []string
			for _, d := range l {
				all = append(all, d.String())
			}
			if !slices.ContainsFunc(all, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("want a diagnostic containing %q, got:\n%s", tc.want, strings.Join(all, "\n"))
			}
		})
	}
}

// TestPresetUsedTwice checks two entries of one preset, each with its own
// name and owner: their families are apart, and where both can match one
// key (two Celery apps' results), the overlap is reported, since two
// owners claim it.
func TestPresetUsedTwice(t *testing.T) {
	src := presetRegistry(`  - use: celery
    owner: web
    with: {queues: [web]}
  - use: celery
    name: ops-celery
    owner: ops
    with: {queues: [ops], global_keyprefix: "ops:"}
`)
	reg, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m := reg.Matcher()
	for key, want := range map[string]string{"web": "celery-queue-web", "ops:ops": "ops-celery-queue-ops", "ops:unacked": "ops-celery-unacked", "unacked": "celery-unacked"} {
		if f := m.Match(key); f == nil || f.Name != want || f.Preset != "celery" {
			t.Errorf("%s matches %v, want %s", key, f, want)
		}
	}
	ovs, _ := OverlapsWithin(reg.Families, ':', OverlapBudget, MaxOverlaps)
	var got []string
	for _, o := range ovs {
		got = append(got, o.A.Name+"/"+o.B.Name)
	}
	want := []string{"celery-task-result/ops-celery-task-result", "celery-group-result/ops-celery-group-result", "celery-chord-join/ops-celery-chord-join", "celery-chord-counter/ops-celery-chord-counter", "celery-chord-size/ops-celery-chord-size"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("overlaps %v, want %v", got, want)
	}
}

func TestPresetNameCollision(t *testing.T) {
	src := strings.Replace(presetRegistry("  - use: celery\n    owner: web\n"), "name: own-cache", "name: celery-queue", 1)
	l := loadErrors(t, src)
	if len(l) != 1 || l[0].Rule != RuleDuplicateName || !strings.Contains(l[0].Message, `family "celery-queue", which is already declared at line 6`) {
		t.Errorf("got %v", l)
	}
}

func TestPresetSeparator(t *testing.T) {
	src := strings.Replace(presetRegistry("  - use: celery\n    owner: web\n"), "version: 1\n", "version: 1\nseparator: \"/\"\n", 1)
	l := loadErrors(t, src)
	if len(l) != 1 || !strings.Contains(l[0].Message, `presets assume the separator ":"`) {
		t.Errorf("got %v", l)
	}
}

// TestEjectRoundTrip checks that what `keyreg presets show` prints loads
// back into the same families.
func TestEjectRoundTrip(t *testing.T) {
	for _, p := range Presets() {
		reg, err := ExpandPreset(p.Name, "team", nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := MarshalFamilies(reg.Families)
		if err != nil {
			t.Fatal(err)
		}
		src := "version: 1\nowners:\n  team: {contact: team}\nfamilies:\n" + indent(string(out))
		back, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%s: ejected YAML does not load: %v\n%s", p.Name, err, src)
		}
		if len(back.Families) != len(reg.Families) {
			t.Fatalf("%s: %d families back, want %d", p.Name, len(back.Families), len(reg.Families))
		}
		if len(reg.Channels) > 0 {
			cout, err := MarshalChannels(reg.Channels)
			if err != nil {
				t.Fatal(err)
			}
			back2, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(src+"channels:\n"+indent(string(cout))))
			if err != nil {
				t.Fatalf("%s: ejected channels do not load: %v\n%s", p.Name, err, cout)
			}
			if len(back2.Channels) != len(reg.Channels) {
				t.Fatalf("%s: %d channels back, want %d", p.Name, len(back2.Channels), len(reg.Channels))
			}
			for i, c := range reg.Channels {
				d := back2.Channels[i]
				a := fmt.Sprintf("%s %s %s %s %s %s", c.Name, c.Pattern.Source, c.Mode, c.SubscribeGlob, c.Encoding, c.Description)
				b := fmt.Sprintf("%s %s %s %s %s %s", d.Name, d.Pattern.Source, d.Mode, d.SubscribeGlob, d.Encoding, d.Description)
				if a != b || d.FromPreset() {
					t.Errorf("%s: ejected channel differs:\n got %s\nwant %s", p.Name, b, a)
				}
			}
		}
		for i, f := range reg.Families {
			g := back.Families[i]
			a := fmt.Sprintf("%s %s %s %s %s %s %v", f.Name, f.Pattern.Source, f.Type, f.Encoding, f.TTL, f.Description, f.Schema != nil)
			b := fmt.Sprintf("%s %s %s %s %s %s %v", g.Name, g.Pattern.Source, g.Type, g.Encoding, g.TTL, g.Description, g.Schema != nil)
			if a != b || g.FromPreset() {
				t.Errorf("%s: ejected family differs:\n got %s\nwant %s", p.Name, b, a)
			}
		}
	}
}

func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "")
}

func TestEncodingList(t *testing.T) {
	src := "version: 1\nfamilies:\n  - {name: a, pattern: a, encoding: [pickle, int]}\n  - {name: b, pattern: b, encoding: pickle}\n"
	reg, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if a := reg.Families[0]; a.Encoding != "pickle|int" || !slices.Equal(a.Encodings(), []string{"pickle", "int"}) {
		t.Errorf("encoding %q, encodings %q", a.Encoding, a.Encodings())
	}
	for _, bad := range []string{"[pickle]", "[pickle, pickle]", "[pickle, yaml]", "pickle|int"} {
		src := "version: 1\nfamilies:\n  - {name: a, pattern: a, encoding: " + bad + "}\n"
		if _, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(src)); err == nil {
			t.Errorf("encoding %s loaded", bad)
		}
	}
}

// FuzzPresetValues checks that any parameter value either is refused or
// yields a registry whose queue family matches exactly that queue's key.
func FuzzPresetValues(f *testing.F) {
	for _, s := range []string{"celery", "a{b}", `\x06`, "{{x}}", "é", "", "\\", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if !utf8.ValidString(q) {
			return // YAML text is UTF-8: no keys.yaml can spell it
		}
		src := presetRegistry(fmt.Sprintf("  - use: celery\n    owner: web\n    with: {queues: [%q]}\n", q))
		reg, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
		if err != nil {
			return
		}
		fam, ok := reg.Family("celery-queue")
		for _, f := range reg.Families {
			if f.PresetPart == "celery-queue" {
				fam, ok = f, true
			}
		}
		if !ok {
			t.Fatalf("queue %q: no queue family", q)
		}
		if got := reg.Matcher().Match(q); got != fam && fam.Pattern.LiteralBytes() >= len(q) {
			t.Fatalf("queue %q: key matches %v, want %s (pattern %q)", q, got, fam.Name, fam.Pattern.Source)
		}
	})
}

// TestProbes checks that probes bind the parameter they stand for, in
// keys that a preset with that parameter would write.
func TestProbes(t *testing.T) {
	for _, tc := range []struct{ preset, param, key, want string }{
		{"bullmq", "prefix", "myq:mail:meta", "myq"},
		{"celery", "queues", "reports\x06\x169", "reports"},
		{"celery", "global_keyprefix", "myapp:unacked_index", "myapp:"},
		{"sidekiq", "namespace", "shop:queue:default", "shop"},
		{"django", "key_prefixes", "shop:2:django.contrib.sessions.cacheabc", "shop"},
	} {
		p, _ := LookupPreset(tc.preset)
		var fams []*Family
		for i, pr := range p.Probes() {
			if pr.Param == tc.param {
				fams = append(fams, &Family{Index: len(fams), Name: fmt.Sprint(i), Pattern: pr.Pattern})
			}
		}
		if len(fams) == 0 {
			t.Fatalf("%s: no probe for %s", tc.preset, tc.param)
		}
		m := NewMatcher(fams, ':')
		f, params := m.MatchParams(tc.key, nil)
		got := ""
		for _, b := range params {
			if b.Name == tc.param+"__" {
				got = b.Value
			}
		}
		if f == nil || got != tc.want {
			t.Errorf("%s %s: key %q binds %q (family %v), want %q", tc.preset, tc.param, tc.key, got, f, tc.want)
		}
	}
	// Probes that would claim bare names are not made: the queue itself.
	p, _ := LookupPreset("celery")
	for _, pr := range p.Probes() {
		if pr.Part == "celery-queue" && pr.Param == "queues" {
			t.Errorf("a probe of a bare queue name: %q", pr.Pattern.Source)
		}
	}
}

func TestDraftMarshal(t *testing.T) {
	d := &Draft{
		Header: []string{"written by a test", "a\nnewline: injected"},
		Owners: []DraftOwner{{Name: "unknown", Contact: "TODO"}},
		Families: []DraftFamily{{
			Comment: []string{"2 keys, e.g. \"x\\ny\" \u202e"}, Name: "x", Pattern: "v1:x:{id:int}", Version: 1,
			Owner: "unknown", Type: "string", Encodings: []string{"pickle", "int"}, TTL: TTLPolicy{Kind: TTLOptional}, TTLComment: "50% with a TTL",
		}},
		Presets: []DraftPreset{{Use: "celery", Owner: "unknown", With: []DraftParam{{Name: "queues", Values: []string{"celery", "reports"}, List: true}}}},
	}
	out, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := Parse(fstest.MapFS{}, "keys.yaml", out)
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, out)
	}
	if f, ok := reg.Family("x"); !ok || f.Encoding != "pickle|int" || f.TTL.Kind != TTLOptional {
		t.Errorf("family x: %+v", f)
	}
	if _, ok := reg.Family("celery-queue-reports"); !ok {
		t.Error("the preset entry did not expand")
	}
	for _, bad := range []string{"\u202e", "\nnewline: injected"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("the output holds %q raw:\n%s", bad, out)
		}
	}
}

// TestEscapeLiteral checks that an escaped literal matches exactly its
// text, and that what would hide or reorder text is spelled as bytes.
func TestEscapeLiteral(t *testing.T) {
	for _, s := range []string{"plain", "a{b}c", `x\y`, "\x00\x06\x7f", "\xff\xfe", "bidi\u202egnp.exe", "zero\u200bwidth", "line\u2028sep", "bom\ufeff", "é中"} {
		lit := EscapeLiteral(s)
		for _, r := range []string{"\u202e", "\u200b", "\u2028", "\ufeff", "\x00"} {
			if strings.Contains(lit, r) {
				t.Errorf("EscapeLiteral(%q) = %q holds %q raw", s, lit, r)
			}
		}
		p, err := ParsePattern(lit+":{id:int}", ':')
		if err != nil {
			t.Errorf("EscapeLiteral(%q) = %q does not parse: %v", s, lit, err)
			continue
		}
		m := NewMatcher([]*Family{{Name: "f", Pattern: p}}, ':')
		if m.Match(s+":1") == nil || m.Match(s+"x:1") != nil {
			t.Errorf("EscapeLiteral(%q) = %q does not match exactly its text", s, lit)
		}
	}
}

// manyEntries is n named entries of a preset that expands into many
// families each.
func manyEntries(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "  - use: celery\n    name: c%d\n    owner: web\n    with: {queues: [%s], priority_steps: [1, 2, 3, 4]}\n", i, queuesList(30))
	}
	return b.String()
}

func queuesList(n int) string {
	qs := make([]string, n)
	for i := range qs {
		qs[i] = fmt.Sprintf("q%d", i)
	}
	return strings.Join(qs, ", ")
}
