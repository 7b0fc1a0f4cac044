package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/spf13/pflag"
)

// defaultRegistry is where commands look for the registry: $KEYREG_REGISTRY,
// then keys.yaml in the working directory.
func defaultRegistry() string {
	if p := os.Getenv("KEYREG_REGISTRY"); p != "" {
		return p
	}
	return "keys.yaml"
}

func registryFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVarP(p, "registry", "r", defaultRegistry(), "path of the registry (env KEYREG_REGISTRY)")
}

// loadRegistry loads the registry at p. An invalid or missing registry is a
// usage error (exit 2); failing to read one that exists is a runtime error.
func loadRegistry(p string) (*registry.Registry, error) {
	reg, err := registry.LoadFile(p)
	if err == nil {
		return reg, nil
	}
	switch _, invalid := listError(err); {
	case invalid:
		return nil, usageError(err, "")
	case errors.Is(err, fs.ErrNotExist):
		return nil, usageError(fmt.Errorf("registry %q not found", p), "pass --registry or set KEYREG_REGISTRY")
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
