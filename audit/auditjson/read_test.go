package auditjson

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/audit"
)

// documentedExample returns the one json example of docs/audit-report.md.
func documentedExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "audit-report.md"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(b), "```")
	for i := 1; i < len(parts); i += 2 {
		if first, rest, _ := strings.Cut(parts[i], "\n"); first == "json" {
			return rest
		}
	}
	t.Fatal("docs/audit-report.md has no json example")
	return ""
}

// TestAuditDocsSketches reads the documented example back: its sketches
// must be ones keyreg could have written, with the percentiles shown.
func TestAuditDocsSketches(t *testing.T) {
	var doc Document
	if err := json.Unmarshal([]byte(documentedExample(t)), &doc); err != nil {
		t.Fatal(err)
	}
	r, err := doc.Report()
	if err != nil {
		t.Fatalf("the documented example does not read back: %v", err)
	}
	for i, ty := range doc.Types {
		for _, d := range []struct {
			doc distJSON
			s   *audit.Sketch
		}{{ty.Bytes, &r.Types[i].BytesDist}, {ty.Elements, &r.Types[i].ElementsDist}} {
			got := distOf(d.s, d.doc.Sum)
			if got.P50 != d.doc.P50 || got.P90 != d.doc.P90 || got.P99 != d.doc.P99 || got.Max != d.doc.Max || got.Measured != d.doc.Measured {
				t.Errorf("type %s: documented %+v, its sketch says %+v", ty.Type, d.doc, got)
			}
		}
	}
}
