package keyreg_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/report"
)

// The lists README.md and the keys.yaml schema keep by hand must name what
// the code has: every preset, every format, and nothing else.

func presetNames() []string {
	var names []string
	for _, p := range registry.Presets() {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// readmeSections splits README.md into its "## " sections, by heading;
// "" is what comes before the first.
func readmeSections(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split("\n"+string(data), "\n## ")
	out := map[string]string{"": parts[0]} // the title and the table of commands
	for _, part := range parts[1:] {
		heading, body, _ := strings.Cut(part, "\n")
		out[heading] = body
	}
	return out
}

var codeWord = regexp.MustCompile("`([^`\\s]+)`")

// listAfter returns the code words of the sentence that starts at marker in
// text: up to the first period that ends a line or is followed by a space.
func listAfter(t *testing.T, text, marker string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(text, marker)
	if !ok {
		t.Fatalf("README: %q not found", marker)
	}
	end := len(rest)
	for i := 0; i+1 < len(rest); i++ {
		if rest[i] == '.' && (rest[i+1] == ' ' || rest[i+1] == '\n') {
			end = i
			break
		}
	}
	var words []string
	for _, m := range codeWord.FindAllStringSubmatch(rest[:end], -1) {
		words = append(words, m[1])
	}
	return words
}

func TestREADMEListsEveryPreset(t *testing.T) {
	want := presetNames()
	sections := readmeSections(t)
	for _, c := range []struct{ section, marker string }{
		{"", "lists the framework presets:"},
		{"Start from an existing Redis", "keyspaces of the frameworks with a preset"},
	} {
		text := sections[c.section]
		got := listAfter(t, text, c.marker)
		got = slices.DeleteFunc(got, func(w string) bool { return w == "presets:" })
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("README's list after %q names %v; the presets are %v", c.marker, got, want)
		}
	}
}

func TestREADMEListsEveryFormat(t *testing.T) {
	sections := readmeSections(t)
	for _, c := range []struct {
		section string
		doc     report.Document
	}{
		{"Lint", report.DocDiagnostics},
		{"Audit", report.DocAudit},
	} {
		var known []string
		for _, f := range report.Formats(c.doc) {
			known = append(known, string(f))
		}
		got := listAfter(t, sections[c.section], "Formats:")
		got = slices.DeleteFunc(got, func(w string) bool { return strings.HasPrefix(w, "$") })
		if !slices.Equal(got, known) {
			t.Errorf("README section %q lists the formats %v; the format table has %v, in that order", c.section, got, known)
		}
	}
}

func TestSchemaListsEveryPreset(t *testing.T) {
	data, err := os.ReadFile("schemas/keys.v1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs struct {
			PresetUse struct {
				Properties struct {
					Use struct {
						Description string `json:"description"`
					} `json:"use"`
				} `json:"properties"`
			} `json:"presetUse"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	desc := doc.Defs.PresetUse.Properties.Use.Description
	_, list, ok := strings.Cut(desc, "lists it: ")
	if !ok {
		t.Fatalf("the schema's presets[].use description %q does not list the presets", desc)
	}
	got := strings.Split(strings.TrimSuffix(list, "."), ", ")
	slices.Sort(got)
	if want := presetNames(); !slices.Equal(got, want) {
		t.Errorf("the schema's presets[].use lists %v; the presets are %v", got, want)
	}
}
