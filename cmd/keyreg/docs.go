package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/keyreg/keyreg/catalogue"
	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/spf13/cobra"
)

type docsOptions struct {
	registry string
	out      string
	format   string
	audit    string
	repoURL  string
	// languages build, per language of gen's table with a docs hook, its
	// Documenter, or nil when its flags leave it out.
	languages []docsLanguage
}

// docsLanguage is a language of keyreg gen whose builders docs may show.
type docsLanguage struct {
	name  string
	build func() codegen.Generator
}

func (a *app) docsCmd() *cobra.Command {
	var o docsOptions
	c := &cobra.Command{
		Use:   "docs [--out DIR] [--format html|markdown] [--audit audit.json]",
		Short: "Generate a browsable catalogue of the registry",
		Long: `Docs writes a static catalogue of the registry into --out: every owner with
its contact and families, the deprecations with their sunsets, and per family
its description, pattern and placeholder types, an example key, type,
encoding, TTL policy, limits, preset, deprecation, keys.yaml position and
payload schema (as a table of properties, and raw).

--format html (the default) writes one self-contained page, DIR/index.html,
with a filter box that works offline and without a server; it makes no
request. --format markdown writes DIR/index.md and one file per owner, for a
repository or a wiki. The output is deterministic, so it can be committed and
diffed.

--audit reads a report of keyreg audit --format json and adds each family's
live figures (keys, memory, % TTL, findings) and, to the HTML index, charts.
--repo-url links each keys.yaml position (URL/keys.yaml#L12); --go-package
names the package of keyreg gen go, and each family shows its key builder;
--python-module does the same for keyreg gen python.

See docs/catalogue.md for publishing it with GitHub Pages.

Exit codes: 0 written, 2 invalid registry, audit report or usage error,
3 runtime error (the directory cannot be written).`,
		Example: `  keyreg docs --out site
  keyreg audit --format json > audit.json; keyreg docs --out site --audit audit.json
  keyreg docs --format markdown --out wiki/redis --repo-url https://github.com/acme/infra/blob/main`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return a.runDocs(o) },
	}
	registryFlag(c.Flags(), &o.registry)
	c.Flags().StringVarP(&o.out, "out", "o", "catalogue", "the directory to write")
	c.Flags().StringVarP(&o.format, "format", "f", "html", "html or markdown")
	c.Flags().StringVar(&o.audit, "audit", "", "a json audit report whose figures to show")
	c.Flags().StringVar(&o.repoURL, "repo-url", "", "base URL of keys.yaml's repository, to link positions")
	for _, l := range languages {
		if l.docs != nil {
			o.languages = append(o.languages, docsLanguage{name: l.name, build: l.docs(c.Flags())})
		}
	}
	_ = c.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"html\tone self-contained page", "markdown\tindex.md and one file per owner"}, cobra.ShellCompDirectiveNoFileComp
	})
	return c
}

func (a *app) runDocs(o docsOptions) error {
	var f catalogue.Format
	switch o.format {
	case "html", "HTML":
		f = catalogue.HTML
	case "markdown", "md", "Markdown":
		f = catalogue.Markdown
	default:
		return usageError(fmt.Errorf("unsupported format %q (want html or markdown)", o.format), "")
	}
	if o.out == "" {
		return usageError(errors.New("--out is empty"), "")
	}
	reg, err := loadRegistry(o.registry)
	if err != nil {
		return err
	}
	co := catalogue.Options{Format: f, RepoURL: o.repoURL, Version: toolVersion(), Now: time.Now()}
	if co.Languages, err = docsLanguages(reg, o.languages); err != nil {
		return usageError(err, "")
	}
	if o.audit != "" {
		if co.Audit, err = readReport(o.audit); err != nil {
			return usageError(fmt.Errorf("%s: reading audit report: %w", o.audit, err), "write one with keyreg audit --format json > "+o.audit)
		}
	}
	files, err := catalogue.Catalogue(reg, co)
	if err != nil {
		return usageError(err, "")
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return runtimeError(fmt.Errorf("creating %q: %w", o.out, err), "")
	}
	for _, file := range files {
		p := filepath.Join(o.out, file.Name)
		if err := os.WriteFile(p, file.Data, 0o644); err != nil {
			return runtimeError(fmt.Errorf("writing %q: %w", p, err), "")
		}
	}
	fmt.Fprintf(a.stderr, "keyreg docs: wrote %s to %s\n", diag.Count(len(files), "file"), filepath.Join(o.out, files[0].Name))
	return nil
}

// docsLanguages names the builders of every language whose docs flags ask
// for it, over every family of reg.
func docsLanguages(reg *registry.Registry, ls []docsLanguage) ([]catalogue.Language, error) {
	var out []catalogue.Language
	var req *codegen.Request
	for _, l := range ls {
		g := l.build()
		if g == nil {
			continue
		}
		d, ok := g.(codegen.Documenter)
		if !ok {
			return nil, fmt.Errorf("the %s backend does not name its builders", l.name)
		}
		if req == nil {
			var err error
			if req, err = codegen.NewRequest(reg, codegen.Scope{IncludePresets: true}); err != nil {
				return nil, fmt.Errorf("naming the generated builders: %w", err)
			}
		}
		cl, err := catalogue.Builders(l.name, d, req)
		if err != nil {
			return nil, err
		}
		out = append(out, cl)
	}
	return out, nil
}
