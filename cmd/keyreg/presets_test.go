package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
)

// The framework captures: keyspaces written by the real libraries
// (scripts/capture), one testdata/frameworks/<name>.jsonl each, with the
// registry made only of presets that must cover it in <name>.yaml.
const frameworksDir = "../../testdata/frameworks"

// capturedKey is one key of a capture.
type capturedKey struct {
	Key    string `json:"key"`
	KeyB64 string `json:"key_b64"`
	Type   string `json:"type"`
	PTTL   int64  `json:"pttl"`
	Dump   string `json:"dump"`
}

func (k capturedKey) name(t testing.TB) string {
	if k.KeyB64 == "" {
		return k.Key
	}
	b, err := base64.StdEncoding.DecodeString(k.KeyB64)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readCapture reads a capture file: its header, then its keys.
func readCapture(t testing.TB, path string) (header map[string]string, keys []capturedKey) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if header == nil {
			if err := json.Unmarshal(sc.Bytes(), &header); err != nil {
				t.Fatalf("%s: header: %v", path, err)
			}
			continue
		}
		var k capturedKey
		if err := json.Unmarshal(sc.Bytes(), &k); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Fatalf("%s holds no keys", path)
	}
	return header, keys
}

// restore writes the captured keys into the server at addr, as DUMP left
// them. A key whose TTL was under a minute at capture time keeps it; it
// may expire before the audit reads it, which the audit counts as
// vanished, not as a finding. With doctor, each key passes through it
// first and may be changed or dropped.
func restore(t testing.TB, addr string, keys []capturedKey, doctor func(k *capturedKey, name string) bool) {
	t.Helper()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	defer c.Close()
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	p := c.Pipeline()
	for _, k := range keys {
		name := k.name(t)
		if doctor != nil && !doctor(&k, name) {
			continue
		}
		dump, err := hex.DecodeString(k.Dump)
		if err != nil {
			t.Fatal(err)
		}
		ttl := time.Duration(0)
		if k.PTTL > 0 {
			ttl = time.Duration(k.PTTL) * time.Millisecond
		}
		p.RestoreReplace(ctx, name, ttl, string(dump))
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatalf("restoring the capture: %v", err)
	}
}

// presetAudit is the part of the json audit report the preset tests read.
type presetAudit struct {
	Partial bool `json:"partial"`
	Scan    struct {
		Keys     int64 `json:"keys"`
		Vanished int64 `json:"vanished"`
	} `json:"scan"`
	Families []struct {
		Name   string `json:"name"`
		Preset string `json:"preset"`
		Keys   int64  `json:"keys"`
	} `json:"families"`
	Findings []struct {
		Rule     string `json:"rule"`
		Family   string `json:"family"`
		Severity string `json:"severity"`
		Count    int64  `json:"count"`
		Message  string `json:"message"`
	} `json:"findings"`
}

// auditClean audits addr with the registry at reg and fails the test on a
// finding above info or an exit code other than 0.
func auditClean(t *testing.T, addr, reg string) *presetAudit {
	t.Helper()
	code, r := auditCapture(t, addr, reg)
	for _, f := range r.Findings {
		if f.Severity != "info" {
			t.Errorf("finding on the libraries' keys: %s %s on %s: %s", f.Severity, f.Rule, f.Family, f.Message)
		}
	}
	if code != 0 && !t.Failed() {
		t.Errorf("audit exit %d, want 0", code)
	}
	return r
}

func auditCapture(t *testing.T, addr, reg string) (int, *presetAudit) {
	t.Helper()
	code, out, errb := cli(t, "audit", "--url", "redis://"+addr, "--registry", reg, "--format", "json", "--allow-touch", "--sample", "10000")
	var r presetAudit
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("audit exit %d: %v\nstdout: %s\nstderr: %s", code, err, out, errb)
	}
	if r.Partial {
		t.Fatalf("partial audit: %s", errb)
	}
	return code, &r
}

