package typescript

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
)

var update = flag.Bool("update", false, "rewrite examples/typescript/keys.gen.ts")

const exampleDir = "../../examples/typescript"

// TestExample checks that examples/typescript/keys.gen.ts is what
// keyreg gen typescript --registry keys.yaml writes (go test
// ./codegen/typescript -run TestExample -update refreshes it), then
// compiles the example program with tsc --strict and runs it against a
// real redis-server.
func TestExample(t *testing.T) {
	reg, err := registry.Load(os.DirFS("../.."), "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req, err := codegen.NewRequest(reg, codegen.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generator{Client: ClientRedis}.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(exampleDir, "keys.gen.ts")
	if *update {
		write(t, path, string(files[0].Data))
	}
	old, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(old, files[0].Data) {
		t.Fatalf("%s is stale: go test ./codegen/typescript -run TestExample -update", path)
	}

	tc := needToolchain(t)
	p := tc.projectWith(t, "redis6") // examples/typescript/package.json's redis
	for _, f := range []string{"keys.gen.ts", "main.ts"} {
		copyFile(t, filepath.Join(exampleDir, f), filepath.Join(p.dir, f))
	}
	p.compile()
	srv := redistest.Standalone(t)
	out := p.node([]string{"REDIS_URL=" + srv.URL()}, filepath.Join(p.dir, "out", "main.js"))
	for _, want := range []string{
		"cart key v1:cart:{42}:items belongs to user 42\n",
		"refused: html-fragment-cache: locale is not a valid word value\n",
		"cached fragment: <h1>Hello</h1>\n",
		"refused: html-fragment-cache: ttl 600001ms exceeds the maximum 600000ms\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the example printed\n%s\nwithout %q", out, want)
		}
	}
	if n := srv.Client(t).PTTL(t.Context(), "v1:cache:fragment:home:en-GB").Val(); n <= 0 {
		t.Errorf("the fragment's PTTL is %v, want the family's TTL", n)
	}
}
