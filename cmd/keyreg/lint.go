package main

import (
	"fmt"
	"os"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/report"
	"github.com/keyreg/keyreg/rules"
	"github.com/spf13/cobra"
)

type lintOptions struct {
	registry string
	format   string
	failOn   string
}

func (a *app) lintCmd() *cobra.Command {
	var o lintOptions
	c := &cobra.Command{
		Use:   "lint",
		Short: "Check keys.yaml: schema, naming, owners, TTL policies, overlapping patterns",
		Long: `Lint checks the registry: its JSON Schema, patterns, owners and prefix claims,
TTL policies, versions, payload schemas, and proves that no two patterns can
match the same key. Run it in CI on every change to keys.yaml.

` + report.FormatHelp(report.DocDiagnostics, 76) + `

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 invalid registry
or usage error.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return a.runLint(o) },
	}
	registryFlag(c.Flags(), &o.registry)
	formatFlag(c, &o.format, "text", report.DocDiagnostics, "output format: "+report.FormatList(report.DocDiagnostics))
	c.Flags().StringVar(&o.failOn, "fail-on", "error", "exit 1 on findings of this severity or above: error, warn, info or never")
	return c
}

func (a *app) runLint(o lintOptions) error {
	format, err := report.ParseFormat(o.format, report.Formats(report.DocDiagnostics)...)
	if err != nil {
		return usageError(err, "")
	}
	threshold, err := failOn(o.failOn)
	if err != nil {
		return err
	}
	reg, err := a.loadReported(o.registry, format, "keyreg/lint/")
	if err != nil {
		return err
	}
	return a.reportDiagnostics(format, rules.Lint(reg), "keyreg/lint/", threshold)
}

// loadReported loads the registry at p. An invalid registry is reported in
// the requested format, so CI annotations land on the broken line, and
// exits 2.
func (a *app) loadReported(p string, format report.Format, automation string) (*registry.Registry, error) {
	reg, err := loadRegistry(p)
	if le, ok := listError(err); ok {
		if werr := a.writeDiagnostics(format, le.List, automation); werr != nil {
			return nil, runtimeError(werr, "")
		}
		return nil, &exitError{code: exitUsage}
	}
	return reg, err
}

// reportDiagnostics prints l and maps it to an exit code: 2 when a finding
// makes a registry unusable, 1 when findings reach threshold.
func (a *app) reportDiagnostics(format report.Format, l diag.List, automation string, threshold diag.Severity) error {
	if err := a.writeDiagnostics(format, l, automation); err != nil {
		return runtimeError(err, "")
	}
	for _, d := range l {
		if rules.IsFatal(d) {
			return &exitError{code: exitUsage}
		}
	}
	if failed(l, threshold) {
		return errFindings
	}
	return nil
}

// writeDiagnostics prints l to stdout in format, with the text summary on
// stderr and, for github, the job summary to $GITHUB_STEP_SUMMARY.
func (a *app) writeDiagnostics(format report.Format, l diag.List, automation string) error {
	o := report.Options{
		Tool:       report.Tool{Name: "keyreg", Version: toolVersion(), InformationURI: "https://github.com/keyreg/keyreg"},
		Rules:      ruleInfos(),
		Automation: automation,
		Summary:    a.stderr,
	}
	if format == report.GitHub {
		f, err := openStepSummary()
		if err != nil {
			return err
		}
		if f != nil {
			defer f.Close()
			o.StepSummary = f
		}
	}
	return report.Diagnostics(a.stdout, format, l, o)
}

func ruleInfos() []report.RuleInfo {
	var out []report.RuleInfo
	for _, r := range rules.All() {
		out = append(out, report.RuleInfo{ID: r.ID, Kind: string(r.Kind), Doc: r.Doc, Default: r.Severity})
	}
	return out
}

// openStepSummary opens $GITHUB_STEP_SUMMARY for appending the markdown
// summary of the github format; nil when the variable is unset.
func openStepSummary() (*os.File, error) {
	p := os.Getenv("GITHUB_STEP_SUMMARY")
	if p == "" {
		return nil, nil
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening $GITHUB_STEP_SUMMARY: %w", err)
	}
	return f, nil
}
