package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// k8sObject is one document of a manifest, as yaml.v3 reads it.
type k8sObject = map[string]any

// readManifests parses every document of every .yaml file under
// deploy/k8s (and deploy/helm's rendered examples, if any).
func readManifests(t *testing.T) map[string][]k8sObject {
	t.Helper()
	files, err := filepath.Glob("../../deploy/k8s/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	out := map[string][]k8sObject{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var o k8sObject
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o == nil {
				continue
			}
			for _, k := range []string{"apiVersion", "kind"} {
				if s, _ := o[k].(string); s == "" {
					t.Errorf("%s: a document without %s", f, k)
				}
			}
			if name, _ := dig(o, "metadata", "name").(string); name == "" {
				t.Errorf("%s: a %v without metadata.name", f, o["kind"])
			}
			out[filepath.Base(f)] = append(out[filepath.Base(f)], o)
		}
	}
	return out
}

// dig follows keys through nested maps.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func list(v any) []any { l, _ := v.([]any); return l }

// podSpec returns the pod template's spec of a Job or CronJob, and the
// job spec around it.
func podSpec(o k8sObject) (job, pod map[string]any) {
	switch o["kind"] {
	case "Job":
		job, _ = o["spec"].(map[string]any)
	case "CronJob":
		job, _ = dig(o, "spec", "jobTemplate", "spec").(map[string]any)
	default:
		return nil, nil
	}
	pod, _ = dig(job, "template", "spec").(map[string]any)
	return job, pod
}

