package python

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/codegen/vectors"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/internal/testenv"
	"github.com/keyreg/keyreg/registry"
)

const pyHint = "the Python tests need python3 with redis-py and mypy: apt-get install python3-redis python3-mypy python3-typeshed"

var (
	pyOnce sync.Once
	pyPath string
)

// python returns a python3 that imports redis, redis.asyncio and mypy,
// with the types of redis-py (Debian's python3-typeshed ships types-redis
// 4.3, which mypy finds as redis-stubs). A pyenv shim first on PATH may
// lack them, so /usr/bin/python3 is tried too.
func python(t testing.TB) string {
	t.Helper()
	pyOnce.Do(func() {
		var cands []string
		if p, err := exec.LookPath("python3"); err == nil {
			cands = append(cands, p)
		}
		cands = append(cands, "/usr/bin/python3")
		for _, c := range cands {
			out, err := exec.Command(c, "-c", "import redis, redis.asyncio, redis.lock, mypy, importlib.util as u; assert u.find_spec('redis-stubs') or u.find_spec('redis_stubs') or __import__('os').path.isdir(__import__('os').path.join(__import__('os').path.dirname(redis.__file__), '..', 'redis-stubs'))").CombinedOutput()
			if err == nil {
				pyPath = c
				return
			}
			_ = out
		}
	})
	if pyPath == "" {
		testenv.Missing(t, pyHint)
	}
	return pyPath
}

func root(t testing.TB) string {
	t.Helper()
	abs, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func loadReq(t testing.TB, path string, scope codegen.Scope) *codegen.Request {
	t.Helper()
	reg, err := registry.LoadFile(filepath.Join(root(t), path))
	if err != nil {
		t.Fatal(err)
	}
	req, err := codegen.NewRequest(reg, scope)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// generate writes the module of req into a new directory as keys_gen.py.
func generate(t testing.TB, req *codegen.Request) string {
	t.Helper()
	files, err := Generator{}.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Generator{}.Generate(req)
	if err != nil || string(again[0].Data) != string(files[0].Data) {
		t.Fatal("Generate is not deterministic")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ModuleName), files[0].Data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func run(t testing.TB, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "MYPY_CACHE_DIR="+filepath.Join(dir, ".mypy_cache"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// mypyStrict type-checks the files of dir with mypy --strict, and
// compiles them.
func mypyStrict(t testing.TB, dir string, files ...string) {
	t.Helper()
	py := python(t)
	for _, f := range files {
		run(t, dir, py, "-m", "py_compile", f)
	}
	out := run(t, dir, py, append([]string{"-m", "mypy", "--strict", "--no-error-summary"}, files...)...)
	if strings.TrimSpace(out) != "" {
		t.Fatalf("mypy --strict: %s", out)
	}
}

// TestMypyStrict: the module of every example registry and of the
// hostile one passes mypy --strict and py_compile.
func TestMypyStrict(t *testing.T) {
	python(t)
	for _, c := range []struct {
		path  string
		scope codegen.Scope
	}{
		{"keys.yaml", codegen.Scope{}},
		{"keys.yaml", codegen.Scope{IncludePresets: true}},
		{"examples/locks/keys.yaml", codegen.Scope{IncludePresets: true}},
		{"codegen/vectors/testdata/hostile.keys.yaml", codegen.Scope{IncludePresets: true}},
		{"codegen/python/testdata/channels.keys.yaml", codegen.Scope{}},
		{"codegen/python/testdata/channel-presets.keys.yaml", codegen.Scope{IncludePresets: true}},
	} {
		t.Run(fmt.Sprintf("%s presets=%v", filepath.Base(filepath.Dir(c.path+"/x")), c.scope.IncludePresets), func(t *testing.T) {
			req := loadReq(t, c.path, c.scope)
			dir := generate(t, req)
			mypyStrict(t, dir, ModuleName)
			if strings.Contains(c.path, "channel") {
				src, err := os.ReadFile(filepath.Join(dir, ModuleName))
				must(t, err)
				if n := strings.Count(string(src), "\ndef subscribe_"); n < 3 {
					t.Errorf("only %d subscribers", n)
				}
			}
		})
	}
}

// TestVectors runs the committed shared vectors on the generated module:
// build, parse (of str and bytes), parse of build, refusal of every
// invalid value and of every non-key, the glob and the pattern.
func TestVectors(t *testing.T) {
	py := python(t)
	total := 0
	for _, f := range vectors.Files() {
		t.Run(filepath.Base(f.Vectors), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root(t), f.Vectors))
			if err != nil {
				t.Fatal(err)
			}
			var d vectors.Doc
			if err := json.Unmarshal(data, &d); err != nil {
				t.Fatal(err)
			}
			req := loadReq(t, f.Registry, codegen.Scope{IncludePresets: true})
			dir := generate(t, req)
			v, err := newView(req)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]string{}
			for _, fv := range v.all {
				names[fv.f.Name] = fv.snake
			}
			nb, _ := json.Marshal(names)
			if err := os.WriteFile(filepath.Join(dir, "names.json"), nb, 0o644); err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, vf := range d.Families {
				want += 2*len(vf.Cases) + 2*len(vf.Ambiguous) + len(vf.Invalid) + len(vf.NonKeys) + 1
			}
			if want < 10 {
				t.Fatalf("only %d vectors in %s", want, f.Vectors)
			}
			out := run(t, dir, py, filepath.Join(root(t), "codegen/python/testdata/vectors.py"), dir, filepath.Join(root(t), f.Vectors), filepath.Join(dir, "names.json"))
			if got := strings.TrimSpace(out); got != fmt.Sprintf("ok %d", want) {
				t.Errorf("vectors: %s (want ok %d)", got, want)
			}
			total += want
			t.Logf("%d vector checks passed", want)
		})
	}
}

// TestBuilders: the Documenter names each builder as the module declares it.
func TestBuilders(t *testing.T) {
	req := loadReq(t, "keys.yaml", codegen.Scope{IncludePresets: true})
	m, err := Generator{}.Builders(req)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m["cart-items"], "build_cart_items(user_id: int) -> str"; got != want {
		t.Errorf("cart-items: %q, want %q", got, want)
	}
	files, _ := Generator{}.Generate(req)
	for fam, sig := range m {
		if !strings.Contains(string(files[0].Data), "\ndef "+sig+":\n") {
			t.Errorf("%s: the module does not declare %q", fam, sig)
		}
	}
	if len(m) != len(req.Families) {
		t.Errorf("%d builders for %d families", len(m), len(req.Families))
	}
}

// TestPackage: a package directory gets __init__.py and py.typed, and a
// program importing it type-checks against the package's own types.
func TestPackage(t *testing.T) {
	req := loadReq(t, "keys.yaml", codegen.Scope{})
	files, err := Generator{Package: true}.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != PackageInit || files[1].Name != PyTyped || len(files[1].Data) != 0 {
		t.Fatalf("package files: %+v", files)
	}
	dir := t.TempDir()
	pkg := filepath.Join(dir, "keys")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(pkg, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	use := `import keys

k: str = keys.build_cart_items(42)
p: keys.CartItemsKey = keys.parse_cart_items(k)
n: int = p.user_id
`
	if err := os.WriteFile(filepath.Join(dir, "use.py"), []byte(use), 0o644); err != nil {
		t.Fatal(err)
	}
	mypyStrict(t, dir, "use.py")
	// A wrong use is an error: the types are seen, not Any.
	bad := "import keys\n\nn: int = keys.build_cart_items(42)\n"
	if err := os.WriteFile(filepath.Join(dir, "bad.py"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python(t), "-m", "mypy", "--strict", "bad.py")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(strings.ToLower(string(out)), "incompatible types") {
		t.Errorf("mypy accepted a str as an int: %v\n%s", err, out)
	}
}

var update = flag.Bool("update", false, "rewrite examples/python/keys from keys.yaml")

// TestExampleFresh: examples/python/keys is the package gen python writes
// for the repository's keys.yaml (go test ./codegen/python -run
// TestExampleFresh -update rewrites it).
func TestExampleFresh(t *testing.T) {
	req := loadReq(t, "keys.yaml", codegen.Scope{})
	files, err := Generator{Package: true}.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		p := filepath.Join(root(t), "examples/python/keys", f.Name)
		if *update {
			must(t, os.WriteFile(p, f.Data, 0o644))
			continue
		}
		old, err := os.ReadFile(p)
		if err != nil || string(old) != string(f.Data) {
			t.Errorf("%s is stale: go test ./codegen/python -run TestExampleFresh -update (or keyreg gen python --out examples/python/keys)", p)
		}
	}
}

// TestExampleProgram type-checks examples/python/sessions.py against the
// package and runs it on a real server.
func TestExampleProgram(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	for _, name := range []string{"sessions.py", "keys/__init__.py", "keys/py.typed"} {
		b, err := os.ReadFile(filepath.Join(root(t), "examples/python", name))
		if err != nil {
			t.Fatal(err)
		}
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	mypyStrict(t, dir, "sessions.py")
	srv := redistest.Standalone(t)
	cmd := exec.Command(py, "sessions.py")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REDIS_URL="+srv.URL(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sessions.py: %v\n%s", err, out)
	}
	for _, want := range []string{": user 42, ttl 3", "with fence 1", "asyncio read: password"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("sessions.py printed %q, without %q", out, want)
		}
	}
}

