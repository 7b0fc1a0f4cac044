package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/internal/synth"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
)

// runInit runs keyreg init against addr into a fresh directory and loads
// what it wrote. The registry must load and lint without errors.
func runInit(t *testing.T, addr string, extra ...string) (*registry.Registry, []byte, string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "keys.yaml")
	args := append([]string{"init", "--url", "redis://" + addr, "--allow-touch", "--out", out}, extra...)
	code, _, errb := cli(t, args...)
	if code != 0 {
		t.Fatalf("keyreg init: exit %d\n%s", code, errb)
	}
	return runInitLoad(t, out)
}

// presetsOf lists the presets a registry uses.
func presetsOf(reg *registry.Registry) []string {
	var out []string
	for _, f := range reg.Families {
		if f.Preset != "" && !slices.Contains(out, f.Preset) {
			out = append(out, f.Preset)
		}
	}
	slices.Sort(out)
	return out
}

// auditUnregistered audits addr with the registry at path and returns the
// unregistered keys it counts and its findings above info.
func auditUnregistered(t *testing.T, addr, path string) (int64, []string) {
	t.Helper()
	code, out, errb := cli(t, "audit", "--url", "redis://"+addr, "--registry", path, "--format", "json", "--allow-touch")
	if code > 1 {
		t.Fatalf("audit exit %d: %s", code, errb)
	}
	var r presetAudit
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("audit report: %v\n%s", err, out)
	}
	var unreg int64
	var bad []string
	for _, f := range r.Findings {
		if f.Rule == "unregistered-key" {
			unreg += f.Count
		}
		if f.Severity != "info" {
			bad = append(bad, fmt.Sprintf("%s %s x%d: %s", f.Family, f.Rule, f.Count, f.Message))
		}
	}
	return unreg, bad
}

// leftoverRe reads the count of init's leftovers list.
var leftoverRe = regexp.MustCompile(`(?m)^# unregistered leftovers: (\d+) keys`)

// leftovers returns the number of keys the written registry lists as
// unregistered leftovers.
func leftovers(data []byte) int64 {
	m := leftoverRe.FindSubmatch(data)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// auditLeftovers audits addr with the registry init wrote at path and
// checks that every key is registered but the leftovers the file lists:
// those are unregistered (or placeholder-invalid, when they have the shape
// of a family with values it refuses), and nothing else is found above
// info.
func auditLeftovers(t *testing.T, addr, path string, data []byte) {
	t.Helper()
	code, out, errb := cli(t, "audit", "--url", "redis://"+addr, "--registry", path, "--format", "json", "--allow-touch")
	if code > 1 {
		t.Fatalf("audit exit %d: %s", code, errb)
	}
	var r presetAudit
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("audit report: %v\n%s", err, out)
	}
	var unreg int64
	var bad []string
	for _, f := range r.Findings {
		switch {
		case f.Rule == "unregistered-key" || f.Rule == "placeholder-invalid":
			unreg += f.Count
		case f.Severity != "info":
			bad = append(bad, fmt.Sprintf("%s %s x%d: %s", f.Family, f.Rule, f.Count, f.Message))
		}
	}
	if left := leftovers(data); unreg != left || len(bad) > 0 {
		t.Errorf("audit of the written registry: %d unregistered keys (want the %d leftovers), findings %v\n%s", unreg, left, bad, data)
	}
}

