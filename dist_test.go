package keyreg_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestGoModNoReplace: `go install github.com/keyreg/keyreg/cmd/keyreg@vX`
// refuses a module whose go.mod has replace (or exclude) directives, so
// none may be committed.
func TestGoModNoReplace(t *testing.T) {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if bad := goModDirectives(string(b), "replace", "exclude"); len(bad) > 0 {
		t.Errorf("go.mod has directives that break go install ...@version: %v", bad)
	}
	// The check has teeth, for the single-line and the block form.
	for _, s := range []string{"module m\nreplace a => ../a\n", "module m\nreplace (\n\ta => ../a\n)\n", "module m\n  exclude a v1.0.0\n"} {
		if len(goModDirectives(s, "replace", "exclude")) == 0 {
			t.Errorf("not found in %q", s)
		}
	}
}

// goModDirectives returns the lines of a go.mod that start one of the
// directives named.
func goModDirectives(gomod string, names ...string) []string {
	var out []string
	for i, line := range strings.Split(gomod, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && slices.Contains(names, strings.TrimSuffix(f[0], "(")) {
			out = append(out, "line "+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
		}
	}
	return out
}

// goreleaserConfig is the part of .goreleaser.yaml the tests check.
type goreleaserConfig struct {
	Version int `yaml:"version"`
	Builds  []struct {
		ID      string   `yaml:"id"`
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Flags   []string `yaml:"flags"`
		Ldflags []string `yaml:"ldflags"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
	} `yaml:"builds"`
	Archives []struct {
		Files []string `yaml:"files"`
	} `yaml:"archives"`
	Checksum struct {
		Name string `yaml:"name_template"`
	} `yaml:"checksum"`
	SBOMs []map[string]any `yaml:"sboms"`
	NFPMs []struct {
		Formats []string `yaml:"formats"`
	} `yaml:"nfpms"`
	Casks   []map[string]any `yaml:"homebrew_casks"`
	Dockers []struct {
		IDs        []string `yaml:"ids"`
		Dockerfile string   `yaml:"dockerfile"`
		Platforms  []string `yaml:"platforms"`
	} `yaml:"dockers_v2"`
}

func readGoreleaser(t *testing.T) goreleaserConfig {
	t.Helper()
	b, err := os.ReadFile(".goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c goreleaserConfig
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGoreleaserConfig checks what the issue asks of a release: the six
// platforms, static and -trimpath, the version through -X main.version,
// checksums, an SBOM, README and LICENSE in the archives, .deb and .rpm, a
// cask and the image.
func TestGoreleaserConfig(t *testing.T) {
	c := readGoreleaser(t)
	if c.Version != 2 || len(c.Builds) != 1 {
		t.Fatalf("want a goreleaser v2 config with one build, got version %d, %d builds", c.Version, len(c.Builds))
	}
	b := c.Builds[0]
	if b.Main != "./cmd/keyreg" || b.Binary != "keyreg" {
		t.Errorf("build main %q binary %q", b.Main, b.Binary)
	}
	slices.Sort(b.Goos)
	slices.Sort(b.Goarch)
	if !slices.Equal(b.Goos, []string{"darwin", "linux", "windows"}) || !slices.Equal(b.Goarch, []string{"amd64", "arm64"}) {
		t.Errorf("platforms %v x %v", b.Goos, b.Goarch)
	}
	if !slices.Contains(b.Env, "CGO_ENABLED=0") || !slices.Contains(b.Flags, "-trimpath") {
		t.Errorf("not static or not -trimpath: env %v flags %v", b.Env, b.Flags)
	}
	if ld := strings.Join(b.Ldflags, " "); !strings.Contains(ld, "-X main.version={{ .Version }}") || !strings.Contains(ld, "-X main.commit={{ .FullCommit }}") {
		t.Errorf("ldflags %v do not set main.version and main.commit", b.Ldflags)
	}
	if len(c.Archives) != 1 || !slices.Contains(c.Archives[0].Files, "README.md") || !slices.ContainsFunc(c.Archives[0].Files, func(s string) bool { return strings.HasPrefix(s, "LICENSE") }) {
		t.Errorf("archives %+v lack README.md or LICENSE", c.Archives)
	}
	if c.Checksum.Name == "" || len(c.SBOMs) == 0 || len(c.Casks) == 0 {
		t.Errorf("checksum %q, %d sboms, %d casks", c.Checksum.Name, len(c.SBOMs), len(c.Casks))
	}
	if len(c.NFPMs) != 1 || !slices.Contains(c.NFPMs[0].Formats, "deb") || !slices.Contains(c.NFPMs[0].Formats, "rpm") {
		t.Errorf("nfpms %+v", c.NFPMs)
	}
}

// dockerStage is one FROM stage of a Dockerfile.
type dockerStage struct {
	base, name string
	lines      []string // the instructions after FROM, continuation lines joined
}

// parseDockerfile splits a Dockerfile into its stages; comments and blank
// lines are dropped, continuation lines joined.
func parseDockerfile(s string) []dockerStage {
	var stages []dockerStage
	var cur string
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if cur == "" && (t == "" || strings.HasPrefix(t, "#")) {
			continue
		}
		if strings.HasSuffix(t, "\\") {
			cur += strings.TrimSpace(strings.TrimSuffix(t, "\\")) + " "
			continue
		}
		cur += t
		ins := cur
		cur = ""
		f := strings.Fields(ins)
		if strings.EqualFold(f[0], "FROM") {
			st := dockerStage{base: f[1]}
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				st.name = f[3]
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) > 0 {
			stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, ins)
		}
	}
	return stages
}

// TestDockerfileMatchesGoreleaser checks the Dockerfile's stages against
// .goreleaser.yaml, as no image can be built here: the last stage (the one
// goreleaser builds) copies goreleaser's static binary for the platform
// onto a distroless static nonroot base and runs it as non-root; the
// source-build stage compiles with the release build's flags; the image is
// built for linux on the release architectures.
func TestDockerfileMatchesGoreleaser(t *testing.T) {
	c := readGoreleaser(t)
	if len(c.Dockers) != 1 || len(c.Builds) != 1 {
		t.Fatalf("want one dockers_v2 entry and one build, got %d and %d", len(c.Dockers), len(c.Builds))
	}
	d, b := c.Dockers[0], c.Builds[0]
	if !slices.Contains(d.IDs, b.ID) {
		t.Errorf("the image uses builds %v, not the release build %q", d.IDs, b.ID)
	}
	var want []string
	for _, arch := range b.Goarch {
		want = append(want, "linux/"+arch)
	}
	got := slices.Clone(d.Platforms)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("image platforms %v, want the release's linux builds %v", got, want)
	}
	text, err := os.ReadFile(d.Dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	stages := parseDockerfile(string(text))
	if len(stages) < 2 {
		t.Fatalf("the Dockerfile has %d stages, want a multi-stage build", len(stages))
	}
	distroless := regexp.MustCompile(`^gcr\.io/distroless/static-debian\d+:nonroot(@sha256:[0-9a-f]{64})?$`)
	names := map[string]bool{}
	for _, st := range stages {
		names[st.name] = true
	}
	check := func(st dockerStage, copyFrom string) {
		if !distroless.MatchString(st.base) {
			t.Errorf("stage %s: base %s is not distroless static nonroot (which carries the CA certificates)", st.name, st.base)
		}
		joined := strings.Join(st.lines, "\n")
		for _, want := range []string{"USER nonroot:nonroot", `ENTRYPOINT ["/usr/bin/keyreg"]`, copyFrom} {
			if !strings.Contains(joined, want) {
				t.Errorf("stage %s lacks %q:\n%s", st.name, want, joined)
			}
		}
		for _, l := range st.lines {
			if strings.HasPrefix(l, "USER") && (strings.Contains(l, "root:") && !strings.Contains(l, "nonroot") || strings.HasSuffix(l, " 0") || strings.HasSuffix(l, " root")) {
				t.Errorf("stage %s runs as root: %s", st.name, l)
			}
		}
	}
	last := stages[len(stages)-1]
	check(last, "COPY $TARGETPLATFORM/"+b.Binary+" /usr/bin/keyreg")

	var build *dockerStage
	for i := range stages {
		for _, l := range stages[i].lines {
			if strings.HasPrefix(l, "RUN ") && strings.Contains(l, "go build") {
				build = &stages[i]
			}
		}
	}
	if build == nil {
		t.Fatal("no stage runs go build")
	}
	var run string
	for _, l := range build.lines {
		if strings.Contains(l, "go build") {
			run = l
		}
	}
	for _, e := range b.Env {
		if !strings.Contains(run, e) {
			t.Errorf("the source build lacks the release's %s: %s", e, run)
		}
	}
	for _, f := range b.Flags {
		if !strings.Contains(run, f) {
			t.Errorf("the source build lacks the release's %s: %s", f, run)
		}
	}
	if !strings.Contains(run, "-X main.version=") || !strings.HasSuffix(run, " "+b.Main) {
		t.Errorf("the source build does not set main.version or build %s: %s", b.Main, run)
	}
	var src *dockerStage
	for i := range stages {
		for _, l := range stages[i].lines {
			if strings.HasPrefix(l, "COPY --from="+build.name+" ") {
				src = &stages[i]
			}
		}
	}
	if src == nil {
		t.Fatalf("no stage copies the binary from the %s stage", build.name)
	}
	check(*src, "COPY --from="+build.name+" /out/keyreg /usr/bin/keyreg")

	// The parser has teeth: a root user or another base is caught.
	bad := parseDockerfile("FROM golang AS b\nRUN x \\\n  y\nFROM debian:12\nUSER root\n")
	if len(bad) != 2 || bad[0].lines[0] != "RUN x y" || distroless.MatchString(bad[1].base) {
		t.Errorf("parseDockerfile: %+v", bad)
	}
}

// TestSchemasPublishedAtTheirID runs the Pages workflow's schema step into
// a directory and checks that every $id of schemas/ names a file it
// publishes, with the schema's bytes, at the $id's path under
// https://keyreg.dev/; and that the SchemaStore entry points at the
// registry schema's $id.
func TestSchemasPublishedAtTheirID(t *testing.T) {
	b, err := os.ReadFile(".github/workflows/pages.yml")
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
	for _, st := range wf.Jobs["build"].Steps {
		if st.ID == "schemas" {
			script = st.Run
		}
	}
	if script == "" {
		t.Fatal("pages.yml's build job has no step with id schemas")
	}
	site := t.TempDir()
	cmd := exec.Command("bash", "-e", "-c", script)
	cmd.Env = append(os.Environ(), "SITE="+site)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the schemas step: %v\n%s", err, out)
	}
	files, err := filepath.Glob("schemas/*.json")
	if err != nil {
		t.Fatal(err)
	}
	ids := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			ID string `json:"$id"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if s.ID == "" {
			continue
		}
		ids++
		path, ok := strings.CutPrefix(s.ID, "https://keyreg.dev/")
		if !ok {
			t.Errorf("%s: $id %s is not under https://keyreg.dev/", f, s.ID)
			continue
		}
		got, err := os.ReadFile(filepath.Join(site, filepath.FromSlash(path)))
		if err != nil || !bytes.Equal(got, raw) {
			t.Errorf("%s: $id %s is not published by pages.yml (%v)", f, s.ID, err)
		}
	}
	if ids < 2 {
		t.Fatalf("%d schemas with an $id", ids)
	}
	var entry struct {
		Name      string   `json:"name"`
		URL       string   `json:"url"`
		FileMatch []string `json:"fileMatch"`
	}
	cat, err := os.ReadFile("deploy/schemastore/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(cat, &entry); err != nil || entry.URL != "https://keyreg.dev/schemas/keys.v1.schema.json" || entry.Name == "" || len(entry.FileMatch) == 0 {
		t.Errorf("SchemaStore entry %+v (%v)", entry, err)
	}
}
