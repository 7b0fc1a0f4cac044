package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/keyreg/keyreg/codegen"
	"github.com/spf13/cobra"
)

type genOptions struct {
	registry string
	out      string
	pkg      string
	client   string
	check    bool
	scope    codegen.Scope
}

func (a *app) genCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "gen",
		Short: "Generate code from keys.yaml",
		Long: `Gen generates code from the registry. The only language so far is Go: see
keyreg gen go --help.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return usageError(errors.New("missing language"), "run keyreg gen go --help")
		},
	}
	c.AddCommand(a.genGoCmd())
	return c
}

func (a *app) genGoCmd() *cobra.Command {
	var o genOptions
	c := &cobra.Command{
		Use:   "go --out file --package name",
		Short: "Generate typed Go key builders, parsers and TTL-safe accessors",
		Long: `Gen go writes one Go file for the registry: per family a typed key builder
and parser, its pattern, SCAN glob, owner, Redis type and TTL policy, payload
types from its JSON Schema, and (with --client go-redis, the default)
accessors whose writes always apply the family's TTL policy and check values
against its schema, typed locks for kind: lock families (docs/locks.md) and
consumer helpers for streams with groups. An int-encoded string also gets
Incr and IncrBy, which apply the TTL policy in the same script.

By default the file covers the families declared by hand: a preset's
families (celery, bullmq, …) are the framework's internals, which the
library writes. --family names families (a preset family named is
included), --owner takes every family of an owner, and --include-presets
adds preset families: all of them, or those of --owner's owners. A lock's
fence comes with the lock. Names do not depend on the scope: a family's
identifiers are the same whatever else is generated. RegistryDigest covers
the families generated only.

With --check nothing is written: the file is generated in memory and
compared with --out. A stale or missing file prints a unified diff of the
changed hunks (3 lines of context; patch -p1 and git apply take it), at most
48 KiB with a last line saying what was left out, and exits 1, so CI can keep
generated code fresh.

Exit codes: 0 written or fresh, 1 stale under --check, 2 invalid registry
or usage error, 3 runtime error.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return a.runGenGo(o) },
	}
	registryFlag(c.Flags(), &o.registry)
	c.Flags().StringVarP(&o.out, "out", "o", "", "the file to write (required)")
	c.Flags().StringVarP(&o.pkg, "package", "p", "", "the Go package name (default: the name of --out's directory)")
	c.Flags().StringVar(&o.client, "client", codegen.ClientGoRedis, "Redis client of the accessors: go-redis or none")
	c.Flags().BoolVar(&o.check, "check", false, "do not write; exit 1 with a diff when --out is stale")
	c.Flags().StringSliceVar(&o.scope.Families, "family", nil, "generate these families (repeatable, comma-separated; default: every family declared by hand)")
	c.Flags().StringSliceVar(&o.scope.Owners, "owner", nil, "generate the families of these owners (repeatable, comma-separated)")
	c.Flags().BoolVar(&o.scope.IncludePresets, "include-presets", false, "generate preset families too (of --owner's owners, or all of them)")
	return c
}

func (a *app) runGenGo(o genOptions) error {
	if o.out == "" {
		return usageError(errors.New("--out is required"), "run keyreg gen go --help for usage")
	}
	if o.pkg == "" {
		abs, err := filepath.Abs(o.out)
		if err != nil {
			return runtimeError(err, "")
		}
		o.pkg = strings.NewReplacer("-", "", ".", "").Replace(filepath.Base(filepath.Dir(abs)))
	}
	reg, err := loadRegistry(o.registry)
	if err != nil {
		return err
	}
	src, err := codegen.Generate(reg, codegen.Options{Package: o.pkg, Client: o.client, Scope: o.scope})
	if err != nil {
		return usageError(fmt.Errorf("generating Go: %w", err), "choose families with --family, --owner and --include-presets: run keyreg gen go --help")
	}
	if !o.check {
		if err := os.WriteFile(o.out, src, 0o644); err != nil {
			return runtimeError(fmt.Errorf("writing generated code: %w", err), "")
		}
		return nil
	}
	// A file far larger than the new one is stale without a diff.
	limit := max(4*int64(len(src)), 16<<20)
	old, big, err := readBounded(o.out, limit)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return runtimeError(fmt.Errorf("reading generated code: %w", err), "")
	}
	if !big && bytes.Equal(old, src) {
		return nil
	}
	name := diffName(o.out)
	var diff []byte
	if big {
		diff = fmt.Appendf(nil, "--- a/%s\n+++ b/%s\n[keyreg: the file is over %d bytes, so it is not diffed]\n", name, name, limit)
	} else {
		diff = codegen.UnifiedDiff("a/"+name, "b/"+name, old, src, checkDiffBytes)
	}
	if _, werr := a.stdout.Write(diff); werr != nil {
		return runtimeError(werr, "")
	}
	what := "stale"
	if err != nil {
		what = "missing"
	}
	fmt.Fprintf(a.stderr, "keyreg: error: %q is %s: regenerate it from %q\n", o.out, what, o.registry)
	fmt.Fprintf(a.stderr, "hint: run keyreg gen go --registry %s --out %s --package %s%s\n", o.registry, o.out, o.pkg, o.scopeFlags())
	return errFindings
}

// scopeFlags writes the scope flags of o as a command line takes them,
// so that the hint regenerates the same families.
func (o genOptions) scopeFlags() string {
	var b strings.Builder
	if len(o.scope.Families) > 0 {
		b.WriteString(" --family " + strings.Join(o.scope.Families, ","))
	}
	if len(o.scope.Owners) > 0 {
		b.WriteString(" --owner " + strings.Join(o.scope.Owners, ","))
	}
	if o.scope.IncludePresets {
		b.WriteString(" --include-presets")
	}
	return b.String()
}

// checkDiffBytes bounds the diff gen go --check prints, so that a CI log
// (GitHub keeps about 60 KB of a step summary) shows it whole or says
// what it left out.
const checkDiffBytes = 48 << 10

// diffName is the path of a file in a diff's --- and +++ lines, after
// "a/" and "b/": slashes, cleaned, and without a leading slash, as git
// diff --no-index writes an absolute path ("a/tmp/x", not "a//tmp/x").
func diffName(p string) string {
	return strings.TrimLeft(path.Clean(filepath.ToSlash(p)), "/")
}

// readBounded reads the file at name, or reports that it is larger than
// limit bytes without reading more.
func readBounded(name string, limit int64) (data []byte, tooBig bool, err error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > limit {
		return nil, true, nil
	}
	return data, false, nil
}
