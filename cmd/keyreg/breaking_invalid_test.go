package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestBreakingInvalidOldJSON: with an invalid older registry, --format
// json writes a valid document holding its findings, and exits 2 (issue
// 23: stdout was empty).
func TestBreakingInvalidOldJSON(t *testing.T) {
	dir := t.TempDir()
	old, cur := filepath.Join(dir, "old.yaml"), filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(old, []byte("version: 1\nfamilies:\n  - name: a\n    pattern: \"v1:a:{id\"\n    typ: string\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cur, []byte("version: 1\nfamilies: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	a := &app{stdout: &out, stderr: &errb}
	if code := a.run(context.Background(), []string{"breaking", "--against", old, "--registry", cur, "--format", "json"}); code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, exitUsage, errb.String())
	}
	var doc struct {
		Findings []struct {
			Rule    string `json:"rule_id"`
			Path    string `json:"path"`
			Line    int    `json:"start_line"`
			Message string `json:"message"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("stdout is not a JSON document: %v\n%q", err, out.String())
	}
	rules := map[string]bool{}
	for _, f := range doc.Findings {
		rules[f.Rule] = true
		if f.Path != filepath.ToSlash(old) || f.Line < 1 {
			t.Errorf("finding at %s:%d, want a line of %s", f.Path, f.Line, old)
		}
	}
	if !rules["pattern-invalid"] || !rules["schema-invalid"] {
		t.Errorf("findings %+v, want the older registry's pattern-invalid and schema-invalid", doc.Findings)
	}
}
