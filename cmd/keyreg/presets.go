package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/report"
	"github.com/spf13/cobra"
)

func (a *app) presetsCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "presets",
		Short: "List the framework presets, their parameters and the families they expand into",
		Long: `Presets lists the framework presets that keys.yaml can use under presets:
for each, the library versions it was tested against, its parameters with
their defaults, and the families it expands into with those defaults. The
presets: ` + presetNames(len("presets: ")) + `.

keyreg presets show <name> prints the families of one preset as keys.yaml,
with --with for its parameters, so that it can be ejected into hand-written
families.

--format markdown prints docs/presets.md.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			f, err := report.ParseFormat(format, report.Formats(report.DocPresets)...)
			if err != nil {
				return usageError(err, "")
			}
			infos, err := report.PresetInfos()
			if err != nil {
				return runtimeError(err, "")
			}
			if err := report.Presets(a.stdout, f, infos, report.Options{}); err != nil {
				return usageError(err, "")
			}
			return nil
		},
	}
	formatFlag(c, &format, "text", report.DocPresets, "output format: "+report.FormatList(report.DocPresets))
	c.AddCommand(a.presetsShowCmd())
	return c
}

func (a *app) presetsShowCmd() *cobra.Command {
	var (
		with  []string
		owner string
	)
	c := &cobra.Command{
		Use:   "show <preset>",
		Short: "Print the families a preset expands into, as keys.yaml",
		Long: `Show prints the families a preset expands into as the YAML of a families:
list of keys.yaml. Pasted under families: in place of the presets: entry, they
declare the same keys by hand ("ejecting" from the preset): edit them freely
from there on.

A preset that declares Pub/Sub channels (celery, socket.io) prints them after
its families, as the list to paste under channels:.

--with sets a parameter as keys.yaml's with: would, its value in YAML:
--with queues=[celery,reports] --with result_expires=2d. A value that opens
a list, a mapping or a quoted string must be valid YAML ([a}b] is an error,
not a queue of that name); other text is taken as a string.`,
		Example: `  keyreg presets show celery
  keyreg presets show celery --with queues=[a,b] --owner payments
  keyreg presets show django --with 'key_prefixes=["", shop]'`,
		Args: args(cobra.ExactArgs(1)),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, p := range registry.Presets() {
				names = append(names, p.Name+"\t"+p.Summary)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, argv []string) error {
			params := map[string]string{}
			for _, w := range with {
				k, v, ok := strings.Cut(w, "=")
				if !ok || k == "" {
					return usageError(fmt.Errorf("--with %q: want name=value, such as queues=[a,b]", w), "")
				}
				if _, dup := params[k]; dup {
					return usageError(fmt.Errorf("--with sets %s twice", k), "")
				}
				params[k] = v
			}
			reg, err := registry.ExpandPreset(argv[0], owner, params)
			if err != nil {
				var le *diag.ListError
				if errors.As(err, &le) {
					// Positions would point into the entry built from the
					// flags: give the messages alone.
					msgs := make([]string, len(le.List))
					for i, d := range le.List {
						msgs[i] = d.Message
					}
					return usageError(errors.New(strings.Join(msgs, "\n")), "run keyreg presets for the presets and their parameters")
				}
				return runtimeError(err, "")
			}
			out, err := registry.MarshalFamilies(reg.Families)
			if err != nil {
				return runtimeError(err, "")
			}
			fmt.Fprintf(a.stdout, "# Families that preset %s expands into", argv[0])
			if len(with) > 0 {
				fmt.Fprintf(a.stdout, " with %s", strings.Join(with, " "))
			}
			fmt.Fprintf(a.stdout, " (keyreg version %s).\n# Paste under families: in place of the presets: entry to eject from the preset.\n", toolVersion())
			if _, err = a.stdout.Write(out); err != nil || len(reg.Channels) == 0 {
				return err
			}
			out, err = registry.MarshalChannels(reg.Channels)
			if err != nil {
				return runtimeError(err, "")
			}
			fmt.Fprintf(a.stdout, "# Channels that preset %s expands into. Paste under channels:\n", argv[0])
			_, err = a.stdout.Write(out)
			return err
		},
	}
	c.Flags().StringArrayVar(&with, "with", nil, "set a parameter: name=value, the value in YAML (repeatable)")
	c.Flags().StringVar(&owner, "owner", "your-team", "the owner the families get")
	return c
}

// presetNames lists the built-in presets for --help, from the registry's
// table, so that the help never names one that does not exist or misses one.
// The list starts at column col and breaks its lines before column 76.
func presetNames(col int) string {
	var b strings.Builder
	for i, p := range registry.Presets() {
		if i > 0 {
			b.WriteString(",")
			col++
			if col+1+len(p.Name) > 76 {
				b.WriteString("\n")
				col = 0
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(p.Name)
		col += len(p.Name)
	}
	return b.String()
}
