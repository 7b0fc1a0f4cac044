package typescript

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/internal/testenv"
	"github.com/keyreg/keyreg/registry"
)

// toolchain is the npm cache scripts/test.sh fills with npm ci from
// testdata/npm: typescript, node-redis 4 ("redis"), 5 ("redis5") and 6
// ("redis6", npm aliases), ioredis, @types/node.
type toolchain struct {
	node    string
	modules string // node_modules
}

const npmHint = "the TypeScript tests need node and the npm packages of codegen/typescript/testdata/npm: " +
	"run scripts/test.sh, or: mkdir -p ~/.cache/keyreg-npm && cp codegen/typescript/testdata/npm/package*.json ~/.cache/keyreg-npm && (cd ~/.cache/keyreg-npm && npm ci)"

// npmDir is where the packages are installed: $KEYREG_NPM_DIR, or
// ~/.cache/keyreg-npm.
func npmDir() string {
	if d := os.Getenv("KEYREG_NPM_DIR"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "keyreg-npm")
}

func needToolchain(t *testing.T) toolchain {
	t.Helper()
	node := testenv.LookPath(t, npmHint, "node")
	dir := npmDir()
	want, err := os.ReadFile(filepath.Join("testdata", "npm", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil || !bytes.Equal(got, want) {
		testenv.Missing(t, npmHint+" (the cache at "+dir+" is missing or holds other versions)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "typescript", "bin", "tsc")); err != nil {
		testenv.Missing(t, npmHint)
	}
	return toolchain{node: node, modules: filepath.Join(dir, "node_modules")}
}

// project is a directory of TypeScript files compiled together.
type project struct {
	t   *testing.T
	tc  toolchain
	dir string
}

// nodeRedis are the node-redis versions every real-server test runs: the
// npm package (an alias of redis in testdata/npm) a project imports as
// "redis". The names are those of the subtests.
var nodeRedis = []struct{ name, pkg string }{
	{"redis4", "redis"},
	{"redis5", "redis5"},
	{"redis6", "redis6"},
}

func (tc toolchain) project(t *testing.T) *project {
	return tc.projectWith(t, "redis")
}

// projectWith is a project whose "redis" is the npm package redisPkg
// (see nodeRedis): its node_modules links every package of the cache,
// and "redis" to redisPkg's directory. node and tsc resolve a link to its
// real path, so the version's own @redis/client (nested in its
// directory) is the one loaded.
func (tc toolchain) projectWith(t *testing.T, redisPkg string) *project {
	dir := t.TempDir()
	nm := filepath.Join(dir, "node_modules")
	if redisPkg == "redis" {
		if err := os.Symlink(tc.modules, nm); err != nil {
			t.Fatal(err)
		}
	} else {
		entries, err := os.ReadDir(tc.modules)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(nm, 0o755); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range entries {
			target := e.Name()
			switch e.Name() {
			case "redis":
				continue
			case redisPkg:
				found = true
			}
			if err := os.Symlink(filepath.Join(tc.modules, target), filepath.Join(nm, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
		if !found {
			testenv.Missing(t, npmHint+" (no "+redisPkg+" in "+tc.modules+")")
		}
		if err := os.Symlink(filepath.Join(tc.modules, redisPkg), filepath.Join(nm, "redis")); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "package.json"), `{"type": "module"}`)
	// The @redis/client node loads for this project's "redis" must be
	// redisPkg's own.
	probe := exec.Command(tc.node, "--input-type=module", "-e",
		`import { createRequire } from "node:module"; const r = createRequire(process.cwd() + "/x.js"); console.log(createRequire(r.resolve("redis")).resolve("@redis/client"))`)
	probe.Dir = dir
	out, err := probe.Output()
	if err != nil {
		t.Fatalf("resolving @redis/client: %v", err)
	}
	want := filepath.Join(tc.modules, "@redis", "client") + string(filepath.Separator)
	if redisPkg != "redis" {
		want = filepath.Join(tc.modules, redisPkg, "node_modules", "@redis", "client") + string(filepath.Separator)
	}
	if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, want) {
		t.Fatalf("the project of %s loads %s, want one under %s", redisPkg, got, want)
	}
	write(t, filepath.Join(dir, "tsconfig.json"), `{
  "compilerOptions": {
    "strict": true, "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
    "types": ["node"], "outDir": "out", "skipLibCheck": true, "noEmitOnError": true
  },
  "include": ["*.ts"], "exclude": ["*.ts.txt"]
}`)
	return &project{t: t, tc: tc, dir: dir}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// compile runs tsc --strict on the project (emitting JavaScript into out/
// only when there is no error) and fails the test on any diagnostic.
func (p *project) compile() {
	p.t.Helper()
	cmd := exec.Command(p.tc.node, filepath.Join(p.tc.modules, "typescript", "bin", "tsc"), "-p", p.dir, "--strict", "--pretty", "false")
	if out, err := cmd.CombinedOutput(); err != nil {
		p.t.Fatalf("tsc --strict: %v\n%s", err, bounded(out))
	}
}

// node runs a script of the project with args and returns its stdout.
func (p *project) node(env []string, script string, args ...string) string {
	p.t.Helper()
	cmd := exec.Command(p.tc.node, append([]string{script}, args...)...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		p.t.Fatalf("node %s: %v\n%s\n%s", script, err, bounded(stdout.Bytes()), bounded(stderr.Bytes()))
	}
	return stdout.String()
}

func bounded(b []byte) string {
	if len(b) > 8000 {
		return string(b[:8000]) + "\n[cut]"
	}
	return string(b)
}

// generate returns the module for the registry at path (repository
// relative), every family in scope.
func generate(t *testing.T, path, client string) ([]byte, *codegen.Request) {
	t.Helper()
	reg, err := registry.Load(os.DirFS(filepath.Join("..", "..", filepath.Dir(path))), filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	req, err := codegen.NewRequest(reg, codegen.Scope{IncludePresets: true})
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generator{Client: client}.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	return files[0].Data, req
}

// famNames are the generated names the vectors script calls.
type famNames struct {
	Build  string   `json:"build"`
	Parse  string   `json:"parse"`
	Glob   string   `json:"glob"`
	Fields []string `json:"fields"`
}

func namesOf(t *testing.T, req *codegen.Request) map[string]famNames {
	v, err := newView(req)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]famNames{}
	for _, f := range v.all {
		n := famNames{Build: "build" + f.Ident, Parse: "parse" + f.Ident, Glob: f.Const + "_GLOB", Fields: []string{}}
		for _, p := range f.Params {
			n.Fields = append(n.Fields, p.Field)
		}
		out[f.Name] = n
	}
	return out
}

func marshal(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func modName(path, client string) string {
	return strings.NewReplacer("/", "_", ".", "_").Replace(path) + "_" + client
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	write(t, to, string(b))
}