// TestPresetsAgainstCaptures restores every capture into a real
// redis-server and audits it with a registry made only of presets: every
// key must land on a family of a preset, with no error or warning.
// Doctored copies (a TTL removed, one added where the library sets none, a
// type changed) must give exactly the finding they cause.
func TestPresetsAgainstCaptures(t *testing.T) {
	regs, err := filepath.Glob(filepath.Join(frameworksDir, "*.yaml"))
	if err != nil || len(regs) == 0 {
		t.Fatalf("no preset registries in %s: %v", frameworksDir, err)
	}
	s := redistest.Standalone(t)
	for _, regPath := range regs {
		name := strings.TrimSuffix(filepath.Base(regPath), ".yaml")
		capture := filepath.Join(frameworksDir, name+".jsonl")
		t.Run(name, func(t *testing.T) {
			reg, err := registry.LoadFile(regPath)
			if err != nil {
				t.Fatalf("loading %s: %v", regPath, err)
			}
			header, keys := readCapture(t, capture)
			var presets []string
			for _, f := range reg.Families {
				if !f.FromPreset() {
					t.Fatalf("%s declares family %s by hand: a capture's registry holds presets only", regPath, f.Name)
				}
				if !slices.Contains(presets, f.Preset) {
					presets = append(presets, f.Preset)
				}
			}
			// Every key goes to a family of one of the presets.
			m := reg.Matcher()
			for _, k := range keys {
				key := k.name(t)
				f := m.Match(key)
				if f == nil {
					near, why := m.Closest(key)
					hint := ""
					if near != nil {
						hint = fmt.Sprintf(" (closest %s: %s)", near.Name, why)
					}
					t.Errorf("%s key %q (%s) matches no family of %v%s", header["library"], key, k.Type, presets, hint)
					continue
				}
				if f.Type != k.Type {
					t.Errorf("key %q is a %s, but its family %s declares %s", key, k.Type, f.Name, f.Type)
				}
			}
			if t.Failed() {
				return
			}
			restore(t, s.Addr, keys, nil)
			r := auditClean(t, s.Addr, regPath)
			for _, f := range r.Families {
				if f.Keys > 0 && !slices.Contains(presets, f.Preset) {
					t.Errorf("family %s of the audit report has preset %q, want one of %v", f.Name, f.Preset, presets)
				}
			}
			lasting := int64(0) // keys that cannot expire before the audit reads them
			for _, k := range keys {
				if k.PTTL < 0 || k.PTTL > 60_000 {
					lasting++
				}
			}
			if r.Scan.Keys < lasting {
				t.Errorf("audit saw %d keys, want at least the %d without a short TTL", r.Scan.Keys, lasting)
			}
			doctored(t, s.Addr, regPath, reg, keys)
		})
	}
}

// doctored breaks one key of the capture at a time and checks that the
// audit reports exactly that.
func doctored(t *testing.T, addr, regPath string, reg *registry.Registry, keys []capturedKey) {
	m := reg.Matcher()
	type breakage struct {
		rule   string
		family string
		key    string
		change func(k *capturedKey)
	}
	var cases []breakage
	var noTTL, addTTL, retype bool
	for _, k := range keys {
		key := k.name(t)
		f := m.Match(key)
		switch {
		case !noTTL && k.PTTL > 60_000 && f.TTL.Kind == registry.TTLMax:
			noTTL = true
			cases = append(cases, breakage{"ttl-missing", f.Name, key, func(k *capturedKey) { k.PTTL = -1 }})
		case !addTTL && k.PTTL < 0 && f.TTL.Kind == registry.TTLPersistent:
			addTTL = true
			cases = append(cases, breakage{"ttl-unexpected", f.Name, key, func(k *capturedKey) { k.PTTL = 3_600_000 }})
		case !retype && k.Type != "string":
			retype = true
			// Restored as captured, then overwritten with a string.
			cases = append(cases, breakage{"type-mismatch", f.Name, key, nil})
		}
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			restore(t, addr, keys, func(k *capturedKey, name string) bool {
				if name == c.key && c.change != nil {
					c.change(k)
				}
				return true
			})
			if c.change == nil {
				ctx := context.Background()
				cl := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
				defer cl.Close()
				if err := cl.SetArgs(ctx, c.key, "x", redis.SetArgs{KeepTTL: true}).Err(); err != nil {
					t.Fatal(err)
				}
			}
			_, r := auditCapture(t, addr, regPath)
			var got []string
			for _, f := range r.Findings {
				if f.Severity != "info" {
					got = append(got, fmt.Sprintf("%s %s x%d", f.Family, f.Rule, f.Count))
				}
			}
			want := []string{fmt.Sprintf("%s %s x1", c.family, c.rule)}
			if !slices.Equal(got, want) {
				t.Errorf("key %q doctored: findings %v, want %v", c.key, got, want)
			}
		})
	}
	if !noTTL && !addTTL && !retype {
		t.Error("no key of the capture could be doctored")
	}
}

