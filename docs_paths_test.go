package keyreg_test

import (
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"
)

// notInRepo lists the path-like names the docs may use although no tracked
// file has them, each for a stated reason. Everything else a doc names must
// be in the repository.
var notInRepo = map[string]string{
	"site/":                          "output: what keyreg docs --out site writes",
	"site/index.html":                "output: what keyreg docs --out site writes",
	"DIR/index.html":                 "output: keyreg docs --out DIR",
	"DIR/index.md":                   "output: keyreg docs --out DIR --format markdown",
	"svc/api":                        "example: a monorepo's service directory",
	"svc/api/keys.yaml":              "example: a registry in a monorepo's service directory",
	"config/keys.yaml":               "example: a registry in a subdirectory of the user's repository",
	"deploy/keys.yaml":               "example: a registry in a subdirectory of the user's repository",
	"report/csv.go":                  "example to create: the new-format recipe",
	"testdata/mixed.csv.golden":      "example to create: the new-format recipe",
	"testdata/empty.csv.golden":      "example to create: the new-format recipe",
	"testdata/rules.list.csv.golden": "example to create: the new-format recipe",
	"keyreg/audit/":                  "identifier: a SARIF rule category",
	"keyreg/breaking/":               "identifier: a SARIF rule category",
	"keyreg/lint/":                   "identifier: a SARIF rule category",
	"keyreg-baseline/v1":             "identifier: the baseline format's name",
	"a/":                             "identifier: a unified diff's path prefix",
	"b/":                             "identifier: a unified diff's path prefix",
	"a/tmp/x.go":                     "example: the diff path of --out /tmp/x.go",
	"invoice-run/2026-03":            "a value a word placeholder matches",
	"actions/checkout":               "a GitHub action",
	"actions/upload-artifact":        "a GitHub action",
}

var (
	fencedBlock = regexp.MustCompile("(?s)```.*?```")
	inlineCode  = regexp.MustCompile("`([^`\\s]+)`")
	mdLink      = regexp.MustCompile(`\]\(([^)\s#]+)(?:#[^)]*)?\)`)
	pathLike    = regexp.MustCompile(`^[A-Za-z0-9_.@/-]+$`)
	fileExt     = regexp.MustCompile(`\.(go|md|yaml|yml|json|sh|txtar|rdb|png|xsd|html)$`)
)

// TestDocsNameRepositoryFiles checks that every file or directory README.md
// and docs/ name, in a link or as inline code, is in the repository (by its
// path, or by a trailing part of a tracked path such as `text.go` or
// `presets/celery.yaml`), or is listed in notInRepo with its reason. Go
// import paths, URLs, absolute paths and the contents of code blocks (commands
// a reader types) are not file references.
func TestDocsNameRepositoryFiles(t *testing.T) {
	tracked := gitFiles(t)
	std := map[string]bool{}
	out, err := exec.Command("go", "list", "std").Output()
	if err != nil {
		t.Fatalf("go list std: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		std[p] = true
	}
	known := func(name string) bool {
		name = strings.TrimSuffix(name, "/")
		for _, f := range tracked {
			if f == name || strings.HasSuffix(f, "/"+name) || strings.HasPrefix(f, name+"/") ||
				strings.Contains("/"+f, "/"+name+"/") {
				return true
			}
		}
		return false
	}
	used := map[string]bool{}
	for _, doc := range tracked {
		if doc != "README.md" && !(strings.HasPrefix(doc, "docs/") && strings.HasSuffix(doc, ".md")) {
			continue
		}
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := fencedBlock.ReplaceAllString(string(data), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, ":") {
				continue // a URL
			}
			p := path.Clean(path.Join(path.Dir(doc), target))
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links to %s, which is not in the repository", doc, target)
			}
		}
		for _, m := range inlineCode.FindAllStringSubmatch(text, -1) {
			name := m[1]
			if !pathLike.MatchString(name) || !(strings.Contains(name, "/") || fileExt.MatchString(name)) {
				continue
			}
			first, _, _ := strings.Cut(name, "/")
			if std[name] || strings.Contains(first, ".") || strings.HasPrefix(name, "/") ||
				strings.HasPrefix(name, "@") || strings.Contains(name, "@") {
				continue // an import path, an absolute path, a package or action version
			}
			if _, ok := notInRepo[name]; ok {
				used[name] = true
				continue
			}
			if !known(name) {
				t.Errorf("%s names `%s`, which no tracked file matches (add it, fix the doc, or list it in notInRepo with a reason)", doc, name)
			}
		}
	}
	for name := range notInRepo {
		if !used[name] {
			t.Errorf("notInRepo lists %q, which no doc names any more: remove it", name)
		}
	}
}

func gitFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Fatalf("git ls-files (the docs are checked against the tracked files): %v", err)
	}
	return strings.Fields(string(out))
}
