package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolveVersion(t *testing.T) {
	info := func(v string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: "github.com/keyreg/keyreg", Version: v}, Settings: settings}, true
		}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	for _, c := range []struct {
		name, ldflags string
		read          func() (*debug.BuildInfo, bool)
		want          string
	}{
		{"go install @version", "", info("v1.4.2"), "v1.4.2"},
		{"pseudo-version", "", info("v0.0.0-20261201093000-0123456789ab"), "v0.0.0-20261201093000-0123456789ab"},
		{"ldflags win", "v9.9.9", info("v1.4.2"), "v9.9.9"},
		{"devel with revision", "", info("(devel)", rev), "dev+0123456789ab"},
		{"devel, modified tree", "", info("(devel)", rev, dirty), "dev+0123456789ab-dirty"},
		{"devel without vcs", "", info("(devel)"), "dev"},
		{"no build info", "", func() (*debug.BuildInfo, bool) { return nil, false }, "dev"},
	} {
		if got := resolveVersion(c.ldflags, c.read); got != c.want {
			t.Errorf("%s: resolveVersion = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestVersionFromBuild builds the real binary from this checkout and checks
// that --version reports what the go command recorded in it, not "dev".
func TestVersionFromBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "keyreg")
	// -buildvcs=true: this machine's GOFLAGS may turn stamping off, and
	// the test wants what a release build from a checkout records.
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	mod, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	// What the go command recorded, as the binary itself reads it.
	info := &debug.BuildInfo{}
	for line := range strings.SplitSeq(string(mod), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/keyreg/keyreg":
			info.Main = debug.Module{Path: f[1], Version: f[2]}
		case len(f) >= 2 && f[0] == "build":
			if k, v, ok := strings.Cut(f[1], "="); ok && strings.HasPrefix(k, "vcs.") {
				info.Settings = append(info.Settings, debug.BuildSetting{Key: k, Value: v})
			}
		}
	}
	want := resolveVersion("", func() (*debug.BuildInfo, bool) { return info, true })
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("keyreg --version: %v", err)
	}
	got := strings.TrimSpace(string(bytes.TrimPrefix(out, []byte("keyreg version "))))
	if got != want {
		t.Fatalf("keyreg --version = %q; the build info says %q:\n%s", got, want, mod)
	}
	// keyreg version --format json reports the same version and the VCS
	// stamp the go command recorded.
	js, err := exec.Command(bin, "version", "--format", "json").Output()
	if err != nil {
		t.Fatalf("keyreg version --format json: %v", err)
	}
	var facts buildFacts
	if err := json.Unmarshal(js, &facts); err != nil {
		t.Fatalf("%v:\n%s", err, js)
	}
	var rev string
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			rev = s.Value
		}
	}
	if facts.Version != want || facts.Revision != rev || facts.Module != "github.com/keyreg/keyreg" || !strings.HasPrefix(facts.GoVersion, "go1.") {
		t.Errorf("keyreg version --format json = %+v; the build info says version %q, revision %q", facts, want, rev)
	}
	// In a clone (as in CI) the go command stamps a pseudo-version; in a
	// git worktree it may record nothing, and "dev" is then right.
	if v := info.Main.Version; v != "" && v != "(devel)" && got == "dev" {
		t.Fatalf("keyreg --version = dev although the build info has %q", v)
	}
}

// TestVersionCommand checks keyreg version in both formats against build
// info given to it, and that another format is a usage error.
func TestVersionCommand(t *testing.T) {
	read := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/keyreg/keyreg", Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		}}, true
	}
	f := readBuildFacts("", read)
	if f.Version != "dev+0123456789ab-dirty" || f.GoVersion != "go1.99.1" || f.Revision != "0123456789abcdef0123" || !f.Modified || f.Time != "2026-12-01T10:00:00Z" || f.ModuleVersion != "(devel)" {
		t.Errorf("facts %+v", f)
	}
	var b bytes.Buffer
	if err := writeVersion(&b, "JSON", f); err != nil {
		t.Fatal(err)
	}
	var back buildFacts
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back != f {
		t.Errorf("json %s: %+v, %v", b.String(), back, err)
	}
	b.Reset()
	if err := writeVersion(&b, "text", f); err != nil || !strings.HasPrefix(b.String(), "keyreg version dev+0123456789ab-dirty\n") ||
		!strings.Contains(b.String(), "revision   0123456789abcdef0123 (modified) 2026-12-01T10:00:00Z\n") {
		t.Errorf("text:\n%s", b.String())
	}
	code, _, errs := cli(t, "version", "--format", "xml")
	if code != exitUsage || !strings.Contains(errs, `unsupported format "xml"`) {
		t.Errorf("version --format xml: exit %d, %s", code, errs)
	}
	code, out, _ := cli(t, "version", "--format", "json")
	if code != exitClean || !strings.Contains(out, `"go_version": "go1.`) {
		t.Errorf("version --format json: exit %d\n%s", code, out)
	}
}

// TestVersionLdflags builds keyreg as the release does (-trimpath, the
// version and commit through -X, no VCS stamp) and checks that keyreg
// version reports both, in text and json.
func TestVersionLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "keyreg")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-X main.version=1.2.3 -X main.commit=0123456789abcdef", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "keyreg version 1.2.3\n") || !strings.Contains(string(out), "revision   0123456789abcdef\n") {
		t.Errorf("keyreg version: %v\n%s", err, out)
	}
	js, err := exec.Command(bin, "version", "--format", "json").Output()
	var f buildFacts
	if err != nil || json.Unmarshal(js, &f) != nil || f.Version != "1.2.3" || f.Revision != "0123456789abcdef" || f.OS == "" || f.Arch == "" {
		t.Errorf("keyreg version --format json: %v\n%s", err, js)
	}
}
