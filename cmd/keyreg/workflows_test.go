package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// TestWorkflowsLint runs actionlint on every workflow in .github/workflows.
func TestWorkflowsLint(t *testing.T) {
	files, err := filepath.Glob("../../.github/workflows/*.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no workflows found")
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFiles(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", e.Filepath, e.Line, e.Column, e.Message, e.Kind)
	}
}

// docWorkflows returns the yaml blocks of docs/ci.md that are workflows
// (they have an on: key), with keyreg's reusable workflows referenced as
// local files, so that actionlint checks the inputs and secrets they pass.
func docWorkflows(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	remote := regexp.MustCompile(`keyreg/keyreg/(\.github/workflows/[a-z-]+\.yml)@\S+`)
	var out []string
	parts := strings.Split(string(b), "```")
	for i := 1; i < len(parts); i += 2 {
		info, body, _ := strings.Cut(parts[i], "\n")
		if info != "yaml" || !regexp.MustCompile(`(?m)^on:`).MatchString(body) {
			continue
		}
		out = append(out, remote.ReplaceAllString(body, "./$1"))
	}
	return out
}

// lintDoc runs actionlint on one workflow, resolving local reusable
// workflows in this repository.
func lintDoc(t *testing.T, name, body string) []*actionlint.Error {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	proj, err := actionlint.NewProject(root)
	if err != nil {
		t.Fatal(err)
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(name, []byte(body), proj)
	if err != nil {
		t.Fatal(err)
	}
	return errs
}

// TestDocsWorkflowsLint runs actionlint on the caller workflows of
// docs/ci.md, so that the copy-pasteable examples stay valid.
func TestDocsWorkflowsLint(t *testing.T) {
	blocks := docWorkflows(t)
	if len(blocks) != 2 {
		t.Fatalf("docs/ci.md has %d workflow examples, want 2 (one per reusable workflow)", len(blocks))
	}
	calls := []string{"uses: ./.github/workflows/registry-check.yml\n", "uses: ./.github/workflows/scheduled-audit.yml\n"}
	for i, body := range blocks {
		if !strings.Contains(body, calls[i]) {
			t.Errorf("docs/ci.md workflow %d does not call %s", i+1, strings.TrimSpace(calls[i]))
		}
		for _, e := range lintDoc(t, fmt.Sprintf("docs/ci.md#%d", i+1), body) {
			t.Errorf("docs/ci.md workflow %d:%d:%d: %s [%s]", i+1, e.Line, e.Column, e.Message, e.Kind)
		}
	}
	// The check has teeth: an input or a secret the reusable workflow does
	// not declare, or a missing required secret, is reported.
	for _, bad := range []struct{ name, from, to string }{
		{"unknown input", "      registry: keys.yaml\n", "      registry: keys.yaml\n      no-such-input: x\n"},
		{"missing secret", "    secrets:\n      REDIS_URL: ${{ secrets.PROD_REDIS_URL }}\n", ""},
	} {
		body := blocks[len(blocks)-1]
		if !strings.Contains(body, bad.from) {
			t.Fatalf("%s: the audit example lacks %q", bad.name, bad.from)
		}
		if errs := lintDoc(t, "bad.yml", strings.Replace(body, bad.from, bad.to, 1)); len(errs) == 0 {
			t.Errorf("%s: actionlint found nothing", bad.name)
		}
	}
}

// permLevel orders GitHub token permission values.
var permLevel = map[string]int{"none": 0, "read": 1, "write": 2}

// TestReusableWorkflowPermissions checks what GitHub checks when a caller
// starts a reusable workflow: every permission a job (or the workflow)
// declares must be granted by the caller, even for a job its if: would skip.
// The least a caller grants is contents: read (with upload-sarif: false for
// registry-check), so that is all any job may declare; the SARIF upload
// job declares nothing and runs with the caller's grant. It also requires a
// timeout on every job and no deprecated upload-sarif@v3.
func TestReusableWorkflowPermissions(t *testing.T) {
	minimal := map[string]string{"contents": "read"}
	for _, name := range []string{"registry-check.yml", "scheduled-audit.yml", "ci.yml", "fleet-audit.yml"} {
		b, err := os.ReadFile(filepath.Join("../../.github/workflows", name))
		if err != nil {
			t.Fatal(err)
		}
		wf, errs := actionlint.Parse(b)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", name, errs[0])
		}
		reusable := name != "ci.yml"
		check := func(where string, p *actionlint.Permissions) {
			if p == nil || !reusable {
				return
			}
			if p.All != nil {
				t.Errorf("%s %s: permissions: %s; declare scopes", name, where, p.All.Value)
			}
			for scope, v := range p.Scopes {
				if permLevel[v.Value.Value] > permLevel[minimal[scope]] {
					t.Errorf("%s %s: declares %s: %s, which a caller granting only contents: read refuses at startup",
						name, where, scope, v.Value.Value)
				}
			}
		}
		check("workflow", wf.Permissions)
		for id, job := range wf.Jobs {
			check("job "+id, job.Permissions)
			if job.TimeoutMinutes == nil {
				t.Errorf("%s job %s: no timeout-minutes", name, id)
			}
			for _, st := range job.Steps {
				if a, ok := st.Exec.(*actionlint.ExecAction); ok && strings.HasPrefix(a.Uses.Value, "github/codeql-action/upload-sarif@v3") {
					t.Errorf("%s job %s: %s is deprecated", name, id, a.Uses.Value)
				}
			}
		}
	}
}

