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
// testdata/npm: typescript, redis (node-redis v4), ioredis, @types/node.
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

func (tc toolchain) project(t *testing.T) *project {
	dir := t.TempDir()
	if err := os.Symlink(tc.modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "package.json"), `{"type": "module"}`)
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
