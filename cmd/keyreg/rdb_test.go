package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
	"github.com/redis/go-redis/v9"
)

// rdbReport is the part of the json audit report compared between a live
// audit and the audit of a snapshot of the same server.
type rdbReport struct {
	Target string `json:"target"`
	Mode   string `json:"mode"`
	Scan   struct {
		Keys  int64    `json:"keys"`
		Notes []string `json:"notes"`
	} `json:"scan"`
	Families []struct {
		Name    string `json:"name"`
		Keys    int64  `json:"keys"`
		WithTTL int64  `json:"with_ttl"`
		Sampled int64  `json:"sampled"`
	} `json:"families"`
	Findings []rdbFinding `json:"findings"`
}

type rdbFinding struct {
	Rule   string `json:"rule"`
	Family string `json:"family"`
	Count  int64  `json:"count"`
}

func (r *rdbReport) lines() (fams, finds []string) {
	for _, f := range r.Families {
		if f.Keys > 0 {
			fams = append(fams, fmt.Sprintf("%s keys=%d ttl=%d sampled=%d", f.Name, f.Keys, f.WithTTL, f.Sampled))
		}
	}
	for _, f := range r.Findings {
		finds = append(finds, fmt.Sprintf("%s %s x%d", f.Family, f.Rule, f.Count))
	}
	slices.Sort(fams)
	slices.Sort(finds)
	return fams, finds
}

