package vectors_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/codegen/golang"
	"github.com/keyreg/keyreg/codegen/python"
	"github.com/keyreg/keyreg/codegen/typescript"
	"github.com/keyreg/keyreg/codegen/vectors"
	"github.com/keyreg/keyreg/internal/testenv"
)

const (
	pyHint  = "the cross-language test needs python3 with redis-py: apt-get install python3-redis"
	npmHint = "the cross-language test needs node and the npm packages of codegen/typescript/testdata/npm: " +
		"run scripts/test.sh, or: mkdir -p ~/.cache/keyreg-npm && cp codegen/typescript/testdata/npm/package*.json ~/.cache/keyreg-npm && (cd ~/.cache/keyreg-npm && npm ci)"
)

// xjob is one build or parse asked of one language: a build job has
// Args (an int as its decimal text, Ints saying which), a parse job Key.
type xjob struct {
	Mod  string   `json:"mod"`
	Fn   string   `json:"fn"`
	Ints []bool   `json:"ints,omitempty"`
	Args []string `json:"args,omitempty"`
	Key  *string  `json:"key,omitempty"`
}

// xresult is a job's result: the key built, the parameters parsed (an
// int as its decimal text), or the error.
type xresult struct {
	Key   *string  `json:"key"`
	Args  []string `json:"args"`
	Error string   `json:"error"`
}

// xcase is a case of the vectors with each language's builder and parser.
type xcase struct {
	file, family string
	args         []string
	ints         []bool
	mod          string
	build, parse map[string]string // by language
}

// xlang runs build or parse jobs, all in one process.
type xlang struct {
	name string
	run  func(t *testing.T, mode string, jobs []xjob) []xresult
}

