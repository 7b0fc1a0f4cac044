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
	"github.com/keyreg/keyreg/codegen/golang"
	"github.com/keyreg/keyreg/codegen/jsongen"
	"github.com/keyreg/keyreg/codegen/python"
	"github.com/keyreg/keyreg/codegen/typescript"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// genOptions are the flags every language of keyreg gen shares.
type genOptions struct {
	registry string
	out      string
	check    bool
	scope    codegen.Scope
}

// language is one backend of keyreg gen <name>: its help, its own flags,
// and the generator those flags choose. Adding a language is a package
// below codegen/ and an entry here.
type language struct {
	name    string // the subcommand, such as "go"
	display string // in messages: "generating Go: …"
	use     string // after the name: "--out file --package name"
	short   string
	long    string // the language's part of --help; the shared part follows
	// flags defines the language's own flags on fs and returns what
	// builds its generator once they are parsed, given --out, with the
	// flags a regenerating command line repeats (for the hint).
	flags func(fs *pflag.FlagSet) func(out string) (g codegen.Generator, hint string, err error)
	// docs, for a language whose generator is a codegen.Documenter,
	// defines its flags of keyreg docs (such as --go-package) and returns
	// what builds that generator once they are parsed: nil when the
	// flags leave the language out of the catalogue.
	docs func(fs *pflag.FlagSet) func() codegen.Generator
}

// languages drives keyreg gen: one subcommand per entry.
var languages = []language{
	{
		name: "go", display: "Go", use: "--out file --package name",
		short: "Generate typed Go key builders, parsers and TTL-safe accessors",
		long: `Gen go writes one Go file for the registry: per family a typed key builder
and parser, its pattern, SCAN glob, owner, Redis type and TTL policy, payload
types from its JSON Schema, and (with --client go-redis, the default)
accessors whose writes always apply the family's TTL policy and check values
against its schema, typed locks for kind: lock families (docs/locks.md) and
consumer helpers for streams with groups. An int-encoded string also gets
Incr and IncrBy, which apply the TTL policy in the same script.`,
		flags: func(fs *pflag.FlagSet) func(string) (codegen.Generator, string, error) {
			var pkg, client string
			fs.StringVarP(&pkg, "package", "p", "", "the Go package name (default: the name of --out's directory)")
			fs.StringVar(&client, "client", golang.ClientGoRedis, "Redis client of the accessors: go-redis or none")
			return func(out string) (codegen.Generator, string, error) {
				if pkg == "" {
					abs, err := filepath.Abs(out)
					if err != nil {
						return nil, "", runtimeError(err, "")
					}
					pkg = strings.NewReplacer("-", "", ".", "").Replace(filepath.Base(filepath.Dir(abs)))
				}
				return golang.Generator{Package: pkg, Client: client}, " --package " + pkg, nil
			}
		},
		docs: func(fs *pflag.FlagSet) func() codegen.Generator {
			var pkg string
			fs.StringVar(&pkg, "go-package", "", "the --package of keyreg gen go, to show each family's builder")
			return func() codegen.Generator {
				if pkg == "" {
					return nil
				}
				return golang.Generator{Package: pkg, Client: golang.ClientNone}
			}
		},
	},
	{
		name: "json", display: "JSON", use: "--out file",
		short: "Write the codegen request as JSON, for other code generators",
		long: `Gen json writes the request every keyreg backend generates from: the families
of the registry, validated, with their parsed patterns (literals and typed
placeholders), TTL policy, Redis type, encoding, kind, lock-to-fence links,
stream groups and max_len, compiled payload schemas, the registry digest and
the scope. The document is stable and versioned: docs/codegen.md describes
it and schemas/codegen-request.v1.schema.json is its JSON Schema.`,
		flags: func(*pflag.FlagSet) func(string) (codegen.Generator, string, error) {
			return func(string) (codegen.Generator, string, error) { return jsongen.Generator{}, "", nil }
		},
	},
	{
		name: "python", display: "Python", use: "--out keys_gen.py|package-dir",
		short: "Generate typed Python key builders, parsers, redis-py accessors and locks",
		long: `Gen python writes one Python module (standard library plus redis-py): per
family a key builder and parser (a frozen dataclass), its pattern and SCAN
glob, a TypedDict of its payload and a check naming the JSON pointer,
accessors on redis.Redis and redis.asyncio.Redis whose writes apply the TTL
policy (collections in one MULTI/EXEC), locks subclassing redis.lock.Lock
with fencing in the acquire script, and stream consumer helpers. --out
ending in .py is the module; any other --out is a package directory, which
gets __init__.py and py.typed.`,
		flags: func(*pflag.FlagSet) func(string) (codegen.Generator, string, error) {
			return func(out string) (codegen.Generator, string, error) {
				return python.Generator{Package: !strings.HasSuffix(out, ".py")}, "", nil
			}
		},
		docs: func(fs *pflag.FlagSet) func() codegen.Generator {
			var module string
			fs.StringVar(&module, "python-module", "", "the module keyreg gen python writes, as imported (such as app.keys), to show each family's Python builder")
			return func() codegen.Generator {
				if module == "" {
					return nil
				}
				return python.Generator{Module: module}
			}
		},
	},
	{
		name: "typescript", display: "TypeScript", use: "--out file [--client redis|ioredis|none]",
		short: "Generate a TypeScript module of key builders, parsers and TTL-safe accessors",
		long: `Gen typescript writes one ES module (keys.gen.ts) for the registry: per family
buildX (throws a RangeError on a value its placeholder refuses) and parseX
(throws on a key that does not match; returns the typed values), X_PATTERN,
X_GLOB and the family's other facts as constants, the key's interface and a
template-literal type of its keys. With --client redis (node-redis 4 to 6, the
default) or --client ioredis it also writes accessors for that client. The
module has no runtime dependency besides the client (docs/codegen.md).`,
		flags: func(fs *pflag.FlagSet) func(string) (codegen.Generator, string, error) {
			var client string
			fs.StringVar(&client, "client", typescript.ClientRedis, "Redis client of the accessors: redis (node-redis 4 to 6), ioredis or none")
			return func(string) (codegen.Generator, string, error) {
				switch client {
				case typescript.ClientRedis, typescript.ClientIORedis, typescript.ClientNone:
				default:
					return nil, "", usageError(fmt.Errorf("unknown client %q (want redis, ioredis or none)", client), "run keyreg gen typescript --help")
				}
				return typescript.Generator{Client: client}, " --client " + client, nil
			}
		},
		docs: func(fs *pflag.FlagSet) func() codegen.Generator {
			var ns string
			fs.StringVar(&ns, "typescript-namespace", "", "the name the generated TypeScript module is imported as (import * as NAME), to show each family's TypeScript builder")
			return func() codegen.Generator {
				if ns == "" {
					return nil
				}
				return typescript.Generator{Namespace: ns}
			}
		},
	},
}

