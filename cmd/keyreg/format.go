package main

import (
	"strings"

	"github.com/keyreg/keyreg/report"
	"github.com/spf13/cobra"
)

// formatFlag defines --format (-f) on c for a command that renders documents
// of kind d. The format names in its usage and its shell completions come
// from report's table of formats, like the validation (report.ParseFormat
// with report.Formats(d)), so a new format needs no change here.
func formatFlag(c *cobra.Command, p *string, value string, d report.Document, usage string) {
	c.Flags().StringVarP(p, "format", "f", value, usage)
	// The flag was just defined, so registering cannot fail.
	_ = c.RegisterFlagCompletionFunc("format", func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, s := range report.FormatCompletions(d) {
			if strings.HasPrefix(s, prefix) {
				out = append(out, s)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}
