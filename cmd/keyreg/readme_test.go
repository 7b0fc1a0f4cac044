package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/report"
	"github.com/spf13/cobra"
)

// TestReadmeExamples keeps the README true to this repository's keys.yaml:
// each "$ keyreg explain" example prints what keyreg explain prints (its
// positions included), and the count of families is the registry's.
func TestReadmeExamples(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	examples := 0
	parts := strings.Split(readme, "```")
	for i := 1; i < len(parts); i += 2 {
		info, body, _ := strings.Cut(parts[i], "\n")
		if info != "console" {
			continue
		}
		// A block holds commands ("$ keyreg …") each followed by its output,
		// up to a blank line or the next command.
		for _, cmd := range strings.Split(body, "$ ")[1:] {
			line, want, _ := strings.Cut(cmd, "\n")
			args := strings.Fields(line)
			if len(args) < 3 || args[0] != "keyreg" || args[1] != "explain" {
				continue
			}
			examples++
			for j, a := range args {
				args[j] = strings.Trim(a, "'")
			}
			_, got, _ := cli(t, append([]string{"explain", "--registry", "../../keys.yaml"}, args[2:]...)...)
			if strings.TrimSpace(got) != strings.TrimSpace(want) {
				t.Errorf("README's %q shows\n%s\nkeyreg prints\n%s", line, want, got)
			}
		}
	}
	if examples < 2 {
		t.Errorf("README has %d keyreg explain examples, want the 2 it had", examples)
	}

	reg, err := registry.LoadFile("../../keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var byHand int
	for _, f := range reg.Families {
		if f.Preset == "" {
			byHand++
		}
	}
	m := regexp.MustCompile(`(\d+) families \((\d+) declared by hand, (\d+) from presets\)`).FindStringSubmatch(readme)
	if m == nil {
		t.Fatal(`README does not say "N families (N declared by hand, N from presets)" of its keys.yaml`)
	}
	for i, want := range []int{len(reg.Families), byHand, len(reg.Families) - byHand} {
		if got, _ := strconv.Atoi(m[i+1]); got != want {
			t.Errorf("README says %q; keys.yaml has %d families, %d by hand", m[0], len(reg.Families), byHand)
			break
		}
	}
}

// TestBreakingDocFormats: docs/breaking.md names every format keyreg
// breaking --help offers, from the table of formats.
func TestBreakingDocFormats(t *testing.T) {
	b, err := os.ReadFile("../../docs/breaking.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## Output and exit codes")
	if !ok {
		t.Fatal("docs/breaking.md has no Output and exit codes section")
	}
	section, _, _ = strings.Cut(section, "| Exit |")
	for _, f := range report.Formats(report.DocDiagnostics) {
		if !strings.Contains(section, "`"+string(f)+"`") && !strings.Contains(section, "`--format "+string(f)+"`") {
			t.Errorf("docs/breaking.md's Output section does not name the %s format", f)
		}
	}
}

// TestReadmeListsEveryCommand compares README's command table with the
// commands keyreg has: every command (and every keyreg gen language) is
// named in a row, and every row names a command that exists.
func TestReadmeListsEveryCommand(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	row := regexp.MustCompile("^\\| (`keyreg [^|]*)\\|")
	name := regexp.MustCompile("`keyreg ([a-z]+(?: [a-z]+)?)")
	for _, line := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			listed[n[1]] = true
		}
	}
	have := map[string]bool{}
	root := (&app{}).rootCmd()
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		have[c.Name()] = true
		if !listed[c.Name()] && !listed[c.Name()+" "+firstWord(c)] {
			t.Errorf("README's command table does not name keyreg %s", c.Name())
		}
	}
	for _, l := range languages {
		have["gen "+l.name] = true
		if !listed["gen "+l.name] {
			t.Errorf("README's command table does not name keyreg gen %s", l.name)
		}
	}
	for n := range listed {
		cmd, _, _ := strings.Cut(n, " ")
		if !have[n] && !have[cmd] {
			t.Errorf("README's command table names keyreg %s, which does not exist", n)
		}
	}
}

// firstWord is the first subcommand of c, for a row such as
// "keyreg report merge".
func firstWord(c interface{ Commands() []*cobra.Command }) string {
	if cs := c.Commands(); len(cs) > 0 {
		return cs[0].Name()
	}
	return ""
}
