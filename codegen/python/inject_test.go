package python

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

// hostileStrings go into every field the Python backend reads.
var hostileStrings = []string{
	"",
	"plain text",
	"\nimport os; print(\"INJECTED\")\n#",
	"\rprint(\"INJECTED\")\r#",
	"\"); print(\"INJECTED\"); (\"",
	"'); print('INJECTED'); ('",
	`"""; print("INJECTED"); """`,
	`'''; print('INJECTED'); '''`,
	"\\\"); print(\"INJECTED\") #",
	"{print('INJECTED')}",
	"{{}} {0} %s %d",
	"\\x41\\u0041\\N{LATIN SMALL LETTER A}",
	"*/ /* `tick` ${x}",
	"nul\x00byte",
	"line\u2028sep\u2029para\u0085nel\x0cff\x0bvt",
	"bad\xffutf8\xc0",
	"bidi \u202eevil\u2066 \ufeffbom",
	"tab\tesc\x1bdel\x7f",
	"class", "def", "import", "lambda", "await", "None", "self", "type", "client", "_kr_re", "__init__",
	"ключ 日本",
	strings.Repeat("long", 64),
}

func lit(s string) registry.Part { return registry.Part{Lit: s} }

func ph(name string, t registry.PlaceholderType) registry.Part {
	return registry.Part{Name: name, Type: t, Typed: true}
}

func pattern(parts ...registry.Part) *registry.Pattern {
	var src strings.Builder
	for _, p := range parts {
		if p.IsPlaceholder() {
			src.WriteString("{" + p.Name + ":" + p.Type.String() + "}")
		} else {
			src.WriteString(p.Lit)
		}
	}
	return &registry.Pattern{Source: src.String(), Sep: ':', Parts: parts}
}

// benign keeps the ASCII letters and digits of s, from which names are
// made, and turns every other rune into '-'.
func benign(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	// invalid bytes decode as one RuneError each: one '-' each, as above
	return b.String()
}

// hostileRegistry builds a registry model directly (registry.Load refuses
// some of these strings) with s in names, descriptions, owners, pattern
// literals and placeholder names, schema property names, enum values and
// titles, stream group names, a lock and its fence.
func hostileRegistry(s string) *registry.Registry {
	schema := map[string]any{
		"title": s, "description": s, "type": "object",
		"required": []any{"id", "p" + s},
		"properties": map[string]any{
			"id":    map[string]any{"type": "string", "title": s, "pattern": s},
			"p" + s: map[string]any{"type": "string", "description": s},
			"q" + s: map[string]any{"type": "object", "properties": map[string]any{"r" + s: map[string]any{"type": "boolean"}}},
			"e":     map[string]any{"enum": []any{"a" + s, s}},
			"l":     map[string]any{"type": "array", "items": map[string]any{"type": "t" + s}},
		},
	}
	hashSchema := map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "object", "properties": map[string]any{"e" + s: map[string]any{"const": s}}}}
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	return &registry.Registry{
		Version: 1, Separator: ':',
		Families: []*registry.Family{
			{
				Name: "a" + s, Description: s, Owner: s, Type: "string", Encoding: "json",
				Pattern:    pattern(lit("v1:"+s+":"), ph("p"+s, registry.Int), lit(":"+s+":"), ph("q"+s, registry.Word), lit(":end")),
				TTL:        registry.TTLPolicy{Kind: registry.TTLMax, Max: time.Hour},
				Schema:     &registry.Schema{Doc: schema},
				Deprecated: &registry.Deprecation{Since: day, Reason: s, ReplacedBy: "b" + s},
			},
			{
				Name: "b" + s, Description: s, Owner: "o" + s, Type: "hash", Encoding: "json",
				Pattern: pattern(lit("v1:{"), ph("k"+s, registry.ULID), lit("}:"+s)),
				TTL:     registry.TTLPolicy{Kind: registry.TTLPersistent},
				Schema:  &registry.Schema{Doc: hashSchema},
			},
			{
				Name: "c" + s, Description: s, Owner: s, Type: "x" + s, Encoding: "y" + s,
				Pattern: pattern(lit("c:"+s+":"), ph("type", registry.Any)),
				TTL:     registry.TTLPolicy{Kind: registry.TTLOptional},
			},
			{
				Name: "d" + s, Description: s, Owner: s, Type: "stream", Encoding: "text", MaxLen: 10,
				Pattern: pattern(lit("d:"+s+":"), ph("client", registry.Hex)),
				TTL:     registry.TTLPolicy{Kind: registry.TTLOptional},
				Groups:  []registry.StreamGroup{{Name: s, MaxConsumerIdle: time.Second}, {Name: "g" + s, MaxConsumerIdle: -1}},
			},
			{
				Name: "l" + s, Description: s, Owner: s, Kind: registry.KindLock, Type: "string", Encoding: "text",
				Pattern: pattern(lit("l:"+s+":{"), ph("r"+s, registry.Word), lit("}")),
				TTL:     registry.TTLPolicy{Kind: registry.TTLMax, Max: 30 * time.Second},
				Fencing: "m" + s,
			},
			{
				Name: "m" + s, Description: s, Owner: s, Kind: registry.KindFence, Type: "string", Encoding: "int",
				Pattern: pattern(lit("m:"+s+":{"), ph("r"+s, registry.Word), lit("}")),
				TTL:     registry.TTLPolicy{Kind: registry.TTLPersistent},
			},
		},
		// A channel named as a family; placeholders named as the
		// publisher's parameters and locals.
		Channels: []*registry.Channel{
			{Family: registry.Family{
				Name: "a" + s, Description: s, Owner: s, Encoding: "json",
				Pattern:    pattern(lit("ch:"+s+":"), ph("p"+s, registry.Int), lit(":"+s+":"), ph("message", registry.Word)),
				Schema:     &registry.Schema{Doc: schema},
				Deprecated: &registry.Deprecation{Since: day, Reason: s, ReplacedBy: "x" + s},
			}, Mode: registry.ModeClassic},
			{Family: registry.Family{
				Name: "s" + s, Description: s, Owner: "o" + s, Encoding: "text",
				Pattern: pattern(lit("s:{"), ph("name", registry.Word), lit("}:"+s+":"), ph("data", registry.Hex)),
				Schema:  &registry.Schema{Doc: map[string]any{"type": "string", "pattern": s, "title": s}},
			}, Mode: registry.ModeSharded},
			{Family: registry.Family{
				Name: "p" + s, Description: s, Owner: s, Encoding: "y" + s,
				Pattern: pattern(lit("p:"+s+":"), ph("client", registry.Any), lit(":"), ph("sub", registry.Int)),
			}, Mode: registry.ModePattern, SubscribeGlob: "p:" + s + "*"},
		},
	}
}

