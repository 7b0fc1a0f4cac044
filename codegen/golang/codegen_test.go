package golang

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden outputs in testdata")

// goldenOut is the name of the expected output inside a golden archive.
const goldenOut = "keys_gen.go"

// A golden archive (testdata/*.txtar) holds keys.yaml, any schema files it
// names, an optional "options" file ("package: x" and "client: none"
// lines) and the expected output keys_gen.go. Refresh outputs with
// go test ./codegen/golang -update.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	// Every output is also compiled and vetted, in one go invocation.
	vetDir := mkTempPackageDir(t)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got := generateArchive(t, file, ar)
		if got == nil {
			continue
		}
		i := slices.IndexFunc(ar.Files, func(f txtar.File) bool { return f.Name == goldenOut })
		if *update {
			if i < 0 {
				ar.Files = append(ar.Files, txtar.File{Name: goldenOut})
				i = len(ar.Files) - 1
			}
			ar.Files[i].Data = got
			if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if i < 0 {
			t.Errorf("%s: no %s (run go test ./codegen/golang -update)", file, goldenOut)
		} else if want := ar.Files[i].Data; !bytes.Equal(got, want) {
			t.Errorf("%s: output differs from the golden file (run go test ./codegen/golang -update):\n%s",
				file, codegen.UnifiedDiff("want", "got", want, got, 64<<10))
		}
		dir := filepath.Join(vetDir, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, goldenOut), got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goVet(t, "./"+filepath.ToSlash(vetDir)+"/...")
}

// generateArchive loads the registry of an archive and generates its code
// with the archive's options.
func generateArchive(t *testing.T, file string, ar *txtar.Archive) []byte {
	t.Helper()
	fsys := fstest.MapFS{}
	opts := Options{Package: "keys"}
	for _, f := range ar.Files {
		if f.Name == "options" {
			for _, line := range strings.Split(string(f.Data), "\n") {
				k, v, _ := strings.Cut(line, ":")
				switch strings.TrimSpace(k) {
				case "package":
					opts.Package = strings.TrimSpace(v)
				case "client":
					opts.Client = strings.TrimSpace(v)
				}
			}
			continue
		}
		fsys[f.Name] = &fstest.MapFile{Data: f.Data}
	}
	reg, err := registry.Load(fsys, "keys.yaml")
	if err != nil {
		t.Errorf("%s: loading keys.yaml: %v", file, err)
		return nil
	}
	got, err := Generate(reg, opts)
	if err != nil {
		t.Errorf("%s: %v", file, err)
		return nil
	}
	again, err := Generate(reg, opts)
	if err != nil || !bytes.Equal(got, again) {
		t.Errorf("%s: Generate is not deterministic", file)
	}
	return got
}

// mkTempPackageDir makes a directory for generated packages inside this
// module (under testdata, which ./... skips), so they build against the
// module's own go.mod and go.sum and the module cache, offline.
func mkTempPackageDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("testdata", "tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// goVet runs go vet (which also type-checks) on the packages, offline.
func goVet(t *testing.T, pkgs ...string) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go not on PATH: the golden outputs must be vetted")
	}
	cmd := exec.Command(gobin, append([]string{"vet"}, pkgs...)...)
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
}

func TestGenerateOptions(t *testing.T) {
	reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte("version: 1\nfamilies:\n  - name: a\n    pattern: \"v1:a:{id}\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Package: ""}, {Package: "not valid"}, {Package: "_"}, {Package: "keys", Client: "redigo"}} {
		if _, err := Generate(reg, o); err == nil {
			t.Errorf("Generate(%+v) succeeded, want an error", o)
		}
	}
	out, err := Generate(reg, Options{Package: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := bytes.Cut(out, []byte("\n")); string(first) != Header {
		t.Errorf("first line %q, want %q", first, Header)
	}
	if n := bytes.Count(out, []byte("sha256:")); n != 1 {
		t.Errorf("the digest appears %d times, want once", n)
	}
}

func TestDigest(t *testing.T) {
	load := func(src string) *registry.Registry {
		t.Helper()
		reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return reg
	}
	base := "version: 1\nfamilies:\n  - name: a\n    pattern: \"v1:a:{id}\"\n    ttl: 1h\n  - name: b\n    pattern: \"v1:b:{id}\"\n"
	reordered := "version: 1\n# a comment\nfamilies:\n  - name: b\n    pattern: \"v1:b:{id}\"\n  - name: a\n    description: changes nothing\n    pattern: \"v1:a:{id}\"\n    ttl: {max: 60m}\n"
	changed := strings.Replace(base, "1h", "2h", 1)
	d := codegen.Digest(load(base))
	if got := codegen.Digest(load(reordered)); got != d {
		t.Errorf("reordering and comments changed the digest: %s != %s", got, d)
	}
	if got := codegen.Digest(load(changed)); got == d {
		t.Errorf("a TTL change kept the digest %s", d)
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"user-session": "UserSession", "session_id": "SessionID", "api_key": "APIKey",
		"allow_user_ids": "AllowUserIDs", "PENDING": "Pending", "magic_link": "MagicLink",
		"user-session-v1": "UserSessionV1", "1st": "X1st", "--": "",
	} {
		if got := exported(in); got != want {
			t.Errorf("exported(%q) = %q, want %q", in, got, want)
		}
	}
	taken := map[string]bool{"key": true}
	for in, want := range map[string]string{"session_id": "sessionID", "type": "type_", "string": "string_", "key": "key_", "window_2": "window2"} {
		if got := localName(in, taken); got != want {
			t.Errorf("localName(%q) = %q, want %q", in, got, want)
		}
	}
}
