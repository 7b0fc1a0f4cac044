package rules

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/*.txtar")

// lintArchive loads the keys.yaml of a txtar archive (with its other files
// as the file system) and lints it. A registry that fails to load yields
// the loader's diagnostics.
func lintArchive(t *testing.T, ar *txtar.Archive) diag.List {
	t.Helper()
	fsys := fstest.MapFS{}
	for _, f := range ar.Files {
		fsys[f.Name] = &fstest.MapFile{Data: f.Data}
	}
	reg, err := registry.Load(fsys, "keys.yaml")
	if err != nil {
		var le *diag.ListError
		if !errors.As(err, &le) {
			t.Fatal(err)
		}
		return le.List
	}
	return Lint(reg)
}

// TestRuleCases runs testdata/<rule-id>.txtar for every rule and compares
// the findings of that rule with the archive's want section.
func TestRuleCases(t *testing.T) {
	for _, r := range All() {
		if r.Phase == PhaseChannels {
			continue // decided by audit.Channels: audit/channels_rules_test.go fires each
		}
		t.Run(r.ID, func(t *testing.T) {
			file := filepath.Join("testdata", r.ID+".txtar")
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatalf("every rule needs a test case: %v", err)
			}
			var (
				got   strings.Builder
				diags diag.List
			)
			switch r.Kind {
			case KindKey:
				got.WriteString(keyCase(t, r, ar))
				diags = lintArchive(t, ar)
			case KindBreaking:
				diags = breakingArchive(t, ar)
			default:
				diags = lintArchive(t, ar)
			}
			for _, d := range diags {
				if d.Rule != r.ID {
					continue
				}
				// Loader findings come from registry.Load, with its own texts.
				noun := "family "
				if r.Channel {
					noun = "channel "
				}
				if r.Kind != KindLoad && d.Family != "" && !strings.HasPrefix(d.Message, noun+strconv.Quote(d.Family)) {
					t.Errorf("finding on family %q does not name it: %s", d.Family, d.Message)
				}
				got.WriteString(d.String())
				if d.Suppressed {
					got.WriteString(" [suppressed: " + d.Reason + "]")
				}
				got.WriteString("\n")
			}
			idx := -1
			for i, f := range ar.Files {
				if f.Name == "want" {
					idx = i
				}
			}
			if *update {
				if idx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					idx = len(ar.Files) - 1
				}
				ar.Files[idx].Data = []byte(got.String())
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if idx < 0 {
				t.Fatal("archive has no want section")
			}
			if want := string(ar.Files[idx].Data); got.String() != want {
				t.Errorf("findings of %s:\n%s\nwant:\n%s", r.ID, got.String(), want)
			}
			if got.Len() == 0 {
				t.Errorf("the case never triggers %s: every case must show the rule firing", r.ID)
			}
		})
	}
}

func TestNameFamily(t *testing.T) {
	for _, tc := range []struct{ name, msg, want string }{
		{"cart", "type changed", `family "cart": type changed`},
		{"cart", `family "cart" has no owner`, `family "cart" has no owner`},
		{"cart", `family "cart-v2" has no owner`, `family "cart": family "cart-v2" has no owner`},
		{"", "no family", "no family"},
	} {
		if got := NameFamily(tc.name, tc.msg); got != tc.want {
			t.Errorf("NameFamily(%q, %q) = %q, want %q", tc.name, tc.msg, got, tc.want)
		}
	}
}

// TestRuleSpecs guards the rule list: unique kebab-case IDs, a doc, a
// severity, a Lint func for lint rules and a file named after the rule.
func TestRuleSpecs(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range All() {
		if seen[r.ID] {
			t.Errorf("duplicate rule %q", r.ID)
		}
		seen[r.ID] = true
		if !kebab(r.ID) {
			t.Errorf("rule ID %q is not kebab-case", r.ID)
		}
		if r.Doc == "" || strings.HasSuffix(r.Doc, ".") || strings.ToLower(r.Doc[:1]) != r.Doc[:1] {
			t.Errorf("rule %q: doc %q must be one lowercase line without a trailing period", r.ID, r.Doc)
		}
		if r.Severity == diag.Off {
			t.Errorf("rule %q has no default severity", r.ID)
		}
		if (r.Kind == KindLint) != (r.Lint != nil) {
			t.Errorf("rule %q: kind %s with Lint set = %v", r.ID, r.Kind, r.Lint != nil)
		}
		if (r.Kind == KindBreaking) != (r.Breaking != nil) {
			t.Errorf("rule %q: kind %s with Breaking set = %v", r.ID, r.Kind, r.Breaking != nil)
		}
		if (r.Kind == KindBreaking) != slices.Contains(Categories(), r.Category) {
			t.Errorf("rule %q: kind %s with category %q (breaking rules need one of %v, others none)", r.ID, r.Kind, r.Category, Categories())
		}
		for _, e := range keySpecErrors(r) {
			t.Errorf("rule %q: %s", r.ID, e)
		}
		if r.Kind != KindLoad {
			src := strings.ReplaceAll(r.ID, "-", "_") + ".go"
			if _, err := os.Stat(src); err != nil {
				t.Errorf("rule %q must live in %s", r.ID, src)
			}
		}
	}
}

// keySpecErrors says what is wrong with the semantics a key rule must
// declare so that the audit driver, which knows no rule by name, counts
// and runs it right: its phase, its unit of counting and what it reads.
func keySpecErrors(r *Rule) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if r.Kind != KindKey {
		if r.Phase != "" || r.Unit != "" || r.Reads != 0 || r.Key != nil || r.Run != nil || r.Detail != nil || r.Summary != nil {
			add("a %s rule has key-rule fields", r.Kind)
		}
		return errs
	}
	if r.Summary == nil {
		add("a key rule has no Summary")
	}
	switch r.Phase {
	case PhaseKey, PhaseSample:
		if r.Key == nil || r.Run != nil {
			add("phase %q needs Key and no Run", r.Phase)
		}
		if !slices.Contains([]Unit{UnitKeys, UnitFamilyKeys, UnitSamples, UnitAllKeys}, r.Unit) {
			add("phase %q counts keys: unit %q is not one of keys, family keys, sampled keys, all keys", r.Phase, r.Unit)
		}
	case PhaseChannels:
		if r.Run != nil || r.Key != nil || r.Detail != nil || !r.Channel || r.Unit != UnitChannels || r.Reads != 0 {
			add("phase %q is decided by the channel audit: no Key, Run, Detail or Reads, Channel set, unit %q", r.Phase, UnitChannels)
		}
		return errs
	case PhaseRun:
		if r.Run == nil || r.Key != nil || r.Detail != nil {
			add("phase %q needs Run, and no Key or Detail", r.Phase)
		}
		if r.Unit != UnitNone {
			add("phase %q counts no keys: unit %q, want %q", r.Phase, r.Unit, UnitNone)
		}
	default:
		add("a key rule needs a phase (key, sample or run), not %q", r.Phase)
	}
	// A rule that reads the payload decides on sampled keys only, and
	// counts against them; else its "N of M" would count keys never read.
	sample := r.Phase == PhaseSample
	if sample != (r.Unit == UnitSamples) || sample != (r.Reads&FactPayload != 0) {
		add("phase %q, unit %q and reads payload = %v disagree: a rule reads payloads exactly when it runs on and counts sampled keys",
			r.Phase, r.Unit, r.Reads&FactPayload != 0)
	}
	return errs
}

// TestKeySpecGuard shows that the guard catches a key rule that does not
// say how it counts or when it runs.
func TestKeySpecGuard(t *testing.T) {
	ok := *TTLMissing
	if errs := keySpecErrors(&ok); len(errs) > 0 {
		t.Fatalf("a well-formed key rule fails the guard: %v", errs)
	}
	noUnit := ok
	noUnit.Unit = ""
	noPhase := ok
	noPhase.Phase = ""
	samples := *PayloadInvalid
	samples.Unit = UnitKeys // counts over keys it never read
	unread := *PayloadInvalid
	unread.Reads = 0
	run := *FamilyUnused
	run.Key = TTLMissing.Key
	for name, r := range map[string]*Rule{"no unit": &noUnit, "no phase": &noPhase, "sample rule counting keys": &samples,
		"sample rule not reading the payload": &unread, "run rule with Key": &run} {
		if errs := keySpecErrors(r); len(errs) == 0 {
			t.Errorf("%s: the guard finds nothing", name)
		}
	}
}

func kebab(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// breakingNow is the time of breaking rule cases.
var breakingNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// breakingArchive loads old/keys.yaml and new/keys.yaml of a txtar archive
// (schema files sit next to each) and compares them. Positions name
// new/keys.yaml. A registry that fails to load yields the loader's
// diagnostics.
func breakingArchive(t *testing.T, ar *txtar.Archive) diag.List {
	t.Helper()
	fsys := fstest.MapFS{}
	for _, f := range ar.Files {
		fsys[f.Name] = &fstest.MapFile{Data: f.Data}
	}
	var regs [2]*registry.Registry
	for i, name := range []string{"old/keys.yaml", "new/keys.yaml"} {
		reg, err := registry.Load(fsys, name)
		if err != nil {
			var le *diag.ListError
			if !errors.As(err, &le) {
				t.Fatal(err)
			}
			return le.List
		}
		regs[i] = reg
	}
	return Breaking(regs[0], regs[1], breakingNow)
}

// keyNow is the audit time of key rule cases.
var keyNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// keyCase runs a key rule over the keys section of an archive. Each line
// describes one live key: a quoted key name, then name=value facts:
// type=hash, ttl=30m (or ttl=none), idle=40d, mem=5000, len=12,
// value="…" (a string value, checked by the payload package),
// fence=exists or fence=missing (a lock's fence key), encoding=embstr (a
// fence's object encoding), and for a stream's consumer groups as read,
// group=name,lag=5,pending=2,consumers=1,idle=10m,consumer=c (repeated; lag=nil
// when Redis cannot tell) or groups="" for none. The output
// has one line per key the rule fires on, with its detail. A PhaseRun rule
// (family-unused) lists the families it fires on after a complete run.
func keyCase(t *testing.T, r *Rule, ar *txtar.Archive) string {
	t.Helper()
	fsys := fstest.MapFS{}
	var keys []byte
	for _, f := range ar.Files {
		fsys[f.Name] = &fstest.MapFile{Data: f.Data}
		if f.Name == "keys" {
			keys = f.Data
		}
	}
	reg, err := registry.Load(fsys, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	shape := reg.ShapeMatcher()
	used := map[string]int64{} // keys per family, as the audit counts them
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(keys)), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k := parseKeyLine(t, line)
		k.Family = reg.Matcher().Match(k.Key)
		if k.Family == nil {
			k.Shape = shape.Match(k.Key)
			_, k.ShapeReason = reg.Matcher().Closest(k.Key)
		}
		if f := cmp.Or(k.Family, k.Shape); f != nil {
			used[f.Name]++
		}
		if k.HasFence && k.Family != nil {
			k.Fence, _ = k.Family.FenceKey(k.Key)
		}
		if k.Payload != nil {
			res := payload.Check(k.Family, payload.Sample{Type: k.Type, String: []byte(k.Payload.DecodeError)}, payload.Options{})
			k.Payload = &res
		}
		if r.Phase == PhaseSample && k.Payload == nil {
			continue // the audit runs sample rules on sampled keys only
		}
		if r.Key != nil && r.Key(k) {
			fmt.Fprintf(&out, "%q: %s", k.Key, r.ID)
			if r.Detail != nil {
				fmt.Fprintf(&out, ": %s", r.Detail(k))
			}
			out.WriteString("\n")
		}
	}
	if r.Phase == PhaseRun {
		for _, f := range reg.Families {
			if r.Run(&RunFacts{Family: f, Keys: used[f.Name], Complete: true}) {
				fmt.Fprintf(&out, "family %s: %s: %s\n", f.Name, r.ID, r.Summary(f))
			}
		}
	}
	return out.String()
}

// parseKeyLine parses `"key" type=string ttl=none value="…"`. The value
// travels in Payload.DecodeError until keyCase checks it.
func parseKeyLine(t *testing.T, line string) *KeyFacts {
	t.Helper()
	k := &KeyFacts{Type: "string", PTTL: -1, Now: keyNow}
	rest := line
	next := func() string {
		rest = strings.TrimLeft(rest, " ")
		q, err := strconv.QuotedPrefix(rest)
		if err == nil {
			rest = rest[len(q):]
			v, _ := strconv.Unquote(q)
			return v
		}
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			i = len(rest)
		}
		v := rest[:i]
		rest = rest[i:]
		return v
	}
	k.Key = next()
	for strings.TrimSpace(rest) != "" {
		rest = strings.TrimLeft(rest, " ")
		name, after, ok := strings.Cut(rest, "=")
		if !ok {
			t.Fatalf("bad fact in %q", line)
		}
		rest = after
		v := next()
		dur := func() time.Duration {
			d, err := registry.ParseDuration(v)
			if err != nil {
				t.Fatalf("%s=%s: %v", name, v, err)
			}
			return d
		}
		num := func() int64 {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s=%s: %v", name, v, err)
			}
			return n
		}
		switch name {
		case "type":
			k.Type = v
		case "ttl":
			if v != "none" {
				k.PTTL = dur()
			}
		case "idle":
			k.Idle, k.HasIdle = dur(), true
		case "mem":
			k.Memory, k.HasMemory = num(), true
		case "len":
			k.Len, k.HasLen = num(), true
		case "value":
			k.Payload = &payload.Result{DecodeError: v}
		case "fence":
			k.HasFence, k.FenceExists = true, v == "exists"
		case "encoding":
			k.Encoding = v
		case "groups": // groups="": a stream whose groups were read, with none planned
			k.HasGroups = true
		case "group": // group=name,lag=5,pending=2,idle=10m,consumer=c (lag=nil: not measurable)
			k.HasGroups = true
			fields := strings.Split(v, ",")
			g := source.GroupInfo{Name: fields[0]}
			for _, f := range fields[1:] {
				fk, fv, _ := strings.Cut(f, "=")
				v = fv
				switch fk {
				case "lag":
					if fv != "nil" {
						g.Lag, g.HasLag = num(), true
					}
				case "pending":
					g.Pending = num()
				case "consumers":
					g.Consumers = num()
				case "idle":
					g.IdlePending, g.HasIdle = dur(), true
				case "consumer":
					g.IdleConsumer = fv
				default:
					t.Fatalf("unknown group fact %q in %q", fk, line)
				}
			}
			k.Groups = append(k.Groups, g)
		default:
			t.Fatalf("unknown fact %q in %q", name, line)
		}
	}
	return k
}

// TestUnknownRuleSuggests: a misspelt rule under rules:, ignore: or
// breaking: gets the nearest rule ID.
func TestUnknownRuleSuggests(t *testing.T) {
	fsys := fstest.MapFS{"keys.yaml": {Data: []byte(`version: 1
rules: {descripton-missing: error}
breaking: {except: [type-chnged]}
families:
  - name: a
    pattern: "v1:a:{id:int}"
    version: 1
    ignore: [{rule: ttl-polcy-missing, reason: x}]
`)}}
	reg, err := registry.Load(fsys, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, d := range Lint(reg) {
		got.WriteString(d.String() + "\n")
	}
	for _, want := range []string{
		`keys.yaml:2:9: error: rules: unknown rule "descripton-missing"; did you mean "description-missing"? (see keyreg rules) (schema-invalid)`,
		`keys.yaml:3:21: error: breaking.except: unknown rule "type-chnged"; did you mean "type-changed"? (see keyreg rules) (schema-invalid)`,
		`keys.yaml:8:14: error: ignore: unknown rule "ttl-polcy-missing"; did you mean "ttl-policy-missing"? (see keyreg rules) (schema-invalid)`,
	} {
		if !strings.Contains(got.String(), want) {
			t.Errorf("lint:\n%s\nwant a line:\n%s", got.String(), want)
		}
	}
}