// TestWorkflowsRunOnce: each reusable workflow runs each keyreg check once
// and takes every report from that run (--output), so a scheduled audit
// scans production once, not once per format.
func TestWorkflowsRunOnce(t *testing.T) {
	invocation := regexp.MustCompile(`(?m)^\s*keyreg (audit|lint|breaking)\b`)
	for name, want := range map[string]map[string]int{
		"scheduled-audit.yml": {"audit": 1},
		"registry-check.yml":  {"lint": 1, "breaking": 1},
	} {
		b, err := os.ReadFile(filepath.Join("../../.github/workflows", name))
		if err != nil {
			t.Fatal(err)
		}
		wf, errs := actionlint.Parse(b)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", name, errs[0])
		}
		got := map[string]int{}
		for _, job := range wf.Jobs {
			for _, st := range job.Steps {
				if r, ok := st.Exec.(*actionlint.ExecRun); ok && r.Run != nil {
					for _, m := range invocation.FindAllStringSubmatch(r.Run.Value, -1) {
						got[m[1]]++
					}
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s runs keyreg %v, want %v", name, got, want)
		}
	}
}

// TestRegistryCheckArtifactPerCall: registry-check.yml called twice in one
// run (two registries of a monorepo) must not upload two artifacts of one
// name, which upload-artifact@v4 refuses, nor two SARIF files under one
// code-scanning category, where the second replaces the first. It runs the
// naming step's script for several registries and follows the name from
// the upload to the download.
func TestRegistryCheckArtifactPerCall(t *testing.T) {
	b, err := os.ReadFile("../../.github/workflows/registry-check.yml")
	if err != nil {
		t.Fatal(err)
	}
	wf, errs := actionlint.Parse(b)
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	check, scanning := wf.Jobs["check"], wf.Jobs["code-scanning"]
	if check == nil || scanning == nil {
		t.Fatal("registry-check.yml has no check or code-scanning job")
	}
	var script string
	for _, st := range check.Steps {
		if r, ok := st.Exec.(*actionlint.ExecRun); ok && st.ID != nil && st.ID.Value == "names" {
			script = r.Run.Value
		}
	}
	if script == "" {
		t.Fatal("the check job has no step with id names")
	}
	names := func(registry, input string) map[string]string {
		out := filepath.Join(t.TempDir(), "output")
		cmd := exec.Command("bash", "-e", "-c", script)
		cmd.Env = append(os.Environ(), "KEYREG_REGISTRY_PATH="+registry, "ARTIFACT_NAME="+input, "GITHUB_OUTPUT="+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("naming step for %q: %v\n%s", registry, err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			k, v, _ := strings.Cut(line, "=")
			m[k] = v
		}
		return m
	}
	bad := regexp.MustCompile(`[":<>|*?\r\n\\/]`)
	seen := map[string]string{}
	for _, reg := range []string{"keys.yaml", "svc/api/keys.yaml", "svc/web/keys.yaml", "deploy/keys.yml"} {
		m := names(reg, "")
		a, sfx := m["artifact"], m["suffix"]
		if a == "" || bad.MatchString(a) {
			t.Errorf("registry %q: artifact name %q is empty or not a valid artifact name", reg, a)
		}
		if prev, ok := seen[a]; ok {
			t.Errorf("registries %q and %q share the artifact %q", prev, reg, a)
		}
		seen[a] = reg
		if prev, ok := seen["category"+sfx]; ok {
			t.Errorf("registries %q and %q share the category suffix %q", prev, reg, sfx)
		}
		seen["category"+sfx] = reg
	}
	if a := names("keys.yaml", "")["artifact"]; a != "keyreg-sarif" {
		t.Errorf("the default registry's artifact is %q, want keyreg-sarif as before", a)
	}
	if a := names("svc/api/keys.yaml", "mine")["artifact"]; a != "mine" {
		t.Errorf("artifact-name: mine gives %q", a)
	}

	// The upload uses the step's name, the job hands it on, the download
	// and both categories use what it hands on.
	want := map[string]string{
		"check output sarif-artifact":  "${{ steps.names.outputs.artifact }}",
		"check output category-suffix": "${{ steps.names.outputs.suffix }}",
		"upload-artifact name":         "${{ steps.names.outputs.artifact }}",
		"download-artifact name":       "${{ needs.check.outputs.sarif-artifact }}",
		"upload-sarif category":        "keyreg-lint${{ needs.check.outputs.category-suffix }} keyreg-breaking${{ needs.check.outputs.category-suffix }}",
	}
	got := map[string]string{}
	for _, o := range check.Outputs {
		got["check output "+o.Name.Value] = o.Value.Value
	}
	for _, job := range []*actionlint.Job{check, scanning} {
		for _, st := range job.Steps {
			a, ok := st.Exec.(*actionlint.ExecAction)
			if !ok {
				continue
			}
			action, _, _ := strings.Cut(a.Uses.Value, "@")
			action = action[strings.LastIndex(action, "/")+1:]
			for _, in := range a.Inputs {
				if in.Name.Value == "name" || in.Name.Value == "category" {
					k := action + " " + in.Name.Value
					got[k] = strings.TrimSpace(got[k] + " " + in.Value.Value)
				}
			}
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// TestRegistryCheckGenScope runs the gen step of registry-check.yml with a
// stand-in keyreg that records its arguments: gen-scope reaches keyreg as
// separate arguments, is never evaluated by the shell, and the stale-file
// hint repeats it.
func TestRegistryCheckGenScope(t *testing.T) {
	b, err := os.ReadFile("../../.github/workflows/registry-check.yml")
	if err != nil {
		t.Fatal(err)
	}
	wf, errs := actionlint.Parse(b)
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	var script string
	for _, st := range wf.Jobs["check"].Steps {
		if r, ok := st.Exec.(*actionlint.ExecRun); ok && st.ID != nil && st.ID.Value == "gen" {
			script = r.Run.Value
		}
	}
	if script == "" {
		t.Fatal("the check job has no step with id gen")
	}
	for _, c := range []struct {
		scope, want string
	}{
		{"", "gen|go|--registry|keys.yaml|--out|x_gen.go|--check"},
		{"--include-presets", "gen|go|--registry|keys.yaml|--out|x_gen.go|--include-presets|--check"},
		{"--family cart-items  --owner checkout", "gen|go|--registry|keys.yaml|--out|x_gen.go|--family|cart-items|--owner|checkout|--check"},
		{"$(touch pwned) *", "gen|go|--registry|keys.yaml|--out|x_gen.go|$(touch|pwned)|*|--check"},
	} {
		c := struct{ scope, langs, want string }{c.scope, "", c.want}
		dir := t.TempDir()
		bin := filepath.Join(dir, "bin")
		if err := os.Mkdir(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		// The stand-in records its arguments and reports the file stale.
		fake := "#!/usr/bin/env bash\n(IFS='|'; printf '%s' \"$*\") > \"$ARGS_FILE\"\necho '--- a/x_gen.go'\nexit 1\n"
		if err := os.WriteFile(filepath.Join(bin, "keyreg"), []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
		summary, argsFile := filepath.Join(dir, "summary"), filepath.Join(dir, "args")
		cmd := exec.Command("bash", "-e", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"KEYREG_REGISTRY_PATH=keys.yaml", "GEN_OUT=x_gen.go", "GEN_PACKAGE=", "GEN_SCOPE="+c.scope,
			"GITHUB_STEP_SUMMARY="+summary, "ARGS_FILE="+argsFile, "GEN_LANGUAGES="+c.langs)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("scope %q: a stale file passed the step\n%s", c.scope, out)
		}
		got, _ := os.ReadFile(argsFile)
		if string(got) != c.want {
			t.Errorf("scope %q: keyreg got %q, want %q", c.scope, got, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Errorf("scope %q: the shell evaluated the scope", c.scope)
		}
		sum, _ := os.ReadFile(summary)
		hint := "keyreg " + strings.ReplaceAll(strings.TrimSuffix(c.want, "|--check"), "|", " ")
		if !strings.Contains(string(sum), "Run `"+hint+"`") {
			t.Errorf("scope %q: the summary's hint does not say %q:\n%s", c.scope, hint, sum)
		}
	}
}

// TestRegistryCheckGenLanguages: gen-languages checks each language in
// turn, go with gen-out and the others with their language=path, never
// evaluating the list; a stale file fails the step after all are checked.
func TestRegistryCheckGenLanguages(t *testing.T) {
	b, err := os.ReadFile("../../.github/workflows/registry-check.yml")
	if err != nil {
		t.Fatal(err)
	}
	wf, errs := actionlint.Parse(b)
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	var script string
	for _, st := range wf.Jobs["check"].Steps {
		if r, ok := st.Exec.(*actionlint.ExecRun); ok && st.ID != nil && st.ID.Value == "gen" {
			script = r.Run.Value
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// The stand-in appends its arguments; the python file is stale.
	fake := "#!/usr/bin/env bash\n(IFS='|'; printf '%s\\n' \"$*\") >> \"$ARGS_FILE\"\n[ \"$2\" != python ] || { echo '--- a/app/keys_gen.py'; exit 1; }\n"
	if err := os.WriteFile(filepath.Join(bin, "keyreg"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	summary, argsFile := filepath.Join(dir, "summary"), filepath.Join(dir, "args")
	cmd := exec.Command("bash", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KEYREG_REGISTRY_PATH=keys.yaml", "GEN_OUT=x_gen.go", "GEN_PACKAGE=keys", "GEN_SCOPE=--include-presets",
		"GEN_LANGUAGES=go python=app/keys_gen.py $(touch pwned) typescript=web/keys.gen.ts",
		"GITHUB_STEP_SUMMARY="+summary, "ARGS_FILE="+argsFile)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("a stale python file: %v, want exit 1\n%s", err, out)
	}
	got, _ := os.ReadFile(argsFile)
	want := "gen|go|--registry|keys.yaml|--out|x_gen.go|--include-presets|--package|keys|--check\n" +
		"gen|python|--registry|keys.yaml|--out|app/keys_gen.py|--include-presets|--check\n" +
		"gen|$(touch|--registry|keys.yaml|--out|x_gen.go|--include-presets|--check\n" +
		"gen|pwned)|--registry|keys.yaml|--out|x_gen.go|--include-presets|--check\n" +
		"gen|typescript|--registry|keys.yaml|--out|web/keys.gen.ts|--include-presets|--check\n"
	if string(got) != want {
		t.Errorf("keyreg got\n%s\nwant\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("the shell evaluated gen-languages")
	}
	sum, _ := os.ReadFile(summary)
	if !strings.Contains(string(sum), "keyreg gen python: `app/keys_gen.py` is stale") || !strings.Contains(string(sum), "keyreg gen go: `x_gen.go` is up to date") {
		t.Errorf("summary:\n%s", sum)
	}
}

// TestFleetDocWorkflowLint runs actionlint on the caller of
// fleet-audit.yml in docs/fleet.md, with the reusable workflow resolved
// from this repository, so that its inputs and secrets stay valid.
func TestFleetDocWorkflowLint(t *testing.T) {
	b, err := os.ReadFile("../../docs/fleet.md")
	if err != nil {
		t.Fatal(err)
	}
	remote := regexp.MustCompile(`keyreg/keyreg/(\.github/workflows/[a-z-]+\.yml)@\S+`)
	var blocks []string
	parts := strings.Split(string(b), "```")
	for i := 1; i < len(parts); i += 2 {
		info, body, _ := strings.Cut(parts[i], "\n")
		if info == "yaml" && regexp.MustCompile(`(?m)^on:`).MatchString(body) {
			blocks = append(blocks, remote.ReplaceAllString(body, "./$1"))
		}
	}
	if len(blocks) != 1 || !strings.Contains(blocks[0], "uses: ./.github/workflows/fleet-audit.yml\n") {
		t.Fatalf("docs/fleet.md has %d workflow examples calling fleet-audit.yml, want 1", len(blocks))
	}
	for _, e := range lintDoc(t, "docs/fleet.md", blocks[0]) {
		t.Errorf("docs/fleet.md workflow:%d:%d: %s [%s]", e.Line, e.Column, e.Message, e.Kind)
	}
	if errs := lintDoc(t, "bad.yml", strings.Replace(blocks[0], "      targets: ", "      no-such-input: x\n      targets: ", 1)); len(errs) == 0 {
		t.Error("actionlint accepted an input fleet-audit.yml does not declare")
	}
}
