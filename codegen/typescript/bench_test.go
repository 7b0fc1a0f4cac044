package typescript

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBenchmark measures build and parse per key of the generated module
// against hand-written template-literal builders and regular-expression
// parsers, and the schema check of a user-session value against a
// hand-written check of the same keywords, in one node run
// (testdata/bench.mjs), and logs the figures
// (docs/benchmarks.md). It runs only with KEYREG_TS_BENCH=1 and asserts no
// timing:
//
//	KEYREG_TS_BENCH=1 go test ./codegen/typescript -run TestBenchmark -v
func TestBenchmark(t *testing.T) {
	if os.Getenv("KEYREG_TS_BENCH") != "1" {
		t.Skip("a measurement, not a test: set KEYREG_TS_BENCH=1")
	}
	tc := needToolchain(t)
	p := tc.project(t)
	src, _ := generate(t, "keys.yaml", ClientNone)
	write(t, filepath.Join(p.dir, "keys.ts"), string(src))
	checked, _ := generate(t, "keys.yaml", ClientRedis)
	write(t, filepath.Join(p.dir, "checked.ts"), string(checked))
	p.compile()
	script, err := filepath.Abs(filepath.Join("testdata", "bench.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + p.node(nil, script, filepath.Join(p.dir, "out", "keys.js"), filepath.Join(p.dir, "out", "checked.js")))
}
