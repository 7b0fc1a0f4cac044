package main

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// pathOptions decide how reports name the registry's file: by its path from
// the repository root (the directory holding .git, found upward from the
// registry as the registry itself is found), which is what GitHub code
// scanning, GitLab and JUnit consumers resolve, whatever directory the job
// ran in. --path-prefix overrides it: the path from the working directory,
// joined onto the prefix, as golangci-lint's flag of that name does.
type pathOptions struct {
	prefix string
	set    bool // --path-prefix given, even empty
}

func pathPrefixFlag(c *cobra.Command, o *pathOptions) {
	c.Flags().Var(&prefixValue{o}, "path-prefix", "name files in reports as this prefix joined to their path from the working directory (default: their path from the repository root)")
}

// prefixValue is --path-prefix as a pflag.Value, so that an empty value
// given (paths from the working directory, unprefixed) is told from none.
type prefixValue struct{ o *pathOptions }

func (v *prefixValue) String() string { return v.o.prefix }
func (v *prefixValue) Type() string   { return "string" }
func (v *prefixValue) Set(s string) error {
	v.o.prefix, v.o.set = s, true
	return nil
}

// display returns the name reports give the file at p (a path as given on
// the command line: relative to the working directory, or absolute), with
// forward slashes. A file outside any repository, or outside the one it
// was found from, keeps its path as given.
func (o pathOptions) display(p string) string {
	given := filepath.ToSlash(filepath.Clean(p))
	abs, err := filepath.Abs(p)
	if err != nil {
		return given
	}
	if o.set {
		rel := given
		if wd, err := os.Getwd(); err == nil {
			if r, err := filepath.Rel(wd, abs); err == nil {
				rel = filepath.ToSlash(r)
			}
		}
		if o.prefix == "" {
			return rel
		}
		return path.Join(filepath.ToSlash(o.prefix), rel)
	}
	root, ok := repoRoot(filepath.Dir(abs))
	if !ok {
		return given
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return given
	}
	return filepath.ToSlash(rel)
}

// repoRoot returns the nearest of dir and its parents that holds .git (a
// directory, or the file of a worktree or submodule).
func repoRoot(dir string) (string, bool) {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
