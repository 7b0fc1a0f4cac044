package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/report"
	"github.com/spf13/cobra"
)

type docsOptions struct {
	registry  string
	out       string
	format    string
	audit     string
	repoURL   string
	goPackage string
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
names the package of keyreg gen go, and each family shows its key builder.

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
	c.Flags().StringVar(&o.goPackage, "go-package", "", "the --package of keyreg gen go, to show each family's builder")
	_ = c.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"html\tone self-contained page", "markdown\tindex.md and one file per owner"}, cobra.ShellCompDirectiveNoFileComp
	})
	return c
}

func (a *app) runDocs(o docsOptions) error {
	var f report.Format
	switch o.format {
	case "html", "HTML":
		f = report.HTML
	case "markdown", "md", "Markdown":
		f = report.Markdown
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
	co := report.CatalogueOptions{Format: f, RepoURL: o.repoURL, GoPackage: o.goPackage, Version: toolVersion(), Now: time.Now()}
	if o.audit != "" {
		if co.Audit, err = readReport(o.audit); err != nil {
			return usageError(fmt.Errorf("%s: reading audit report: %w", o.audit, err), "write one with keyreg audit --format json > "+o.audit)
		}
	}
	files, err := report.Catalogue(reg, co)
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
