package main

import (
	"os"
	"strings"
	"testing"
)

// TestCatalogueWorkflowLint runs actionlint on the GitHub Pages workflow
// of docs/catalogue.md, so that the copy-pasteable example stays valid.
func TestCatalogueWorkflowLint(t *testing.T) {
	b, err := os.ReadFile("../../docs/catalogue.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	parts := strings.Split(string(b), "```")
	for i := 1; i < len(parts); i += 2 {
		info, body, _ := strings.Cut(parts[i], "\n")
		if info == "yaml" && strings.Contains(body, "\non:\n") {
			blocks = append(blocks, body)
		}
	}
	if len(blocks) != 1 {
		t.Fatalf("docs/catalogue.md has %d workflow examples, want 1", len(blocks))
	}
	if !strings.Contains(blocks[0], "keyreg docs ") || !strings.Contains(blocks[0], "actions/deploy-pages@") {
		t.Error("the workflow does not build the catalogue and deploy it")
	}
	for _, e := range lintDoc(t, "docs/catalogue.md", blocks[0]) {
		t.Errorf("docs/catalogue.md workflow:%d:%d: %s [%s]", e.Line, e.Column, e.Message, e.Kind)
	}
	// The check has teeth: a job that needs an unknown job is reported.
	if errs := lintDoc(t, "bad.yml", strings.Replace(blocks[0], "needs: build", "needs: no-such-job", 1)); len(errs) == 0 {
		t.Error("actionlint found nothing in a broken copy")
	}
}
