package golang

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/keyreg/keyreg/registry"
)

// The example: a pattern whose newline ends the "// Pattern:"
// comment, so the rest of the line is code that runs at package init.
const injectedPattern = "v1:a:{id:int}\nvar _, _ = fmt.Println(\"INJECTED\")\n//"

// hostileStrings are fed into every field codegen reads.
var hostileStrings = []string{
	"",
	"plain text",
	"\nvar _, _ = fmt.Println(\"INJECTED\")\n//",
	"\rvar _, _ = fmt.Println(\"INJECTED\")\r//",
	"*/ func init() { fmt.Println(\"INJECTED\") } /*",
	"/* open",
	"`; var _ = fmt.Println(\"INJECTED\"); var _ = `",
	"\"); var _ = fmt.Println(\"INJECTED\"); var _ = (\"",
	"\\\"); var _ = fmt.Println(\"INJECTED\") //",
	"nul\x00byte",
	"line\u2028sep\u2029para\u0085nel",
	"bad\xffutf8\xc0",
	"bidi \u202eevil\u2066 \ufeffbom",
	"tab\tvt\vff\fesc\x1bdel\x7f",
	"func",
	"type",
	"package main",
	"}}{{.Name}}{{",
	"{{template \"runtime\" .}}",
	"%d %w %!",
	"-",
	",omitempty",
	"a b",
	"\x00unknown",
	"//go:generate rm -rf /",
	"\n//go:build ignore\n",
	"ключ",
}

