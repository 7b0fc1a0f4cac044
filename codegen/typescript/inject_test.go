package typescript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

// hostileStrings are fed into every field the backend reads: each would
// end a string literal, a comment, a template literal or a line in some
// form if it were pasted into the file.
var hostileStrings = []string{
	"plain text",
	"\nconsole.log(\"INJECTED\");\n//",
	"\rconsole.log(\"INJECTED\");\r//",
	"*/ console.log(\"INJECTED\"); /*",
	"\"); console.log(\"INJECTED\"); (\"",
	"'); console.log('INJECTED'); ('",
	"\\\"); console.log(\"INJECTED\"); //",
	"`; console.log(`INJECTED`); `",
	"${console.log(\"INJECTED\")}",
	"line\u2028sep\u2029para\u0085nel console.log(\"INJECTED\")",
	"nul\x00byte",
	"bidi \u202eevil\u2066 \ufeffbom",
	"tab\tvt\vff\fesc\x1bdel\x7f",
	`\x41\u0041\u{41}`,
	"</script><script>console.log('INJECTED')</script>",
	"class", "function", "await", "constructor", "__proto__",
	"ключ 日本 🔑",
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

// hostileRegistry has s in every field the backend reads: family names,
// descriptions, owners, types, encodings, pattern literals and
// placeholder names, deprecations and stream group names.
func hostileRegistry(s string) *registry.Registry {
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	return &registry.Registry{
		Version: 1, Separator: ':',
		Families: []*registry.Family{
			{
				Name: "a" + s, Description: s, Owner: s, Type: "string", Encoding: "json",
				Schema: &registry.Schema{Doc: map[string]any{
					"type": "object", "title": s, "description": s, "required": []any{"p" + s},
					"properties": map[string]any{
						"p" + s:  map[string]any{"type": "string", "description": s, "pattern": s},
						"status": map[string]any{"enum": []any{"a" + s, "b" + s, s}},
						"list":   map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/" + s}},
					},
					"$defs": map[string]any{s: map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "integer"}}},
				}},
				Pattern:    pattern(lit("v1:"+s+":"), ph("p"+s, registry.Int), lit("-"+s), ph("q"+s, registry.Word)),
				TTL:        registry.TTLPolicy{Kind: registry.TTLMax, Max: time.Hour},
				Deprecated: &registry.Deprecation{Since: day, Reason: s, ReplacedBy: "b" + s},
			},
			{
				Name: "b" + s, Description: s, Owner: "o" + s, Type: "x" + s, Encoding: "y" + s,
				Pattern: pattern(lit(s+":"), ph("type", registry.Any), lit(":"+s+":"), ph(s, registry.Any)),
				TTL:     registry.TTLPolicy{Kind: registry.TTLOptional},
			},
			{
				Name: "c" + s, Owner: s, Type: "stream", Encoding: "text", MaxLen: 10,
				Pattern: pattern(lit("v1:{"), ph("k"+s, registry.ULID), lit("}:"+s), ph("u", registry.UUID), lit(s), ph("h", registry.Hex)),
				Groups:  []registry.StreamGroup{{Name: s, MaxConsumerIdle: time.Minute}},
			},
			{Name: s, Owner: s, Pattern: pattern(lit("d" + s))},
		},
		// Channels: a family's fields, a mode and a subscribe glob.
		Channels: []*registry.Channel{
			{Mode: registry.ModeSharded, Family: registry.Family{
				Name: "a" + s, Description: s, Owner: s, Encoding: "json",
				Schema: &registry.Schema{Doc: map[string]any{
					"type": "object", "title": s, "required": []any{"p" + s},
					"properties": map[string]any{"p" + s: map[string]any{"enum": []any{s, "x" + s}}},
				}},
				Pattern:    pattern(lit("ch:{"), ph("p"+s, registry.Int), lit("}:"+s)),
				Deprecated: &registry.Deprecation{Since: day, Reason: s, ReplacedBy: "b" + s},
			}},
			{Mode: registry.ModePattern, SubscribeGlob: "ch:" + s + "*", Family: registry.Family{
				Name: "b" + s, Description: s, Owner: "o" + s, Encoding: "text",
				Schema:  &registry.Schema{Doc: map[string]any{"type": "string", "pattern": s}},
				Pattern: pattern(lit("ch:"+s), ph(s, registry.Word)),
			}},
			{Mode: registry.ModeClassic, Family: registry.Family{
				Name: "c" + s, Owner: s, Encoding: "y" + s,
				Pattern: pattern(lit("ch2:"+s), ph("type", registry.Any), lit(":"), ph("message", registry.Hex)),
			}},
			{Mode: registry.ModeClassic, Family: registry.Family{
				Name: s, Owner: s, Encoding: "binary", Pattern: pattern(lit("ch3:" + s)),
			}},
		},
	}
}

