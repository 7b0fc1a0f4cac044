package registry

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/keyreg/keyreg/diag"
)

const goodYAML = `# yaml-language-server: $schema=schemas/keys.v1.schema.json
version: 1
defaults:
  ttl: 24h
  max_idle: 30d
owners:
  identity:
    contact: "#identity-oncall"
    prefixes: ["v*:user:"]
  platform: {contact: platform@example.com}
rules:
  description-missing: off
families:
  - name: user-session
    description: Web login session
    pattern: "v2:user:session:{session_id:uuid}"
    version: 2
    owner: identity
    type: string
    encoding: json
    ttl: {max: 12h}
    schema: schemas/session.json
    max_bytes: 4096
    deprecated: {since: 2026-01-01, sunset: 2026-06-01, replaced_by: cart}
    ignore: [{rule: ttl-missing, reason: "legacy writer"}]
  - name: cart
    pattern: "v1:cart:{{user_id:int}}:items"
    version: 1
    owner: platform
    type: hash
    ttl: persistent
    schema: {type: object, additionalProperties: {type: string}}
  - name: lock
    pattern: "v1:lock:{resource}"
    owner: platform
    ttl: 1w2d
  - name: celery
    pattern: "celery-task-meta-{id:uuid}"
    managed_by: celery
    ttl: optional
`

const sessionSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"user_id":{"type":"integer"}},"required":["user_id"]}`

func load(t *testing.T, yaml string, files ...string) (*Registry, error) {
	t.Helper()
	fsys := fstest.MapFS{"keys.yaml": {Data: []byte(yaml)}}
	for i := 0; i+1 < len(files); i += 2 {
		fsys[files[i]] = &fstest.MapFile{Data: []byte(files[i+1])}
	}
	return Load(fsys, "keys.yaml")
}

func TestLoadGood(t *testing.T) {
	r, err := load(t, goodYAML, "schemas/session.json", sessionSchema)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Families) != 4 || len(r.Owners) != 2 {
		t.Fatalf("got %d families, %d owners", len(r.Families), len(r.Owners))
	}
	s := r.Families[0]
	if s.Name != "user-session" || s.Version != 2 || s.Owner != "identity" || s.Type != "string" || s.Encoding != "json" {
		t.Errorf("session fields: %+v", s)
	}
	if s.TTL != (TTLPolicy{TTLMax, 12 * time.Hour}) || s.TTLDefault {
		t.Errorf("session ttl = %v default=%v", s.TTL, s.TTLDefault)
	}
	if s.MaxIdle != 30*24*time.Hour || s.MaxBytes != 4096 {
		t.Errorf("limits: idle %v bytes %d", s.MaxIdle, s.MaxBytes)
	}
	if s.Schema == nil || s.Schema.Compiled == nil || s.Schema.Path != "schemas/session.json" {
		t.Errorf("schema not compiled: %+v", s.Schema)
	}
	if err := s.Schema.Compiled.Validate(map[string]any{"user_id": "x"}); err == nil {
		t.Error("session schema accepted a string user_id")
	}
	if d := s.Deprecated; d == nil || d.ReplacedBy != "cart" || d.Sunset.Format(time.DateOnly) != "2026-06-01" {
		t.Errorf("deprecated = %+v", d)
	}
	if ig, ok := s.Ignored("ttl-missing"); !ok || ig.Reason != "legacy writer" {
		t.Errorf("ignore = %+v", s.Ignore)
	}
	if p := s.PosOf("pattern"); p.Line != 16 || p.Col != 14 {
		t.Errorf("pattern pos = %v", p)
	}
	cart := r.Families[1]
	if cart.TTL.Kind != TTLPersistent || cart.Schema.Compiled == nil || cart.Schema.Path != "" {
		t.Errorf("cart: %+v", cart)
	}
	if ph := cart.Pattern.Placeholders(); len(ph) != 1 || !ph[0].HashTag || ph[0].Type != Int {
		t.Errorf("cart placeholders = %+v", ph)
	}
	if lock := r.Families[2]; lock.TTL.Max != 9*24*time.Hour || lock.Type != "" {
		t.Errorf("lock ttl = %v", lock.TTL)
	}
	if c := r.Families[3]; c.TTL.Kind != TTLOptional || c.ManagedBy != "celery" {
		t.Errorf("celery = %+v", c)
	}
	if o, ok := r.Owner("identity"); !ok || o.Contact != "#identity-oncall" || len(o.Prefixes) != 1 || o.Prefixes[0].Glob != "v*:user:" {
		t.Errorf("owner = %+v", o)
	}
	if len(r.Rules) != 1 || r.Rules[0].Rule != "description-missing" || r.Rules[0].Severity != diag.Off {
		t.Errorf("rules = %+v", r.Rules)
	}
	if f, ok := r.Family("lock"); !ok || f.Index != 2 {
		t.Errorf("Family(lock) = %v", f)
	}
}

func TestLoadDefaultTTL(t *testing.T) {
	r, err := load(t, "version: 1\ndefaults: {ttl: 30m}\nfamilies:\n  - {name: a, pattern: \"a:{x}\"}\n")
	if err != nil {
		t.Fatal(err)
	}
	if f := r.Families[0]; f.TTL != (TTLPolicy{TTLMax, 30 * time.Minute}) || !f.TTLDefault {
		t.Errorf("ttl = %v default=%v", f.TTL, f.TTLDefault)
	}
}

// TestLoadCompat covers the fields keyreg breaking reads: compat,
// compat_policy (top level and per family) and the breaking: block, with
// their defaults and positions.
func TestLoadCompat(t *testing.T) {
	r, err := load(t, `version: 1
