package main

import (
	"fmt"
	"os"

	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/keyreg/keyreg/report"
	"github.com/keyreg/keyreg/vet"
	"github.com/spf13/cobra"
)

type vetOptions struct {
	registry      string
	output        outputOptions
	failOn        string
	strict        bool
	baseline      string
	writeBaseline string
}

func (a *app) vetCmd() *cobra.Command {
	var o vetOptions
	c := &cobra.Command{
		Use:   "vet [packages]",
		Short: "Check the Redis keys Go code builds for go-redis v9 against keys.yaml",
		Long: `Vet finds the key arguments of go-redis v9 commands in Go packages (default
./...), derives their shape statically and checks it against the registry:
key-unregistered, key-shape-mismatch, key-deprecated, key-ttl-policy and
key-handbuilt (info, with the generated builder as a suggested fix). The
channels of Publish, SPublish, Subscribe and SSubscribe are checked against
the registry's channels: channel-unregistered, channel-mode-mismatch and
channel-deprecated. Keys whose shape cannot be derived are counted on
stderr, not reported, unless --strict. docs/vet.md has the checks, their limits and the go vet and
golangci-lint setups.

` + report.FormatHelp(report.DocDiagnostics, 76) + `

A //keyreg:ignore RULE REASON comment on a line silences that rule there.
--baseline FILE (written by --write-baseline FILE) lets only new findings
fail.

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 invalid registry
or usage error, 3 packages that did not load or type-check (a partial run).`,
		RunE: func(c *cobra.Command, args []string) error { return a.runVet(o, args) },
	}
	registryFlag(c.Flags(), &o.registry)
	outputFlags(c, &o.output, "text", report.DocDiagnostics, "output format: "+report.FormatList(report.DocDiagnostics))
	c.Flags().StringVar(&o.failOn, "fail-on", "error", "exit 1 on findings of this severity or above: error, warn, info or never")
	c.Flags().BoolVar(&o.strict, "strict", false, "report key arguments whose shape cannot be derived statically")
	c.Flags().StringVar(&o.baseline, "baseline", "", "a baseline file: its findings are shown as suppressed and do not fail")
	c.Flags().StringVar(&o.writeBaseline, "write-baseline", "", "write the findings of this run as a baseline file")
	return c
}

func (a *app) runVet(o vetOptions, patterns []string) error {
	threshold, err := failOn(o.failOn)
	if err != nil {
		return err
	}
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	var base *vet.Baseline
	if o.baseline != "" {
		if base, err = vet.LoadBaseline(o.baseline); err != nil {
			return usageError(fmt.Errorf("reading baseline: %w", err), "")
		}
	}
	outs, err := o.output.open(nil)
	if err != nil {
		return err
	}
	defer outs.discard()
	// The registry is loaded here first, so that an invalid one is reported
	// in the requested format and exits 2.
	if _, err := a.loadReported(o.registry, pathOptions{}, outs, "keyreg/vet/"); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return runtimeError(fmt.Errorf("finding keyreg's own binary for go vet -vettool: %w", err), "")
	}
	res, err := vet.GoVet(&vet.Config{Registry: o.registry, Strict: o.strict}, ".", self, patterns)
	if err != nil {
		return runtimeError(err, "")
	}
	if base != nil {
		base.Apply(res.Diagnostics)
	}
	if o.writeBaseline != "" {
		data, err := vet.NewBaseline(res.Diagnostics).Marshal()
		if err == nil {
			err = os.WriteFile(o.writeBaseline, data, 0o644)
		}
		if err != nil {
			return runtimeError(fmt.Errorf("writing baseline: %w", err), "")
		}
	}
	st := res.Stats
	rate := 0.0
	if st.Keys > 0 {
		rate = 100 * float64(st.Unknown) / float64(st.Keys)
	}
	fmt.Fprintf(a.stderr, "keyreg vet: %d key arguments, %d of unknown shape (%.1f%%), %d from generated builders\n", st.Keys, st.Unknown, rate, st.Generated)
	checked := &report.Checked{Rules: vet.Rules}
	if err := a.writeDiagnostics(outs, res.Diagnostics, "keyreg/vet/", checked); err != nil {
		return runtimeError(err, "")
	}
	if len(res.Errors) > 0 {
		for _, e := range res.Errors {
			fmt.Fprintf(a.stderr, "keyreg vet: %s\n", e)
		}
		return runtimeError(fmt.Errorf("partial run: %d package errors", len(res.Errors)), "")
	}
	if failed(res.Diagnostics.Active(), threshold) {
		return errFindings
	}
	return nil
}

// vetTool makes this process keyreg vet's analyzer under go vet when keyreg
// vet runs go vet -vettool=<keyreg> (vet.GoVet sets vet.ToolEnv): go vet
// calls the tool with -V=full, -flags and one *.cfg file per package, which
// singlechecker.Main (x/tools' unitchecker) answers; it never returns.
func vetTool() {
	if os.Getenv(vet.ToolEnv) != "1" {
		return
	}
	vet.StartHeap()
	singlechecker.Main(vet.New(&vet.Config{Registry: "keys.yaml", Stats: true}))
}