// hostileRegistry builds a registry model directly, with s in every field
// codegen reads: names, descriptions, patterns (source, literals and
// placeholder names), owners, types, encodings, deprecations and schema
// titles, descriptions, formats, property names, enum values and $refs.
// It does not go through registry.Load, which rejects some of these
// strings, so codegen is tested on its own.
func hostileRegistry(s string) *registry.Registry {
	schema := map[string]any{
		"title":       s,
		"description": s,
		"type":        "object",
		"required":    []any{"id", "-", "p" + s},
		"properties": map[string]any{
			"id":     map[string]any{"type": "string", "title": s, "description": s, "format": s},
			"-":      map[string]any{"type": "integer"},
			"p" + s:  map[string]any{"type": "string", "description": s},
			"q" + s:  map[string]any{"type": "object", "title": s, "properties": map[string]any{"r" + s: map[string]any{"type": "boolean", "description": s}}},
			"status": map[string]any{"description": s, "enum": []any{"a" + s, "b" + s, "a" + s, "", "\x00unknown"}},
			"list":   map[string]any{"type": "array", "items": map[string]any{"title": s, "enum": []any{"c" + s, "d" + s}}},
			"money":  map[string]any{"$ref": "#/$defs/money"},
			"other":  map[string]any{"$ref": "other.json#" + s},
			"one":    map[string]any{"description": s, "oneOf": []any{map[string]any{"type": "string"}}},
			"typed":  map[string]any{"type": "t" + s},
		},
		"$defs": map[string]any{
			"money": map[string]any{"type": "object", "description": s, "properties": map[string]any{"amount": map[string]any{"type": "integer", "title": s}}},
		},
	}
	hashSchema := map[string]any{
		"title": s,
		"type":  "object",
		"additionalProperties": map[string]any{
			"description": s,
			"properties":  map[string]any{"e" + s: map[string]any{"enum": []any{s}}, "n": map[string]any{"type": "number"}},
		},
	}
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	fence := &registry.Family{
		Name: "f" + s, Description: s, Owner: s, Kind: registry.KindFence, Type: "string", Encoding: "int",
		Pattern: pattern(lit("v1:f:"+s+":{"), ph("r"+s, registry.Word), lit("}")),
		TTL:     registry.TTLPolicy{Kind: registry.TTLPersistent},
	}
	return &registry.Registry{
		Version:   1,
		Separator: ':',
		Families: []*registry.Family{
			{
				Name: "a" + s, Description: s, Owner: s, Type: "string", Encoding: "json",
				Pattern:    pattern(lit("v1:"+s+":"), ph("p"+s, registry.Int), lit("-"+s), ph("q"+s, registry.Word)),
				TTL:        registry.TTLPolicy{Kind: registry.TTLMax, Max: time.Hour},
				Schema:     &registry.Schema{Doc: schema},
				Deprecated: &registry.Deprecation{Since: day, Reason: s, ReplacedBy: "b" + s},
			},
			{
				Name: "b" + s, Description: s, Owner: "o" + s, Type: "hash", Encoding: "json",
				Pattern:    pattern(lit("v1:{"), ph("k"+s, registry.ULID), lit("}:"+s)),
				TTL:        registry.TTLPolicy{Kind: registry.TTLPersistent},
				Schema:     &registry.Schema{Doc: hashSchema},
				Deprecated: &registry.Deprecation{Sunset: day, Reason: s, ReplacedBy: "zz" + s},
			},
			{
				Name: "c" + s, Description: s, Owner: s, Type: "x" + s, Encoding: "y" + s,
				Pattern: pattern(lit(s+":"), ph("type", registry.Any)),
				TTL:     registry.TTLPolicy{Kind: registry.TTLOptional},
			},
			{
				Name: "d" + s, Description: s, Owner: s, Type: "hash", Encoding: "int",
				Pattern: pattern(lit("v1:"), ph("func"+s, registry.Int), lit(":"), ph("key"+s, registry.Hex)),
			},
			{
				Name: s, Description: s, Owner: s, Type: "string", Encoding: "msgpack",
				Pattern: pattern(lit("d" + s)),
				TTL:     registry.TTLPolicy{Kind: registry.TTLMax, Max: 90 * time.Second},
			},
			{
				Name: "e" + s, Description: s, Owner: s, Type: "string", Encoding: "json",
				Pattern: pattern(lit("e:"), ph("id", registry.UUID)),
				Schema: &registry.Schema{Doc: map[string]any{"type": "object", "description": s, "required": []any{"-"}, "properties": map[string]any{
					"-": map[string]any{"type": "integer", "description": s},
					"n": map[string]any{"type": "string", "title": s},
				}}},
			},
			fence,
			{
				Name: "l" + s, Description: s, Owner: s, Kind: registry.KindLock, Type: "string", Encoding: "text",
				Pattern: pattern(lit("v1:l:"+s+":{"), ph("r"+s, registry.Int), lit("}")),
				TTL:     registry.TTLPolicy{Kind: registry.TTLMax, Max: 30 * time.Second},
				Fencing: fence.Name, FencingFamily: fence,
			},
			{
				Name: "s" + s, Description: s, Owner: s, Type: "stream", Encoding: "text", MaxLen: 10,
				Pattern: pattern(lit("v1:s:"+s+":"), ph("q"+s, registry.Word)),
				TTL:     registry.TTLPolicy{Kind: registry.TTLOptional},
				Schema:  &registry.Schema{Doc: map[string]any{"type": "object", "required": []any{s}, "properties": map[string]any{s: map[string]any{"pattern": s, "enum": []any{s}}}}},
				Groups:  []registry.StreamGroup{{Name: s, MaxConsumerIdle: time.Minute}, {Name: "g" + s, MaxConsumerIdle: registry.NoLimit}, {Name: "G" + s, MaxConsumerIdle: time.Second}},
			},
			{
				Name: "z" + s, Description: s, Owner: s, Type: "zset", Encoding: "json",
				Pattern: pattern(lit("v1:z:"+s+":"), ph("m"+s, registry.Hex)),
				TTL:     registry.TTLPolicy{Kind: registry.TTLMax, Max: time.Minute},
				Schema:  &registry.Schema{Doc: map[string]any{"title": s, "type": "object", "properties": map[string]any{"k" + s: map[string]any{"type": "string", "description": s}}}},
			},
			{
				Name: "issue" + s, Description: s, Type: "string", Encoding: "text",
				Pattern: pattern(lit("v1:a:"), ph("id", registry.Int), lit("\nvar _, _ = fmt.Println(\"INJECTED\")\n//")),
			},
		},
		// Channels of every mode, one named like a family, with s in
		// their names, patterns, owners, descriptions, globs, schemas and
		// deprecations.
		Channels: []*registry.Channel{
			{
				Family: registry.Family{
					Name: "a" + s, Description: s, Owner: s, Encoding: "json",
					Pattern:    pattern(lit("c1:"+s+":"), ph("p"+s, registry.Int), lit("-"+s), ph("msg"+s, registry.Word)),
					Schema:     &registry.Schema{Doc: schema},
					Deprecated: &registry.Deprecation{Since: day, Reason: s, ReplacedBy: "s" + s},
				},
				Mode: registry.ModeClassic,
			},
			{
				Family: registry.Family{
					Name: "s" + s, Description: s, Owner: "o" + s, Encoding: "text",
					Pattern:    pattern(lit("c1:{"), ph("ps"+s, registry.ULID), lit("}:"+s)),
					Schema:     &registry.Schema{Doc: map[string]any{"type": "string", "pattern": s, "description": s}},
					Deprecated: &registry.Deprecation{Sunset: day, Reason: s, ReplacedBy: "a" + s},
				},
				Mode: registry.ModeSharded,
			},
			{
				Family: registry.Family{
					Name: "g" + s, Description: s, Owner: s, Encoding: "msgpack",
					Pattern: pattern(lit("c1:g:"+s+":"), ph("data", registry.Word)),
				},
				Mode: registry.ModePattern, SubscribeGlob: "c1:g:" + s + ":*",
			},
		},
	}
}

