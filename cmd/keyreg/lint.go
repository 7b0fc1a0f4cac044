package main

import (
	"fmt"
	"io"
	"os"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/report"
	"github.com/keyreg/keyreg/rules"
	"github.com/spf13/cobra"
)

type lintOptions struct {
	registry string
	output   outputOptions
	paths    pathOptions
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

--output FORMAT=PATH (repeatable) writes several from the same run, each
file renamed into place once written.

Without --registry or $KEYREG_REGISTRY, keys.yaml is looked for in the
working directory, then upward to the repository root; one found upward is
named on stderr.

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 invalid registry
or usage error (an --output path that cannot be written included), 3 a
report that could not be written.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return a.runLint(o) },
	}
	registryFlag(c.Flags(), &o.registry)
	outputFlags(c, &o.output, "text", report.DocDiagnostics, "output format: "+report.FormatList(report.DocDiagnostics))
	pathPrefixFlag(c, &o.paths)
	c.Flags().StringVar(&o.failOn, "fail-on", "error", "exit 1 on findings of this severity or above: error, warn, info or never")
	return c
}

func (a *app) runLint(o lintOptions) error {
	threshold, err := failOn(o.failOn)
	if err != nil {
		return err
	}
	outs, err := o.output.open(nil)
	if err != nil {
		return err
	}
	defer outs.discard()
	reg, err := a.loadReported(o.registry, o.paths, outs, "keyreg/lint/")
	if err != nil {
		return err
	}
	checked := &report.Checked{Families: familyNames(reg), Rules: ruleIDs(rules.KindLint)}
	return a.reportDiagnostics(outs, rules.Lint(reg), "keyreg/lint/", checked, threshold)
}

// familyNames lists the families of reg in registry order.
func familyNames(reg *registry.Registry) []string {
	out := make([]string, len(reg.Families))
	for i, f := range reg.Families {
		out[i] = f.Name
	}
	return out
}

// ruleIDs lists the IDs of the rules of kind k.
func ruleIDs(k rules.Kind) []string {
	var out []string
	for _, r := range rules.All() {
		if r.Kind == k {
			out = append(out, r.ID)
		}
	}
	return out
}

// loadReported loads the registry at p. An invalid registry is reported in
// the requested format, so CI annotations land on the broken line, and
// exits 2.
func (a *app) loadReported(p string, paths pathOptions, outs outputs, automation string) (*registry.Registry, error) {
	reg, err := loadRegistryAs(p, paths)
	if le, ok := listError(err); ok {
		if werr := a.writeDiagnostics(outs, le.List, automation, nil); werr != nil {
			return nil, runtimeError(werr, "")
		}
		return nil, &exitError{code: exitUsage}
	}
	return reg, err
}

// reportDiagnostics prints l and maps it to an exit code: 2 when a finding
// makes a registry unusable, 1 when findings reach threshold.
func (a *app) reportDiagnostics(outs outputs, l diag.List, automation string, checked *report.Checked, threshold diag.Severity) error {
	if err := a.writeDiagnostics(outs, l, automation, checked); err != nil {
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

// writeDiagnostics writes l to every output, with the text summary on
// stderr and, for github, the job summary to $GITHUB_STEP_SUMMARY (once
// each, however many outputs have the format).
func (a *app) writeDiagnostics(outs outputs, l diag.List, automation string, checked *report.Checked) error {
	return a.render(outs, automation, func(w io.Writer, format report.Format, o report.Options, first bool) error {
		o.Checked = checked
		if first {
			o.Summary = a.stderr
		}
		return report.Diagnostics(w, format, l, o)
	})
}

// render writes to every output with the options every document shares:
// the tool and its rules, the automation id, the table's width and colour
// for where it goes, and $GITHUB_STEP_SUMMARY (opened once) for the first
// github output.
func (a *app) render(outs outputs, automation string, fn func(w io.Writer, format report.Format, o report.Options, first bool) error) error {
	step, err := outs.stepSummary()
	if err != nil {
		return err
	}
	if step != nil {
		defer step.Close()
	}
	infos := ruleInfos()
	return outs.write(a.stdout, func(w io.Writer, format report.Format, first bool) error {
		o := report.Options{
			Tool:       report.Tool{Name: "keyreg", Version: toolVersion(), InformationURI: "https://github.com/keyreg/keyreg"},
			Rules:      infos,
			Automation: automation,
		}
		if format == report.Table {
			o.Width, o.Color = terminalWidth(w), a.useColor(w)
		}
		if first && step != nil && format == report.GitHub {
			o.StepSummary = step
		}
		return fn(w, format, o, first)
	})
}

func ruleInfos() []report.RuleInfo {
	var out []report.RuleInfo
	for _, r := range rules.All() {
		out = append(out, report.RuleInfo{ID: r.ID, Kind: string(r.Kind), Doc: r.Doc, Default: r.Severity})
	}
	return out
}

// stepSummary opens $GITHUB_STEP_SUMMARY for the github format's markdown
// summary when one of outs is github; nil when none is, or when the
// variable is unset.
func (outs outputs) stepSummary() (*os.File, error) {
	if !outs.has(report.GitHub) {
		return nil, nil
	}
	return openStepSummary()
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