// twin is a harmless string with the words of s: the identifiers the
// backend derives from it are the same.
func twin(s string) string {
	var b strings.Builder
	sep := false
	for _, r := range s {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
			sep = false
		} else if !sep {
			b.WriteByte('-')
			sep = true
		}
	}
	return b.String()
}

type inspection struct {
	Decls    []string
	Strings  []string
	TopCalls []string
	Diags    []string
}

// TestHostileStrings generates a module for every hostile string, in
// every field, and proves with the TypeScript compiler's parser that no
// registry text became code: the module declares exactly what its
// harmless twin declares, makes no top-level call, and holds every
// registry string exactly as a string literal. Then all modules compile
// under tsc --strict, and importing each one under node prints nothing
// and gives back the pattern exactly.
func TestHostileStrings(t *testing.T) {
	tc := needToolchain(t)
	p := tc.project(t)
	gen := func(s, client string) []byte {
		req, err := codegen.NewRequest(hostileRegistry(s), codegen.Scope{IncludePresets: true})
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		files, err := Generator{Client: client}.Generate(req)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return files[0].Data
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "inspect.mjs"))
	// inspect.mjs imports typescript: it runs from the project, whose
	// node_modules links the cache.
	b, _ := os.ReadFile(script)
	write(t, filepath.Join(p.dir, "inspect.mjs"), string(b))
	type pair struct{ s, client, path, twin string }
	var pairs []pair
	var paths []string
	for i, s := range hostileStrings {
		for _, client := range []string{ClientRedis, ClientIORedis, ClientNone} {
			name := "h" + strconv.Itoa(i) + "_" + client
			path := filepath.Join(p.dir, name+".ts")
			write(t, path, string(gen(s, client)))
			twinPath := filepath.Join(p.dir, "twin_"+name+".ts.txt")
			write(t, twinPath, string(gen(twin(s), client)))
			pairs = append(pairs, pair{s, client, path, twinPath})
			paths = append(paths, path, twinPath)
		}
	}
	var got map[string]inspection
	if err := json.Unmarshal([]byte(p.node(nil, filepath.Join(p.dir, "inspect.mjs"), paths...)), &got); err != nil {
		t.Fatal(err)
	}
	for _, pr := range pairs {
		s, client, hostile, harmless := pr.s, pr.client, got[pr.path], got[pr.twin]
		if len(hostile.Diags) > 0 || len(hostile.TopCalls) > 0 || len(hostile.Decls) == 0 {
			t.Errorf("%q (%s): syntax errors %q, top-level statements %q", s, client, hostile.Diags, hostile.TopCalls)
		}
		slices.Sort(hostile.Decls)
		slices.Sort(harmless.Decls)
		if !reflect.DeepEqual(hostile.Decls, harmless.Decls) {
			t.Errorf("%q (%s): declares\n%q\nits twin\n%q", s, client, hostile.Decls, harmless.Decls)
		}
		for _, f := range hostileRegistry(s).Families {
			for _, want := range []string{f.Name, f.Owner, f.Pattern.Source, f.Pattern.Glob()} {
				if !slices.Contains(hostile.Strings, want) {
					t.Errorf("%q (%s): no string literal holds %q exactly", s, client, want)
				}
			}
		}
		for _, c := range hostileRegistry(s).Channels {
			for _, want := range []string{c.Name, c.Owner, c.Pattern.Source, c.SubscribeGlob} {
				if want != "" && !slices.Contains(hostile.Strings, want) {
					t.Errorf("%q (%s): no string literal holds the channel's %q exactly", s, client, want)
				}
			}
		}
	}
	p.compile()
	// Importing a module runs its top level: it must print nothing.
	for i, s := range hostileStrings {
		mod := filepath.Join(p.dir, "out", "h"+strconv.Itoa(i)+"_none.js")
		src := "import * as m from " + strconv.Quote("./"+filepath.Base(mod)) + ";\n" +
			"const want = " + mustJSON(t, hostileRegistry(s).Families[0].Pattern.Source) + ";\n" +
			"const got = Object.entries(m).filter(([k, v]) => k.endsWith(\"_PATTERN\") && v === want);\n" +
			"if (got.length !== 1) { process.stderr.write(\"pattern not exported exactly once\"); process.exit(1); }\n"
		run := filepath.Join(p.dir, "out", "run"+strconv.Itoa(i)+".mjs")
		write(t, run, src)
		if out := p.node(nil, run); out != "" {
			t.Errorf("%q: importing the module printed %q", s, out)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
