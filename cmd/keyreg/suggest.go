package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/infer"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
	"github.com/spf13/cobra"
)

func (a *app) suggestCmd() *cobra.Command {
	o := initOptions{name: "suggest"}
	var (
		regPath  string
		write    bool
		ownerArg string
	)
	c := &cobra.Command{
		Use:   "suggest",
		Short: "Propose families for the keys a registry leaves unregistered (read-only scan)",
		Long: `Suggest scans a live Redis as keyreg init does, but only the keys the
registry does not register: it proposes families (and presets: entries) for
them, as YAML to add to keys.yaml, with the same comments as init. Proposals
never overlap the registry's families: a proposal that could match a key of
an existing family is left out and counted (such keys have the family's shape
and a value it refuses: keyreg audit reports them as placeholder-invalid).

With --write the proposals are added to the registry file itself, at the end
of its families: and presets: lists, and the result must load: nothing is
written otherwise. Schemas go to schemas/ beside it.

Exit codes: 0 proposals printed or written, or none needed; 2 usage error; 3
runtime error (Redis unreachable, interrupted).`,
		Example: `  keyreg suggest --url "$REDIS_URL" --replica
  keyreg suggest --url "$REDIS_URL" --write`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return a.runSuggest(c.Context(), o, regPath, write, ownerArg)
		},
	}
	f := c.Flags()
	registryFlag(f, &regPath)
	f.BoolVar(&write, "write", false, "add the proposals to the registry file (and schema files beside it)")
	f.StringVar(&ownerArg, "owner", "unknown", "the owner of the proposed families; it must be declared in the registry unless it is \"unknown\"")
	o.scanFlags(f)
	return c
}

func (a *app) runSuggest(ctx context.Context, o initOptions, regPath string, write bool, owner string) error {
	reg, err := loadRegistry(regPath)
	if err != nil {
		return err
	}
	if o.sample < 0 || o.maxValue <= 0 {
		return usageError(errors.New("--sample must be 0 or more and --max-value-bytes above 0"), "")
	}
	in := infer.New(infer.Options{Separator: reg.Separator, Owner: owner, Limits: o.limits, Existing: reg})
	d, schemas, sum, partial, err := a.inferFrom(ctx, o, in)
	if err != nil {
		return err
	}
	unreg := sum.Keys - sum.Existing
	fmt.Fprintf(a.stderr, "keyreg suggest: %d of %s unregistered: %s and %s proposed for %d of them",
		unreg, diag.Count(sum.Keys, "key"), diag.Count(sum.Families, "family"), diag.Count(sum.Presets, "preset"), sum.Registered)
	if sum.Dropped > 0 {
		fmt.Fprintf(a.stderr, "; %d proposals left out, they would overlap families of %s", sum.Dropped, regPath)
	}
	fmt.Fprintln(a.stderr)
	if sum.Families+sum.Presets == 0 {
		a.stdout.Write(d.MarshalFooter())
		return partialErr(partial)
	}
	if !write {
		fams, pres, err := d.MarshalParts(2)
		if err != nil {
			return runtimeError(err, "")
		}
		if len(fams) > 0 {
			fmt.Fprintf(a.stdout, "# Add under families: in %s\n", regPath)
			a.stdout.Write(fams)
		}
		if len(pres) > 0 {
			fmt.Fprintf(a.stdout, "# Add under presets: in %s\n", regPath)
			a.stdout.Write(pres)
		}
		for name, b := range schemas {
			fmt.Fprintf(a.stdout, "# %s (written with --write):\n#   %d bytes of JSON Schema\n", name, len(b))
		}
		a.stdout.Write(d.MarshalFooter())
		return partialErr(partial)
	}
	src, err := os.ReadFile(regPath)
	if err != nil {
		return runtimeError(err, "")
	}
	out, err := d.Insert(src)
	if err != nil {
		return usageError(err, "")
	}
	dir := filepath.Dir(regPath)
	tmp, err := os.MkdirTemp("", "keyreg-suggest")
	if err != nil {
		return runtimeError(err, "")
	}
	defer os.RemoveAll(tmp)
	// Check the result before touching the registry: it must load.
	check := filepath.Join(tmp, filepath.Base(regPath))
	if err := copySchemas(dir, tmp, reg); err != nil {
		return runtimeError(err, "")
	}
	if err := writeDraftFiles(check, out, schemas, true); err != nil {
		return err
	}
	next, err := registry.LoadFile(check)
	if err != nil {
		return runtimeError(fmt.Errorf("the registry with the proposals added does not load, so nothing was written: %w", err), "")
	}
	if err := writeDraftFiles(regPath, out, schemas, false); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "keyreg suggest: wrote %s; lint: %s\n", regPath, rules.Lint(next).Active().Count())
	return partialErr(partial)
}

// partialErr is the exit of a run whose scan was partial.
func partialErr(partial string) error {
	if partial == "" {
		return nil
	}
	return runtimeError(fmt.Errorf("the scan was partial (%s): keys not scanned have no proposal", partial), "")
}

// copySchemas copies the schema files reg refers to from dir into to, so
// that a copy of the registry there loads.
func copySchemas(dir, to string, reg *registry.Registry) error {
	for _, f := range reg.Families {
		if f.Schema == nil || f.Schema.Path == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Schema.Path)))
		if err != nil {
			return err
		}
		p := filepath.Join(to, filepath.FromSlash(f.Schema.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