// TestEveryCaptureHasARegistry keeps TestPresetsAgainstCaptures complete:
// a capture without its presets-only registry would go untested.
func TestEveryCaptureHasARegistry(t *testing.T) {
	captures, err := filepath.Glob(filepath.Join(frameworksDir, "*.jsonl"))
	if err != nil || len(captures) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	for _, c := range captures {
		if _, err := os.Stat(strings.TrimSuffix(c, ".jsonl") + ".yaml"); err != nil {
			t.Errorf("capture %s has no presets-only registry beside it", filepath.Base(c))
		}
	}
}

// TestPresetsTogether is the bar of the presets: one Redis holding the keys
// of every captured library at once (and two of the app's own keys),
// audited with a registry made only of presets plus the app's families.
// Every framework key must go to a family of its own library's preset,
// the app's keys to the app's families, with no error or warning.
func TestPresetsTogether(t *testing.T) {
	const regPath = frameworksDir + "/all/keys.yaml"
	reg, err := registry.LoadFile(regPath)
	if err != nil {
		t.Fatal(err)
	}
	code, _, errb := cli(t, "lint", "--registry", regPath, "--fail-on", "info")
	if code != 0 {
		t.Fatalf("lint of %s: exit %d\n%s", regPath, code, errb)
	}
	captures, err := filepath.Glob(filepath.Join(frameworksDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var all []capturedKey
	m := reg.Matcher()
	libraries := 0
	for _, c := range captures {
		own, err := registry.LoadFile(strings.TrimSuffix(c, ".jsonl") + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		// Bull's and BullMQ's shared layouts may go to either: the one
		// declared first takes them.
		p, _ := registry.LookupPreset(own.Families[0].Preset)
		want := append([]string{p.Name}, p.Coexists...)
		header, keys := readCapture(t, c)
		libraries++
		for _, k := range keys {
			key := k.name(t)
			f := m.Match(key)
			switch {
			case f == nil:
				t.Errorf("%s key %q matches no family", header["library"], key)
			case !slices.Contains(want, f.Preset):
				t.Errorf("%s key %q goes to %s (preset %q), want preset %s", header["library"], key, f.Name, f.Preset, strings.Join(want, " or "))
			case f.Type != k.Type:
				t.Errorf("%s key %q is a %s; its family %s declares %s", header["library"], key, k.Type, f.Name, f.Type)
			}
		}
		all = append(all, keys...)
	}
	if t.Failed() {
		return
	}
	s := redistest.Standalone(t)
	restore(t, s.Addr, all, nil)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
	defer c.Close()
	if err := c.HSet(ctx, "v1:cart:{42}:items", "sku-1", `{"qty":1}`).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Expire(ctx, "v1:cart:{42}:items", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "v2:user:session:0b6f1c1e-8a9d-4c47-9f5e-2b1d7a3c9e10", `{"user_id":1}`, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	r := auditClean(t, s.Addr, regPath)
	for _, name := range []string{"cart", "session"} {
		for _, f := range r.Families {
			if f.Name == name && (f.Keys != 1 || f.Preset != "") {
				t.Errorf("app family %s: %d keys, preset %q; want 1 key, no preset", name, f.Keys, f.Preset)
			}
		}
	}
	t.Logf("%d keys of %d captures, %d presets' families", len(all), libraries, len(reg.Families)-2)
}