// TestCrossLanguageRoundTrip generates Python, TypeScript (client none)
// and Go (client none) code for every registry of the shared vectors
// (this repository's keys.yaml with its presets, examples/locks and the
// hostile registry); each language builds the key of every case from its
// args, and the two others parse those keys: the parameters they return
// must be the args the builder was given, ints compared as decimal text
// (int64 and bigint included). The three languages' keys must also be the
// same bytes.
func TestCrossLanguageRoundTrip(t *testing.T) {
	py := findPython(t)
	node, modules := findNode(t)
	dir := t.TempDir()
	pyDir, tsDir, goDir := filepath.Join(dir, "py"), filepath.Join(dir, "ts"), filepath.Join(dir, "go")
	for _, d := range []string{pyDir, tsDir, goDir} {
		must(t, os.MkdirAll(d, 0o755))
	}
	var cases []xcase
	var goTable strings.Builder
	var goImports []string
	for i, f := range vectors.Files() {
		reg, req := load(t, f.Registry)
		d, err := vectors.Build(req, f.Registry)
		if err != nil {
			t.Fatal(err)
		}
		mod := fmt.Sprintf("r%d", i)
		pyFiles, err := python.Generator{}.Generate(req)
		if err != nil {
			t.Fatal(err)
		}
		must(t, os.WriteFile(filepath.Join(pyDir, mod+".py"), pyFiles[0].Data, 0o644))
		tsFiles, err := typescript.Generator{Client: typescript.ClientNone}.Generate(req)
		if err != nil {
			t.Fatal(err)
		}
		must(t, os.WriteFile(filepath.Join(tsDir, mod+".ts"), tsFiles[0].Data, 0o644))
		goSrc, err := golang.Generate(reg, golang.Options{Package: mod, Client: golang.ClientNone, Scope: codegen.Scope{IncludePresets: true}})
		if err != nil {
			t.Fatal(err)
		}
		must(t, os.MkdirAll(filepath.Join(goDir, mod), 0o755))
		must(t, os.WriteFile(filepath.Join(goDir, mod, "keys_gen.go"), goSrc, 0o644))
		goImports = append(goImports, mod)

		names := map[string]map[string]string{}
		for lang, b := range map[string]interface {
			Builders(*codegen.Request) (map[string]string, error)
		}{"python": python.Generator{}, "typescript": typescript.Generator{}, "go": golang.Generator{Package: mod}} {
			sigs, err := b.Builders(req)
			if err != nil {
				t.Fatal(err)
			}
			for fam, sig := range sigs {
				name, _, _ := strings.Cut(strings.TrimPrefix(sig, mod+"."), "(")
				if names[fam] == nil {
					names[fam] = map[string]string{}
				}
				names[fam][lang] = name
			}
		}
		for _, vf := range d.Families {
			n := names[vf.Family]
			build := map[string]string{"python": n["python"], "typescript": n["typescript"], "go": n["go"]}
			parse := map[string]string{
				"python":     "parse_" + strings.TrimPrefix(n["python"], "build_"),
				"typescript": "parse" + strings.TrimPrefix(n["typescript"], "build"),
				"go":         "Parse" + strings.TrimPrefix(n["go"], "Build"),
			}
			for lang, fn := range build {
				if fn == "" {
					t.Fatalf("%s: no %s builder for %q", f.Registry, lang, vf.Family)
				}
			}
			ints := make([]bool, len(vf.Placeholders))
			var call []string
			for j, ph := range vf.Placeholders {
				ints[j] = ph.Type == "int"
				if ints[j] {
					call = append(call, fmt.Sprintf("int64Arg(a[%d])", j))
				} else {
					call = append(call, fmt.Sprintf("a[%d]", j))
				}
			}
			fmt.Fprintf(&goTable, "\t%s: func(a []string) (string, error) { return %s.%s(%s) },\n",
				strconv.Quote(mod+"."+build["go"]), mod, build["go"], strings.Join(call, ", "))
			fmt.Fprintf(&goTable, "\t%s: func(a []string) (string, error) { k, err := %s.%s(a[0]); return fields(k, err) },\n",
				strconv.Quote(mod+"."+parse["go"]), mod, parse["go"])
			for _, c := range vf.Cases {
				cases = append(cases, xcase{file: f.Registry, family: vf.Family, args: c.Args, ints: ints, mod: mod, build: build, parse: parse})
			}
		}
	}
	if len(cases) < 100 {
		t.Fatalf("only %d cases", len(cases))
	}

	// Go: one module, a package per registry, one binary.
	must(t, os.WriteFile(filepath.Join(goDir, "go.mod"), []byte("module crosslang\n\ngo 1.26\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(goDir, "main.go"), goCrossMain(goImports, goTable.String()), 0o644))
	gobin := filepath.Join(dir, "crosslang-go")
	cmd := exec.Command("go", "build", "-o", gobin, ".")
	cmd.Dir = goDir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// TypeScript: every module compiled together with tsc --strict.
	must(t, os.Symlink(modules, filepath.Join(tsDir, "node_modules")))
	must(t, os.WriteFile(filepath.Join(tsDir, "package.json"), []byte(`{"type": "module"}`), 0o644))
	must(t, os.WriteFile(filepath.Join(tsDir, "tsconfig.json"), []byte(`{
  "compilerOptions": {
    "strict": true, "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
    "types": ["node"], "outDir": "out", "skipLibCheck": true, "noEmitOnError": true
  },
  "include": ["*.ts"]
}`), 0o644))
	cmd = exec.Command(node, filepath.Join(modules, "typescript", "bin", "tsc"), "-p", tsDir, "--pretty", "false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc --strict: %v\n%s", err, out)
	}

	script := func(name string) string {
		p, err := filepath.Abs(filepath.Join("testdata", "crosslang", name))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	langs := []xlang{
		{"python", viaFiles(dir, py, script("crosslang.py"), pyDir)},
		{"typescript", viaFiles(dir, node, script("crosslang.mjs"), filepath.Join(tsDir, "out"))},
		{"go", viaFiles(dir, gobin)},
	}

	built := map[string][]string{}
	for _, b := range langs {
		jobs := make([]xjob, len(cases))
		for i, c := range cases {
			jobs[i] = xjob{Mod: c.mod, Fn: c.build[b.name], Ints: c.ints, Args: c.args}
		}
		res := b.run(t, "build", jobs)
		keys := make([]string, len(cases))
		for i, r := range res {
			if r.Key == nil {
				t.Fatalf("%s: %s: %s build(%q) refused: %s", b.name, cases[i].file, cases[i].family, cases[i].args, r.Error)
			}
			keys[i] = *r.Key
		}
		built[b.name] = keys
		for _, p := range langs {
			if p.name == b.name {
				continue
			}
			jobs := make([]xjob, len(cases))
			for i, c := range cases {
				jobs[i] = xjob{Mod: c.mod, Fn: c.parse[p.name], Key: &keys[i]}
			}
			failures := 0
			for i, r := range p.run(t, "parse", jobs) {
				if r.Error != "" || !sameArgs(r.Args, cases[i].args) {
					if failures++; failures <= 20 {
						t.Errorf("%s builds %q from %s %s args %q; %s parses it as %q (error %q)",
							b.name, keys[i], cases[i].file, cases[i].family, cases[i].args, p.name, r.Args, r.Error)
					}
				}
			}
			t.Logf("%d keys built in %s parsed in %s: %d differ", len(cases), b.name, p.name, failures)
		}
	}
	for i, c := range cases {
		if built["python"][i] != built["typescript"][i] || built["python"][i] != built["go"][i] {
			t.Errorf("%s %s args %q: python builds %q, typescript %q, go %q",
				c.file, c.family, c.args, built["python"][i], built["typescript"][i], built["go"][i])
		}
	}
}

// sameArgs compares parsed parameters with a case's args, an empty list
// and none being the same.
func sameArgs(got, want []string) bool {
	return len(got) == len(want) && (len(got) == 0 || reflect.DeepEqual(got, want))
}

// viaFiles runs "prog [args...] mode jobs.json out.json" and reads the
// results, one per job.
func viaFiles(dir, prog string, args ...string) func(t *testing.T, mode string, jobs []xjob) []xresult {
	return func(t *testing.T, mode string, jobs []xjob) []xresult {
		t.Helper()
		data, err := json.Marshal(jobs)
		if err != nil {
			t.Fatal(err)
		}
		in, out := filepath.Join(dir, "jobs.json"), filepath.Join(dir, "results.json")
		must(t, os.WriteFile(in, data, 0o644))
		_ = os.Remove(out)
		cmd := exec.Command(prog, append(args, mode, in, out)...)
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(prog), mode, err, bounded(stderr.Bytes()))
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var res []xresult
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatalf("%s %s: %v", filepath.Base(prog), mode, err)
		}
		if len(res) != len(jobs) {
			t.Fatalf("%s %s: %d results for %d jobs", filepath.Base(prog), mode, len(res), len(jobs))
		}
		return res
	}
}

func bounded(b []byte) string {
	if len(b) > 8000 {
		return string(b[:8000]) + "\n[cut]"
	}
	return string(b)
}

// findPython returns a python3 that imports redis (the generated module
// imports redis-py even without accessors being used): the first on PATH,
// or /usr/bin/python3, as codegen/python's tests do.
func findPython(t *testing.T) string {
	t.Helper()
	var cands []string
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/bin/python3")
	for _, c := range cands {
		if exec.Command(c, "-c", "import redis, redis.asyncio, redis.lock").Run() == nil {
			return c
		}
	}
	testenv.Missing(t, pyHint)
	return ""
}

// findNode returns node and the node_modules of the npm cache
// ($KEYREG_NPM_DIR, default ~/.cache/keyreg-npm) that scripts/test.sh
// fills from codegen/typescript/testdata/npm.
func findNode(t *testing.T) (node, modules string) {
	t.Helper()
	node = testenv.LookPath(t, npmHint, "node")
	dir := os.Getenv("KEYREG_NPM_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "keyreg-npm")
	}
	want, err := os.ReadFile(filepath.Join(root, "codegen", "typescript", "testdata", "npm", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "package-lock.json")); err != nil || !bytes.Equal(got, want) {
		testenv.Missing(t, npmHint+" (the cache at "+dir+" is missing or holds other versions)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "typescript", "bin", "tsc")); err != nil {
		testenv.Missing(t, npmHint)
	}
	return node, filepath.Join(dir, "node_modules")
}

// goCrossMain is the Go side of the round trip: "crosslang-go build|parse
// jobs.json out.json", with table mapping "r0.BuildX" and "r0.ParseX" to
// calls of the generated packages.
func goCrossMain(imports []string, table string) []byte {
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"os\"\n\t\"reflect\"\n\t\"strconv\"\n\n")
	for _, m := range imports {
		fmt.Fprintf(&b, "\t%q\n", "crosslang/"+m)
	}
	b.WriteString(`)

type job struct {
	Mod  string   ` + "`json:\"mod\"`" + `
	Fn   string   ` + "`json:\"fn\"`" + `
	Args []string ` + "`json:\"args\"`" + `
	Key  *string  ` + "`json:\"key\"`" + `
}

type result struct {
	Key   *string  ` + "`json:\"key,omitempty\"`" + `
	Args  []string ` + "`json:\"args,omitempty\"`" + `
	Error string   ` + "`json:\"error,omitempty\"`" + `
}

func int64Arg(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

// fields renders a parsed key's fields, in pattern order, as a JSON
// array of strings.
func fields(k any, err error) (string, error) {
	if err != nil {
		return "", err
	}
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
	b, err := json.Marshal(out)
	return string(b), err
}

// A builder returns the key; a parser returns its fields, encoded as JSON.
var table = map[string]func(a []string) (string, error){
`)
	b.WriteString(table)
	b.WriteString(`}

func main() {
	mode, in, outPath := os.Args[1], os.Args[2], os.Args[3]
	data, err := os.ReadFile(in)
	if err != nil {
		panic(err)
	}
	var jobs []job
	if err := json.Unmarshal(data, &jobs); err != nil {
		panic(err)
	}
	out := make([]result, len(jobs))
	for i, j := range jobs {
		fn := table[j.Mod+"."+j.Fn]
		if fn == nil {
			panic(fmt.Sprintf("no %s.%s", j.Mod, j.Fn))
		}
		if mode == "build" {
			k, err := fn(j.Args)
			if err != nil {
				out[i].Error = err.Error()
			} else {
				out[i].Key = &k
			}
			continue
		}
		enc, err := fn([]string{*j.Key})
		if err != nil {
			out[i].Error = err.Error()
			continue
		}
		if err := json.Unmarshal([]byte(enc), &out[i].Args); err != nil {
			panic(err)
		}
	}
	res, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(outPath, res, 0o644); err != nil {
		panic(err)
	}
}
`)
	return []byte(b.String())
}