var k8sVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkKeyregArgs parses a container's args through keyreg's own command
// tree: the command must exist, every flag must be one it defines and
// parse, and its positional arguments must pass its check. $(VAR) is
// expanded as the kubelet does, from the container's env (and the index an
// Indexed Job sets).
func checkKeyregArgs(args []string, env map[string]string) error {
	expanded := make([]string, len(args))
	for i, a := range args {
		expanded[i] = k8sVar.ReplaceAllStringFunc(a, func(m string) string {
			if v, ok := env[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	a := &app{stdout: io.Discard, stderr: io.Discard}
	root := a.rootCmd()
	c, rest, err := root.Find(expanded)
	if err != nil {
		return err
	}
	if c == root || !c.Runnable() {
		return fmt.Errorf("%q is not a keyreg command", strings.Join(expanded, " "))
	}
	if err := c.ParseFlags(rest); err != nil {
		return fmt.Errorf("keyreg %s: %w", c.Name(), err)
	}
	if c.Args != nil {
		if err := c.Args(c, c.Flags().Args()); err != nil {
			return fmt.Errorf("keyreg %s: %w", c.Name(), err)
		}
	}
	return nil
}

// TestDeployManifests validates deploy/k8s: every document parses, every
// keyreg container's args parse through the CLI's own flags, the fleet's
// target list parses and each target's flags are audit flags, the Indexed
// Job has one completion per target, and every Job runs bounded (a
// deadline, a backoff limit, memory requests), as non-root on a read-only
// root filesystem; the CronJob never overlaps itself.
func TestDeployManifests(t *testing.T) {
	byFile := readManifests(t)
	var targets []fleetTarget
	var indexed map[string]any
	jobs := 0
	for file, objs := range byFile {
		for _, o := range objs {
			name, _ := dig(o, "metadata", "name").(string)
			where := file + " " + name
			if o["kind"] == "ConfigMap" && name == "keyreg-fleet-targets" {
				s, _ := dig(o, "data", "targets.txt").(string)
				var err error
				if targets, err = readTargets(where, strings.NewReader(s)); err != nil || len(targets) == 0 {
					t.Fatalf("%s: %v (%d targets)", where, err, len(targets))
				}
			}
			if o["kind"] == "CronJob" && dig(o, "spec", "concurrencyPolicy") != "Forbid" {
				t.Errorf("%s: concurrencyPolicy %v, want Forbid", where, dig(o, "spec", "concurrencyPolicy"))
			}
			job, pod := podSpec(o)
			if pod == nil {
				continue
			}
			jobs++
			if dig(job, "completionMode") == "Indexed" {
				indexed = job
			}
			for _, k := range []string{"activeDeadlineSeconds", "backoffLimit"} {
				if _, ok := job[k].(int); !ok {
					t.Errorf("%s: no %s", where, k)
				}
			}
			if dig(pod, "securityContext", "runAsNonRoot") != true {
				t.Errorf("%s: the pod does not require runAsNonRoot", where)
			}
			for _, c := range list(pod["containers"]) {
				img, _ := dig(c, "image").(string)
				cname, _ := dig(c, "name").(string)
				if !strings.Contains(img, "keyreg") {
					continue
				}
				if dig(c, "securityContext", "readOnlyRootFilesystem") != true || dig(c, "securityContext", "allowPrivilegeEscalation") != false {
					t.Errorf("%s/%s: root filesystem not read-only or privilege escalation allowed", where, cname)
				}
				if dig(c, "resources", "requests", "memory") == nil || dig(c, "resources", "limits", "memory") == nil {
					t.Errorf("%s/%s: no memory request or limit", where, cname)
				}
				env := map[string]string{"JOB_COMPLETION_INDEX": "0"}
				for _, e := range list(dig(c, "env")) {
					n, _ := dig(e, "name").(string)
					v, _ := dig(e, "value").(string)
					env[n] = v
				}
				var args []string
				for _, a := range list(dig(c, "args")) {
					s, ok := a.(string)
					if !ok {
						t.Fatalf("%s/%s: arg %v is not a string", where, cname, a)
					}
					args = append(args, s)
				}
				if dig(c, "command") != nil {
					t.Errorf("%s/%s: sets command: the image's entrypoint is keyreg", where, cname)
				}
				if err := checkKeyregArgs(args, env); err != nil {
					t.Errorf("%s/%s: %v", where, cname, err)
				}
			}
		}
	}
	if jobs < 3 || indexed == nil || len(targets) == 0 {
		t.Fatalf("%d jobs, indexed job %v, %d targets: want the CronJob, the fleet's Indexed Job and its merge Job, and a target list", jobs, indexed != nil, len(targets))
	}
	if n, _ := indexed["completions"].(int); n != len(targets) {
		t.Errorf("the Indexed Job has %d completions for %d targets", n, len(targets))
	}
	// Each target's own flags are audit flags.
	for _, tg := range targets {
		args := append([]string{"audit"}, tg.Args...)
		if err := checkKeyregArgs(args, nil); err != nil {
			t.Errorf("target %s: %v", tg.Name, err)
		}
	}
	// The example Secret has a URL for every target.
	for _, o := range byFile["fleet-secret.example.yaml"] {
		for _, tg := range targets {
			if dig(o, "stringData", tg.Name+".url") == nil {
				t.Errorf("fleet-secret.example.yaml: no %s.url", tg.Name)
			}
		}
	}

	// The check has teeth.
	for _, bad := range [][]string{
		{"audit", "--no-such-flag"},
		{"audit", "--rate", "fast"},
		{"report", "merge"},
		{"no-such-command", "x"},
		{"report"},
	} {
		if err := checkKeyregArgs(bad, nil); err == nil {
			t.Errorf("keyreg %q passed", bad)
		}
	}
	if err := checkKeyregArgs([]string{"audit", "--output", "json=/r/$(JOB_COMPLETION_INDEX).json", "--target-index", "$(JOB_COMPLETION_INDEX)"}, map[string]string{"JOB_COMPLETION_INDEX": "0"}); err != nil {
		t.Errorf("a valid audit: %v", err)
	}
}

// TestFleetWorkflowPlan runs the plan step of fleet-audit.yml on the
// Kubernetes target list: the matrix numbers the targets as keyreg audit
// --target-index does, so job i audits line i of the same list.
func TestFleetWorkflowPlan(t *testing.T) {
	b, err := os.ReadFile("../../.github/workflows/fleet-audit.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				ID  string `yaml:"id"`
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	var script string
	for _, st := range wf.Jobs["plan"].Steps {
		if st.ID == "plan" {
			script = st.Run
		}
	}
	var list string
	for _, o := range readManifests(t)["fleet-targets.yaml"] {
		if s, ok := dig(o, "data", "targets.txt").(string); ok {
			list = s
		}
	}
	if script == "" || list == "" {
		t.Fatal("no plan step or no target list")
	}
	dir := t.TempDir()
	run := func(content string) (string, error) {
		f := filepath.Join(dir, "targets.txt")
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out")
		os.Remove(out)
		cmd := exec.Command("bash", "-e", "-c", script)
		cmd.Env = append(os.Environ(), "TARGETS="+f, "GITHUB_OUTPUT="+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			return string(b), err
		}
		b, err := os.ReadFile(out)
		return string(b), err
	}
	got, err := run(list)
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, got)
	}
	m, ok := strings.CutPrefix(strings.TrimSpace(got), "matrix=")
	var matrix struct {
		Include []struct {
			Index int    `json:"index"`
			Name  string `json:"name"`
		} `json:"include"`
	}
	if !ok || json.Unmarshal([]byte(m), &matrix) != nil {
		t.Fatalf("plan output %q", got)
	}
	targets, err := readTargets("targets.txt", strings.NewReader(list))
	if err != nil {
		t.Fatal(err)
	}
	if len(matrix.Include) != len(targets) {
		t.Fatalf("matrix %+v for %d targets", matrix.Include, len(targets))
	}
	for i, tg := range targets {
		if matrix.Include[i].Index != i || matrix.Include[i].Name != tg.Name {
			t.Errorf("matrix job %d is %+v, want index %d name %s", i, matrix.Include[i], i, tg.Name)
		}
	}
	if out, err := run("ok\n\"; echo pwned\n"); err == nil {
		t.Errorf("a bad target name passed the plan: %s", out)
	}
}