// genShared is the part of every language's --help that the shared flags
// and exit codes make.
const genShared = `

By default the output covers the families declared by hand: a preset's
families (celery, bullmq, …) are the framework's internals, which the
library writes. --family names families (a preset family named is
included), --owner takes every family of an owner, and --include-presets
adds preset families: all of them, or those of --owner's owners. A lock's
fence comes with the lock. Pub/Sub channels follow the same rules, and
--channel names channels; --family without --channel leaves them out.
Names do not depend on the scope: a family's identifiers are the same
whatever else is generated. The registry digest covers the families and
channels generated only.

With --check nothing is written: the output is generated in memory and
compared with --out. A stale or missing file prints a unified diff of the
changed hunks (3 lines of context; patch -p1 and git apply take it), at most
48 KiB with a last line saying what was left out, and exits 1, so CI can keep
generated code fresh.

Exit codes: 0 written or fresh, 1 stale under --check, 2 invalid registry
or usage error, 3 runtime error.`

func (a *app) genCmd() *cobra.Command {
	names := make([]string, len(languages))
	for i, l := range languages {
		names[i] = l.name
	}
	c := &cobra.Command{
		Use:   "gen",
		Short: "Generate code from keys.yaml",
		Long: "Gen generates code from the registry, in one of these languages: " + strings.Join(names, ", ") + `.
Each shares --registry, --out, --check and the scope flags: run
keyreg gen <language> --help.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return usageError(errors.New("missing language: one of "+strings.Join(names, ", ")), "run keyreg gen <language> --help")
		},
	}
	for _, l := range languages {
		c.AddCommand(a.genLangCmd(l))
	}
	return c
}

func (a *app) genLangCmd(l language) *cobra.Command {
	var o genOptions
	var build func(string) (codegen.Generator, string, error)
	c := &cobra.Command{
		Use:   l.name + " " + l.use,
		Short: l.short,
		Long:  l.long + genShared,
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if o.out == "" {
				return usageError(errors.New("--out is required"), "run keyreg gen "+l.name+" --help for usage")
			}
			g, hint, err := build(o.out)
			if err != nil {
				return err
			}
			return a.runGen(l, g, hint, o)
		},
	}
	registryFlag(c.Flags(), &o.registry)
	c.Flags().StringVarP(&o.out, "out", "o", "", "the file to write (required)")
	build = l.flags(c.Flags())
	c.Flags().BoolVar(&o.check, "check", false, "do not write; exit 1 with a diff when --out is stale")
	c.Flags().StringSliceVar(&o.scope.Families, "family", nil, "generate these families (repeatable, comma-separated; default: every family declared by hand)")
	c.Flags().StringSliceVar(&o.scope.Owners, "owner", nil, "generate the families of these owners (repeatable, comma-separated)")
	c.Flags().BoolVar(&o.scope.IncludePresets, "include-presets", false, "generate preset families too (of --owner's owners, or all of them)")
	c.Flags().StringSliceVar(&o.scope.Channels, "channel", nil, "generate these Pub/Sub channels (repeatable, comma-separated; default: every channel declared by hand, unless --family names families)")
	return c
}

// runGen generates with g and writes --out, or compares it under --check.
func (a *app) runGen(l language, g codegen.Generator, hint string, o genOptions) error {
	reg, err := loadRegistry(o.registry)
	if err != nil {
		return err
	}
	req, err := codegen.NewRequest(reg, o.scope)
	var files []codegen.File
	if err == nil {
		files, err = g.Generate(req)
	}
	if err != nil {
		return usageError(fmt.Errorf("generating %s: %w", l.display, err), "choose families with --family, --owner and --include-presets: run keyreg gen "+l.name+" --help")
	}
	if d, ok := g.(interface{ OutputDir() bool }); ok && d.OutputDir() {
		return a.genDir(l, files, hint, o)
	}
	if len(files) != 1 {
		// --out names one file; a backend that writes several says so
		// with OutputDir.
		return runtimeError(fmt.Errorf("the %s backend returned %d files, want 1", l.display, len(files)), "")
	}
	src := files[0].Data
	if !o.check {
		if err := os.WriteFile(o.out, src, 0o644); err != nil {
			return runtimeError(fmt.Errorf("writing generated code: %w", err), "")
		}
		return nil
	}
	diff, what, err := checkFile(o.out, src)
	if err != nil {
		return err
	}
	if what == "" {
		return nil
	}
	return a.stale(l, hint, o, diff, what)
}

// checkFile compares the file at name with src: what is "" when it is
// fresh, else "stale" or "missing", with the diff.
func checkFile(name string, src []byte) (diff []byte, what string, err error) {
	// A file far larger than the new one is stale without a diff.
	limit := max(4*int64(len(src)), 16<<20)
	old, big, err := readBounded(name, limit)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, "", runtimeError(fmt.Errorf("reading generated code: %w", err), "")
	}
	if !big && err == nil && bytes.Equal(old, src) {
		return nil, "", nil
	}
	dn := diffName(name)
	if big {
		diff = fmt.Appendf(nil, "--- a/%s\n+++ b/%s\n[keyreg: the file is over %d bytes, so it is not diffed]\n", dn, dn, limit)
	} else {
		diff = codegen.UnifiedDiff("a/"+dn, "b/"+dn, old, src, checkDiffBytes)
	}
	if err != nil {
		return diff, "missing", nil
	}
	return diff, "stale", nil
}

// stale prints the diff and the hint of a stale --out.
func (a *app) stale(l language, hint string, o genOptions, diff []byte, what string) error {
	if _, werr := a.stdout.Write(diff); werr != nil {
		return runtimeError(werr, "")
	}
	fmt.Fprintf(a.stderr, "keyreg: error: %q is %s: regenerate it from %q\n", o.out, what, o.registry)
	fmt.Fprintf(a.stderr, "hint: run keyreg gen %s --registry %s --out %s%s%s\n", l.name, o.registry, o.out, hint, o.scopeFlags())
	return errFindings
}

// genDir writes, or checks, the files of a backend whose --out is a
// directory: each file under it, by the name the backend gives, which
// must be a local path (no "..", not absolute). Under --check every file
// is compared, and one diff covers them all.
func (a *app) genDir(l language, files []codegen.File, hint string, o genOptions) error {
	seen := map[string]bool{}
	for _, f := range files {
		if f.Name == "" || !filepath.IsLocal(filepath.FromSlash(f.Name)) || strings.Contains(f.Name, "\\") || seen[path.Clean(f.Name)] {
			return runtimeError(fmt.Errorf("the %s backend returned an invalid file name %q", l.display, f.Name), "")
		}
		seen[path.Clean(f.Name)] = true
	}
	if !o.check {
		for _, f := range files {
			p := filepath.Join(o.out, filepath.FromSlash(f.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return runtimeError(fmt.Errorf("writing generated code: %w", err), "")
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				return runtimeError(fmt.Errorf("writing generated code: %w", err), "")
			}
		}
		return nil
	}
	var all []byte
	what := ""
	for _, f := range files {
		diff, w, err := checkFile(filepath.Join(o.out, filepath.FromSlash(f.Name)), f.Data)
		if err != nil {
			return err
		}
		if w != "" && len(all)+len(diff) <= checkDiffBytes+1024 {
			all = append(all, diff...)
		}
		if w == "missing" || what == "" {
			if w != "" {
				what = w
			}
		}
	}
	if what == "" {
		return nil
	}
	return a.stale(l, hint, o, all, what)
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
	if len(o.scope.Channels) > 0 {
		b.WriteString(" --channel " + strings.Join(o.scope.Channels, ","))
	}
	return b.String()
}

// checkDiffBytes bounds the diff gen --check prints, so that a CI log
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