func lit(s string) registry.Part { return registry.Part{Lit: s} }

func ph(name string, t registry.PlaceholderType) registry.Part {
	return registry.Part{Name: name, Type: t, Typed: true}
}

// pattern builds a pattern from parts, with the source written as in
// keys.yaml but without escaping the literals.
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

// benign maps s to a string that derives the same Go identifiers and is
// a valid struct tag exactly when s is, but holds nothing hostile: ASCII
// letters and digits stay, runes a tag may hold become '-', every other
// rune or byte ','.
func benign(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'):
			b.WriteRune(r)
		case validTag(s[:n]):
			b.WriteByte('-')
		default:
			b.WriteByte(',')
		}
		s = s[n:]
	}
	return b.String()
}

// checkGenerated generates the hostile registry for s with opts and
// checks that the output parses, declares exactly what the benign twin
// of the registry declares, calls no fmt.Print function, writes every
// registry string into literals exactly, and has only printable text in
// comments. It returns the generated source.
func checkGenerated(t *testing.T, s string, opts Options) []byte {
	t.Helper()
	reg := hostileRegistry(s)
	out, err := Generate(reg, opts)
	if err != nil {
		t.Fatalf("Generate(%q): %v\n%s", s, err, out)
	}
	file, err := parser.ParseFile(token.NewFileSet(), "keys_gen.go", out, parser.ParseComments)
	if err != nil {
		t.Fatalf("the output for %q does not parse: %v\n%s", s, err, out)
	}
	twin, err := Generate(hostileRegistry(benign(s)), opts)
	if err != nil {
		t.Fatalf("Generate(%q): %v", benign(s), err)
	}
	twinFile, err := parser.ParseFile(token.NewFileSet(), "twin.go", twin, 0)
	if err != nil {
		t.Fatalf("the output for %q does not parse: %v", benign(s), err)
	}
	if got, want := declNames(file), declNames(twinFile); !slices.Equal(got, want) {
		t.Fatalf("the output for %q declares\n%s\nwant (as for %q)\n%s", s, strings.Join(got, "\n"), benign(s), strings.Join(want, "\n"))
	}
	lits, tags := map[string]bool{}, map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			if n.Tag != nil {
				tags[n.Tag.Value] = true
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "fmt" && strings.HasPrefix(sel.Sel.Name, "Print") {
					t.Errorf("the output for %q calls fmt.%s", s, sel.Sel.Name)
				}
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				v, err := strconv.Unquote(n.Value)
				if err != nil {
					t.Errorf("literal %s: %v", n.Value, err)
				}
				lits[v] = true
			}
		}
		return true
	})
	want := []string{"a" + s, "b" + s, "g" + s, "G" + s} // enum values, group names
	for _, f := range reg.Families {
		want = append(want, f.Name, f.Pattern.Source, f.Owner, f.Type, f.Encoding)
	}
	for _, c := range reg.Channels {
		want = append(want, c.Name, c.Pattern.Source, c.Owner, c.Encoding, c.Mode)
		if c.SubscribeGlob != "" {
			want = append(want, c.SubscribeGlob)
		}
	}
	for _, w := range want {
		if !lits[w] {
			t.Errorf("the output for %q has no string literal %q", s, w)
		}
	}
	// The property "-" needs "-,": a bare "-" makes encoding/json skip it.
	if !tags["`json:\"-,\"`"] {
		t.Errorf("the output for %q has no tag `json:\"-,\"`", s)
	}
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			if !utf8.ValidString(c.Text) {
				t.Errorf("the output for %q has invalid UTF-8 in comment %q", s, c.Text)
			}
			for i, r := range c.Text {
				if !strconv.IsPrint(r) && r != '\t' {
					t.Errorf("the output for %q has %U at byte %d of comment %q", s, r, i, c.Text)
					break
				}
			}
		}
	}
	return out
}

