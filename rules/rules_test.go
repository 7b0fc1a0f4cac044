package rules

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/*.txtar")

// lintArchive loads the keys.yaml of a txtar archive (with its other files
// as the file system) and lints it. A registry that fails to load yields
// the loader's diagnostics.
func lintArchive(t *testing.T, ar *txtar.Archive) diag.List {
	t.Helper()
	fsys := fstest.MapFS{}
	for _, f := range ar.Files {
		fsys[f.Name] = &fstest.MapFile{Data: f.Data}
	}
	reg, err := registry.Load(fsys, "keys.yaml")
	if err != nil {
		var le *diag.ListError
		if !errors.As(err, &le) {
			t.Fatal(err)
		}
		return le.List
	}
	return Lint(reg)
}

// TestRuleCases runs testdata/<rule-id>.txtar for every rule and compares
// the findings of that rule with the archive's want section.
func TestRuleCases(t *testing.T) {
	for _, r := range All() {
		t.Run(r.ID, func(t *testing.T) {
			file := filepath.Join("testdata", r.ID+".txtar")
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatalf("every rule needs a test case: %v", err)
			}
			var got strings.Builder
			for _, d := range lintArchive(t, ar) {
				if d.Rule != r.ID {
					continue
				}
				got.WriteString(d.String())
				if d.Suppressed {
					got.WriteString(" [suppressed: " + d.Reason + "]")
				}
				got.WriteString("\n")
			}
			idx := -1
			for i, f := range ar.Files {
				if f.Name == "want" {
					idx = i
				}
			}
			if *update {
				if idx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					idx = len(ar.Files) - 1
				}
				ar.Files[idx].Data = []byte(got.String())
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if idx < 0 {
				t.Fatal("archive has no want section")
			}
			if want := string(ar.Files[idx].Data); got.String() != want {
				t.Errorf("findings of %s:\n%s\nwant:\n%s", r.ID, got.String(), want)
			}
			if got.Len() == 0 {
				t.Errorf("the case never triggers %s: every case must show the rule firing", r.ID)
			}
		})
	}
}

// TestRuleSpecs guards the rule list: unique kebab-case IDs, a doc, a
// severity, a Lint func for lint rules and a file named after the rule.
func TestRuleSpecs(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range All() {
		if seen[r.ID] {
			t.Errorf("duplicate rule %q", r.ID)
		}
		seen[r.ID] = true
		if !kebab(r.ID) {
			t.Errorf("rule ID %q is not kebab-case", r.ID)
		}
		if r.Doc == "" || strings.HasSuffix(r.Doc, ".") || strings.ToLower(r.Doc[:1]) != r.Doc[:1] {
			t.Errorf("rule %q: doc %q must be one lowercase line without a trailing period", r.ID, r.Doc)
		}
		if r.Severity == diag.Off {
			t.Errorf("rule %q has no default severity", r.ID)
		}
		if (r.Kind == KindLint) != (r.Lint != nil) {
			t.Errorf("rule %q: kind %s with Lint set = %v", r.ID, r.Kind, r.Lint != nil)
		}
		if r.Kind != KindLoad {
			src := strings.ReplaceAll(r.ID, "-", "_") + ".go"
			if _, err := os.Stat(src); err != nil {
				t.Errorf("rule %q must live in %s", r.ID, src)
			}
		}
	}
}

func kebab(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
