package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/internal/testenv"
	"go.yaml.in/yaml/v3"
)

// helmTemplate renders deploy/helm/keyreg with helm template and the given
// values file (none for the defaults), keyed by kind/name.
func helmTemplate(t *testing.T, helm, values string) map[string]k8sObject {
	t.Helper()
	home := t.TempDir()
	args := []string{"template", "keyreg", "../../deploy/helm/keyreg"}
	if values != "" {
		args = append(args, "--values", values)
	}
	cmd := exec.Command(helm, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %v: %v\n%s", args, err, stderr.Bytes())
	}
	objs := map[string]k8sObject{}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var o k8sObject
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("helm template's output: %v\n%s", err, out)
		}
		if o == nil {
			continue
		}
		key := fmt.Sprintf("%v/%v", o["kind"], dig(o, "metadata", "name"))
		if _, dup := objs[key]; dup {
			t.Errorf("the chart renders %s twice", key)
		}
		objs[key] = o
	}
	return objs
}

// TestHelmChart renders deploy/helm/keyreg with helm template: with the
// default values it renders exactly the objects of deploy/k8s's CronJob,
// fleet Job, merge Job, target list, registry and reports volume (which
// TestDeployManifests validates, flags included), and its values reach
// every object: the image, the run id, the schedule, and one completion
// index per target line.
func TestHelmChart(t *testing.T) {
	helm := testenv.LookPath(t, "helm: scripts/test.sh installs it (go install helm.sh/helm/v3/cmd/helm)", "helm")
	lint := exec.Command(helm, "lint", "--strict", "../../deploy/helm/keyreg")
	home := t.TempDir()
	lint.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	if out, err := lint.CombinedOutput(); err != nil {
		t.Errorf("helm lint --strict: %v\n%s", err, out)
	}
	manifests := readManifests(t)
	want := map[string]k8sObject{}
	for _, f := range []string{"cronjob.yaml", "fleet-job.yaml", "fleet-merge-job.yaml", "fleet-targets.yaml", "fleet-reports-pvc.yaml"} {
		if len(manifests[f]) == 0 {
			t.Fatalf("deploy/k8s/%s has no objects", f)
		}
		for _, o := range manifests[f] {
			want[fmt.Sprintf("%v/%v", o["kind"], dig(o, "metadata", "name"))] = o
		}
	}
	got := helmTemplate(t, helm, "")
	var gotKeys, wantKeys []string
	for k := range got {
		gotKeys = append(gotKeys, k)
	}
	for k := range want {
		wantKeys = append(wantKeys, k)
	}
	slices.Sort(gotKeys)
	slices.Sort(wantKeys)
	if !slices.Equal(gotKeys, wantKeys) {
		t.Fatalf("the chart renders %v, deploy/k8s has %v", gotKeys, wantKeys)
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			g, _ := yaml.Marshal(got[k])
			wb, _ := yaml.Marshal(w)
			t.Errorf("%s: the chart renders\n%s\ndeploy/k8s has\n%s", k, g, wb)
		}
	}

	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte(`image: registry.example/keyreg:v1.4.0
run: run-42
audit:
  schedule: "5 1 * * 0"
targets: |
  # two targets
  a   --db 0

  b   --db 1
registry: |
  version: 1
  families: [] # mine
`), 0o644); err != nil {
		t.Fatal(err)
	}
	got = helmTemplate(t, helm, values)
	fleet := got["Job/keyreg-fleet"]
	if c, p := dig(fleet, "spec", "completions"), dig(fleet, "spec", "parallelism"); c != 2 || p != 2 {
		t.Errorf("two targets: completions %v, parallelism %v, want 2", c, p)
	}
	if s := dig(got["CronJob/keyreg-audit"], "spec", "schedule"); s != "5 1 * * 0" {
		t.Errorf("schedule %v", s)
	}
	if d, _ := dig(got["ConfigMap/keyreg-fleet-targets"], "data", "targets.txt").(string); !strings.HasPrefix(d, "# two targets\na   --db 0\n") {
		t.Errorf("targets.txt %q", d)
	}
	if d, _ := dig(got["ConfigMap/keyreg-registry"], "data", "keys.yaml").(string); !strings.Contains(d, "# mine") {
		t.Errorf("keys.yaml %q", d)
	}
	for _, k := range []string{"CronJob/keyreg-audit", "Job/keyreg-fleet", "Job/keyreg-fleet-merge"} {
		_, pod := podSpec(got[k])
		for _, c := range list(pod["containers"]) {
			c, _ := c.(map[string]any)
			if c["image"] != "registry.example/keyreg:v1.4.0" {
				t.Errorf("%s: image %v", k, c["image"])
			}
			for _, e := range list(c["env"]) {
				if e, _ := e.(map[string]any); e["name"] == "KEYREG_RUN" && e["value"] != "run-42" {
					t.Errorf("%s: KEYREG_RUN %v", k, e["value"])
				}
			}
		}
	}
}
