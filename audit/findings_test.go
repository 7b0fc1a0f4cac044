package audit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/rules"
)

// TestFindingPositions checks where findings point in keys.yaml and that
// their diagnostics name their family: a family's findings on its line,
// starting with `family "name":`; the unregistered-key finding on the
// families: key, not on the first family's line.
func TestFindingPositions(t *testing.T) {
	reg := testRegistry(t, `version: 1
defaults: {ttl: 1h}
families:
  - name: first
    pattern: "v1:first:{id}"
  - name: second
    pattern: "v1:second:{id}"
`)
	src := listSource{keys: stringKeys("v1:first:1", "v1:second:1", "junk:1"), batch: 10}
	rep, err := audit.Run(context.Background(), src, reg, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]string{}
	for _, d := range rep.Diagnostics() {
		pos[d.Family+"/"+d.Rule] = d.Pos.String()
		if d.Family != "" && !strings.HasPrefix(d.Message, `family "`+d.Family+`": `) {
			t.Errorf("%s on %s does not name its family: %s", d.Rule, d.Family, d.Message)
		}
		if d.Family == "" && strings.HasPrefix(d.Message, "family") {
			t.Errorf("%s names a family: %s", d.Rule, d.Message)
		}
	}
	want := map[string]string{
		"first/" + rules.TTLMissing.ID:  "keys.yaml:4:5",
		"second/" + rules.TTLMissing.ID: "keys.yaml:6:5",
		"/" + rules.UnregisteredKey.ID:  "keys.yaml:3:1",
	}
	for k, w := range want {
		if pos[k] != w {
			t.Errorf("%s at %q, want %s (all: %v)", k, pos[k], w, pos)
		}
	}
}
