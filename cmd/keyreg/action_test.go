package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// actionMeta is the part of action.yml the tests read.
type actionMeta struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	ID    string            `yaml:"id"`
	Name  string            `yaml:"name"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Run   string            `yaml:"run"`
	Shell string            `yaml:"shell"`
	Env   map[string]string `yaml:"env"`
	With  map[string]string `yaml:"with"`
	Dir   string            `yaml:"working-directory"`
}

func readAction(t *testing.T) actionMeta {
	t.Helper()
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a actionMeta
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestActionInputs: the action is composite and has exactly the inputs of
// the issue, named as buf-action and golangci-lint-action name theirs, plus
// gen_scope and gen_package, which the reusable workflow needs; no
// run script reads an input through ${{ }} (the shell would evaluate it).
func TestActionInputs(t *testing.T) {
	a := readAction(t)
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using %q", a.Runs.Using)
	}
	var got []string
	for k := range a.Inputs {
		got = append(got, k)
	}
	slices.Sort(got)
	want := []string{"breaking", "breaking_against", "fail_on", "gen_check", "gen_package", "gen_scope", "lint", "pr_comment", "registry", "sarif_upload", "version", "vet", "working_directory"}
	if !slices.Equal(got, want) {
		t.Errorf("inputs %v, want %v", got, want)
	}
	for _, st := range a.Runs.Steps {
		if st.Run != "" && strings.Contains(st.Run, "${{") {
			t.Errorf("step %q: its script uses ${{ }}; pass values through env", st.Name)
		}
		if st.Run != "" && st.Shell != "bash" {
			t.Errorf("step %q: shell %q, want bash", st.Name, st.Shell)
		}
	}
}

// TestActionLint runs actionlint on a workflow that uses the action with
// every input, which makes actionlint read action.yml and check the inputs
// against it; an input the action does not declare is reported.
func TestActionLint(t *testing.T) {
	wf := `name: t
on: pull_request
permissions:
  contents: read
  pull-requests: write
  security-events: write
jobs:
  keyreg:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - uses: ./
        with:
          version: v1.4.0
          registry: keys.yaml
          lint: true
          breaking: true
          breaking_against: origin/main
          gen_check: go=internal/keys/keys_gen.go
          vet: false
          fail_on: warn
          sarif_upload: true
          pr_comment: true
          working_directory: .
