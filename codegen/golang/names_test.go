package golang

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/registry"
	"github.com/rogpeppe/go-internal/txtar"
)

// probeYAML has a family of every kind whose functions take placeholder
// values (Build, MustBuild, Parse; a fenced and an unfenced lock's
// TryAcquire and Acquire; int and word values, and an int lock value
// fenced by a word fence), with placeholder names no template uses, so
// that every other name in those functions is the templates' own.
const probeYAML = `version: 1
owners:
  o: {contact: o@example.com}
families:
  - name: probe-lock
    pattern: "v1:probe:lock:{zq_a:word}:{zq_b:int}:{zq_c:uuid}"
    owner: o
    kind: lock
    encoding: text
    ttl: {max: 30s}
    fencing: probe-fence
  - name: probe-fence
    pattern: "v1:probe:fence:{zq_a:word}:{zq_b:word}"
    owner: o
    kind: fence
  - name: probe-plain-lock
    pattern: "v1:probe:plain:{zq_a:any}"
    owner: o
    kind: lock
    encoding: text
    ttl: {max: 1m}
  - name: probe-count
    pattern: "v1:probe:count:{zq_a:int}-{zq_b:word}-{zq_c:int}"
    owner: o
    type: string
    encoding: int
    ttl: {max: 1h}
`

var probeArgs = map[string]bool{"zqA": true, "zqB": true, "zqC": true}

func parseRegistry(t *testing.T, src string) *registry.Registry {
	t.Helper()
	reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return reg
}

func parseGenerated(t *testing.T, src []byte) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "keys_gen.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("generated code does not parse: %v", err)
	}
	return f
}

// funcNames returns, per top-level function or method of f, the
// unexported identifiers it declares or refers to (not the names after a
// dot, which are fields and methods): its parameters and locals, the
// packages and the predeclared and runtime names it uses. Exported names
// are left out: an argument is never exported.
func funcNames(f *ast.File) [][]string {
	var out [][]string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		seen := map[string]bool{}
		sels := map[*ast.Ident]bool{}
		ast.Inspect(fd, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				sels[n.Sel] = true
			case *ast.Ident:
				if n != fd.Name && !sels[n] && !ast.IsExported(n.Name) {
					seen[n.Name] = true
				}
			}
			return true
		})
		var names []string
		for n := range seen {
			names = append(names, n)
		}
		slices.Sort(names)
		out = append(out, names)
	}
	return out
}

// TestScopeNames derives from the generated code the names the functions
// with placeholder arguments use besides those arguments, and checks that
// localName gives no argument one of them.
func TestScopeNames(t *testing.T) {
	reg := parseRegistry(t, probeYAML)
	scopes := 0
	for _, client := range []string{ClientGoRedis, ClientNone} {
		out, err := Generate(reg, Options{Package: "keys", Client: client})
		if err != nil {
			t.Fatal(err)
		}
		for _, names := range funcNames(parseGenerated(t, out)) {
			if !slices.ContainsFunc(names, func(n string) bool { return probeArgs[n] }) {
				continue
			}
			scopes++
			for _, n := range names {
				if probeArgs[n] || n == "_" {
					continue
				}
				if ph := snake(n); localName(ph, argScope()) == n {
					t.Errorf("a generated function with placeholder arguments uses %q, but a placeholder {%s} gets that argument name: add it to scopeNames", n, ph)
				}
			}
		}
	}
	// No argument takes a keyword or a predeclared name, as Go lists them.
	for tok := token.Token(0); tok < 128; tok++ {
		if n := tok.String(); tok.IsKeyword() && localName(n, argScope()) == n {
			t.Errorf("a placeholder {%s} gets the keyword as its argument", n)
		}
	}
	for _, n := range types.Universe.Names() {
		if ph := snake(n); placeholderName.MatchString(ph) && localName(ph, argScope()) == n {
			t.Errorf("a placeholder {%s} gets the predeclared %q as its argument", ph, n)
		}
	}
	// Per client Build and MustBuild of 4 families and Parse of the 2 with
	// int values (which it declares as locals); with go-redis, 2 locks'
	// TryAcquire and Acquire.
	if want := 2*(2*4+2) + 2*2; scopes != want {
		t.Errorf("%d functions with placeholder arguments, want %d: the probe no longer covers them", scopes, want)
	}
}

