package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version may be set at build time with -ldflags "-X main.version=…". When
// it is empty, the version comes from the build info that the go command
// records: `go install github.com/keyreg/keyreg/cmd/keyreg@v1.2.0` reports
// v1.2.0, and a build from a git checkout reports its pseudo-version or
// commit.
var version string

// commit may be set at build time with -ldflags "-X main.commit=…" (the
// release build does): it is the revision keyreg version reports when the
// go command recorded no VCS stamp.
var commit string

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

// buildFacts is what keyreg version prints: the version toolVersion
// resolves, and the build info behind it.
type buildFacts struct {
	Version   string `json:"version"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	// Module and ModuleVersion are the main module and its version as
	// the go command recorded them ("(devel)" for a build from a
	// checkout); empty without build info.
	Module        string `json:"module"`
	ModuleVersion string `json:"module_version"`
	// Revision, Time and Modified are the VCS stamp of a build from a
	// checkout (vcs.revision, vcs.time, vcs.modified); empty when the go
	// command recorded none.
	Revision string `json:"vcs_revision"`
	Time     string `json:"vcs_time"`
	Modified bool   `json:"vcs_modified"`
}

// readBuildFacts gathers buildFacts from ldflags and the build info read.
func readBuildFacts(ldflags string, read func() (*debug.BuildInfo, bool)) buildFacts {
	f := buildFacts{Version: resolveVersion(ldflags, read), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	bi, ok := read()
	if !ok || bi == nil {
		return f
	}
	if bi.GoVersion != "" {
		f.GoVersion = bi.GoVersion
	}
	f.Module, f.ModuleVersion = bi.Main.Path, bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			f.Revision = s.Value
		case "vcs.time":
			f.Time = s.Value
		case "vcs.modified":
			f.Modified = s.Value == "true"
		}
	}
	return f
}

func (a *app) versionCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print keyreg's version and what it was built from",
		Long: `Version prints the version (as --version does), the Go version, the
platform, and the module and VCS revision the go command recorded in the
binary. --format json prints them as one object: version, go_version, os,
arch, module, module_version, vcs_revision, vcs_time, vcs_modified (empty
strings and false where the build recorded nothing).`,
		Example: `  keyreg version
  keyreg version --format json`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			f := readBuildFacts(version, debug.ReadBuildInfo)
			if f.Revision == "" {
				f.Revision = commit
			}
			return writeVersion(a.stdout, format, f)
		},
	}
	c.Flags().StringVarP(&format, "format", "f", "text", "output format: text or json")
	_ = c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// writeVersion prints f as text or json.
func writeVersion(w io.Writer, format string, f buildFacts) error {
	switch strings.ToLower(format) {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(f); err != nil {
			return runtimeError(err, "")
		}
		return nil
	case "text":
	default:
		return usageError(fmt.Errorf("unsupported format %q for version: want text or json", format), "")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "keyreg version %s\n", f.Version)
	fmt.Fprintf(&b, "go         %s %s/%s\n", f.GoVersion, f.OS, f.Arch)
	if f.Module != "" {
		fmt.Fprintf(&b, "module     %s %s\n", f.Module, f.ModuleVersion)
	}
	if f.Revision != "" {
		rev := f.Revision
		if f.Modified {
			rev += " (modified)"
		}
		if f.Time != "" {
			rev += " " + f.Time
		}
		fmt.Fprintf(&b, "revision   %s\n", rev)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return runtimeError(err, "")
	}
	return nil
}