`
	for _, e := range lintDoc(t, "action-caller.yml", wf) {
		t.Errorf("%d:%d: %s [%s]", e.Line, e.Column, e.Message, e.Kind)
	}
	if errs := lintDoc(t, "bad.yml", strings.Replace(wf, "          vet: false\n", "          vet: false\n          no_such_input: x\n", 1)); len(errs) == 0 {
		t.Error("actionlint accepted an input action.yml does not declare")
	}
}

var actionExpr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// runActionStep runs one run step of action.yml as the runner would: its
// env with the expressions evaluated from vals, in its working directory,
// with GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files. It returns the exit
// code, the output and the step's outputs.
func runActionStep(t *testing.T, st actionStep, vals map[string]string, dir string, extraEnv []string) (int, string, map[string]string) {
	t.Helper()
	eval := func(s string) string {
		return actionExpr.ReplaceAllStringFunc(s, func(m string) string {
			k := actionExpr.FindStringSubmatch(m)[1]
			v, ok := vals[k]
			if !ok {
				t.Fatalf("step %q: no value for ${{ %s }}", st.Name, k)
			}
			return v
		})
	}
	env := slices.Clone(extraEnv)
	for k, v := range st.Env {
		env = append(env, k+"="+eval(v))
	}
	outFile := filepath.Join(t.TempDir(), "output")
	env = append(env, "GITHUB_OUTPUT="+outFile)
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", st.Run)
	cmd.Dir = filepath.Join(dir, eval(st.Dir))
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("step %q: %v", st.Name, err)
	}
	outputs := map[string]string{}
	b, _ := os.ReadFile(outFile)
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			outputs[k] = v
		}
	}
	return code, string(out), outputs
}

// TestActionSteps runs the action's shell steps against a local git
// repository whose pull request removes a family without deprecating it:
// the real keyreg (this test binary) lints and checks for breaking changes
// against the base branch, the breaking step writes its annotation on
// keys.yaml, the job summary and the comment body carry the results under
// the registry's marker, the comment step creates the comment on the first
// run and edits that one comment on the next, and the result step fails.
func TestActionSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git and keyreg processes")
	}
	a := readAction(t)
	steps := map[string]actionStep{}
	for _, st := range a.Runs.Steps {
		if st.ID != "" {
			steps[st.ID] = st
		}
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{repo, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// keyreg is this test binary, as main; gh records its calls and
	// answers the comment listing from $GH_COMMENTS.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	writeExe := func(name, body string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeExe("keyreg", fmt.Sprintf("#!/bin/sh\nKEYREG_TEST_MAIN=1 exec %q \"$@\"\n", self))
	writeExe("gh", "#!/usr/bin/env bash\nprintf '%s\\n' \"$*\" >> \"$GH_LOG\"\n"+
		"if [ \"$2\" != --method ]; then cat \"$GH_COMMENTS\"; exit 0; fi\n"+
		"for a in \"$@\"; do case \"$a\" in body=@*) cp \"${a#body=@}\" \"$GH_BODY\" ;; esac; done\n")

	base := "version: 1\nowners:\n  identity: {contact: \"#identity\"}\nfamilies:\n" +
		"  - name: user-session\n    pattern: \"v1:user:session:{id:uuid}\"\n    version: 1\n    owner: identity\n    type: string\n    ttl: 24h\n" +
		"  - name: legacy\n    pattern: \"v1:legacy:{id}\"\n    version: 1\n    owner: identity\n    ttl: 1h\n"
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "keys.yaml"), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	git("add", "keys.yaml")
	git("commit", "-q", "-m", "registry")
	// Generated code: go from the base registry (stale on the branch),
	// python and json from the branch's (fresh).
	for _, d := range []string{"internal/keys", "app"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gen := func(args ...string) {
		cmd := exec.Command(filepath.Join(bin, "keyreg"), append([]string{"gen"}, append(args, "--registry", "keys.yaml")...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("keyreg gen %v: %v\n%s", args, err, out)
		}
	}
	gen("go", "--out", "internal/keys/keys_gen.go")
	git("checkout", "-q", "-b", "feature")
	changed := strings.Replace(base, "  - name: legacy\n    pattern: \"v1:legacy:{id}\"\n    version: 1\n    owner: identity\n    ttl: 1h\n", "", 1)
	if err := os.WriteFile(filepath.Join(repo, "keys.yaml"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-q", "-a", "-m", "drop legacy")
	gen("python", "--out", "app/keys_gen.py")
	gen("json", "--out", "keys.codegen.json")

	temp := filepath.Join(dir, "runner-temp")
	summary := filepath.Join(dir, "summary.md")
	comments := filepath.Join(dir, "comments")
	ghLog, body := filepath.Join(dir, "gh.log"), filepath.Join(dir, "body.md")
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "GITHUB_STEP_SUMMARY=" + summary,
		"GITHUB_REPOSITORY=acme/shop", "GH_LOG=" + ghLog, "GH_BODY=" + body, "GH_COMMENTS=" + comments, "GITHUB_ACTIONS=", "GITHUB_BASE_REF="}
	vals := map[string]string{"runner.temp": temp, "github.token": "token", "github.event.pull_request.number": "7"}
	for k, in := range a.Inputs {
		vals["inputs."+k] = in.Default
	}
	vals["inputs.breaking_against"] = "main"
	vals["inputs.gen_check"] = "python=app/keys_gen.py\ngo=internal/keys/keys_gen.go  json=keys.codegen.json"

	for run := 1; run <= 2; run++ {
		os.RemoveAll(temp)
		os.Remove(ghLog)
		// On the second run two comments carry the marker (what gh's --jq
		// filter prints): the first is edited, no other is added.
		listing := ""
		if run == 2 {
			listing = "17\n42\n"
		}
		if err := os.WriteFile(comments, []byte(listing), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, _ := runActionStep(t, steps["lint"], vals, repo, env)
		if code != 0 || strings.Contains(out, "::error") {
			t.Fatalf("lint step: exit %d\n%s", code, out)
		}
		code, out, _ = runActionStep(t, steps["breaking"], vals, repo, env)
		if code != 0 {
			t.Fatalf("breaking step: exit %d (the step records the status, the result step fails)\n%s", code, out)
		}
		if !regexp.MustCompile(`(?m)^::error file=keys\.yaml,line=\d+,col=\d+,.*family-removed`).MatchString(out) {
			t.Errorf("breaking step: no family-removed annotation on keys.yaml:\n%s", out)
		}
		// Every language is checked; only the stale go file is annotated.
		code, out, _ = runActionStep(t, steps["gen"], vals, repo, env)
		if code != 0 {
			t.Fatalf("gen step: exit %d (the step records the status)\n%s", code, out)
		}
		if n := strings.Count(out, "::error"); n != 1 || !strings.Contains(out,
			"::error file=internal/keys/keys_gen.go,title=keyreg gen go::stale generated code (exit 1): run keyreg gen go --registry keys.yaml --out internal/keys/keys_gen.go\n") {
			t.Errorf("gen step: %d annotations, want one on the go file:\n%s", n, out)
		}
		code, out, rep := runActionStep(t, steps["report"], vals, repo, env)
		if code != 0 || rep["failed"] != "true" || !strings.HasPrefix(rep["marker"], "<!-- keyreg-action registry=keys.yaml") {
			t.Fatalf("report step: exit %d, outputs %v\n%s", code, rep, out)
		}
		b, err := os.ReadFile(filepath.Join(temp, "keyreg-action", "comment.md"))
		if err != nil {
			t.Fatal(err)
		}
		comment := string(b)
		for _, want := range []string{rep["marker"] + "\n", "| lint | passed |", "| breaking | failed (exit 1) |", "| gen | failed (exit 1) |", "| vet | skipped |", "### breaking", "legacy",
			"### gen", "- keyreg gen python: `app/keys_gen.py` is up to date\n", "- keyreg gen json: `keys.codegen.json` is up to date\n",
			"- keyreg gen go: `internal/keys/keys_gen.go` is **stale** (exit 1): run `keyreg gen go --registry keys.yaml --out internal/keys/keys_gen.go` and commit the result\n\n```diff\n"} {
			if !strings.Contains(comment, want) {
				t.Errorf("comment body lacks %q:\n%s", want, comment)
			}
		}
		// The stale file's diff, in the gen section, shows the dropped family.
		if _, genSection, _ := strings.Cut(comment, "### gen"); !strings.Contains(strings.ToLower(genSection), "legacy") {
			t.Errorf("the gen section's diff does not show the legacy family:\n%s", genSection)
		}
		if s, _ := os.ReadFile(summary); !strings.Contains(string(s), comment) {
			t.Errorf("the job summary lacks the report")
		}
		vals["steps.report.outputs.marker"] = rep["marker"]
		code, out, _ = runActionStep(t, steps["comment"], vals, repo, env)
		if code != 0 {
			t.Fatalf("comment step: exit %d\n%s", code, out)
		}
		log, _ := os.ReadFile(ghLog)
		calls := strings.Split(strings.TrimSpace(string(log)), "\n")
		wantCall := "--method POST repos/acme/shop/issues/7/comments"
		if run == 2 {
			wantCall = "--method PATCH repos/acme/shop/issues/comments/17"
		}
		if len(calls) != 2 || !strings.HasPrefix(calls[0], "api --paginate repos/acme/shop/issues/7/comments --jq ") ||
			!strings.Contains(calls[0], `startswith(\"`+rep["marker"]) && !strings.Contains(calls[0], `startswith("`+rep["marker"]) ||
			!strings.HasPrefix(calls[1], "api "+wantCall+" ") {
			t.Errorf("run %d: gh calls:\n%s\nwant a listing then %s", run, log, wantCall)
		}
		if posted, _ := os.ReadFile(body); string(posted) != comment {
			t.Errorf("run %d: the comment sent is not the body:\n%s", run, posted)
		}
		vals["steps.report.outputs.failed"] = rep["failed"]
		if code, _, _ := runActionStep(t, steps["result"], vals, repo, env); code != 1 {
			t.Errorf("result step: exit %d, want 1", code)
		}
	}
}

