package keyreg_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/keyreg/keyreg"

// layer gives each package of the module its place in the import order of
// docs/architecture.md: a package imports only packages of a lower layer.
// A package missing here fails the test, so a new one has to be placed.
var layer = map[string]int{
	"":                     0, // the root: the embedded example registry
	"diag":                 0,
	"schemas":              0,
	"internal/gitfs":       0,
	"internal/synth":       0,
	"internal/redistest":   1, // above internal/testenv
	"internal/secret":      0,
	"internal/page":        0, // the HTML pages' shell, CSP and SVG charts
	"internal/browsertest": 1, // headless Chromium for the tests of HTML pages; above internal/testenv
	"internal/testenv":     0, // what a test does when a tool is missing
	"source":               0, // the key facts every audit.Source yields
	"registry":             1,
	"compat":               2,
	"payload":              2,
	"rules":                3,
	"scanner":              3,
	"snapshot":             3, // reads RDB files as a stream of key facts, beside scanner
	"audit":                4,
	"codegen":              3, // the codegen request, the Generator interface, the diff
	"codegen/golang":       4, // keyreg gen go: a backend, above the request it generates from
	"codegen/jsongen":      4, // keyreg gen json: a backend, above the request it writes
	"codegen/python":       4, // keyreg gen python: a backend, above the request it generates from
	"codegen/vectors":      4, // the shared test vectors every backend runs, built from the request
	"codegen/typescript":   4, // keyreg gen typescript: a backend, above the request it generates from
	"internal/demo":        4,
	"infer":                4, // keyspace facts -> a first registry (keyreg init, suggest)
	"audit/auditjson":      5, // the json audit report: encoder and reader, above audit
	"remedy":               5, // prune, expire, restore: the only package that writes to Redis
	"report":               6, // renders audit.Report, so it sits above audit
	"serve":                6, // keyreg serve's exporter: audits on a schedule, serves metrics; reports rendered by cmd
	"cmd/keyreg":           7,
	"bench":                7,
	"examples/keys":        7, // generated code, as a user's program would hold it
	"examples/locks":       7, // generated locks and stream consumers, from its own keys.yaml
	"examples/sessions":    8,

	"catalogue":                  6, // keyreg docs: the registry's catalogue; beside report, the only importer of codegen but cmd
	"explain":                    5, // keyreg explain's facts: the registry's and, from audit.CheckKey, the live ones
	"internal/render":            5, // what report and catalogue share: text helpers, markdown escaper, audit rows and charts, template parts
	"internal/render/rendertest": 5, // the fixtures and page checks of report's and catalogue's tests
	// keyreg vet
	"vet":                   5, // the analyzer: above codegen/golang, whose builder names it offers
	"vet/plugin":            6, // the analyzer as a golangci-lint module plugin
	"cmd/keyreg-vet":        7, // the analyzer as a go vet tool (singlechecker)
	"vet/internal/benchmod": 7, // writes the module docs/benchmarks.md times keyreg vet on
}

// apart lists, per package, the packages of a lower layer it still may not
// import: the audit reads key facts through audit.Source and the types of
// package source, never through one of the sources that implement it.
var apart = map[string][]string{
	"audit": {"scanner", "snapshot"},
	// report renders documents; the catalogue, not report, names the
	// builders of the codegen backends.
	"report": {"codegen", "codegen/golang", "codegen/jsongen"},
}

// fence lists, per third-party module, the packages that may import it.
// A third-party module missing here fails the test: adding a dependency
// is a decision to write down.
var fence = map[string][]string{
	"github.com/spf13/cobra":                   {"cmd/keyreg"},
	"github.com/spf13/pflag":                   {"cmd/keyreg"},
	"golang.org/x/term":                        {"cmd/keyreg"},
	"github.com/redis/go-redis/v9":             {"scanner", "remedy", "internal/redistest", "cmd/keyreg", "bench", "examples/keys", "examples/locks", "examples/sessions"},
	"github.com/olekukonko/tablewriter":        {"report"},
	"go.yaml.in/yaml/v3":                       {"registry"},
	"github.com/santhosh-tekuri/jsonschema/v6": {"registry", "payload", "compat"},
	"golang.org/x/text":                        {"registry"},
	"github.com/alicebob/miniredis/v2":         {"internal/demo"},
	"github.com/vmihailenco/msgpack/v5":        {"internal/demo"},
	"github.com/chromedp/chromedp":             {"internal/browsertest"},
	"github.com/chromedp/cdproto":              {"internal/browsertest"},
	"github.com/prometheus/client_golang":      {"serve"},
	"github.com/prometheus/exporter-toolkit":   {"serve"},
	// client_golang's own exposition packages: serve encodes each audit's metrics once (expfmt, dto).
	"github.com/prometheus/common":       {"serve"},
	"github.com/prometheus/client_model": {"serve"},

	// keyreg vet: go/analysis, and golangci-lint's plugin interface
	"golang.org/x/tools":                         {"vet", "vet/plugin", "cmd/keyreg", "cmd/keyreg-vet"},
	"github.com/golangci/plugin-module-register": {"vet/plugin"},
}

