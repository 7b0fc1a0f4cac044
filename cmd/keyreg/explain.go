package main

import (
	"fmt"

	"github.com/keyreg/keyreg/report"
	"github.com/spf13/cobra"
)

type explainOptions struct {
	registry string
	format   string
}

func (a *app) explainCmd() *cobra.Command {
	var o explainOptions
	c := &cobra.Command{
		Use:   "explain <key>",
		Short: "Tell who owns a key and what its rules are",
		Long: `Explain looks a key up in the registry and prints its family, owner and
contact, bound placeholders, type, encoding, TTL policy, payload schema,
limits, deprecation and the keys.yaml line that declares it.

When no family matches, it names the closest family and why it failed,
and exits 1.`,
		Example: `  keyreg explain v2:user:session:0b6f1c1e-8a9d-4c47-9f5e-2b1d7a3c9e10
  keyreg explain --format json 'v1:cart:{42}:items'`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error { return a.runExplain(args[0], o) },
	}
	registryFlag(c.Flags(), &o.registry)
	c.Flags().StringVarP(&o.format, "format", "f", "text", "output format: text or json")
	return c
}

func (a *app) runExplain(key string, o explainOptions) error {
	if o.format != "text" && o.format != "json" {
		return usageError(fmt.Errorf("unsupported format %q (want text or json)", o.format), "")
	}
	reg, err := loadRegistry(o.registry)
	if err != nil {
		return err
	}
	e := report.Explain(reg, key)
	if err := report.WriteExplanation(a.stdout, o.format, e); err != nil {
		return runtimeError(err, "")
	}
	if !e.Matched {
		return errFindings
	}
	return nil
}