// TestActionVet runs the action's vet and report steps with a stand-in
// keyreg that records its arguments and exits with each of keyreg vet's
// codes: the command line is keyreg vet --registry R --format github ./...;
// exit 1 is findings, which fail the check unless fail_on is never; exit 2
// or 3 is a check that could not run, which fails it whatever fail_on says,
// with an annotation and the report saying error.
func TestActionVet(t *testing.T) {
	a := readAction(t)
	steps := map[string]actionStep{}
	for _, st := range a.Runs.Steps {
		steps[st.ID] = st
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := "#!/usr/bin/env bash\n(IFS='|'; printf '%s' \"$*\") > \"$ARGS_FILE\"\nexit \"$VET_EXIT\"\n"
	if err := os.WriteFile(filepath.Join(bin, "keyreg"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	argsFile, summary, temp := filepath.Join(dir, "args"), filepath.Join(dir, "summary"), filepath.Join(dir, "temp")
	for _, c := range []struct {
		exit, failOn, status, outcome string
		failed, annotated             bool
	}{
		{"0", "error", "0", "| vet | passed |", false, false},
		{"1", "error", "1", "| vet | failed (exit 1) |", true, false},
		{"1", "never", "0", "| vet | passed |", false, false},
		{"2", "error", "2", "| vet | error (exit 2) |", true, true},
		{"3", "never", "3", "| vet | error (exit 3) |", true, true},
	} {
		os.RemoveAll(temp)
		os.Remove(argsFile)
		vals := map[string]string{"runner.temp": temp}
		for k, in := range a.Inputs {
			vals["inputs."+k] = in.Default
		}
		vals["inputs.vet"], vals["inputs.fail_on"], vals["inputs.registry"] = "true", c.failOn, "svc/keys.yaml"
		env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "GITHUB_STEP_SUMMARY=" + summary,
			"ARGS_FILE=" + argsFile, "VET_EXIT=" + c.exit}
		code, out, _ := runActionStep(t, steps["vet"], vals, dir, env)
		if code != 0 {
			t.Fatalf("exit %s: the vet step exits %d (it records the status)\n%s", c.exit, code, out)
		}
		if got, _ := os.ReadFile(argsFile); string(got) != "vet|--registry|svc/keys.yaml|--format|github|./..." {
			t.Errorf("exit %s: keyreg got %q", c.exit, got)
		}
		if got, _ := os.ReadFile(filepath.Join(temp, "keyreg-action", "vet.status")); strings.TrimSpace(string(got)) != c.status {
			t.Errorf("exit %s, fail_on %s: status %q, want %s", c.exit, c.failOn, got, c.status)
		}
		if got := strings.Contains(out, "::error title=keyreg vet::keyreg vet could not check the code (exit "+c.exit+")"); got != c.annotated {
			t.Errorf("exit %s: annotated %v, want %v\n%s", c.exit, got, c.annotated, out)
		}
		code, out, rep := runActionStep(t, steps["report"], vals, dir, env)
		if code != 0 || (rep["failed"] == "true") != c.failed {
			t.Errorf("exit %s, fail_on %s: report exit %d, failed %q, want %v\n%s", c.exit, c.failOn, code, rep["failed"], c.failed, out)
		}
		b, _ := os.ReadFile(filepath.Join(temp, "keyreg-action", "comment.md"))
		if !strings.Contains(string(b), c.outcome) || !strings.Contains(string(b), "### vet\n") {
			t.Errorf("exit %s, fail_on %s: the report lacks %q:\n%s", c.exit, c.failOn, c.outcome, b)
		}
	}
}

// TestActionGenEscapes: a gen_check path reaches the annotation's file
// property escaped (a comma or colon would end it or start another), and a
// newline in the scope does not start a workflow command of its own.
func TestActionGenEscapes(t *testing.T) {
	a := readAction(t)
	var gen actionStep
	for _, st := range a.Runs.Steps {
		if st.ID == "gen" {
			gen = st
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "keyreg"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	vals := map[string]string{"runner.temp": filepath.Join(dir, "temp")}
	for k, in := range a.Inputs {
		vals["inputs."+k] = in.Default
	}
	vals["inputs.gen_check"] = "go=a,title=x::y%0A.go"
	vals["inputs.gen_scope"] = "--family\n::warning::forged"
	code, out, _ := runActionStep(t, gen, vals, dir, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")})
	if code != 0 {
		t.Fatalf("gen step: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "::error file=a%2Ctitle=x%3A%3Ay%250A.go,title=keyreg gen go::stale generated code (exit 1): run keyreg gen go --registry keys.yaml --out a,title=x::y%250A.go --family ::warning::forged\n") {
		t.Errorf("the path is not escaped in the annotation:\n%s", out)
	}
	if strings.Contains(out, "\n::warning::forged") {
		t.Errorf("the scope forged a workflow command:\n%s", out)
	}
}
