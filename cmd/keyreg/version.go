package main

import (
	"runtime/debug"
	"strings"
)

// version may be set at build time with -ldflags "-X main.version=…". When
// it is empty, the version comes from the build info that the go command
// records: `go install github.com/keyreg/keyreg/cmd/keyreg@v1.2.0` reports
// v1.2.0, and a build from a git checkout reports its pseudo-version or
// commit.
var version string

// toolVersion returns the version printed by --version and written into
// SARIF.
func toolVersion() string { return resolveVersion(version, debug.ReadBuildInfo) }

// resolveVersion picks, in order: the -ldflags version, the main module's
// version from the build info, the VCS revision of a (devel) build
// ("dev+0123456789ab", with "-dirty" for a modified tree), and "dev".
func resolveVersion(ldflags string, read func() (*debug.BuildInfo, bool)) string {
	if ldflags != "" {
		return ldflags
	}
	bi, ok := read()
	if !ok || bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "dev"
	}
	v := "dev+" + rev[:min(len(rev), 12)]
	if modified == "true" {
		v += "-dirty"
	}
	return strings.TrimSpace(v)
}
