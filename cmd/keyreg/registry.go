package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// registryFile is the file name looked for when no registry is given.
const registryFile = "keys.yaml"

// defaultRegistry is the registry of a command not given --registry:
// $KEYREG_REGISTRY, else keys.yaml (which findRegistry then looks for
// upward from the working directory).
func defaultRegistry() string {
	if p := os.Getenv("KEYREG_REGISTRY"); p != "" {
		return p
	}
	return registryFile
}

func registryFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVarP(p, "registry", "r", defaultRegistry(), "path of the registry (env KEYREG_REGISTRY; default: keys.yaml here or in a parent directory, up to the repository root)")
	// The flag was just defined, so these cannot fail.
	_ = fs.SetAnnotation("registry", cobra.BashCompFilenameExt, []string{"yaml", "yml"})
}

// findRegistry runs before every command: when it has a --registry flag
// that was not given and $KEYREG_REGISTRY is unset, it looks for keys.yaml
// in the working directory, then upward, as buf looks for buf.yaml: up to
// the repository root (the directory holding .git) or to /. A registry
// found above the working directory is used and named on stderr, so a run
// never reads a file the user did not expect without saying so.
func (a *app) findRegistry(c *cobra.Command) error {
	f := c.Flags().Lookup("registry")
	if p, upward := registryOf(c); upward {
		fmt.Fprintf(a.stderr, "keyreg: using registry %s\n", p)
		return f.Value.Set(p)
	}
	return nil
}

// registryOf returns the registry c would read: --registry, else
// $KEYREG_REGISTRY, else keys.yaml here or upward (upward set when it was
// found above the working directory; the path is then relative to it).
// Shell completion, which runs no pre-run hook, reads it the same way.
func registryOf(c *cobra.Command) (path string, upward bool) {
	f := c.Flags().Lookup("registry")
	if f == nil {
		return "", false
	}
	if f.Changed || os.Getenv("KEYREG_REGISTRY") != "" {
		return f.Value.String(), false
	}
	wd, err := os.Getwd()
	if err != nil {
		return f.Value.String(), false // the default stays, and fails as not found
	}
	found, ok := searchUp(wd, registryFile)
	if !ok || filepath.Dir(found) == wd {
		return f.Value.String(), false
	}
	if rel, err := filepath.Rel(wd, found); err == nil {
		found = rel
	}
	return found, true
}

// searchUp looks for name in dir and its parents, stopping after the
// directory that holds .git (a directory, or the file of a worktree) or at
// the file system root, and returns the path of the first it finds.
func searchUp(dir, name string) (string, bool) {
	for {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, true
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// loadRegistry loads the registry at p, its positions naming the file by
// its path from the repository root (see pathOptions).
func loadRegistry(p string) (*registry.Registry, error) {
	return loadRegistryAs(p, pathOptions{})
}

// loadRegistryAs loads the registry at p, its positions naming the file as
// paths says. An invalid or missing registry is a usage error (exit 2);
// failing to read one that exists is a runtime error.
func loadRegistryAs(p string, paths pathOptions) (*registry.Registry, error) {
	reg, err := registry.LoadFileAs(p, paths.display(p))
	if err == nil {
		return reg, nil
	}
	switch _, invalid := listError(err); {
	case invalid:
		return nil, usageError(err, "")
	case errors.Is(err, fs.ErrNotExist):
		return nil, usageError(fmt.Errorf("registry %q not found", p), "pass --registry or set KEYREG_REGISTRY; without either, keys.yaml is looked for here and upward to the repository root")
	}
	return nil, runtimeError(err, "")
}

// failOn parses a --fail-on value: a severity, or "never".
func failOn(s string) (diag.Severity, error) {
	if s == "never" {
		return diag.Off, nil
	}
	sev, err := diag.ParseSeverity(s)
	if err != nil || sev == diag.Off {
		return 0, usageError(fmt.Errorf("bad --fail-on %q (want error, warn, info or never)", s), "")
	}
	return sev, nil
}

// failed reports whether l has active findings at or above threshold.
func failed(l diag.List, threshold diag.Severity) bool {
	return threshold != diag.Off && l.Max() >= threshold
}

func listError(err error) (*diag.ListError, bool) {
	var le *diag.ListError
	ok := errors.As(err, &le)
	return le, ok
}
