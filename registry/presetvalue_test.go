package registry

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestPresetValue: a --with value that opens a flow list, mapping or
// quoted string must be valid YAML (issue 22 item 29: "[a}b]" became a
// queue named "[a}b]"); other text that is not YAML stays a string.
func TestPresetValue(t *testing.T) {
	for text, want := range map[string]string{
		"[a,b]":       "seq a,b",
		"[a, \"b}\"]": "seq a,b}",
		"celery":      "str celery",
		"a: b":        "str a: b",
		"2d":          "str 2d",
		"'x'":         "str x",
		"a}b]":        "str a}b]",
		"[a}b]":       "error does not parse as YAML",
		" [a, b":      "error does not parse as YAML",
		"{a: b}":      "error is a mapping",
		"\"abc":       "error does not parse as YAML",
	} {
		n, err := presetValue("queues", text)
		var got string
		switch {
		case err != nil:
			got = "error " + err.Error()
		case n.Kind == yaml.SequenceNode:
			var items []string
			for _, c := range n.Content {
				items = append(items, c.Value)
			}
			got = "seq " + strings.Join(items, ",")
		default:
			got = "str " + n.Value
		}
		if w, ok := strings.CutPrefix(want, "error "); ok && (err == nil || !strings.Contains(got, w)) || !ok && got != want {
			t.Errorf("presetValue(%q) = %s, want %s…", text, got, want)
		}
	}
}

func FuzzPresetValue(f *testing.F) {
	for _, s := range []string{"[a,b]", "[a}b]", "{a: b}", "a: b", "\"x", "'", "[", "&a [*a]", "!!binary x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		n, err := presetValue("p", text)
		if err != nil {
			return
		}
		if n == nil || n.Kind == yaml.MappingNode {
			t.Fatalf("presetValue(%q) = %v, want a value or a list", text, n)
		}
		if s := strings.TrimSpace(text); s != "" && s[0] == '[' && n.Kind != yaml.SequenceNode && n.Kind != yaml.AliasNode {
			t.Fatalf("presetValue(%q): a flow list that is not a list", text)
		}
	})
}
