package vectors_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/codegen/golang"
	"github.com/keyreg/keyreg/codegen/vectors"
	"github.com/keyreg/keyreg/registry"
)

var update = flag.Bool("update", false, "rewrite the committed vectors files")

// root is the repository root, from this package's directory.
const root = "../.."

func load(t *testing.T, path string) (*registry.Registry, *codegen.Request) {
	t.Helper()
	reg, err := registry.LoadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	req, err := codegen.NewRequest(reg, codegen.Scope{IncludePresets: true})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return reg, req
}

// TestFresh rebuilds every vectors file and compares it with the
// committed one (go test ./codegen/vectors -update rewrites them).
func TestFresh(t *testing.T) {
	for _, f := range vectors.Files() {
		_, req := load(t, f.Registry)
		d, err := vectors.Build(req, f.Registry)
		if err != nil {
			t.Fatalf("%s: %v", f.Registry, err)
		}
		got, err := vectors.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := vectors.Build(req, f.Registry)
		if b, _ := vectors.Marshal(again); !bytes.Equal(got, b) {
			t.Errorf("%s: Build is not deterministic", f.Registry)
		}
		path := filepath.Join(root, f.Vectors)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale or missing: run go test ./codegen/vectors -update", f.Vectors)
		}
	}
}

// TestVectorsAgreeWithRegistry checks the vectors against the registry's
// own pattern engine: every case's key is what Pattern.Build gives and
// what the registry's matcher assigns to the family; every invalid value
// is refused by Pattern.Build; every non-key is matched to no family's
// values by the pattern.
func TestVectorsAgreeWithRegistry(t *testing.T) {
	for _, f := range vectors.Files() {
		reg, req := load(t, f.Registry)
		d, err := vectors.Build(req, f.Registry)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*registry.Family{}
		for _, rf := range reg.Families {
			byName[rf.Name] = rf
		}
		if len(d.Families)+len(d.Skipped) != len(reg.Families) {
			t.Errorf("%s: %d families with vectors and %d skipped, registry has %d", f.Registry, len(d.Families), len(d.Skipped), len(reg.Families))
		}
		for _, vf := range d.Families {
			rf := byName[vf.Family]
			if rf == nil {
				t.Fatalf("%s: unknown family %q", f.Registry, vf.Family)
			}
			if vf.Glob != rf.Pattern.Glob() {
				t.Errorf("%s: glob %q, pattern's %q", vf.Family, vf.Glob, rf.Pattern.Glob())
			}
			values := func(args []string) map[string]string {
				m := map[string]string{}
				for i, ph := range vf.Placeholders {
					m[ph.Name] = args[i]
				}
				return m
			}
			for _, c := range vf.Cases {
				k, err := rf.Pattern.Build(values(c.Args))
				if err != nil || k != c.Key {
					t.Errorf("%s: Build(%q) = %q, %v; vectors say %q", vf.Family, c.Args, k, err, c.Key)
				}
			}
			for _, iv := range vf.Invalid {
				if k, err := rf.Pattern.Build(values(iv.Args)); err == nil {
					t.Errorf("%s: Build(%q) = %q, want a refusal of %q", vf.Family, iv.Args, k, iv.Value)
				}
			}
			if len(vf.Cases) < 1 || len(vf.NonKeys) < 2 {
				t.Errorf("%s: %d cases and %d non-keys", vf.Family, len(vf.Cases), len(vf.NonKeys))
			}
		}
	}
}