// TestAuditRDBMatchesLive audits a real server live and through a SAVEd
// snapshot of it, with the registry of every preset and the keys of every
// captured library plus keys that break the registry (a TTL missing, a
// wrong type): family counts, TTL counts, samples and findings must be the
// same, and the report must name its source.
func TestAuditRDBMatchesLive(t *testing.T) {
	s := redistest.Standalone(t)
	captures, err := filepath.Glob(filepath.Join(frameworksDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var all []capturedKey
	for _, c := range captures {
		_, keys := readCapture(t, c)
		for _, k := range keys {
			if k.PTTL < 0 || k.PTTL > 10*60_000 { // none expires between the two audits
				all = append(all, k)
			}
		}
	}
	restore(t, s.Addr, all, nil)
	ctx := context.Background()
	c := s.Client(t)
	// Findings for both audits to agree on: a cart without a TTL, a
	// session of the wrong type, an unregistered key.
	if err := c.HSet(ctx, "v1:cart:{7}:items", "sku", `{"q":1}`).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.RPush(ctx, "v2:user:session:0b6f1c1e-8a9d-4c47-9f5e-2b1d7a3c9e10", "x").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "tmp:debug:1", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	dir, err := c.ConfigGet(ctx, "dir").Result()
	if err != nil {
		t.Fatal(err)
	}
	file, err := c.ConfigGet(ctx, "dbfilename").Result()
	if err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(dir["dir"], file["dbfilename"])
	const reg = frameworksDir + "/all/keys.yaml"
	audit := func(args ...string) *rdbReport {
		t.Helper()
		code, out, errb := cli(t, append([]string{"audit", "--registry", reg, "--format", "json", "--fail-on", "never"}, args...)...)
		if code != 0 {
			t.Fatalf("audit %v: exit %d\n%s", args, code, errb)
		}
		var r rdbReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	// A snapshot holds no Pub/Sub state: the key audits are compared, so
	// the live one leaves out the channel audit the presets' channels
	// would start (audit --rdb says "channels not audited").
	live := audit("--url", "redis://"+s.Addr, "--allow-touch", "--channels=false")
	snap := audit("--rdb", dump)
	lf, lx := live.lines()
	sf, sx := snap.lines()
	if !slices.Equal(lf, sf) {
		t.Errorf("families differ:\nlive %q\nrdb  %q", lf, sf)
	}
	if !slices.Equal(lx, sx) {
		t.Errorf("findings differ:\nlive %q\nrdb  %q", lx, sx)
	}
	if len(lx) < 3 {
		t.Errorf("the planted findings are missing: %q", lx)
	}
	if snap.Mode != "snapshot" || !strings.HasPrefix(snap.Target, "rdb:") || !slices.ContainsFunc(snap.Scan.Notes, func(n string) bool {
		return strings.Contains(n, "RDB version") && strings.Contains(n, "server 7.") && strings.Contains(n, "created ")
	}) {
		t.Errorf("the report does not name its source: target %q, mode %q, notes %q", snap.Target, snap.Mode, snap.Scan.Notes)
	}
	// The same through standard input.
	f, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, errb strings.Builder
	a := &app{stdin: f, stdout: &out, stderr: &errb}
	if code := a.run(ctx, []string{"audit", "--registry", reg, "--format", "json", "--fail-on", "never", "--rdb", "-"}); code != 0 {
		t.Fatalf("--rdb -: exit %d\n%s", code, errb.String())
	}
	var piped rdbReport
	if err := json.Unmarshal([]byte(out.String()), &piped); err != nil {
		t.Fatal(err)
	}
	if pf, px := piped.lines(); !slices.Equal(pf, sf) || !slices.Equal(px, sx) {
		t.Errorf("--rdb - differs from --rdb FILE")
	}
}

// TestAuditRDBDamaged checks that a truncated snapshot is exit 3 with the
// byte offset, and a partial report.
func TestAuditRDBDamaged(t *testing.T) {
	s := redistest.Standalone(t)
	ctx := context.Background()
	c := s.Client(t)
	for i := range 200 {
		if err := c.Set(ctx, fmt.Sprintf("v1:cart:{%d}:items", i), strings.Repeat("x", 100), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	dir, _ := c.ConfigGet(ctx, "dir").Result()
	file, _ := c.ConfigGet(ctx, "dbfilename").Result()
	data, err := os.ReadFile(filepath.Join(dir["dir"], file["dbfilename"]))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.rdb")
	if err := os.WriteFile(cut, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errb := cli(t, "audit", "--registry", frameworksDir+"/all/keys.yaml", "--format", "json", "--rdb", cut)
	if code != 3 || !strings.Contains(errb, "offset") {
		t.Fatalf("truncated snapshot: exit %d, want 3 with the offset\n%s", code, errb)
	}
	if !strings.Contains(out, `"partial": true`) {
		t.Errorf("the report of a truncated snapshot is not partial:\n%s", out)
	}
	// The keys read before the cut are counted, the batch in progress
	// included: about half of the 200.
	if rep := parseAudit(t, out); rep.Totals.Keys < 50 || rep.Totals.Keys > 200 {
		t.Errorf("the partial report counts %d keys; want those read before the cut", rep.Totals.Keys)
	}
}

// TestExplainRDB looks keys up in a SAVEd snapshot: the facts and verdicts
// of explain --rdb are those of explain --live on the same server.
func TestExplainRDB(t *testing.T) {
	s := redistest.Standalone(t)
	ctx := context.Background()
	c := s.Client(t)
	if err := c.HSet(ctx, "v1:cart:{7}:items", "sku", `{"q":1}`).Err(); err != nil { // no TTL: ttl-missing
		t.Fatal(err)
	}
	if err := c.Set(ctx, "v2:user:session:0b6f1c1e-8a9d-4c47-9f5e-2b1d7a3c9e10", `{"user_id":1}`, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	dir, _ := c.ConfigGet(ctx, "dir").Result()
	file, _ := c.ConfigGet(ctx, "dbfilename").Result()
	dump := filepath.Join(dir["dir"], file["dbfilename"])
	const reg = frameworksDir + "/all/keys.yaml"
	for _, key := range []string{"v1:cart:{7}:items", "v2:user:session:0b6f1c1e-8a9d-4c47-9f5e-2b1d7a3c9e10"} {
		lcode, lout, _ := cli(t, "explain", "--registry", reg, "--format", "json", "--live", "--url", "redis://"+s.Addr, "--allow-touch", key)
		rcode, rout, rerr := cli(t, "explain", "--registry", reg, "--format", "json", "--rdb", dump, key)
		if lcode != rcode {
			t.Errorf("%s: explain --live exit %d, --rdb exit %d (%s)", key, lcode, rcode, rerr)
		}
		var l, r struct {
			Live struct {
				Source   string   `json:"source"`
				Exists   bool     `json:"exists"`
				Type     string   `json:"type"`
				Verdicts []string `json:"verdicts"`
			} `json:"live"`
		}
		if err := json.Unmarshal([]byte(lout), &l); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(rout), &r); err != nil {
			t.Fatalf("%v\n%s", err, rout)
		}
		if !r.Live.Exists || r.Live.Type != l.Live.Type || !slices.Equal(r.Live.Verdicts, l.Live.Verdicts) || r.Live.Source != "rdb:"+dump {
			t.Errorf("%s: --rdb %+v, --live %+v", key, r.Live, l.Live)
		}
		if strings.HasPrefix(key, "v1:cart:") && !slices.ContainsFunc(r.Live.Verdicts, func(v string) bool { return strings.Contains(v, "ttl-missing") }) {
			t.Errorf("the cart without a TTL has verdicts %q, want ttl-missing", r.Live.Verdicts)
		}
	}
	code, out, _ := cli(t, "explain", "--registry", reg, "--rdb", dump, "v1:cart:{8}:items")
	if code != 0 || !strings.Contains(out, "the key is not in "+dump) {
		t.Errorf("a key not in the snapshot: exit %d\n%s", code, out)
	}
}

// TestInitRDB infers a registry from a SAVEd snapshot and from the live
// server it came from: the families (pattern, type, encoding, TTL policy)
// and the presets must be the same.
func TestInitRDB(t *testing.T) {
	s := redistest.Standalone(t)
	captures, err := filepath.Glob(filepath.Join(frameworksDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var all []capturedKey
	for _, c := range captures {
		if strings.Contains(c, "prefixed") {
			continue
		}
		_, keys := readCapture(t, c)
		for _, k := range keys {
			if k.PTTL < 0 || k.PTTL > 10*60_000 {
				all = append(all, k)
			}
		}
	}
	restore(t, s.Addr, all, nil)
	ctx := context.Background()
	c := s.Client(t)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	dir, _ := c.ConfigGet(ctx, "dir").Result()
	file, _ := c.ConfigGet(ctx, "dbfilename").Result()
	dump := filepath.Join(dir["dir"], file["dbfilename"])
	shapeOf := func(args ...string) []string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "keys.yaml")
		code, _, errb := cli(t, append([]string{"init", "--out", out}, args...)...)
		if code != 0 {
			t.Fatalf("init %v: exit %d\n%s", args, code, errb)
		}
		reg, _, _ := runInitLoad(t, out)
		var lines []string
		for _, f := range reg.Families {
			if f.FromPreset() {
				lines = append(lines, "preset "+f.Preset)
				continue
			}
			lines = append(lines, fmt.Sprintf("%s %s %s %s", f.Pattern.Source, f.Type, f.Encoding, f.TTL))
		}
		slices.Sort(lines)
		return slices.Compact(lines)
	}
	live := shapeOf("--url", "redis://"+s.Addr, "--allow-touch")
	snap := shapeOf("--rdb", dump)
	if !slices.Equal(live, snap) {
		t.Errorf("init --rdb and a live init differ:\nlive %q\nrdb  %q", live, snap)
	}
	if len(live) < 9 {
		t.Errorf("too few families and presets: %q", live)
	}
	if code, _, errb := cli(t, "init", "--out", filepath.Join(t.TempDir(), "k.yaml"), "--rdb", "-"); code != 2 || !strings.Contains(errb, "read once") {
		t.Errorf("init --rdb - with sampling: exit %d, want 2\n%s", code, errb)
	}
}

// runInitLoad loads a registry init wrote and checks it lints without errors.
func runInitLoad(t *testing.T, path string) (*registry.Registry, []byte, string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.LoadFile(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if c := rules.Lint(reg).Active().Count(); c.Error > 0 {
		t.Fatalf("lint errors (%s):\n%s", c, data)
	}
	return reg, data, path
}

// TestAuditRDBOldServers audits the snapshots that real Redis 2.8 to 7.4
// (and Valkey) servers saved (snapshot/testdata/servers) with a registry of
// one family per type: every key that had not expired lands on its type's
// family, with no type finding, and the report names the file's version.
func TestAuditRDBOldServers(t *testing.T) {
	files, err := filepath.Glob("../../snapshot/testdata/servers/*.rdb")
	if err != nil || len(files) < 4 {
		t.Fatalf("want the old servers' fixtures: %v, %v", files, err)
	}
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	var fams strings.Builder
	for _, typ := range []string{"string", "list", "set", "zset", "hash", "stream"} {
		prefix := map[string]string{"string": "str"}[typ]
		if prefix == "" {
			prefix = typ
		}
		fmt.Fprintf(&fams, "  - {name: %ss, description: d, pattern: \"%s:{name:any}\", owner: t, type: %s, ttl: optional}\n", prefix, prefix, typ)
	}
	if err := os.WriteFile(reg, []byte("version: 1\nowners: {t: {contact: t@example.com}}\nfamilies:\n"+fams.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			var fx struct {
				SavedAt int64 `json:"saved_unix_ms"`
				Keys    []struct {
					Type string `json:"type"`
					PTTL int64  `json:"pttl_ms"`
				} `json:"keys"`
			}
			b, err := os.ReadFile(strings.TrimSuffix(file, ".rdb") + ".json")
			if err != nil || json.Unmarshal(b, &fx) != nil {
				t.Fatalf("fixture json: %v", err)
			}
			code, out, errb := cli(t, "audit", "--rdb", file, "--registry", reg, "--format", "json")
			var r rdbReport
			if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitClean {
				t.Fatalf("exit %d, %v\n%s\n%s", code, err, out, errb)
			}
			// A file without ctime (RDB before 7) compares TTLs with now: its
			// keys with a TTL may have expired since the fixture was made.
			noCtime := slices.ContainsFunc(r.Scan.Notes, func(n string) bool { return strings.Contains(n, "no creation time") })
			want := map[string]int64{}
			for _, k := range fx.Keys {
				if k.PTTL > 0 && noCtime && fx.SavedAt+k.PTTL < time.Now().UnixMilli() {
					continue
				}
				want[k.Type]++
			}
			got := map[string]int64{}
			var total int64
			for _, f := range r.Families {
				typ := strings.TrimSuffix(f.Name, "s")
				if typ == "str" {
					typ = "string"
				}
				if f.Keys > 0 {
					got[typ] = f.Keys
				}
				total += f.Keys
			}
			// Only the stream family may be unused: Redis before 5 has none.
			findings := slices.DeleteFunc(r.Findings, func(f rdbFinding) bool { return f.Rule == "family-unused" && f.Family == "streams" })
			if fmt.Sprint(got) != fmt.Sprint(want) || r.Scan.Keys != total || len(findings) != 0 {
				t.Errorf("keys per type %v, want %v; %d keys scanned; findings %v", got, want, r.Scan.Keys, r.Findings)
			}
			if len(r.Scan.Notes) == 0 || !strings.Contains(r.Scan.Notes[0], "version") {
				t.Errorf("notes %q: want the file's RDB version", r.Scan.Notes)
			}
		})
	}
}

// TestAuditRDBCluster audits a 3-master Cluster live and through one
// --rdb per master, each file SAVEd by its master: the families, TTL
// counts and findings agree, and the snapshot report counts three files.
func TestAuditRDBCluster(t *testing.T) {
	cs := redistest.Cluster(t)
	ctx := context.Background()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cs.Addrs[:3], DisableIdentity: true})
	defer c.Close()
	for i := range 300 {
		var err error
		switch i % 3 {
		case 0:
			err = c.Set(ctx, fmt.Sprintf("c:user:%d", i), `{"id":1}`, time.Hour).Err()
		case 1:
			err = c.HSet(ctx, fmt.Sprintf("c:cart:{%d}:items", i), "sku", "1").Err() // no TTL: ttl-missing
		default:
			err = c.Set(ctx, fmt.Sprintf("tmp:%d", i), "x", 0).Err() // unregistered
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(`version: 1
owners: {t: {contact: t@example.com}}
families:
  - {name: user, description: d, pattern: "c:user:{id:int}", owner: t, type: string, encoding: json, ttl: {max: 2h}}
  - {name: cart, description: d, pattern: "c:cart:{{id:int}}:items", owner: t, type: hash, ttl: {max: 1d}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var files []string
	for i, m := range cs.Masters {
		mc := m.Client(t)
		if err := mc.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		d := mc.ConfigGet(ctx, "dir").Val()["dir"]
		name := mc.ConfigGet(ctx, "dbfilename").Val()["dbfilename"]
		files = append(files, "--rdb", filepath.Join(d, name))
		if n := mc.DBSize(ctx).Val(); n == 0 {
			t.Fatalf("master %d holds no key", i)
		}
	}
	audit := func(args ...string) *rdbReport {
		t.Helper()
		code, out, errb := cli(t, append([]string{"audit", "--registry", reg, "--format", "json"}, args...)...)
		var r rdbReport
		if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitFindings {
			t.Fatalf("audit %v: exit %d, %v\n%s", args, code, err, errb)
		}
		return &r
	}
	live := audit("--url", "redis://"+cs.Addrs[0], "--allow-touch")
	snap := audit(files...)
	lf, lx := live.lines()
	sf, sx := snap.lines()
	if !slices.Equal(lf, sf) || !slices.Equal(lx, sx) || live.Scan.Keys != 300 || snap.Scan.Keys != 300 {
		t.Errorf("live: %d keys %q %q\nrdb:  %d keys %q %q", live.Scan.Keys, lf, lx, snap.Scan.Keys, sf, sx)
	}
	if !slices.Contains(lx, "cart ttl-missing x100") {
		t.Errorf("the planted finding is missing: %q", lx)
	}
	files3 := 0
	for _, n := range snap.Scan.Notes {
		if strings.HasPrefix(n, "snapshot ") && strings.Contains(n, "RDB version") {
			files3++
		}
	}
	if files3 != 3 {
		t.Errorf("notes name %d files, want 3: %q", files3, snap.Scan.Notes)
	}
}
