package typescript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/keyreg/keyreg/codegen/vectors"
)

// TestVectors compiles the module of every registry the shared vectors
// cover, for each client, with tsc --strict, and runs every vector under
// node: build, parse, parse of build, the refusal of every invalid value
// and non-key, and the glob.
func TestVectors(t *testing.T) {
	tc := needToolchain(t)
	p := tc.project(t)
	type run struct{ mod, vec, names string }
	var runs []run
	for _, f := range vectors.Files() {
		for _, client := range []string{ClientRedis, ClientIORedis, ClientNone} {
			src, req := generate(t, f.Registry, client)
			m := modName(f.Registry, client)
			write(t, filepath.Join(p.dir, m+".ts"), string(src))
			if client != ClientRedis {
				continue // the builders are the same; one run per registry
			}
			names := filepath.Join(p.dir, m+".names.json")
			write(t, names, marshal(t, namesOf(t, req)))
			runs = append(runs, run{filepath.Join(p.dir, "out", m+".js"), filepath.Join("..", "..", f.Vectors), names})
		}
	}
	p.compile()
	script, err := filepath.Abs(filepath.Join("testdata", "vectors.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		vec, err := filepath.Abs(r.vec)
		if err != nil {
			t.Fatal(err)
		}
		out := p.node(nil, script, r.mod, vec, r.names)
		var counts struct{ Families, Cases, Ambiguous, Invalid, NonKeys int }
		if err := json.Unmarshal([]byte(out), &counts); err != nil {
			t.Fatalf("%s: %v: %q", r.vec, err, out)
		}
		var doc vectors.Doc
		raw, _ := os.ReadFile(vec)
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if counts.Families != len(doc.Families) || counts.Families == 0 || counts.Cases == 0 {
			t.Errorf("%s: ran %+v of %d families", r.vec, counts, len(doc.Families))
		}
		t.Logf("%s: %+v", filepath.Base(r.vec), counts)
	}
}