compat_policy: strict
breaking:
  use: [KEY, PAYLOAD]
  except: [hash-tag-changed]
families:
  - name: a
    pattern: "v1:a:{id}"
    compat: BACKWARD
    compat_policy: lenient
  - name: b
    pattern: "v1:b:{id}"
`)
	if err != nil {
		t.Fatal(err)
	}
	if r.CompatPolicy != PolicyStrict {
		t.Errorf("CompatPolicy = %q, want strict", r.CompatPolicy)
	}
	if p := r.PosOf("compat_policy"); p.Line != 2 || p.Col != 16 {
		t.Errorf("compat_policy pos = %v", p)
	}
	if p := r.KeyPos("families"); p.Line != 6 || p.Col != 1 {
		t.Errorf("families key pos = %v", p)
	}
	b := r.Breaking
	if len(b.Use) != 2 || b.Use[0].Name != "KEY" || b.Use[1].Name != "PAYLOAD" || len(b.Except) != 1 || b.Except[0].Name != "hash-tag-changed" {
		t.Errorf("breaking = %+v", b)
	}
	if p := b.Use[1].Pos; p.Line != 4 || p.Col != 14 {
		t.Errorf("use[1] pos = %v", p)
	}
	if p := b.Except[0].Pos; p.Line != 5 || p.Col != 12 {
		t.Errorf("except[0] pos = %v", p)
	}
	a, bf := r.Families[0], r.Families[1]
	if a.Compat != CompatBackward || a.CompatPolicy != PolicyLenient {
		t.Errorf("family a: compat %q policy %q", a.Compat, a.CompatPolicy)
	}
	if p := a.PosOf("compat"); p.Line != 9 || p.Col != 13 {
		t.Errorf("compat pos = %v", p)
	}
	if bf.Compat != CompatFull || bf.CompatPolicy != PolicyStrict {
		t.Errorf("family b defaults: compat %q policy %q, want FULL and the registry's strict", bf.Compat, bf.CompatPolicy)
	}
	d, err := load(t, "version: 1\nfamilies: []\n")
	if err != nil {
		t.Fatal(err)
	}
	if d.CompatPolicy != PolicyLenient || d.Breaking.Use != nil || d.Breaking.Pos.IsValid() {
		t.Errorf("defaults: policy %q breaking %+v", d.CompatPolicy, d.Breaking)
	}
}

// TestLoadErrors covers the bad inputs the issue names: each must fail with
// a position and the right rule, never a panic.
func TestLoadErrors(t *testing.T) {
	fam := func(extra string) string {
		return "version: 1\nfamilies:\n  - name: a\n    pattern: \"v1:a:{id}\"\n" + extra
	}
	tests := []struct {
		name, yaml string
		want       string // the text of one diagnostic, position included
	}{
		{"tab indent", "version: 1\nfamilies:\n\t- name: a\n", "keys.yaml:3:1: error: invalid YAML: found character that cannot start any token (YAML forbids tabs for indentation: use spaces) (schema-invalid)"},
		{"unknown field", fam("    colour: red\n"), `keys.yaml:5:5: error: families[0]: unknown field "colour" (schema-invalid)`},
		{"unknown top-level field", "version: 1\nfamilies: []\nextra: 1\n", `keys.yaml:3:1: error: unknown field "extra" (schema-invalid)`},
		{"ttl 3 days", fam("    ttl: 3 days\n"), `keys.yaml:5:10: error: families[0].ttl: bad ttl: want a duration such as "30m" or "7d", "persistent", "optional" or {max: <duration>} (schema-invalid)`},
		{"ttl max 3 days", fam("    ttl: {max: 3 days}\n"), `keys.yaml:5:16: error: families[0].ttl.max: bad duration "3 days" (want Go syntax with d and w, such as 30m, 24h or 7d) (schema-invalid)`},
		{"bad max_idle", fam("    max_idle: soon\n"), `keys.yaml:5:15: error: families[0].max_idle: bad duration "soon" (want Go syntax with d and w, such as 30m, 24h or 7d) (schema-invalid)`},
		{"unbalanced brace", "version: 1\nfamilies:\n  - name: a\n    pattern: \"v1:a:{id\"\n", `keys.yaml:4:20: error: pattern "v1:a:{id": unbalanced "{": placeholder is not closed (write "\{" for a literal brace) (pattern-invalid)`},
		{"unknown placeholder type", "version: 1\nfamilies:\n  - name: a\n    pattern: v1:a:{id:float}\n", `keys.yaml:4:23: error: pattern "v1:a:{id:float}": unknown placeholder type "float" (want int, uuid, hex, ulid, word or any) (pattern-invalid)`},
		{"missing schema file", fam("    schema: schemas/nope.json\n"), `keys.yaml:5:13: error: schema file "schemas/nope.json" not found (paths are relative to the directory of keys.yaml) (payload-schema-invalid)`},
		{"schema does not compile", fam("    schema: {type: 12}\n"), `(payload-schema-invalid)`},
		{"duplicate yaml key", "version: 1\nversion: 1\nfamilies: []\n", `keys.yaml:2:1: error: duplicate key "version" (first defined at line 1) (schema-invalid)`},
		{"duplicate family name", "version: 1\nfamilies:\n  - {name: a, pattern: \"a:{x}\"}\n  - {name: a, pattern: \"b:{x}\"}\n", `keys.yaml:4:12: error: family name "a" is already used at line 3 (duplicate-name)`},
		{"missing pattern", "version: 1\nfamilies:\n  - name: a\n", `keys.yaml:3:5: error: families[0]: missing required field "pattern" (schema-invalid)`},
		{"wrong version", "version: 2\nfamilies: []\n", `keys.yaml:1:10: error: version: `},
		{"bad type", fam("    type: blob\n"), `keys.yaml:5:11: error: families[0].type: `},
		{"empty file", "", `keys.yaml:1:1: error: registry is empty`},
		{"not a mapping", "- a\n- b\n", `keys.yaml:1:1: error: got array, want object (schema-invalid)`},
		{"huge file", "version: 1\n# " + strings.Repeat("x", 10<<20) + "\nfamilies: []\n", `keys.yaml:1:1: error: file is 10485787 bytes, larger than the 4194304-byte limit for a registry (schema-invalid)`},
		{"bad compat", fam("    compat: backward\n"), `keys.yaml:5:13: error: families[0].compat: value must be one of 'BACKWARD', 'FORWARD', 'FULL', 'NONE' (schema-invalid)`},
		{"bad compat_policy", "version: 1\ncompat_policy: loose\nfamilies: []\n", `keys.yaml:2:16: error: compat_policy: value must be one of 'lenient', 'strict' (schema-invalid)`},
		{"bad breaking entry", "version: 1\nbreaking: {use: [key_rules!]}\nfamilies: []\n", `keys.yaml:2:18: error: breaking.use[0]: `},
		{"bad date", fam("    deprecated: {since: 2026-13-45}\n"), `keys.yaml:5:25: error: bad date "2026-13-45" (want YYYY-MM-DD) (schema-invalid)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, tt.yaml)
			var le *diag.ListError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want *diag.ListError", err)
			}
			var all []string
			for _, d := range le.List {
				all = append(all, d.String())
				if !d.Pos.IsValid() || d.Pos.File != "keys.yaml" {
					t.Errorf("diagnostic without position: %v", d)
				}
			}
			got := strings.Join(all, "\n")
			if !strings.Contains(got, tt.want) {
				t.Errorf("diagnostics:\n%s\nwant one containing:\n%s", got, tt.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(fstest.MapFS{}, "keys.yaml")
	var le *diag.ListError
	if err == nil || errors.As(err, &le) {
		t.Fatalf("err = %v, want a read error", err)
	}
}

func TestLoadYAMLSchemaAndRefs(t *testing.T) {
	r, err := load(t, "version: 1\nfamilies:\n  - {name: a, pattern: \"a:{x}\", schema: s/a.yaml}\n",
		"s/a.yaml", "type: object\nproperties:\n  b: {$ref: b.json}\n",
		"s/b.json", `{"type":"integer"}`)
	if err != nil {
		t.Fatal(err)
	}
	sch := r.Families[0].Schema.Compiled
	if sch.Validate(map[string]any{"b": 1}) != nil {
		t.Error("valid value rejected")
	}
	if sch.Validate(map[string]any{"b": "x"}) == nil {
		t.Error("invalid value accepted through $ref")
	}
}

func TestDuration(t *testing.T) {
	good := map[string]time.Duration{"30m": 30 * time.Minute, "7d": 7 * 24 * time.Hour, "1w2d": 9 * 24 * time.Hour, "1h30m": 90 * time.Minute, "500ms": 500 * time.Millisecond, "1.5d": 36 * time.Hour}
	for s, want := range good {
		if got, err := ParseDuration(s); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", s, got, err, want)
		}
		if got, _ := ParseDuration(FormatDuration(want)); got != want {
			t.Errorf("FormatDuration(%v) = %q does not round-trip", want, FormatDuration(want))
		}
	}
	for _, s := range []string{"", "3 days", "d", "10", "-5m", "0s", "99999999999w", "5x"} {
		if _, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) succeeded", s)
		}
	}
	for d, want := range map[time.Duration]string{36 * time.Hour: "36h", 24 * time.Hour: "24h", 30 * 24 * time.Hour: "30d", 14 * 24 * time.Hour: "2w", 90 * time.Second: "1m30s", 1500 * time.Millisecond: "1s500ms", 10948*time.Hour + 43*time.Minute: "456d4h"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func FuzzLoad(f *testing.F) {
	f.Add(goodYAML)
	f.Add("version: 1\nfamilies:\n\t- name: a\n")
	f.Add("version: 1\nfamilies:\n  - {name: a, pattern: \"v1:{a\"}\n")
	f.Add("version: 1\nfamilies:\n  - {name: a, pattern: \"v1:{a:any}\", ttl: 3 days}\n")
	f.Add("a: &x [*x]\n")
	f.Add("version: 1\nfamilies: [{name: a, pattern: x, schema: {$ref: \"#/x\"}}]\n")
	f.Add("version: 1\nfamilies: [{name: a, pattern: 'q\\x06\\x16{p:int}', schema: schemas/link.json}]\n")
	f.Add("version: 1\nfamilies: [{name: a, pattern: \"q\\x06{p}\", schema: schemas/cycle.json}]\n---\nb: 1\n")
	f.Add("version: 1\nfamilies:\n  - name: a\n    pattern: >-\n      v1:\u00e9:\n      {id\n    schema: schemas/out.json\n")
	f.Add("version: 1\nfamilies: [{name: a, pattern: \"caf\\u00e9:\\\"{id\"}]\n")
	// Documents the schema rejects are decoded too (every problem in one run).
	f.Add("version: 1\nfamilies: {a: 1}\npresets: {x: 1}\n")
	f.Add("version: 1\nfamilies: [1, {name: a, typ: x, pattern: \"{a\"}, {pattern: x}, {pattern: y}]\npresets: [{owner: x}, {use: celery, owner: 5, with: 3}, {use: rq, owner: o, with: {queues: [a, 1]}, families: 3}]\n")
	f.Add("version: x\nseparator: ab\nowners: [1]\ndefaults: 3\nbreaking: 5\nrules: [1]\nfamilies: [{name: [a], pattern: {a: 1}, ttl: [1], schema: [1], groups: 5, ignore: 5, deprecated: 5, encoding: {a: 1}, kind: 3, version: [1]}]\n")
	f.Add(channelsYAML)
	f.Add("version: 1\ncluster: true\nfamilies: []\nchannels: [{name: a, pattern: \"c:{x\", mode: pattern, subscribe_glob: \"[a\"}, {name: a, pattern: c, with: [b, b]}, {name: b, pattern: d, mode: x}]\n")
	f.Add("version: 1\nfamilies: []\nchannels: {a: 1}\n")
	f.Fuzz(func(t *testing.T, src string) {
		fsys := fstest.MapFS{
			"keys.yaml":            {Data: []byte(src)},
			"schemas/session.json": {Data: []byte(sessionSchema)},
			"schemas/link.json":    {Data: []byte("session.json"), Mode: fs.ModeSymlink},
			"schemas/out.json":     {Data: []byte("../../etc/passwd"), Mode: fs.ModeSymlink},
			"schemas/cycle.json":   {Data: []byte(`{"allOf":[{"$ref":"#"}]}`)},
		}
		lines := strings.Count(src, "\n") + 1
		r, err := Load(fsys, "keys.yaml")
		if err != nil {
			var le *diag.ListError
			if errors.As(err, &le) {
				for _, d := range le.List {
					if !d.Pos.IsValid() || d.Pos.Line > lines || d.Pos.Col < 1 {
						t.Fatalf("diagnostic without a position in the file: %v", d)
					}
				}
			}
			return
		}
		for _, c := range r.Channels {
			if c.Pattern == nil || (c.Mode == ModePattern) != (c.Glob != nil) {
				t.Fatalf("valid registry with channel %q: pattern %v, mode %s, glob %v", c.Name, c.Pattern, c.Mode, c.Glob)
			}
		}
		for _, fam := range r.Families {
			if fam.Pattern == nil {
				t.Fatalf("valid registry with nil pattern for %q", fam.Name)
			}
			for i := 0; i < len(fam.Pattern.Source); i++ {
				if isControl(fam.Pattern.Source[i]) {
					t.Fatalf("pattern %q of %q holds a raw control byte", fam.Pattern.Source, fam.Name)
				}
			}
			if s := fam.Schema; s != nil && s.Path != "" && strings.Contains(s.Path, "out") {
				t.Fatalf("schema %q out of the tree loaded", s.Path)
			}
		}
	})
}

func TestLoadAliasBomb(t *testing.T) {
	src := "version: 1\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		src += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	_, err := load(t, src+"families: []\n")
	if err == nil || !strings.Contains(err.Error(), "too many aliases") {
		t.Fatalf("err = %v, want an alias expansion error", err)
	}
}
