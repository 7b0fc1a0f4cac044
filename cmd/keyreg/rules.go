package main

import (
	"github.com/keyreg/keyreg/report"
	"github.com/spf13/cobra"
)

func (a *app) rulesCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "rules",
		Short: "List every rule with its ID, kind, default severity and doc",
		Long: `Rules lists every check keyreg runs. Change a rule's severity for the whole
registry under rules: in keys.yaml, or silence it for one family with
ignore: [{rule: <id>, reason: "…"}].

--format markdown prints docs/rules.md.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			f, err := report.ParseFormat(format, report.Formats(report.DocRules)...)
			if err != nil {
				return usageError(err, "")
			}
			if err := report.Rules(a.stdout, f, ruleInfos(), report.Options{}); err != nil {
				return usageError(err, "")
			}
			return nil
		},
	}
	formatFlag(c, &format, "text", report.DocRules, "output format: "+report.FormatList(report.DocRules))
	return c
}