var placeholderName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// snake turns a Go identifier into a placeholder name that derives it:
// "keyregMatch" → "keyreg_match".
func snake(id string) string {
	var b strings.Builder
	upper := func(i int) bool { return i < len(id) && 'A' <= id[i] && id[i] <= 'Z' }
	for i := 0; i < len(id); i++ {
		c := id[i]
		if upper(i) {
			// A word starts at an upper-case letter after a lower-case one
			// or a digit, and before a lower-case one: "MaxTTLPolicy".
			if i > 0 && (!upper(i-1) || i+1 < len(id) && !upper(i+1) && id[i+1] != '_') {
				b.WriteByte('_')
			}
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// hostileNames returns the names a generated identifier could collide
// with, derived from the generated code: every unexported name used in a
// function of the code generated for the golden registries and the probe
// (parameters, locals, runtime names), the exported names of the runtime,
// the names of the packages the files import, Go's keywords and its
// predeclared identifiers.
func hostileNames(t *testing.T) []string {
	t.Helper()
	var outs [][]byte
	for _, client := range []string{ClientGoRedis, ClientNone} {
		out, err := Generate(parseRegistry(t, probeYAML), Options{Package: "keys", Client: client})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if out := generateArchive(t, file, ar); out != nil {
			outs = append(outs, out)
		}
	}
	pkgNames := map[string]string{}
	for _, p := range goPackages {
		pkgNames[p.path] = p.name
	}
	set := map[string]bool{}
	for i, out := range outs {
		f := parseGenerated(t, out)
		for _, names := range funcNames(f) {
			for _, n := range names {
				set[n] = true
			}
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			name, ok := pkgNames[path]
			if !ok {
				t.Fatalf("generated code imports %s, which goPackages does not list", path)
			}
			set[name] = true
		}
		for _, d := range f.Decls {
			// The runtime's package-level names, from the probe's files
			// (the golden ones add only their families' names).
			if gd, ok := d.(*ast.GenDecl); ok && i < 2 {
				for _, sp := range gd.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						set[sp.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							set[n.Name] = true
						}
					}
				}
			}
		}
	}
	for tok := token.Token(0); tok < 128; tok++ {
		if tok.IsKeyword() {
			set[tok.String()] = true
		}
	}
	for _, n := range types.Universe.Names() {
		set[n] = true
	}
	var names []string
	for n := range set {
		if s := snake(n); placeholderName.MatchString(s) && !strings.Contains(s, "probe") && !strings.HasPrefix(s, "zq_") {
			names = append(names, s)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) < 100 {
		t.Fatalf("only %d names derived from the generated code: %v", len(names), names)
	}
	return names
}

// hostileNameRegistries returns registries whose placeholder names and
// family names are the given names: placeholders of locks with and
// without fences, fences and strings, first all of type word (a file
// without a single int value: a fence is an int, but its only accessor
// reads it through go-redis), then ints, with int-encoded strings; and families
// named after each name, of every kind.
func hostileNameRegistries(names []string) map[string]string {
	const head = "version: 1\nowners:\n  o: {contact: o@example.com}\nfamilies:\n"
	regs := map[string]string{}
	chunks := slices.Collect(slices.Chunk(names, 8))
	for _, typ := range []string{"word", "int"} {
		var b strings.Builder
		b.WriteString(head)
		for i, chunk := range chunks {
			var ph []string
			for j, n := range chunk {
				t := typ
				if typ == "int" && j%2 == 1 {
					t = "word" // an int lock value fenced by a word fence, too
				}
				ph = append(ph, "{"+n+":"+t+"}")
			}
			fencePh := strings.ReplaceAll(strings.Join(ph, ":"), ":int}", ":word}")
			p := strings.Join(ph, ":")
			fmt.Fprintf(&b, "  - {name: l%d-lock, pattern: \"v1:l%d:%s\", owner: o, kind: lock, encoding: text, ttl: {max: 30s}, fencing: l%d-fence}\n", i, i, p, i)
			fmt.Fprintf(&b, "  - {name: l%d-fence, pattern: \"v1:f%d:%s\", owner: o, kind: fence}\n", i, i, fencePh)
			fmt.Fprintf(&b, "  - {name: p%d-lock, pattern: \"v1:p%d:%s\", owner: o, kind: lock, encoding: text, ttl: {max: 30s}}\n", i, i, p)
			if typ == "int" { // an int value makes strconv used: the word file has none
				fmt.Fprintf(&b, "  - {name: c%d, pattern: \"v1:c%d:%s\", owner: o, type: string, encoding: int, ttl: {max: 1h}}\n", i, i, p)
			}
			fmt.Fprintf(&b, "  - {name: t%d, pattern: \"v1:t%d:%s\", owner: o, type: string, encoding: text, ttl: persistent}\n", i, i, p)
		}
		// Channels of every mode with the same placeholders.
		b.WriteString("channels:\n")
		for i, chunk := range chunks {
			var ph []string
			for _, n := range chunk {
				ph = append(ph, "{"+n+":"+typ+"}")
			}
			p := strings.Join(ph, ":")
			fmt.Fprintf(&b, "  - {name: cc%d, pattern: \"c1:cc%d:%s\", owner: o, mode: classic, encoding: json, schema: {type: object, properties: {n: {type: integer}}}}\n", i, i, p)
			fmt.Fprintf(&b, "  - {name: cs%d, pattern: \"c1:cs%d:%s\", owner: o, mode: sharded, encoding: int}\n", i, i, p)
			fmt.Fprintf(&b, "  - {name: cp%d, pattern: \"c1:cp%d:%s\", owner: o, mode: pattern, subscribe_glob: \"c1:cp%d:*\", encoding: text}\n", i, i, p, i)
		}
		regs["placeholders-"+typ] = b.String()
	}
	var b strings.Builder
	b.WriteString(head)
	familyName := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for i, n := range names {
		fam := strings.Trim(strings.ReplaceAll(n, "_", "-"), "-")
		if !familyName.MatchString(fam) || seen[fam] || seen[fam+"-fence"] {
			continue
		}
		seen[fam], seen[fam+"-fence"] = true, true
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "  - {name: %q, pattern: \"v1:%d:{id:int}\", owner: o, kind: lock, encoding: text, ttl: {max: 30s}, fencing: %q}\n", fam, i, fam+"-fence")
			fmt.Fprintf(&b, "  - {name: %q, pattern: \"v1:%df:{id:int}\", owner: o, kind: fence}\n", fam+"-fence", i)
		case 1:
			fmt.Fprintf(&b, "  - {name: %q, pattern: \"v1:%d:{id:word}\", owner: o, type: string, encoding: int, ttl: {max: 1h}}\n", fam, i)
		case 2:
			fmt.Fprintf(&b, "  - {name: %q, pattern: \"v1:%d:{id:word}\", owner: o, type: hash, encoding: json, ttl: persistent, schema: {type: object, additionalProperties: {type: object, properties: {%q: {type: string, enum: [%q]}}}}}\n", fam, i, n, n)
		case 3:
			fmt.Fprintf(&b, "  - {name: %q, pattern: \"v1:%d:{id:word}\", owner: o, type: stream, encoding: text, ttl: persistent, max_len: 10, groups: {%q: {max_consumer_idle: 1m}}}\n", fam, i, n)
		case 4:
			fmt.Fprintf(&b, "  - {name: %q, pattern: \"v1:%d\", owner: o, type: string, encoding: json, ttl: {max: 1h}, schema: {type: object, properties: {%q: {type: string}}}}\n", fam, i, n)
		}
	}
	// Channels named after each name, one also after each family, of
	// every mode and encoding.
	b.WriteString("channels:\n")
	seen = map[string]bool{}
	for i, n := range names {
		ch := strings.Trim(strings.ReplaceAll(n, "_", "-"), "-")
		if !familyName.MatchString(ch) || seen[ch] {
			continue
		}
		seen[ch] = true
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "  - {name: %q, pattern: \"c1:%d:{id:int}\", owner: o, mode: classic, encoding: json, schema: {type: object, properties: {%q: {type: string, enum: [%q]}}}}\n", ch, i, n, n)
		case 1:
			fmt.Fprintf(&b, "  - {name: %q, pattern: \"c1:%d:{{id:word}}\", owner: o, mode: sharded, encoding: msgpack}\n", ch, i)
		case 2:
			fmt.Fprintf(&b, "  - {name: %q, pattern: \"c1:%d:{id:word}\", owner: o, mode: pattern, subscribe_glob: \"c1:%d:*\", encoding: float}\n", ch, i, i)
		case 3:
			fmt.Fprintf(&b, "  - {name: %q, pattern: \"c1:%d\", owner: o, mode: classic, encoding: json, schema: {type: object, properties: {%q: {type: string}}}}\n", ch, i, n)
		}
	}
	regs["families"] = b.String()
	return regs
}

// TestHostileNames generates code from registries whose placeholder and
// family names are every name a generated identifier could collide with,
// and compiles and vets every output.
func TestHostileNames(t *testing.T) {
	names := hostileNames(t)
	for _, must := range []string{"opts", "l", "fence", "k", "key", "ctx", "strconv", "redis", "mathrand", "keyreg_match", "func", "len", "string", "msg", "ps", "sub", "data"} {
		if !slices.Contains(names, must) {
			t.Errorf("the derived names lack %q", must)
		}
	}
	dir := mkTempPackageDir(t)
	for name, src := range hostileNameRegistries(names) {
		reg := parseRegistry(t, src)
		for _, client := range []string{ClientGoRedis, ClientNone} {
			out, err := Generate(reg, Options{Package: "keys", Client: client})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			pkg := filepath.Join(dir, name+"-"+client)
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
