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
	"go.yaml.in/yaml/v3"
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

// TestWorkflowsRunOnce: each check runs keyreg once and takes every report
// from that run (--output), so a scheduled audit scans production once, not
// once per format. registry-check.yml runs no keyreg itself: its checks are
// the action's, which runs each once (TestRegistryCheckCallsAction).
func TestWorkflowsRunOnce(t *testing.T) {
	invocation := regexp.MustCompile(`(?m)^\s*keyreg (audit|lint|breaking|gen|vet)\b`)
	count := func(scripts []string) string {
		got := map[string]int{}
		for _, s := range scripts {
			for _, m := range invocation.FindAllStringSubmatch(s, -1) {
				got[m[1]]++
			}
		}
		return fmt.Sprint(got)
	}
	for name, want := range map[string]map[string]int{
		"scheduled-audit.yml": {"audit": 1},
		"registry-check.yml":  {},
	} {
		b, err := os.ReadFile(filepath.Join("../../.github/workflows", name))
		if err != nil {
			t.Fatal(err)
		}
		wf, errs := actionlint.Parse(b)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", name, errs[0])
		}
		var scripts []string
		for _, job := range wf.Jobs {
			for _, st := range job.Steps {
				if r, ok := st.Exec.(*actionlint.ExecRun); ok && r.Run != nil {
					scripts = append(scripts, r.Run.Value)
				}
			}
		}
		if got := count(scripts); got != fmt.Sprint(want) {
			t.Errorf("%s runs keyreg %v, want %v", name, got, want)
		}
	}
	var scripts []string
	for _, st := range readAction(t).Runs.Steps {
		scripts = append(scripts, st.Run)
	}
	// gen once per entry of gen_check, in its loop.
	if got, want := count(scripts), fmt.Sprint(map[string]int{"lint": 1, "breaking": 1, "vet": 1}); got != want {
		t.Errorf("action.yml runs keyreg %v, want %v", got, want)
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

// workflowMeta is the part of registry-check.yml the tests run.
type workflowMeta struct {
	On struct {
		WorkflowCall struct {
			Inputs map[string]struct {
				Default string `yaml:"default"`
			} `yaml:"inputs"`
		} `yaml:"workflow_call"`
	} `yaml:"on"`
	Jobs map[string]struct {
		Steps []actionStep `yaml:"steps"`
	} `yaml:"jobs"`
}

// registryCheckSteps returns the check job's step with id gen (the
// mapping of gen-languages and gen-out onto gen_check) and its step that
// uses the keyreg action, and the workflow's input defaults.
func registryCheckSteps(t *testing.T) (gen, action actionStep, defaults map[string]string) {
	t.Helper()
	b, err := os.ReadFile("../../.github/workflows/registry-check.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf workflowMeta
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	var n int
	for _, st := range wf.Jobs["check"].Steps {
		if st.ID == "gen" {
			gen = st
		}
		if strings.HasPrefix(st.Uses, "keyreg/keyreg@") {
			action = st
			n++
		}
	}
	if gen.Run == "" || n != 1 {
		t.Fatalf("the check job has no step with id gen, or %d steps using the keyreg action, want 1", n)
	}
	defaults = map[string]string{}
	for k, in := range wf.On.WorkflowCall.Inputs {
		defaults["inputs."+k] = in.Default
	}
	return gen, action, defaults
}

// TestRegistryCheckCallsAction: the check job's keyreg work is one step
// using the action, with lint and breaking on, and only inputs action.yml
// declares (actionlint does not read a remote action's inputs).
func TestRegistryCheckCallsAction(t *testing.T) {
	_, st, _ := registryCheckSteps(t)
	a := readAction(t)
	for k := range st.With {
		if _, ok := a.Inputs[k]; !ok {
			t.Errorf("registry-check.yml passes %s, which action.yml does not declare", k)
		}
	}
	for k, v := range map[string]string{"lint": "true", "breaking": "true", "gen_check": "${{ steps.gen.outputs.gen_check }}",
		"gen_scope": "${{ inputs.gen-scope }}", "gen_package": "${{ inputs.gen-package }}", "vet": "${{ inputs.vet }}",
		"registry": "${{ inputs.registry }}", "version": "${{ inputs.keyreg-version }}"} {
		if st.With[k] != v {
			t.Errorf("registry-check.yml's action step: %s: %q, want %q", k, st.With[k], v)
		}
	}
}

// genRun is one run of registry-check.yml's gen checks: the workflow's
// mapping step, then the action's gen and report steps with the inputs the
// workflow's action step passes, against dir with a stand-in keyreg in bin.
type genRun struct {
	check, status, out, summary string
	failed                      bool
}

func runRegistryCheckGen(t *testing.T, dir, bin string, inputs map[string]string, extraEnv ...string) genRun {
	t.Helper()
	gen, action, vals := registryCheckSteps(t)
	for k, v := range inputs {
		vals["inputs."+k] = v
	}
	summary := filepath.Join(dir, "summary")
	os.Remove(summary)
	env := append([]string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "GITHUB_STEP_SUMMARY=" + summary}, extraEnv...)
	code, out, o := runActionStep(t, gen, vals, dir, env)
	if code != 0 {
		t.Fatalf("the workflow's gen step: exit %d\n%s", code, out)
	}
	var r genRun
	r.check = o["gen_check"]
	vals["steps.gen.outputs.gen_check"] = r.check
	a := readAction(t)
	temp := filepath.Join(dir, "runner-temp")
	os.RemoveAll(temp)
	avals := map[string]string{"runner.temp": temp}
	for k, in := range a.Inputs {
		avals["inputs."+k] = in.Default
	}
	for k, v := range action.With {
		avals["inputs."+k] = actionExpr.ReplaceAllStringFunc(v, func(m string) string {
			e := actionExpr.FindStringSubmatch(m)[1]
			if _, ok := vals[e]; !ok {
				t.Fatalf("the action step's %s: no value for %s", k, e)
			}
			return vals[e]
		})
	}
	steps := map[string]actionStep{}
	for _, st := range a.Runs.Steps {
		steps[st.ID] = st
	}
	if avals["inputs.gen_check"] != "" { // the step's if:
		code, r.out, _ = runActionStep(t, steps["gen"], avals, dir, env)
		if code != 0 {
			t.Fatalf("the action's gen step: exit %d (it records the status)\n%s", code, r.out)
		}
	}
	b, _ := os.ReadFile(filepath.Join(temp, "keyreg-action", "gen.status"))
	r.status = strings.TrimSpace(string(b))
	code, out, rep := runActionStep(t, steps["report"], avals, dir, env)
	if code != 0 {
		t.Fatalf("report step: exit %d\n%s", code, out)
	}
	r.failed = rep["failed"] == "true"
	s, _ := os.ReadFile(summary)
	r.summary = string(s)
	return r
}

// TestRegistryCheckGenScope runs registry-check.yml's gen checks (its
// mapping step and the action's gen step) with a stand-in keyreg that
// records its arguments: gen-scope reaches keyreg as separate arguments, is
// never evaluated by the shell, and the stale-file hint repeats it.
func TestRegistryCheckGenScope(t *testing.T) {
	for _, c := range []struct {
		scope, want string
	}{
		{"", "gen|go|--registry|keys.yaml|--out|x_gen.go|--check"},
		{"--include-presets", "gen|go|--registry|keys.yaml|--out|x_gen.go|--include-presets|--check"},
		{"--family cart-items  --owner checkout", "gen|go|--registry|keys.yaml|--out|x_gen.go|--family|cart-items|--owner|checkout|--check"},
		{"$(touch pwned) *", "gen|go|--registry|keys.yaml|--out|x_gen.go|$(touch|pwned)|*|--check"},
	} {
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
		argsFile := filepath.Join(dir, "args")
		r := runRegistryCheckGen(t, dir, bin, map[string]string{"gen-out": "x_gen.go", "gen-scope": c.scope}, "ARGS_FILE="+argsFile)
		if r.check != "go=x_gen.go" {
			t.Errorf("scope %q: gen_check %q, want go=x_gen.go", c.scope, r.check)
		}
		if r.status != "1" || !r.failed {
			t.Errorf("scope %q: a stale file gave status %q, failed %v\n%s", c.scope, r.status, r.failed, r.out)
		}
		got, _ := os.ReadFile(argsFile)
		if string(got) != c.want {
			t.Errorf("scope %q: keyreg got %q, want %q", c.scope, got, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Errorf("scope %q: the shell evaluated the scope", c.scope)
		}
		hint := "keyreg " + strings.ReplaceAll(strings.TrimSuffix(c.want, "|--check"), "|", " ")
		if !strings.Contains(r.summary, "run `"+hint+"`") {
			t.Errorf("scope %q: the summary's hint does not say %q:\n%s", c.scope, hint, r.summary)
		}
		if !strings.Contains(r.out, "::error file=x_gen.go,title=keyreg gen go::stale generated code (exit 1): run "+hint+"\n") {
			t.Errorf("scope %q: no annotation on x_gen.go with the hint:\n%s", c.scope, r.out)
		}
	}
}

// TestRegistryCheckGenLanguages: gen-languages checks each language in
// turn, go with gen-out and the others with their language=path, never
// evaluating the list; an entry that is not a language is reported, and a
// stale file fails the check after all are checked, with the worst exit.
func TestRegistryCheckGenLanguages(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// The stand-in appends its arguments; the python file is stale, and
	// json fails as a runtime error would.
	fake := "#!/usr/bin/env bash\n(IFS='|'; printf '%s\\n' \"$*\") >> \"$ARGS_FILE\"\n[ \"$2\" != python ] || { echo '--- a/app/keys_gen.py'; exit 1; }\n[ \"$2\" != json ] || exit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "keyreg"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	argsFile := filepath.Join(dir, "args")
	inputs := map[string]string{"gen-out": "x_gen.go", "gen-package": "keys", "gen-scope": "--include-presets",
		"gen-languages": "go python=app/keys_gen.py $(touch pwned) typescript=web/keys.gen.ts"}
	r := runRegistryCheckGen(t, dir, bin, inputs, "ARGS_FILE="+argsFile)
	got, _ := os.ReadFile(argsFile)
	want := "gen|go|--registry|keys.yaml|--out|x_gen.go|--include-presets|--package|keys|--check\n" +
		"gen|python|--registry|keys.yaml|--out|app/keys_gen.py|--include-presets|--check\n" +
		"gen|typescript|--registry|keys.yaml|--out|web/keys.gen.ts|--include-presets|--check\n"
	if string(got) != want {
		t.Errorf("keyreg got\n%s\nwant\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("the shell evaluated gen-languages")
	}
	// $(touch and pwned) are not languages: reported, exit 2, the worst.
	if r.status != "2" || !r.failed {
		t.Errorf("status %q, failed %v, want 2 and failed\n%s", r.status, r.failed, r.out)
	}
	for _, w := range []string{"::error title=keyreg gen::gen_check entry $(touch=x_gen.go must be LANG=PATH", "::error title=keyreg gen::gen_check entry pwned)=x_gen.go must be LANG=PATH",
		"::error file=app/keys_gen.py,title=keyreg gen python::stale"} {
		if !strings.Contains(r.out, w) {
			t.Errorf("no %q in\n%s", w, r.out)
		}
	}
	for _, w := range []string{"keyreg gen python: `app/keys_gen.py` is **stale** (exit 1): run `keyreg gen python --registry keys.yaml --out app/keys_gen.py --include-presets`",
		"keyreg gen go: `x_gen.go` is up to date", "keyreg gen typescript: `web/keys.gen.ts` is up to date", "| gen | error (exit 2) |", "--- a/app/keys_gen.py"} {
		if !strings.Contains(r.summary, w) {
			t.Errorf("summary lacks %q:\n%s", w, r.summary)
		}
	}

	// Without the bad entries the stale python file is the worst: exit 1;
	// a runtime error after it is worse: exit 3, whatever the order.
	os.Remove(argsFile)
	inputs["gen-languages"] = "python=app/keys_gen.py go"
	if r := runRegistryCheckGen(t, dir, bin, inputs, "ARGS_FILE="+argsFile); r.status != "1" || !r.failed || !strings.Contains(r.summary, "| gen | failed (exit 1) |") {
		t.Errorf("a stale python file: status %q, failed %v\n%s", r.status, r.failed, r.summary)
	}
	if got, _ := os.ReadFile(argsFile); strings.Count(string(got), "\n") != 2 {
		t.Errorf("after a stale file the next language was not checked:\n%s", got)
	}
	inputs["gen-languages"] = "python=app/keys_gen.py json=keys.json go"
	if r := runRegistryCheckGen(t, dir, bin, inputs, "ARGS_FILE="+argsFile); r.status != "3" || !strings.Contains(r.summary, "| gen | error (exit 3) |") {
		t.Errorf("stale python, failing json: status %q, want the worst, 3\n%s", r.status, r.summary)
	}

	// The defaults check nothing; a language without a path is an error.
	os.Remove(argsFile)
	if r := runRegistryCheckGen(t, dir, bin, nil, "ARGS_FILE="+argsFile); r.check != "" || r.status != "" {
		t.Errorf("the defaults: gen_check %q, status %q, want nothing checked", r.check, r.status)
	}
	if r := runRegistryCheckGen(t, dir, bin, map[string]string{"gen-languages": "python"}, "ARGS_FILE="+argsFile); r.check != "python=" || r.status != "2" || !r.failed {
		t.Errorf("python without a path: gen_check %q, status %q, failed %v\n%s", r.check, r.status, r.failed, r.out)
	}
	if _, err := os.Stat(argsFile); err == nil {
		t.Error("keyreg ran for an entry without a path")
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

// TestReusableWorkflowsInstallThroughAction: every job of the reusable
// workflows that runs keyreg gets it from the keyreg action, never from a
// go install or download of its own, and passes the action only inputs
// action.yml declares (actionlint does not read a remote action's inputs).
func TestReusableWorkflowsInstallThroughAction(t *testing.T) {
	a := readAction(t)
	runs := regexp.MustCompile(`(?m)^\s*keyreg \w`)
	for _, name := range []string{"registry-check.yml", "scheduled-audit.yml", "fleet-audit.yml"} {
		b, err := os.ReadFile(filepath.Join("../../.github/workflows", name))
		if err != nil {
			t.Fatal(err)
		}
		var wf workflowMeta
		if err := yaml.Unmarshal(b, &wf); err != nil {
			t.Fatal(err)
		}
		for id, job := range wf.Jobs {
			usesAction, runsKeyreg := false, false
			for _, st := range job.Steps {
				if strings.Contains(st.Run, "go install") || strings.Contains(st.Run, "curl ") {
					t.Errorf("%s job %s: step %q installs something itself", name, id, st.Name)
				}
				runsKeyreg = runsKeyreg || runs.MatchString(st.Run)
				if !strings.HasPrefix(st.Uses, "keyreg/keyreg@") {
					continue
				}
				usesAction = true
				for k := range st.With {
					if _, ok := a.Inputs[k]; !ok {
						t.Errorf("%s job %s: passes the action %s, which action.yml does not declare", name, id, k)
					}
				}
			}
			if runsKeyreg && !usesAction {
				t.Errorf("%s job %s runs keyreg without installing it through the action", name, id)
			}
		}
	}
}