// TestInitCaptures runs keyreg init on each framework capture: it must
// recognise the framework and emit its preset, and the audit of the
// written registry must find every key registered but the leftovers init
// lists (one-off keys of a capture), with no other error or warning.
func TestInitCaptures(t *testing.T) {
	regs, err := filepath.Glob(filepath.Join(frameworksDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := redistest.Standalone(t)
	for _, regPath := range regs {
		name := strings.TrimSuffix(filepath.Base(regPath), ".yaml")
		t.Run(name, func(t *testing.T) {
			own, err := registry.LoadFile(regPath)
			if err != nil {
				t.Fatal(err)
			}
			want := own.Families[0].Preset
			_, keys := readCapture(t, filepath.Join(frameworksDir, name+".jsonl"))
			// Keys that expire within a minute may be gone by the scan.
			var lasting []capturedKey
			for _, k := range keys {
				if k.PTTL < 0 || k.PTTL > 60_000 {
					lasting = append(lasting, k)
				}
			}
			restore(t, s.Addr, lasting, nil)
			reg, data, path := runInit(t, s.Addr)
			got := presetsOf(reg)
			p, _ := registry.LookupPreset(want)
			if !slices.ContainsFunc(got, func(g string) bool { return g == want || slices.Contains(p.Coexists, g) }) {
				t.Errorf("init did not use preset %s (it used %v):\n%s", want, got, data)
			}
			auditLeftovers(t, s.Addr, path, data)
		})
	}
}

// TestInitTogether is the bar: the keys of every captured library in one
// Redis. init must use presets for at least 7 of the 9 frameworks, and
// register every key but the leftovers it lists.
func TestInitTogether(t *testing.T) {
	captures, err := filepath.Glob(filepath.Join(frameworksDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var all []capturedKey
	for _, c := range captures {
		if strings.Contains(c, "celery-prefixed") {
			continue // the same library twice
		}
		_, keys := readCapture(t, c)
		for _, k := range keys {
			if k.PTTL < 0 || k.PTTL > 60_000 {
				all = append(all, k)
			}
		}
	}
	s := redistest.Standalone(t)
	restore(t, s.Addr, all, nil)
	reg, data, path := runInit(t, s.Addr)
	got := presetsOf(reg)
	if len(got) < 7 {
		t.Errorf("init used presets %v, want at least 7 of the 9 frameworks:\n%s", got, data)
	}
	auditLeftovers(t, s.Addr, path, data)
	t.Logf("%d keys: presets %v, %d families in all (%d mined), %d leftovers", len(all), got, len(reg.Families), countMined(reg), leftovers(data))
}

// TestInitSynth seeds keys of known families (internal/synth) and checks
// that init recovers them: every true family's placeholders get their
// types, and at least 99% of the keys land on a family whose pattern
// equals the true one up to placeholder names, but the keys of literal
// patterns, each one key: they are leftovers, listed in the file.
func TestInitSynth(t *testing.T) {
	pats := synth.Patterns(12)
	keys := synth.Keys(pats, ':', 6000, 7, 0)
	s := redistest.Standalone(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	defer c.Close()
	p := c.Pipeline()
	for i, k := range keys {
		ttl := time.Duration(0)
		if i%2 == 0 {
			ttl = time.Hour
		}
		p.Set(ctx, k, fmt.Sprintf(`{"n":%d}`, i), ttl)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	reg, data, path := runInit(t, s.Addr)
	auditLeftovers(t, s.Addr, path, data)
	truth := make([]*registry.Family, len(pats))
	for i, src := range pats {
		pt, err := registry.ParsePattern(src, ':')
		if err != nil {
			t.Fatal(err)
		}
		truth[i] = &registry.Family{Index: i, Name: fmt.Sprint(i), Pattern: pt}
	}
	tm := registry.NewMatcher(truth, ':')
	m := reg.Matcher()
	right := 0
	for _, k := range keys {
		want, got := tm.Match(k), m.Match(k)
		switch {
		case want != nil && got != nil && shape(got.Pattern) == shape(want.Pattern):
			right++
		case want != nil && got == nil && len(want.Pattern.Placeholders()) == 0 && bytes.Contains(data, []byte("#   - "+strconv.Quote(k)+"\n")):
			// A literal pattern is one key: a leftover, listed.
			right++
		}
	}
	if right*100 < len(keys)*99 {
		t.Errorf("%d of %d keys on a family with their true pattern, want 99%%:\n%s", right, len(keys), data)
	}
}

// countMined counts the families a registry declares itself, not through
// a preset.
func countMined(reg *registry.Registry) int {
	n := 0
	for _, f := range reg.Families {
		if !f.FromPreset() {
			n++
		}
	}
	return n
}

// shape is a pattern with its placeholder names left out.
func shape(p *registry.Pattern) string {
	var b strings.Builder
	for _, part := range p.Parts {
		if part.IsPlaceholder() {
			fmt.Fprintf(&b, "{%s}", part.Type)
			continue
		}
		b.WriteString(registry.EscapeLiteral(part.Lit))
	}
	return b.String()
}

// TestInitStable checks that the same keyspace gives the same bytes, and
// that hostile key names (newlines, bidi controls, binary) end up only
// escaped in the comments.
func TestInitStable(t *testing.T) {
	s := redistest.Standalone(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	defer c.Close()
	hostile := []string{"evil:\nowners:\n  x: {contact: y}", "bidi:\u202egnp.exe", "bin:\xff\xfe\x00", "{tag}:1", "a::b"}
	for i := range 200 {
		if err := c.Set(ctx, fmt.Sprintf("v1:user:%d:profile", i), `{"name":"x","age":3}`, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range hostile {
		if err := c.Set(ctx, k, "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	_, first, _ := runInit(t, s.Addr)
	_, second, _ := runInit(t, s.Addr)
	if !bytes.Equal(first, second) {
		t.Errorf("two runs on one keyspace wrote different registries:\n%s\n---\n%s", first, second)
	}
	for _, raw := range []string{"\u202e", "\nowners:\n  x:", "\xff"} {
		if bytes.Contains(first, []byte(raw)) {
			t.Errorf("the registry holds %q raw:\n%s", raw, first)
		}
	}
}

// TestSuggest proposes families for the keys a registry leaves
// unregistered: printed, then written into the registry, which then
// registers every key. A key with an existing family's shape but a bad
// value is not unregistered (placeholder-invalid) and gets no proposal.
func TestSuggest(t *testing.T) {
	s := redistest.Standalone(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	defer c.Close()
	for i := range 50 {
		for _, k := range []string{fmt.Sprintf("v1:user:%d", i), fmt.Sprintf("v1:order:%d:items", i), fmt.Sprintf("tmp:export:%d", 1000+i)} {
			if err := c.Set(ctx, k, fmt.Sprintf(`{"id":%d}`, i), time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := c.Set(ctx, "v1:user:not-a-number", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.yaml")
	src := `version: 1
owners:
  web: {contact: web@example.com}
families:
  - name: user
    description: a user
    pattern: "v1:user:{id:int}"
    version: 1
    owner: web
    type: string
    ttl: 2h

# the end
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errb := cli(t, "suggest", "--url", "redis://"+s.Addr, "--registry", path, "--allow-touch")
	if code != 0 {
		t.Fatalf("suggest: exit %d\n%s", code, errb)
	}
	for _, want := range []string{"# Add under families: in " + path, "pattern: v1:order:{order_id:int}:items", "pattern: tmp:export:{export_id:int}"} {
		if !strings.Contains(out, want) {
			t.Errorf("suggest output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errb, "100 of 151 keys unregistered") || strings.Contains(out, "not-a-number") {
		t.Errorf("the key of user's shape is not unregistered and gets no proposal: %s\n%s", errb, out)
	}
	// The same proposals from a snapshot of the same server.
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	dirs, _ := c.ConfigGet(ctx, "dir").Result()
	files, _ := c.ConfigGet(ctx, "dbfilename").Result()
	code, fromRDB, errRDB := cli(t, "suggest", "--rdb", filepath.Join(dirs["dir"], files["dbfilename"]), "--registry", path)
	// Comments may differ: a snapshot holds every value's size, so they
	// give memory shares.
	uncommented := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "#") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if code != 0 || uncommented(fromRDB) != uncommented(out) || !strings.Contains(errRDB, "100 of 151 keys unregistered") {
		t.Errorf("suggest --rdb: exit %d, %s\n%s\nwant the live proposals:\n%s", code, errRDB, fromRDB, out)
	}
	code, _, errb = cli(t, "suggest", "--url", "redis://"+s.Addr, "--registry", path, "--allow-touch", "--write")
	if code != 0 {
		t.Fatalf("suggest --write: exit %d\n%s", code, errb)
	}
	got, _ := os.ReadFile(path)
	// Every line of the registry is kept, in order: --write only adds.
	rest := strings.Split(string(got), "\n")
	for _, l := range strings.Split(src, "\n") {
		i := slices.Index(rest, l)
		if i < 0 {
			t.Fatalf("--write dropped or changed the line %q:\n%s", l, got)
		}
		rest = rest[i+1:]
	}
	reg, err := registry.LoadFile(path)
	if err != nil {
		t.Fatalf("the written registry does not load: %v\n%s", err, got)
	}
	if c := rules.Lint(reg).Active().Count(); c.Error > 0 {
		t.Errorf("lint errors after --write (%s):\n%s", c, got)
	}
	unreg, _ := auditUnregistered(t, s.Addr, path)
	if unreg != 0 { // v1:user:not-a-number is placeholder-invalid, not unregistered
		t.Errorf("after --write, %d keys unregistered, want 0\n%s", unreg, got)
	}
}

// TestInitPartial checks that a scan cut short writes what it saw, says
// so at the top of the file, and exits 3.
func TestInitPartial(t *testing.T) {
	s := redistest.Standalone(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	defer c.Close()
	for i := range 2000 {
		if err := c.Set(ctx, fmt.Sprintf("v1:item:%d", i), "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "keys.yaml")
	code, _, errb := cli(t, "init", "--url", "redis://"+s.Addr, "--allow-touch", "--out", out, "--max-keys", "100", "--count", "10")
	if code != 3 || !strings.Contains(errb, "partial") {
		t.Fatalf("init --max-keys: exit %d, want 3 and a word on it\n%s", code, errb)
	}
	data, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(data, []byte("# PARTIAL: ")) {
		t.Fatalf("the partial registry (%v) does not say PARTIAL:\n%s", err, data)
	}
	if _, err := registry.LoadFile(out); err != nil {
		t.Errorf("the partial registry does not load: %v", err)
	}
}

// TestInitInference is issue 22's inference a person would not accept,
// end to end against a real redis-server: glued hex ids, one-off keys and
// an outlier, names, a Celery queue known from its binding only, siblings
// of one shape, mixed encodings. The audit of what init wrote then finds
// every key registered but the leftovers, and reports the encoding drift.
func TestInitInference(t *testing.T) {
	s := redistest.Standalone(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	defer c.Close()
	hex := func(i, n int) string { return fmt.Sprintf("%0*x", n, uint64(i)*0x9e3779b97f4a7c15) }
	p := c.Pipeline()
	for i := range 2500 {
		p.Set(ctx, "sess_"+hex(i, 16)+hex(i+7, 16), "x", time.Hour)
	}
	for i := range 300 {
		h := hex(i, 32)
		p.Set(ctx, "v2:user:session:"+h[:8]+"-"+h[8:12]+"-"+h[12:16]+"-"+h[16:20]+"-"+h[20:32], `{"user_id":1}`, time.Hour)
	}
	oneOffs := []string{"foo", "x", "test", "asdf", "v2:user:session:12345"}
	for _, k := range oneOffs {
		p.Set(ctx, k, "1", 0)
	}
	p.SAdd(ctx, "_kombu.binding.celery", "celery\x06\x16\x06\x16celery")
	p.SAdd(ctx, "_kombu.binding.emails", "emails\x06\x16\x06\x16emails")
	p.SAdd(ctx, "_kombu.binding.celery.pidbox", "\x06\x16\x06\x16w1.celery.pidbox")
	p.RPush(ctx, "celery", `{"body":"e30="}`)
	for i := range 20 {
		h := hex(i+1000, 32)
		p.Set(ctx, "celery-task-meta-"+h[:8]+"-"+h[8:12]+"-"+h[12:16]+"-"+h[16:20]+"-"+h[20:32], `{"status":"SUCCESS","result":1,"task_id":"x"}`, 20*time.Hour)
	}
	areas := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	for _, a := range areas {
		for i := range 50 {
			p.Set(ctx, "scratch:"+a+":"+strconv.Itoa(i), "s", 0)
		}
	}
	for i := range 100 {
		for _, l := range []string{"de", "en", "fr", "ja"} {
			p.Set(ctx, "cms:page:"+strconv.Itoa(i)+":"+l, "<p>", 0)
		}
	}
	for i := range 20 {
		v := fmt.Sprintf(`{"id":%d,"name":"n"}`, i)
		if i%7 == 3 {
			v = "\x82\xa2id\x01\xa4name\xa1n" // msgpack {"id":1,"name":"n"}
		}
		p.Set(ctx, "v1:profile:"+strconv.Itoa(i), v, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	reg, data, path := runInit(t, s.Addr)
	text := string(data)
	byPattern := map[string]*registry.Family{}
	for _, f := range reg.Families {
		if !f.FromPreset() {
			byPattern[shape(f.Pattern)] = f
			if f.Pattern.LiteralBytes() == 0 || len(f.Pattern.Placeholders()) == 0 {
				t.Errorf("family %s (%s) has no literal byte or no placeholder", f.Name, f.Pattern.Source)
			}
		}
	}
	want := map[string]string{ // the shape of each mined family, and its name
		"sess_{hex}":             "sess",
		"v2:user:session:{uuid}": "user-session",
		"scratch:{word}:{int}":   "scratch",
		"cms:page:{int}:{word}":  "cms-page",
		"v1:profile:{int}":       "profile",
	}
	for sh, name := range want {
		if f := byPattern[sh]; f == nil || f.Name != name {
			t.Errorf("no family %s named %s", sh, name)
		}
	}
	if len(byPattern) != len(want) {
		t.Errorf("%d mined families, want %d", len(byPattern), len(want))
	}
	if f := byPattern["v1:profile:{int}"]; f == nil || !slices.Equal(f.Encodings(), []string{"json"}) {
		t.Errorf("profiles: not json")
	}
	for _, line := range []string{
		"# unregistered leftovers: 5 keys",
		`#   - "v2:user:session:12345"`, `#   - "asdf"`,
		`# {scratch} is one placeholder for 12 literal siblings of one shape: "alpha", "bravo",`,
		`# {page} is one placeholder for 4 literal siblings of one shape: "de", "en", "fr", "ja".`,
		"# 3 of them do not decode as json (msgpack 3): the first audit reports them.",
		"queues: [celery, emails]",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("the registry lacks %q", line)
		}
	}
	// The first audit: every key registered but the leftovers, and the
	// encoding drift of the sampled profiles reported.
	code, out, errb := cli(t, "audit", "--url", "redis://"+s.Addr, "--registry", path, "--format", "json", "--allow-touch")
	if code > 1 {
		t.Fatalf("audit exit %d: %s", code, errb)
	}
	var r presetAudit
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	var unreg, drift int64
	for _, f := range r.Findings {
		switch {
		case f.Rule == "unregistered-key" || f.Rule == "placeholder-invalid" && f.Family == "user-session":
			unreg += f.Count // the outlier has the sessions' shape: placeholder-invalid
		case f.Rule == "encoding-mismatch" && f.Family == "profile":
			drift += f.Count
		case f.Severity != "info":
			t.Errorf("finding %s %s x%d: %s", f.Family, f.Rule, f.Count, f.Message)
		}
	}
	if unreg != int64(len(oneOffs)) || drift != 3 {
		t.Errorf("audit: %d unregistered keys (want the %d leftovers), %d encoding mismatches (want 3)", unreg, len(oneOffs), drift)
	}
	if t.Failed() {
		t.Logf("%s", data)
	}
}

// TestInitSamplesTheKeysDB seeds db 0 and db 1 with keys of the same names
// and values of different encodings (json in db 0, msgpack in db 1), and
// keys that only db 1 holds. init and suggest with --db 1 must read the
// values of db 1: the shared family is msgpack, and the family only db 1
// has gets its encoding (read from db 0, its keys were not there). With
// --db 0 the shared family is json.
func TestInitSamplesTheKeysDB(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	ctx := context.Background()
	for db, value := range map[int]func(i int) string{
		0: func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) },
		1: func(i int) string { return "\x81\xa2id" + string(rune(i%100)) },
	} {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db, DisableIdentity: true})
		for i := range 30 {
			if err := c.Set(ctx, fmt.Sprintf("v1:item:%d", i), value(i), 0).Err(); err != nil {
				t.Fatal(err)
			}
			if db == 1 {
				c.Set(ctx, fmt.Sprintf("v1:only:%d", i), fmt.Sprintf(`{"n":%d}`, i), 0)
			}
		}
		c.Close()
	}
	encodings := func(reg *registry.Registry) map[string]string {
		m := map[string]string{}
		for _, f := range reg.Families {
			m[f.Pattern.LiteralPrefix()] = f.Encoding
		}
		return m
	}
	reg, _, _ := runInit(t, s.Addr, "--db", "1")
	if got := encodings(reg); got["v1:item:"] != "msgpack" || got["v1:only:"] != "json" {
		t.Errorf("init --db 1: encodings %v, want v1:item: msgpack (db 1's values) and v1:only: json", got)
	}
	reg, _, _ = runInit(t, s.Addr, "--db", "0")
	if got := encodings(reg); got["v1:item:"] != "json" {
		t.Errorf("init --db 0: encodings %v, want v1:item: json", got)
	}
	// suggest samples through the same path.
	regPath := filepath.Join(t.TempDir(), "keys.yaml")
	if err := os.WriteFile(regPath, []byte("version: 1\nfamilies:\n  - {name: other, pattern: \"v9:{id:int}\", ttl: persistent}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := cli(t, "suggest", "--registry", regPath, "--url", s.URL(), "--db", "1")
	if code != 0 || !regexp.MustCompile(`(?s)pattern: v1:item:\{[^}]+\}.*?encoding: msgpack`).MatchString(out) {
		t.Errorf("suggest --db 1: exit %d\n%s%s", code, out, errs)
	}
}

// TestInitSummarySingular: init's summary line counts in words that agree
// with the numbers ("1 family", not "1 families").
func TestInitSummarySingular(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	defer c.Close()
	for i := range 40 {
		if err := c.Set(ctx, fmt.Sprint("v1:item:", i), "x", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "keys.yaml")
	code, _, errb := cli(t, "init", "--url", "redis://"+s.Addr, "--out", out)
	if code != 0 || !strings.Contains(errb, ": 1 family and 0 presets for 40 keys (40 registered)") {
		t.Errorf("init: exit %d, want the summary of 1 family and 0 presets for 40 keys:\n%s", code, errb)
	}
}