// TestAmbiguousBuild: when a value may contain the literal after it, the
// builder parses its key back and refuses values another parse would
// read differently, as the Go backend does; the parser's matcher gives
// the earlier placeholder the longest value, in time linear in the key.
func TestAmbiguousBuild(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	must(t, os.WriteFile(reg, []byte("version: 1\nowners: {o: {contact: x}}\nfamilies:\n"+
		"  - {name: pair, description: d, pattern: \"v1:p:{a:word}-{b:word}\", owner: o, type: string, encoding: text, ttl: persistent}\n"+
		"  - {name: triple, description: d, pattern: \"v1:t:{a:any}:{b:any}:{c:any}:end\", owner: o, type: string, encoding: text, ttl: persistent}\n"), 0o644))
	r, err := registry.LoadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := codegen.NewRequest(r, codegen.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	gen := generate(t, req)
	prog := `import keys_gen as k
assert k.build_pair("x-y", "z") == "v1:p:x-y-z"
assert k.parse_pair("v1:p:x-y-z") == k.PairKey("x-y", "z")
try:
    k.build_pair("x", "y-z")
    raise SystemExit("an ambiguous key was built")
except ValueError as e:
    assert "ambiguous" in str(e), e
assert k.parse_triple("v1:t:a:b:c:d:end") == k.TripleKey("a:b", "c", "d")
# A key a backtracking regex would take hours over (cubic in its length)
# is refused by the matcher, which is linear.
try:
    k.parse_triple("v1:t:" + ":" * 20000 + "x")
    raise SystemExit("a non-key parsed")
except ValueError:
    pass
print("ok")
`
	if out := run(t, gen, py, "-c", prog); strings.TrimSpace(out) != "ok" {
		t.Errorf("%s", out)
	}
}