// declNames lists the top-level declarations of a file, sorted (families
// are sorted by name, which benign may change): imports, constants,
// variables, types, functions and methods (with the receiver type).
func declNames(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.ImportSpec:
					out = append(out, "import "+sp.Path.Value)
				case *ast.TypeSpec:
					out = append(out, "type "+sp.Name.Name)
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						out = append(out, d.Tok.String()+" "+n.Name)
					}
				}
			}
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				typ := d.Recv.List[0].Type
				if st, ok := typ.(*ast.StarExpr); ok {
					typ = st.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			out = append(out, "func "+name)
		}
	}
	slices.Sort(out)
	return out
}

// TestHostileStrings feeds hostile strings through every field codegen
// reads, checks the output's declarations and literals, and compiles and
// vets every output.
func TestHostileStrings(t *testing.T) {
	dir := mkTempPackageDir(t)
	for i, s := range hostileStrings {
		for _, client := range []string{ClientGoRedis, ClientNone} {
			out := checkGenerated(t, s, Options{Package: "keys", Client: client})
			pkg := filepath.Join(dir, client+strconv.Itoa(i))
			if err := os.Mkdir(pkg, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pkg, goldenOut), out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	goVet(t, "./"+filepath.ToSlash(dir)+"/...")
}

// TestInjectedPatternDoesNotRun builds and runs a program with the code
// generated for the pattern: it must print the pattern back, and
// nothing else.
func TestInjectedPatternDoesNotRun(t *testing.T) {
	reg := &registry.Registry{Version: 1, Separator: ':', Families: []*registry.Family{{
		Name: "a", Type: "string", Encoding: "text",
		Pattern: pattern(lit("v1:a:"), ph("id", registry.Int), lit("\nvar _, _ = fmt.Println(\"INJECTED\")\n//")),
	}}}
	if reg.Families[0].Pattern.Source != injectedPattern {
		t.Fatalf("pattern source %q, want %q", reg.Families[0].Pattern.Source, injectedPattern)
	}
	out, err := Generate(reg, Options{Package: "main", Client: ClientNone})
	if err != nil {
		t.Fatal(err)
	}
	dir := mkTempPackageDir(t)
	main := "package main\n\nimport \"os\"\n\nfunc main() {\n\tos.Stdout.WriteString(APattern + \"|\" + MustBuildA(7))\n}\n"
	for name, data := range map[string][]byte{goldenOut: out, "main.go": []byte(main)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go not on PATH: the generated program must run")
	}
	cmd := exec.Command(gobin, "run", "./"+filepath.ToSlash(dir))
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, got)
	}
	want := injectedPattern + "|v1:a:7\nvar _, _ = fmt.Println(\"INJECTED\")\n//"
	if string(got) != want {
		t.Errorf("the program printed %q, want %q", got, want)
	}
}

