package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/remedy"
	"github.com/redis/go-redis/v9"
)

const pruneRegistry = `version: 1
owners:
  web: {contact: "#web"}
families:
  - name: doc
    description: live documents
    pattern: "v1:doc:{id:int}"
    version: 1
    owner: web
    type: string
    ttl: optional
  - name: feed
    description: deprecated
    pattern: "v1:feed:{id:int}"
    version: 1
    owner: web
    type: string
    ttl: optional
    deprecated: {since: "2019-01-01", sunset: "2020-01-01"}
`

func seedPrune(t *testing.T, c *redis.Client) {
	ctx := context.Background()
	for i := range 10 {
		c.Set(ctx, fmt.Sprintf("tmp:junk:%d", i), "j", 0)
		c.Set(ctx, fmt.Sprintf("v1:doc:%d", i), "d", 0)
	}
	for i := range 3 {
		c.Set(ctx, fmt.Sprintf("v1:feed:%d", i), "f", 0)
	}
}

func TestPruneCommands(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	seedPrune(t, c)
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(pruneRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, backup := filepath.Join(dir, "plan.json"), filepath.Join(dir, "backup.rdb")

	if code, _, stderr := cli(t, "prune", "-r", reg, "-u", srv.URL(), "--plan", plan, "--unregistered", "--include-live"); code != 2 || !strings.Contains(stderr, "--family") {
		t.Errorf("--include-live without --family: exit %d, %s", code, stderr)
	}
	if code, _, stderr := cli(t, "prune", "-r", reg, "-u", srv.URL(), "--plan", plan); code != 2 || !strings.Contains(stderr, "reason") {
		t.Errorf("no reason: exit %d, %s", code, stderr)
	}
	code, stdout, stderr := cli(t, "prune", "-r", reg, "-u", srv.URL(), "--plan", plan, "--unregistered", "--deprecated", "--format", "json")
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	var sum struct {
		Keys     int64 `json:"keys"`
		ByReason []struct {
			Name string `json:"name"`
			Keys int64  `json:"keys"`
		} `json:"by_reason"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, stdout)
	}
	if sum.Keys != 13 || fmt.Sprint(sum.ByReason) != "[{unregistered 10} {deprecated 3}]" {
		t.Errorf("summary %+v", sum)
	}

	// A stale plan, a replica and a read-only user are refused (exit 2).
	if code, _, stderr := cli(t, "prune", "-u", srv.URL(), "--apply", plan, "--backup", backup, "--max-plan-age", "1ns"); code != 2 || !strings.Contains(stderr, "stale") {
		t.Errorf("stale plan: exit %d, %s", code, stderr)
	}
	replica := redistest.Standalone(t, "--replicaof", "127.0.0.1", fmt.Sprint(srv.Port))
	if code, _, stderr := cli(t, "prune", "-u", replica.URL(), "--apply", plan, "--backup", backup); code != 2 || !strings.Contains(stderr, "replica") {
		t.Errorf("replica: exit %d, %s", code, stderr)
	}
	redistest.ACLUser(t, srv, "reader", "pw", "%R~*", "+@all")
	if code, _, stderr := cli(t, "prune", "-u", "redis://reader:pw@"+srv.Addr, "--apply", plan, "--backup", backup); code != 2 || !strings.Contains(stderr, "may not write") {
		t.Errorf("read-only user: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(backup); err == nil {
		t.Errorf("a refused apply left a backup")
	}
	if n := c.DBSize(context.Background()).Val(); n != 23 {
		t.Errorf("refusals changed the keyspace: %d keys", n)
	}
	for name, content := range map[string]string{
		"garbage.json": "\x00\xff not json",
		"edited.json":  strings.Replace(mustRead(t, plan), `"tmp:junk:1"`, `"v1:doc:1"`, 1),
		"unknown.json": `{"version":1,"kind":"prune","keys":[],"digest":"","surprise":1}`,
	} {
		bad := filepath.Join(dir, name)
		os.WriteFile(bad, []byte(content), 0o600)
		if code, _, stderr := cli(t, "prune", "-u", srv.URL(), "--apply", bad, "--backup", filepath.Join(dir, name+".rdb")); code != 2 || !strings.Contains(stderr, name) {
			t.Errorf("%s: exit %d, %s", name, code, stderr)
		}
	}
	if code, _, stderr := cli(t, "prune", "-u", srv.URL(), "--apply", plan); code != 2 || !strings.Contains(stderr, "--backup") {
		t.Errorf("apply without --backup: exit %d, %s", code, stderr)
	}

	code, stdout, stderr = cli(t, "prune", "-u", srv.URL(), "--apply", plan, "--backup", backup, "--rate", "1000")
	if code != 0 || !strings.Contains(stdout, "13 of 13 keys deleted") {
		t.Fatalf("apply: exit %d\n%s%s", code, stdout, stderr)
	}
	if n := c.DBSize(context.Background()).Val(); n != 10 {
		t.Errorf("after apply %d keys, want the 10 live ones", n)
	}
	// keyreg audit reads the backup as a snapshot.
	if code, stdout, stderr := cli(t, "audit", "-r", reg, "--rdb", backup, "--format", "json"); code > 1 || !strings.Contains(stdout, `"keys": 13`) {
		t.Errorf("audit --rdb backup: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = cli(t, "restore", "-u", srv.URL(), "--dry-run", backup)
	if code != 0 || !strings.Contains(stdout, "would restore 13 keys") || c.DBSize(context.Background()).Val() != 10 {
		t.Errorf("restore --dry-run: exit %d, %s", code, stdout)
	}
	code, stdout, _ = cli(t, "restore", "-u", srv.URL(), backup)
	if code != 0 || !strings.Contains(stdout, "restored 13 keys") || c.DBSize(context.Background()).Val() != 23 {
		t.Errorf("restore: exit %d, %s", code, stdout)
	}
	code, stdout, _ = cli(t, "restore", "-u", srv.URL(), backup)
	if code != 0 || !strings.Contains(stdout, "13 exist") {
		t.Errorf("restore again: exit %d, %s", code, stdout)
	}
	// A damaged backup is refused whole, before anything is restored.
	data, _ := os.ReadFile(backup)
	data[len(data)/2] ^= 0xff
	bad := filepath.Join(dir, "bad.rdb")
	os.WriteFile(bad, data, 0o600)
	if code, _, stderr := cli(t, "restore", "-u", srv.URL(), "--replace", bad); code != 2 {
		t.Errorf("damaged backup: exit %d, %s", code, stderr)
	}
}

const expireRegistry = `version: 1
owners:
  web: {contact: "#web"}
families:
  - name: cart
    description: carts expire within a day
    pattern: "v1:cart:{id:int}"
    version: 1
    owner: web
    type: string
    ttl: {max: 24h}
`

func TestExpireAndSnapshotPlan(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	ctx := context.Background()
	for i := range 20 {
		c.Set(ctx, fmt.Sprintf("v1:cart:%d", i), "c", 0)
	}
	c.Set(ctx, "tmp:junk:1", "j", 0)
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(expireRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "expire.json")
	code, stdout, stderr := cli(t, "expire", "-r", reg, "-u", srv.URL(), "--plan", plan, "--ttl", "1h", "--format", "markdown")
	if code != 0 || !strings.Contains(stdout, "| `ttl-missing` | 20 |") {
		t.Fatalf("expire --plan: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := cli(t, "prune", "-u", srv.URL(), "--apply", plan, "--backup", filepath.Join(dir, "b.rdb")); code != 2 || !strings.Contains(stderr, "expire plan") {
		t.Errorf("prune --apply of an expire plan: exit %d, %s", code, stderr)
	}
	code, stdout, stderr = cli(t, "expire", "-u", srv.URL(), "--apply", plan)
	if code != 0 || !strings.Contains(stdout, "20 of 20 keys given a TTL") {
		t.Fatalf("expire --apply: exit %d\n%s%s", code, stdout, stderr)
	}
	for i := range 20 {
		if ttl := c.TTL(ctx, fmt.Sprintf("v1:cart:%d", i)).Val(); ttl > time.Hour || ttl < 50*time.Minute {
			t.Errorf("v1:cart:%d: TTL %v, want 1h minus at most 10%%", i, ttl)
		}
	}
	// A plan from a snapshot, summarised as text.
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = cli(t, "prune", "-r", reg, "--rdb", filepath.Join(srv.Dir(), "dump.rdb"), "--plan", filepath.Join(dir, "p.json"), "--unregistered")
	if code != 0 || !strings.Contains(stdout, `"unregistered"`) || !strings.Contains(stdout, "1 key,") {
		t.Errorf("prune --plan --rdb: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestPrunePartialPlan: a plan cut by --max-keys is written, says partial
// and exits 3.
func TestPrunePartialPlan(t *testing.T) {
	srv := redistest.Standalone(t)
	seedPrune(t, srv.Client(t))
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(pruneRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "plan.json")
	code, stdout, stderr := cli(t, "prune", "-r", reg, "-u", srv.URL(), "--plan", plan, "--unregistered", "--max-keys", "5", "--count", "1")
	if code != 3 || !strings.Contains(stdout, "partial") || !strings.Contains(stderr, "partial plan") {
		t.Errorf("partial plan: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(plan); err != nil {
		t.Errorf("the partial plan was not written: %v", err)
	}
}

// TestPruneStoppedServer: a server stopped with SIGSTOP while prune
// --apply runs makes it pause, then abort with exit 3 and say so; the next
// run resumes from the journal and finishes.
func TestPruneStoppedServer(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	seedPrune(t, c)
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(pruneRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, backup := filepath.Join(dir, "plan.json"), filepath.Join(dir, "b.rdb")
	if code, _, stderr := cli(t, "prune", "-r", reg, "-u", srv.URL(), "--plan", plan, "--unregistered", "--deprecated"); code != 0 {
		t.Fatalf("plan: %d %s", code, stderr)
	}
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := cli(t, "prune", "-u", srv.URL(), "--apply", plan, "--backup", backup, "--rate", "10",
			"--command-timeout", "200ms", "--max-latency", "50ms", "--max-pause", "600ms")
		done <- result{code, stdout, stderr}
	}()
	// Stop the server once the run has deleted a few keys.
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for c.DBSize(ctx).Val() > 20 {
		if time.Now().After(deadline) {
			t.Fatal("the apply deleted nothing in 20s")
		}
		time.Sleep(10 * time.Millisecond) // polls the server's state
	}
	srv.Pause(t)
	r := <-done
	srv.Resume(t)
	if r.code != 3 || !strings.Contains(r.stdout, "prune partial") || !strings.Contains(r.stderr, "max-latency") {
		t.Fatalf("apply on a stopped server: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	code, stdout, stderr := cli(t, "prune", "-u", srv.URL(), "--apply", plan, "--backup", backup, "--rate", "1000")
	// A delete the stopped server read but had not run yet runs when it
	// continues: the resumed run then finds that key gone.
	var deleted, gone int
	fmt.Sscanf(stdout[strings.Index(stdout, ": ")+2:], "%d of 13 keys deleted, %d gone", &deleted, &gone)
	if code != 0 || !strings.Contains(stdout, "done (resumed)") || deleted+gone != 13 {
		t.Fatalf("resume: exit %d\n%s%s", code, stdout, stderr)
	}
	if n := c.DBSize(ctx).Val(); n != 10 {
		t.Errorf("%d keys left, want the 10 live ones", n)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRestorePartial: a restore stopped by an error says "partial" on
// stdout too, not only on stderr, and exits 3.
func TestRestorePartial(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	seedPrune(t, c)
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(pruneRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, backup := filepath.Join(dir, "plan.json"), filepath.Join(dir, "backup.rdb")
	if code, _, stderr := cli(t, "prune", "-r", reg, "-u", srv.URL(), "--plan", plan, "--unregistered"); code != 0 {
		t.Fatalf("plan: exit %d, %s", code, stderr)
	}
	if code, stdout, stderr := cli(t, "prune", "-u", srv.URL(), "--apply", plan, "--backup", backup, "--rate", "1000"); code != 0 {
		t.Fatalf("apply: exit %d, %s%s", code, stdout, stderr)
	}
	// This user may write tmp:junk:0 to 4 only: the restore stops at 5.
	redistest.ACLUser(t, srv, "some", "pw", "~tmp:junk:[0-4]", "+@all")
	code, stdout, stderr := cli(t, "restore", "-u", "redis://some:pw@"+srv.Addr, backup)
	if code != 3 || !strings.Contains(stdout, "partial") || !strings.Contains(stdout, "restored 5 keys") {
		t.Errorf("restore stopped by NOPERM: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	// Again, in json: the 5 restored exist now, and the run stops at the
	// same key.
	code, stdout, stderr = cli(t, "restore", "-u", "redis://some:pw@"+srv.Addr, "--format", "json", backup)
	var o remedy.RestoreOutcome
	if err := json.Unmarshal([]byte(stdout), &o); err != nil || code != 3 || o.State != "partial" || o.Error == "" || o.Exists != 5 || o.Restored != 0 || len(o.SkippedKeys) != 5 {
		t.Errorf("restore --format json stopped by NOPERM: exit %d, %+v, %v\n%s%s", code, o, err, stdout, stderr)
	}
}

// TestPruneBackupPathUnusable: a --backup in a directory that does not
// exist is a usage error (exit 2) found before anything is read, not a
// "partial prune" (exit 3).
func TestPruneBackupPathUnusable(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	seedPrune(t, c)
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(pruneRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "plan.json")
	if code, _, stderr := cli(t, "prune", "-r", reg, "-u", srv.URL(), "--plan", plan, "--unregistered"); code != 0 {
		t.Fatalf("plan: exit %d, %s", code, stderr)
	}
	code, stdout, stderr := cli(t, "prune", "-u", srv.URL(), "--apply", plan, "--backup", filepath.Join(dir, "no", "such", "b.rdb"))
	if code != 2 || strings.Contains(stdout, "partial") || !strings.Contains(stderr, "b.rdb") {
		t.Errorf("--backup in a missing directory: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if n := c.DBSize(context.Background()).Val(); n != 23 {
		t.Errorf("%d keys left, want 23", n)
	}
}

// TestApplyEscapesPlanAndJournalText: the plan's server and the journal's
// skip reasons are text from files anyone may have edited (the plan's
// digest guards against accidents, not against an author); printed raw, a
// terminal escape in them would drive the operator's terminal.
func TestApplyEscapesPlanAndJournalText(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	seedPrune(t, c)
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(pruneRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, backup := filepath.Join(dir, "plan.json"), filepath.Join(dir, "backup.rdb")
	if code, _, stderr := cli(t, "prune", "-r", reg, "-u", srv.URL(), "--plan", plan, "--deprecated"); code != 0 {
		t.Fatalf("plan: exit %d, %s", code, stderr)
	}
	// The plan's author sets its server, with a valid digest.
	var p map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, plan)), &p); err != nil {
		t.Fatal(err)
	}
	p["server"].(map[string]any)["target"] = "evil\x1b]0;owned\x07\x1b[2J"
	p["digest"] = ""
	var pl remedy.Plan
	b, _ := json.Marshal(p)
	if err := json.Unmarshal(b, &pl); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(&pl)
	sum := sha256.Sum256(b)
	pl.Digest = hex.EncodeToString(sum[:])
	b, _ = json.Marshal(&pl)
	os.WriteFile(plan, b, 0o600)
	code, stdout, stderr := cli(t, "prune", "-u", srv.URL(), "--apply", plan, "--backup", backup, "--rate", "1000")
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, stdout, stderr)
	}
	// A journal line someone added, with a reason of their own.
	f, _ := os.OpenFile(backup+".journal", os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{\"i\":1,\"done\":\"\\u001b[2Jx\"}\n")
	f.Close()
	code, stdout2, stderr2 := cli(t, "prune", "-u", srv.URL(), "--apply", plan, "--backup", backup)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", code, stdout2, stderr2)
	}
	for _, out := range []string{stdout, stderr, stdout2, stderr2} {
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("a terminal escape was printed: %q", out)
		}
	}
}

// TestApplyFlagsOutOfRange: a negative --rate, or a limit that is not
// positive, is a usage error (exit 2) before anything is read, not
// silently the default (a --max-plan-age of -1h applied a day-old plan).
func TestApplyFlagsOutOfRange(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	seedPrune(t, c)
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(pruneRegistry), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "plan.json")
	if code, _, stderr := cli(t, "prune", "-r", reg, "-u", srv.URL(), "--plan", plan, "--unregistered"); code != 0 {
		t.Fatalf("plan: exit %d, %s", code, stderr)
	}
	for _, f := range [][]string{{"--rate", "-1"}, {"--max-key-bytes", "0"}, {"--max-latency", "-1s"}, {"--max-pause", "0s"}, {"--max-plan-age", "-1h"}} {
		args := append([]string{"prune", "-u", srv.URL(), "--apply", plan, "--backup", filepath.Join(dir, f[0]+".rdb")}, f...)
		if code, _, stderr := cli(t, args...); code != 2 || !strings.Contains(stderr, f[0]) {
			t.Errorf("%s %s: exit %d, %s", f[0], f[1], code, stderr)
		}
	}
	if n := c.DBSize(context.Background()).Val(); n != 23 {
		t.Errorf("%d keys left, want 23", n)
	}
}

// TestRemediationRefusesReplica: every command that writes (prune and
// expire --apply, restore and restore --dry-run) refuses a replica as the
// wrong target, exit 2 with a message that says to point at the primary,
// before it writes anything; and so does a connection opened with
// --replica. restore used to try the first RESTORE, get READONLY and exit 3.
func TestRemediationRefusesReplica(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	seedPrune(t, c)
	ctx := context.Background()
	for i := range 5 {
		c.Set(ctx, fmt.Sprintf("v1:cart:%d", i), "c", 0)
	}
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(pruneRegistry+strings.SplitN(expireRegistry, "families:\n", 2)[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	prunePlan, expirePlan := filepath.Join(dir, "prune.json"), filepath.Join(dir, "expire.json")
	if code, _, stderr := cli(t, "prune", "-r", reg, "-u", srv.URL(), "--plan", prunePlan, "--deprecated"); code != 0 {
		t.Fatalf("prune --plan: exit %d, %s", code, stderr)
	}
	if code, _, stderr := cli(t, "expire", "-r", reg, "-u", srv.URL(), "--plan", expirePlan); code != 0 {
		t.Fatalf("expire --plan: exit %d, %s", code, stderr)
	}
	// A backup to restore, made on the primary; its keys put back so that
	// the replica holds them too.
	backup := filepath.Join(dir, "b.rdb")
	if code, stdout, stderr := cli(t, "prune", "-u", srv.URL(), "--apply", prunePlan, "--backup", backup); code != 0 {
		t.Fatalf("prune --apply: exit %d, %s%s", code, stdout, stderr)
	}
	replica := redistest.Standalone(t, "--replicaof", "127.0.0.1", fmt.Sprint(srv.Port))
	rc := replica.Client(t)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(c.Info(ctx, "replication").Val(), "state=online") {
		if time.Now().After(deadline) {
			t.Fatal("the replica did not come online in 20s")
		}
		time.Sleep(20 * time.Millisecond) // polls the primary's state
	}
	before := writeCounts(t, rc)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"prune --apply", []string{"prune", "--apply", prunePlan, "--backup", filepath.Join(dir, "r.rdb")}},
		{"expire --apply", []string{"expire", "--apply", expirePlan}},
		{"restore", []string{"restore", backup}},
		{"restore --dry-run", []string{"restore", "--dry-run", backup}},
	} {
		for _, target := range [][]string{{"-u", replica.URL()}, {"-u", srv.URL(), "--replica"}} {
			args := append(append([]string{}, tc.args...), target...)
			code, stdout, stderr := cli(t, args...)
			if code != 2 || !strings.Contains(stderr, "replica") || !strings.Contains(stderr, "primary") || strings.Contains(stdout, "partial") {
				t.Errorf("%s %s: exit %d, want 2 saying to use the primary\nstdout: %s\nstderr: %s", tc.name, strings.Join(target, " "), code, stdout, stderr)
			}
		}
	}
	if after := writeCounts(t, rc); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused command wrote to the replica: %v, then %v", before, after)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.rdb.journal")); err == nil {
		t.Errorf("a refused prune --apply left a journal")
	}
	if n := c.DBSize(ctx).Val(); n != 25 {
		t.Errorf("the primary holds %d keys, want 25 (the 3 pruned ones not restored)", n)
	}
}

// writeCounts is the calls of the commands a remediation writes with, from
// INFO commandstats.
func writeCounts(t *testing.T, c *redis.Client) map[string]int {
	out := map[string]int{}
	for cmd, n := range redistest.CommandStats(t, c) {
		switch cmd {
		case "restore", "unlink", "pexpire", "setrange", "evalsha", "eval", "script|load":
			out[cmd] = n
		}
	}
	return out
}

// TestApplyFormats: --apply writes its outcome in the --format asked, as
// the plan step does its summary (it used to print text whatever was
// asked), partial runs included, with the same exit codes: 3 for a run
// stopped by --timeout, which says "partial" in every format, 0 for the run
// that resumes and finishes it.
func TestApplyFormats(t *testing.T) {
	srv := redistest.Standalone(t)
	c := srv.Client(t)
	seedPrune(t, c)
	ctx := context.Background()
	for i := range 4 {
		c.Set(ctx, fmt.Sprintf("v1:cart:%d", i), "c", 0)
	}
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(pruneRegistry+strings.SplitN(expireRegistry, "families:\n", 2)[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, backup := filepath.Join(dir, "plan.json"), filepath.Join(dir, "b.rdb")
	if code, _, stderr := cli(t, "prune", "-r", reg, "-u", srv.URL(), "--plan", plan, "--unregistered", "--deprecated"); code != 0 {
		t.Fatalf("plan: exit %d, %s", code, stderr)
	}
	// One planned key changes type: the apply skips it.
	c.Del(ctx, "tmp:junk:3")
	c.HSet(ctx, "tmp:junk:3", "f", "v")

	type outcome struct {
		Kind, State, Error string
		Resumed            bool
		Planned, Deleted   int
		Expired, Gone      int
		Skipped            int
		SkippedBy          map[string]int `json:"skipped_by_reason"`
		SkippedKeys        []remedy.Skip  `json:"skipped_keys"`
	}
	parse := func(what, stdout string) outcome {
		t.Helper()
		var o outcome
		if err := json.Unmarshal([]byte(stdout), &o); err != nil {
			t.Fatalf("%s: not json: %v\n%s", what, err, stdout)
		}
		return o
	}
	// Stopped by --timeout at 10 keys a second: partial, exit 3, in json.
	code, stdout, stderr := cli(t, "prune", "-u", srv.URL(), "--apply", plan, "--backup", backup, "--rate", "10", "--timeout", "500ms", "--format", "json")
	o := parse("partial run", stdout)
	if code != 3 || o.State != "partial" || o.Error == "" || o.Kind != "prune" || o.Planned != 13 || o.Deleted+o.Skipped >= 13 {
		t.Fatalf("a run stopped by --timeout: exit %d, %+v\n%s", code, o, stderr)
	}
	// Resumed and finished, in json.
	code, stdout, stderr = cli(t, "prune", "-u", srv.URL(), "--apply", plan, "--backup", backup, "--rate", "1000", "--format", "json")
	o = parse("resumed run", stdout)
	if code != 0 || o.State != "done" || !o.Resumed || o.Deleted+o.Gone != 12 || o.Skipped != 1 || o.SkippedBy["changed"] != 1 ||
		len(o.SkippedKeys) != 1 || o.SkippedKeys[0].Key != `"tmp:junk:3"` || o.SkippedKeys[0].Reason != "changed" {
		t.Fatalf("resumed: exit %d, %+v\n%s%s", code, o, stdout, stderr)
	}
	// Run again (everything decided): markdown.
	code, stdout, _ = cli(t, "prune", "-u", srv.URL(), "--apply", plan, "--backup", backup, "--format", "markdown")
	if code != 0 || !strings.HasPrefix(stdout, "## keyreg prune: done (resumed)\n") || !strings.Contains(stdout, "| `\"tmp:junk:3\"` | 0 | `changed` |") {
		t.Errorf("markdown: exit %d\n%s", code, stdout)
	}
	// A partial run in markdown and text says so too.
	exp := filepath.Join(dir, "expire.json")
	if code, _, stderr := cli(t, "expire", "-r", reg, "-u", srv.URL(), "--plan", exp); code != 0 {
		t.Fatalf("expire --plan: exit %d, %s", code, stderr)
	}
	code, stdout, _ = cli(t, "expire", "-u", srv.URL(), "--apply", exp, "--format", "markdown", "--rate", "2", "--timeout", "300ms")
	if code != 3 || !strings.HasPrefix(stdout, "## keyreg expire: partial\n") || !strings.Contains(stdout, "**Partial**") {
		t.Errorf("partial expire in markdown: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = cli(t, "expire", "-u", srv.URL(), "--apply", exp, "--format", "json")
	o = parse("expire", stdout)
	if code != 0 || o.Kind != "expire" || o.State != "done" || o.Expired+o.Skipped != 4 || o.Expired == 0 || o.Skipped != o.SkippedBy["ttl-set"] {
		t.Errorf("expire --apply --format json: exit %d, %+v", code, o)
	}
	if code, _, stderr := cli(t, "expire", "-u", srv.URL(), "--apply", exp, "--format", "yaml"); code != 2 || !strings.Contains(stderr, "--format") {
		t.Errorf("--format yaml: exit %d, %s", code, stderr)
	}
	// restore takes --format too: the 12 keys backed up (not the one
	// skipped as changed before its backup).
	code, stdout, stderr = cli(t, "restore", "-u", srv.URL(), "--dry-run", "--format", "json", backup)
	var ro remedy.RestoreOutcome
	if err := json.Unmarshal([]byte(stdout), &ro); err != nil || code != 0 || ro.Kind != "restore" || ro.State != "done" || !ro.DryRun || ro.Restored != 12 {
		t.Errorf("restore --dry-run --format json: exit %d, %+v, %v\n%s%s", code, ro, err, stdout, stderr)
	}
	code, stdout, _ = cli(t, "restore", "-u", srv.URL(), "--format", "markdown", backup)
	if code != 0 || !strings.HasPrefix(stdout, "## keyreg restore: done\n\nrestored 12 keys;") {
		t.Errorf("restore --format markdown: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := cli(t, "restore", "-u", srv.URL(), "--format", "yaml", backup); code != 2 || !strings.Contains(stderr, "--format") {
		t.Errorf("restore --format yaml: exit %d, %s", code, stderr)
	}
}