// TestLayering reads the non-test imports of every package with go list and
// fails when a package imports one of its own layer or above, or when a
// third-party package crosses its fence.
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, v := range check(strings.TrimSpace(string(out))) {
		t.Error(v)
	}
}

// check returns a violation per bad import in go list's output.
func check(list string) []string {
	var bad []string
	for line := range strings.SplitSeq(list, "\n") {
		pkgPath, imports, _ := strings.Cut(line, "\t")
		pkg := rel(pkgPath)
		l, ok := layer[pkg]
		if !ok {
			bad = append(bad, pkgPath+": not placed in a layer (layering_test.go, docs/architecture.md)")
			continue
		}
		for imp := range strings.FieldsSeq(imports) {
			switch {
			case imp == module || strings.HasPrefix(imp, module+"/"):
				il, ok := layer[rel(imp)]
				if ok && il >= l {
					bad = append(bad, pkgPath+" imports "+imp+", which is not below it")
				}
				if slices.Contains(apart[pkg], rel(imp)) {
					bad = append(bad, pkgPath+" imports "+imp+", which it must reach only through an interface (apart, layering_test.go)")
				}
			case !strings.Contains(strings.Split(imp, "/")[0], "."):
				// the standard library
			default:
				allowed, known := fenced(imp)
				switch {
				case !known:
					bad = append(bad, pkgPath+" imports "+imp+", a third-party package with no fence (layering_test.go)")
				case !slices.Contains(allowed, pkg):
					bad = append(bad, pkgPath+" imports "+imp+", allowed only in "+strings.Join(allowed, ", "))
				}
			}
		}
	}
	return bad
}

func rel(p string) string {
	if p == module {
		return ""
	}
	return strings.TrimPrefix(p, module+"/")
}

// fenced finds the fence of the module an import path belongs to.
func fenced(imp string) ([]string, bool) {
	for mod, pkgs := range fence {
		if imp == mod || strings.HasPrefix(imp, mod+"/") {
			return pkgs, true
		}
	}
	return nil, false
}

// TestLayeringHasTeeth feeds check the imports the architecture forbids.
func TestLayeringHasTeeth(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{module + "/registry\tgithub.com/spf13/cobra", "allowed only in cmd/keyreg"},
		{module + "/audit\tgithub.com/redis/go-redis/v9", "allowed only in scanner"},
		{module + "/registry\t" + module + "/scanner", "not below it"},
		{module + "/scanner\t" + module + "/rules", "not below it"},
		{module + "/audit\t" + module + "/scanner", "only through an interface"},
		{module + "/audit\t" + module + "/snapshot", "only through an interface"},
		{module + "/payload\tgithub.com/example/newdep", "no fence"},
		{module + "/newpkg\tfmt", "not placed in a layer"},
	} {
		got := check(c.line)
		if len(got) != 1 || !strings.Contains(got[0], c.want) {
			t.Errorf("check(%q) = %q, want one violation saying %q", c.line, got, c.want)
		}
	}
	if got := check(module + "/audit\t" + module + "/source " + module + "/rules fmt"); len(got) != 0 {
		t.Errorf("allowed imports reported: %q", got)
	}
}

// TestBinaryLinksNoTesting: no package of the testing tree (testing,
// testing/fstest, …) is linked into keyreg, so that test helpers never
// ship in the binary.
func TestBinaryLinksNoTesting(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./cmd/keyreg").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "testing" || strings.HasPrefix(p, "testing/") {
			t.Errorf("keyreg links %s", p)
		}
	}
}

// setLoggerOwners are the packages that may replace go-redis' process-wide
// logger (redis.SetLogger): programs and test helpers, which own their
// process. A library doing it would change the logging of every program
// that links it, as a side effect of a call.
var setLoggerOwners = []string{"cmd/keyreg", "bench", "internal/redistest"}

// TestProcessGlobals: no library package replaces go-redis' logger.
func TestProcessGlobals(t *testing.T) {
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if dir := filepath.ToSlash(filepath.Dir(p)); bytes.Contains(b, []byte("redis.SetLogger(")) && !slices.Contains(setLoggerOwners, dir) {
			t.Errorf("%s calls redis.SetLogger: only %s may replace the process-wide logger", p, strings.Join(setLoggerOwners, ", "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
