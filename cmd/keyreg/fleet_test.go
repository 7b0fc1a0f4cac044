package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/internal/redistest"
)

// TestFleet runs a fleet as the Kubernetes Indexed Job of deploy/k8s does:
// 6 standalone redis-servers, a 3-master Cluster counted as one target, and
// one target whose server is gone, in one target list; one keyreg audit
// process per target, in parallel, each picking its target by
// $JOB_COMPLETION_INDEX and its URL from the secrets directory; then
// keyreg report merge. The merge of the 7 reports written equals their
// sum; with --expect 8 (the list's length) the missing report of the failed
// target makes the merged report partial (exit 3), the others merged still.
func TestFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 10 redis-servers")
	}
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets")
	reports := filepath.Join(dir, "reports")
	for _, d := range []string{secrets, reports} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var list strings.Builder
	list.WriteString("# the fleet's targets: name, then that target's own audit flags\n")
	addTarget := func(name, url, flags string) {
		fmt.Fprintf(&list, "%s %s\n", name, flags)
		if err := os.WriteFile(filepath.Join(secrets, name+".url"), []byte(url+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 6 {
		s := redistest.Standalone(t)
		c := s.Client(t)
		for k := range 20 + 7*i {
			c.Set(ctx, fmt.Sprintf("v1:session:%d", k), fmt.Sprintf(`{"user_id":%d}`, k), time.Hour)
			if k%3 == 0 {
				c.Set(ctx, fmt.Sprintf("legacy_cache_%d", k), "v", 0)
			}
		}
		addTarget(fmt.Sprintf("cache-%d", i), s.URL(), "--db 0")
	}
	cs := redistest.Cluster(t)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cs.Addrs, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
	defer cc.Close()
	for k := range 90 {
		cc.Set(ctx, fmt.Sprintf("v1:counter:c%d", k), k, time.Hour)
		cc.RPush(ctx, fmt.Sprintf("v1:cart:{%d}:items", k), "a,b")
	}
	addTarget("sessions-cluster", cs.URL(), "--cluster")
	gone := redistest.Standalone(t)
	addTarget("gone", gone.URL(), "--command-timeout 2s")
	gone.Stop()
	targets := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(targets, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	// The Job's container args, one process per completion index.
	const n = 8
	codes := make([]int, n)
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "audit", "--registry", auditRegistry, "--target-list", targets,
				"--secrets-dir", secrets, "--fail-on", "never", "--timeout", "60s", "--output", "json="+filepath.Join(reports, "{target}.json"))
			cmd.Env = append(os.Environ(), "KEYREG_TEST_MAIN=1", fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i), "REDIS_URL=")
			out, err := cmd.CombinedOutput()
			outs[i] = string(out)
			if ee, ok := err.(*exec.ExitError); ok {
				codes[i] = ee.ExitCode()
			} else if err != nil {
				codes[i] = -1
			}
		})
	}
	wg.Wait()
	for i := range n {
		want := 0
		if i == n-1 {
			want = 3
		}
		if codes[i] != want {
			t.Errorf("target %d: exit %d, want %d\n%s", i, codes[i], want, outs[i])
		}
	}
	if !strings.Contains(outs[n-1], "connecting to redis://127.0.0.1:") {
		t.Errorf("the failed target does not say which server it could not reach:\n%s", outs[n-1])
	}
	files, err := filepath.Glob(filepath.Join(reports, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != n-1 {
		t.Fatalf("%d reports written, want %d: %v", len(files), n-1, files)
	}

	// The sum of the parts.
	var sum audit.Totals
	var keys int64
	fam := map[string]int64{}
	targetsSeen := map[string]bool{}
	for _, f := range files {
		r, err := readReport(f)
		if err != nil {
			t.Fatal(err)
		}
		if r.Partial {
			t.Errorf("%s is partial: %s", f, r.PartialReason)
		}
		targetsSeen[r.Target] = true
		addTotals(&sum, r.Totals)
		keys += r.Scan.Keys
		for _, fr := range r.Families {
			fam[fr.Name] += fr.Keys
		}
	}
	if len(targetsSeen) != n-1 || sum.Keys == 0 || fam["session"] == 0 {
		t.Fatalf("reports of %d distinct targets, %d keys, families %v", len(targetsSeen), sum.Keys, fam)
	}
	check := func(name string, expect string, wantCode int) {
		merged := filepath.Join(dir, name+".json")
		args := []string{"report", "merge", "--fail-on", "never", "--output", "json=" + merged, "--format", "markdown"}
		if expect != "" {
			args = append(args, "--expect", expect)
		}
		code, out, errs := cli(t, append(args, files...)...)
		if code != wantCode {
			t.Fatalf("%s: merge exit %d, want %d: %s", name, code, wantCode, errs)
		}
		m, err := readReport(merged)
		if err != nil {
			t.Fatal(err)
		}
		// Info findings are family-unused: the merge keeps one only when
		// every part has it (the family is unused fleet-wide), so they
		// are no sum.
		got := m.Totals
		if got.Infos > sum.Infos {
			t.Errorf("%s: merged %d info findings, the parts %d", name, got.Infos, sum.Infos)
		}
		got.Infos = sum.Infos
		if !reflect.DeepEqual(got, sum) || m.Scan.Keys != keys {
			t.Errorf("%s: merged totals %+v (%d keys), the parts sum to %+v (%d keys)", name, m.Totals, m.Scan.Keys, sum, keys)
		}
		for _, fr := range m.Families {
			if fr.Keys != fam[fr.Name] {
				t.Errorf("%s: merged family %s has %d keys, the parts %d", name, fr.Name, fr.Keys, fam[fr.Name])
			}
		}
		if len(m.Targets) != n-1 {
			t.Errorf("%s: merged report lists %d targets, want %d", name, len(m.Targets), n-1)
		}
		partial := wantCode == exitRuntime
		if m.Partial != partial || partial && !strings.Contains(m.PartialReason, "1 of 8 expected reports missing") {
			t.Errorf("%s: merged partial %v (%q), want %v", name, m.Partial, m.PartialReason, partial)
		}
		if partial && !strings.Contains(strings.ToLower(out), "partial") {
			t.Errorf("%s: the markdown report does not say it is partial:\n%s", name, out)
		}
	}
	check("written", "", exitClean)
	check("fleet", "8", exitRuntime)
	// As the merge Job runs it: the directory, the count from the list.
	code, out, errs := cli(t, "report", "merge", "--fail-on", "never", "--format", "json", "--target-list", targets, reports)
	if code != exitRuntime || !strings.Contains(out, `"partial_reason": "1 of 8 expected reports missing`) {
		t.Errorf("merge --target-list of the reports directory: exit %d, %s\n%.300s", code, errs, out)
	}
	// More reports than the fleet has targets (an earlier run's) is a
	// usage error, not a silent sum.
	if code, _, _ := cli(t, append([]string{"report", "merge", "--expect", "3"}, files...)...); code != exitUsage {
		t.Errorf("merge --expect 3 of 7 reports: exit %d, want %d", code, exitUsage)
	}
}

// addTotals adds b to a, field by field.
func addTotals(a *audit.Totals, b audit.Totals) {
	av, bv := reflect.ValueOf(a).Elem(), reflect.ValueOf(b)
	for i := range av.NumField() {
		if av.Field(i).Kind() == reflect.Int64 {
			av.Field(i).SetInt(av.Field(i).Int() + bv.Field(i).Int())
		}
	}
}

// TestMergeMatchesTargets: a fleet audit's report says which target it is
// (fleet_target, beside target, the URL), and report merge --target-list
// matches each target of the list to exactly one report: with targets a, b
// and c, the reports of a, a again and b are refused (exit 2; they used to
// pass as three), a report of a target the list does not hold is refused,
// and the reports of a and b alone are a partial merge (exit 3) naming c.
// Reports without the field (older keyreg, or no --target-list) are counted
// as before.
func TestMergeMatchesTargets(t *testing.T) {
	srv := redistest.Standalone(t)
	srv.Client(t).Set(context.Background(), "v1:session:1", `{"user_id":1}`, time.Hour)
	dir := t.TempDir()
	secrets, reports := filepath.Join(dir, "secrets"), filepath.Join(dir, "reports")
	for _, d := range []string{secrets, reports} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "b", "c", "x"} {
		os.WriteFile(filepath.Join(secrets, name+".url"), []byte(srv.URL()+"\n"), 0o600)
	}
	list, other := filepath.Join(dir, "targets.txt"), filepath.Join(dir, "other.txt")
	os.WriteFile(list, []byte("# fleet\na\nb --db 0\nc\n"), 0o644)
	os.WriteFile(other, []byte("x\n"), 0o644)
	audit := func(list, index string) {
		t.Helper()
		code, _, stderr := cli(t, "audit", "--registry", auditRegistry, "--target-list", list, "--target-index", index,
			"--secrets-dir", secrets, "--fail-on", "never", "--output", "json="+filepath.Join(reports, "{target}.json"))
		if code != 0 {
			t.Fatalf("audit of target %s of %s: exit %d, %s", index, list, code, stderr)
		}
	}
	audit(list, "0")
	audit(list, "1")
	audit(other, "0")
	a, b, x := filepath.Join(reports, "a.json"), filepath.Join(reports, "b.json"), filepath.Join(reports, "x.json")
	r, err := readReport(a)
	if err != nil {
		t.Fatal(err)
	}
	if r.FleetTarget != "a" || r.Target != srv.URL() {
		t.Errorf("report of target a: fleet_target %q, target %q", r.FleetTarget, r.Target)
	}
	if !strings.Contains(mustRead(t, a), `"fleet_target": "a"`) {
		t.Errorf("the json of target a has no fleet_target")
	}
	// Target a twice (its report copied, as an earlier run's left behind).
	a2 := filepath.Join(dir, "a-again.json")
	os.WriteFile(a2, []byte(mustRead(t, a)), 0o644)
	merge := func(args ...string) (int, string, string) {
		t.Helper()
		return cli(t, append([]string{"report", "merge", "--fail-on", "never", "--format", "json", "--target-list", list}, args...)...)
	}
	if code, _, stderr := merge(a, a2, b); code != exitUsage || !strings.Contains(stderr, "both reports of target a") {
		t.Errorf("reports of a, a and b: exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	if code, _, stderr := merge(a, x); code != exitUsage || !strings.Contains(stderr, `target "x"`) || !strings.Contains(stderr, "does not list") {
		t.Errorf("a report of a target not in the list: exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	code, out, stderr := merge(a, b)
	if code != exitRuntime || !strings.Contains(out, `"partial_reason": "1 of 3 expected reports missing: c"`) {
		t.Errorf("reports of a and b: exit %d, want %d naming c\n%s%.400s", code, exitRuntime, stderr, out)
	}
	if strings.Contains(out, `"fleet_target"`) {
		t.Errorf("the merged report names one fleet target")
	}
	os.Remove(x)
	code, out, _ = merge(reports)
	if code != exitRuntime || !strings.Contains(out, "expected reports missing: c") {
		t.Errorf("the reports directory: exit %d\n%.400s", code, out)
	}

	// Reports of keyreg before the field: counted, as they were.
	var old []string
	for _, f := range []string{a, a, b} {
		o := filepath.Join(dir, fmt.Sprintf("old-%d.json", len(old)))
		os.WriteFile(o, []byte(strings.Replace(mustRead(t, f), `"fleet_target": "`+strings.TrimSuffix(filepath.Base(f), ".json")+`",`, "", 1)), 0o644)
		if strings.Contains(mustRead(t, o), "fleet_target") {
			t.Fatalf("%s still has its fleet_target", o)
		}
		old = append(old, o)
	}
	if code, _, stderr := merge(old...); code != exitClean {
		t.Errorf("three reports without fleet_target: exit %d, want %d (counted)\n%s", code, exitClean, stderr)
	}
	code, out, _ = merge(old[0], b)
	if code != exitRuntime || !strings.Contains(out, "1 of 3 expected reports missing (1 report names no target") {
		t.Errorf("an old report and a new one: exit %d\n%.400s", code, out)
	}
}