// TestHostileStrings: for every hostile string, the module is the same
// program as its harmless twin's once string constants are blanked,
// imports without printing, has printable comments and carries each
// registry string exactly; every hostile module passes mypy --strict.
func TestHostileStrings(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	var mods []string
	for i, s := range hostileStrings {
		gen := func(reg *registry.Registry) ([]byte, *view) {
			req, err := codegen.NewRequest(reg, codegen.Scope{IncludePresets: true})
			if err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			files, err := Generator{}.Generate(req)
			if err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			v, _ := newView(req)
			return files[0].Data, v
		}
		src, v := gen(hostileRegistry(s))
		twin, _ := gen(hostileRegistry(benign(s)))
		name := fmt.Sprintf("hostile_%d.py", i)
		must(t, os.WriteFile(filepath.Join(dir, name), src, 0o644))
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("twin_%d.py", i)), twin, 0o644))
		exp := map[string]map[string]string{}
		b64 := func(x string) string { return base64.StdEncoding.EncodeToString([]byte(x)) }
		for _, fv := range v.all {
			exp[fv.upper] = map[string]string{"_PATTERN": b64(fv.f.Pattern.Source), "_OWNER": b64(fv.f.Owner), "_GLOB": b64(fv.f.Pattern.Glob)}
		}
		for _, cv := range v.chans {
			c := cv.c
			exp[cv.fv.upper] = map[string]string{"_PATTERN": b64(c.Pattern.Source), "_OWNER": b64(c.Owner), "_MODE": b64(c.Mode), "_ENCODING": b64(c.Encoding)}
			if c.Mode == registry.ModePattern {
				exp[cv.fv.upper]["_SUBSCRIBE_GLOB"] = b64(c.SubscribeGlob)
			}
		}
		for _, fn := range []string{"\ndef publish_", "\ndef subscribe_", "\nasync def asubscribe_", "message2: str"} {
			if !strings.Contains(string(src), fn) {
				t.Fatalf("%q: the module has no %q", s, fn)
			}
		}
		if len(v.chans) != 3 {
			t.Fatalf("%q: %d channels", s, len(v.chans))
		}
		eb, _ := json.Marshal(exp)
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("exp_%d.json", i)), eb, 0o644))
		out := run(t, dir, py, filepath.Join(root(t), "codegen/python/testdata/inject.py"), name, fmt.Sprintf("twin_%d.py", i), fmt.Sprintf("exp_%d.json", i))
		if strings.TrimSpace(out) != "ok" {
			t.Errorf("%q: %s", s, out)
		}
		mods = append(mods, name)
	}
	mypyStrict(t, dir, mods...)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