// FuzzGenerate feeds arbitrary strings through every field codegen reads
// and checks that the output parses and declares what it declares for a
// benign string. Compiling every input would be too slow; TestHostileStrings
// compiles the seeds.
func FuzzGenerate(f *testing.F) {
	for _, s := range hostileStrings {
		f.Add(s, false)
	}
	f.Add("\n", true)
	f.Fuzz(func(t *testing.T, s string, noClient bool) {
		if len(s) > 256 {
			return
		}
		opts := Options{Package: "keys"}
		if noClient {
			opts.Client = ClientNone
		}
		checkGenerated(t, s, opts)
	})
}

// TestValidTag checks validTag against encoding/json itself: a name is a
// valid tag exactly when encoding/json uses it as the object key.
func TestValidTag(t *testing.T) {
	names := []string{"a", "a b", "a-b", "a.b", "ключ", "x\u2028", "x\u202e", "x\xff", "x\ufffd", "a,b", "a\"b", "a\\b", "a`b", "a'b", "\x00", "é", "٣", "$ref", "_"}
	names = append(names, hostileStrings...)
	for _, name := range names {
		typ := reflect.StructOf([]reflect.StructField{{Name: "F", Type: reflect.TypeFor[int](), Tag: reflect.StructTag("json:" + strconv.Quote(name+","))}})
		b, err := json.Marshal(reflect.New(typ).Elem().Interface())
		if err != nil {
			t.Fatal(err)
		}
		key, _ := json.Marshal(name)
		uses := string(b) == "{"+string(key)+":0}"
		if got := validTag(name); got != uses {
			t.Errorf("validTag(%q) = %v, but encoding/json gives %s", name, got, b)
		}
	}
}

// TestEnumUnknown checks that the Unknown constant of an enum differs from
// every listed value, and that a value listed twice gets one constant.
func TestEnumUnknown(t *testing.T) {
	for _, values := range [][]string{{"a"}, {"a", ""}, {"", "\x00unknown"}, {"", "\x00unknown", "\x00unknown\x00", "a", "a"}} {
		var doc []any
		for _, v := range values {
			doc = append(doc, v)
		}
		g := &typeGen{names: newNamer(), family: "f", base: "F"}
		g.goType(map[string]any{"enum": doc}, "E", "E")
		if len(g.decls) != 1 {
			t.Fatalf("%q: %d declarations, want 1", values, len(g.decls))
		}
		d := g.decls[0]
		seen := map[string]bool{}
		for _, c := range d.Enum {
			if seen[c.Value] {
				t.Errorf("%q: value %s has two constants", values, c.Value)
			}
			seen[c.Value] = true
		}
		if len(seen) != len(slices.Compact(slices.Sorted(slices.Values(values)))) {
			t.Errorf("%q: %d constants", values, len(seen))
		}
		if seen[d.UnknownValue] {
			t.Errorf("%q: the Unknown value %s is a listed value", values, d.UnknownValue)
		}
	}
}

// TestBrokenPatterns checks that a pattern registry.Load would reject
// gives an error or valid code, never a panic or code that does not parse.
func TestBrokenPatterns(t *testing.T) {
	fam := func(p *registry.Pattern) *registry.Registry {
		return &registry.Registry{Families: []*registry.Family{{Name: "f", Type: "string", Encoding: "text", Pattern: p}}}
	}
	for name, p := range map[string]*registry.Pattern{
		"no parts":     {Source: "x", Sep: ':'},
		"unknown type": pattern(lit("v1:"), ph("a", registry.PlaceholderType(99))),
	} {
		if out, err := Generate(fam(p), Options{Package: "keys"}); err == nil {
			t.Errorf("%s: Generate succeeded, want an error:\n%s", name, out)
		}
	}
	for name, p := range map[string]*registry.Pattern{
		"adjacent placeholders": pattern(lit("v1:"), ph("a", registry.Word), ph("b", registry.Word)),
		"empty literal":         pattern(ph("a", registry.Word), lit(""), ph("b", registry.Int)),
	} {
		out, err := Generate(fam(p), Options{Package: "keys"})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Contains(out, []byte("make sure the key parses back")) {
			t.Errorf("%s: Build does not check that the key parses back", name)
		}
	}
}