// TestHostileVectors checks that the hostile registry's vectors hold the
// hostile cases the backends must survive.
func TestHostileVectors(t *testing.T) {
	_, req := load(t, "codegen/vectors/testdata/hostile.keys.yaml")
	d, err := vectors.Build(req, "hostile")
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	ambiguous := 0
	for _, f := range d.Families {
		all.WriteString(f.Pattern)
		for _, c := range f.Cases {
			all.WriteString(c.Key)
		}
		ambiguous += len(f.Ambiguous)
	}
	for _, s := range []string{`"`, `'`, `\`, `"""`, "*/", "${", "`", `\x41`, `\u0041`, "ключ", "日本", "a:b"} {
		if !strings.Contains(all.String(), s) {
			t.Errorf("no hostile vector holds %q", s)
		}
	}
	if ambiguous == 0 {
		t.Error("no ambiguous key: the parse rule is not pinned down")
	}
}

// TestGoBackendRunsVectors generates Go code for each registry, and a
// program that runs its vectors through the generated builders and
// parsers: build, parse, parse of build, refusal of every invalid value
// and of every non-key, and the glob constant.
func TestGoBackendRunsVectors(t *testing.T) {
	for _, f := range vectors.Files() {
		t.Run(filepath.Base(f.Vectors), func(t *testing.T) {
			reg, req := load(t, f.Registry)
			src, err := golang.Generate(reg, golang.Options{Package: "main", Client: golang.ClientNone, Scope: codegen.Scope{IncludePresets: true}})
			if err != nil {
				t.Fatal(err)
			}
			sigs, err := golang.Generator{Package: "main"}.Builders(req)
			if err != nil {
				t.Fatal(err)
			}
			// The builders' names: "main.BuildCart(id string) (string,
			// error)" is BuildCart.
			builders := map[string]string{}
			for fam, sig := range sigs {
				name, _, _ := strings.Cut(strings.TrimPrefix(sig, "main."), "(")
				builders[fam] = name
			}
			d, err := vectors.Build(req, f.Registry)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := vectors.Marshal(d)
			dir := t.TempDir()
			must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module vectors\n\ngo 1.26\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "keys_gen.go"), src, 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "vectors.json"), data, 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "main.go"), harness(t, d, builders), 0o644))
			cmd := exec.Command("go", "run", ".")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go run: %v\n%s", err, out)
			}
			want := 0
			for _, vf := range d.Families {
				want += 2*len(vf.Cases) + len(vf.Ambiguous) + len(vf.Invalid) + len(vf.NonKeys) + 1
			}
			if got := strings.TrimSpace(string(out)); got != fmt.Sprintf("ok %d", want) {
				t.Errorf("vectors: %s (want ok %d)", got, want)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// harness writes a main package that checks every vector of d with the
// generated code, prints each failure and "ok N" for N checks passed.
func harness(t *testing.T, d *vectors.Doc, builders map[string]string) []byte {
	var b strings.Builder
	b.WriteString(`package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
)

type vfamily struct {
	Family    string ` + "`json:\"family\"`" + `
	Glob      string ` + "`json:\"glob\"`" + `
	Cases     []vcase ` + "`json:\"cases\"`" + `
	Ambiguous []vcase ` + "`json:\"ambiguous\"`" + `
	Invalid   []struct{ Args []string ` + "`json:\"args\"`" + ` } ` + "`json:\"invalid\"`" + `
	NonKeys   []string ` + "`json:\"non_keys\"`" + `
}

type vcase struct {
	Args []string ` + "`json:\"args\"`" + `
	Key  string   ` + "`json:\"key\"`" + `
}

type fam struct {
	glob  string
	build func(a []string) (string, error)
	parse func(k string) (any, error)
}

func int64Arg(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

// fields renders a parsed key's fields, in pattern order, as strings.
func fields(k any) []string {
	v := reflect.ValueOf(k)
	out := make([]string, v.NumField())
	for i := range out {
		switch f := v.Field(i); f.Kind() {
		case reflect.Int64:
			out[i] = strconv.FormatInt(f.Int(), 10)
		default:
			out[i] = f.String()
		}
	}
	return out
}

var fams = map[string]fam{
`)
	for _, vf := range d.Families {
		build, ok := builders[vf.Family]
		if !ok {
			t.Fatalf("no Go builder for %q", vf.Family)
		}
		var call []string
		for i, ph := range vf.Placeholders {
			if ph.Type == "int" {
				call = append(call, fmt.Sprintf("int64Arg(a[%d])", i))
			} else {
				call = append(call, fmt.Sprintf("a[%d]", i))
			}
		}
		parse := "Parse" + strings.TrimPrefix(build, "Build")
		globConst := strings.TrimPrefix(build, "Build") + "Glob"
		fmt.Fprintf(&b, "\t%s: {glob: %s, build: func(a []string) (string, error) { return %s(%s) }, parse: func(k string) (any, error) { return %s(k) }},\n",
			strconv.Quote(vf.Family), globConst, build, strings.Join(call, ", "), parse)
	}
	b.WriteString(`}

func main() {
	data, err := os.ReadFile("vectors.json")
	if err != nil {
		panic(err)
	}
	var doc struct{ Families []vfamily }
	if err := json.Unmarshal(data, &doc); err != nil {
		panic(err)
	}
	n, failed := 0, false
	fail := func(format string, args ...any) { failed = true; fmt.Printf(format+"\n", args...) }
	for _, vf := range doc.Families {
		f := fams[vf.Family]
		if f.glob != vf.Glob {
			fail("%s: glob %q, want %q", vf.Family, f.glob, vf.Glob)
		} else {
			n++
		}
		for _, c := range vf.Cases {
			if k, err := f.build(c.Args); err != nil || k != c.Key {
				fail("%s: build(%q) = %q, %v; want %q", vf.Family, c.Args, k, err, c.Key)
			} else {
				n++
			}
			if p, err := f.parse(c.Key); err != nil || !reflect.DeepEqual(fields(p), c.Args) {
				fail("%s: parse(%q) = %v, %v; want %q", vf.Family, c.Key, p, err, c.Args)
			} else {
				n++
			}
		}
		for _, c := range vf.Ambiguous {
			if p, err := f.parse(c.Key); err != nil || !reflect.DeepEqual(fields(p), c.Args) {
				fail("%s: parse(%q) = %v, %v; want %q", vf.Family, c.Key, p, err, c.Args)
			} else {
				n++
			}
		}
		for _, iv := range vf.Invalid {
			if k, err := f.build(iv.Args); err == nil {
				fail("%s: build(%q) = %q, want an error", vf.Family, iv.Args, k)
			} else {
				n++
			}
		}
		for _, k := range vf.NonKeys {
			if p, err := f.parse(k); err == nil {
				fail("%s: parse(%q) = %v, want an error", vf.Family, k, p)
			} else {
				n++
			}
		}
	}
	if failed {
		os.Exit(1)
	}
	fmt.Println("ok", n)
}
`)
	return []byte(b.String())
}
