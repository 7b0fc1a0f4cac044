package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/keyreg/keyreg/internal/gitfs"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/report"
	"github.com/keyreg/keyreg/rules"
	"github.com/spf13/cobra"
)

type breakingOptions struct {
	registry string
	against  string
	output   outputOptions
	paths    pathOptions
	failOn   string
}

func (a *app) breakingCmd() *cobra.Command {
	var o breakingOptions
	c := &cobra.Command{
		Use:   "breaking --against <git-ref|path>",
		Short: "Check that a change to keys.yaml breaks no reader or writer in production",
		Long: `Breaking compares the registry with an older version of it and reports
changes that would break a reader or writer still in production: families
removed before their sunset, key patterns, hash tags, types or encodings
changed without a version bump, a version bumped in place under the same
family name, payload schemas that are not reader-safe or
writer-safe as each family's compat level requires, and (as warnings and
notes) TTL, codegen and ownership changes. See docs/breaking.md.

--against is the path of the older keys.yaml (or of a directory holding
it), or a git ref (branch, tag or commit) of the repository that holds the
registry; the registry is read from that commit with git, without a
checkout. In GitHub Actions ($GITHUB_BASE_REF set) it defaults to the merge
base of HEAD with origin/$GITHUB_BASE_REF, which needs the full history
(actions/checkout with fetch-depth: 0).

--output FORMAT=PATH (repeatable) writes the findings in several formats
(junit, gitlab, sarif, …) from the same run.

Exit codes: 0 compatible, 1 findings at or above --fail-on, 2 invalid old
or new registry or usage error, 3 git ref missing (or a shallow clone), or
a report that could not be written.`,
		Example: `  keyreg breaking --against main
  keyreg breaking --against origin/main --format github
  keyreg breaking --against v1.4.0 --registry deploy/keys.yaml
  keyreg breaking --against /tmp/keys-prod.yaml --format json
  keyreg breaking --against main --format github --output sarif=breaking.sarif`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return a.runBreaking(c.Context(), o) },
	}
	registryFlag(c.Flags(), &o.registry)
	c.Flags().StringVar(&o.against, "against", "", "older registry to compare with: a git ref or a file path (default in GitHub Actions: the merge base with origin/$GITHUB_BASE_REF)")
	outputFlags(c, &o.output, "text", report.DocDiagnostics, "output format: "+report.FormatList(report.DocDiagnostics))
	pathPrefixFlag(c, &o.paths)
	c.Flags().StringVar(&o.failOn, "fail-on", "error", "exit 1 on findings of this severity or above: error, warn, info or never")
	return c
}

func (a *app) runBreaking(ctx context.Context, o breakingOptions) error {
	threshold, err := failOn(o.failOn)
	if err != nil {
		return err
	}
	against := o.against
	if against == "" {
		base := os.Getenv("GITHUB_BASE_REF")
		if base == "" {
			return usageError(errors.New("--against is required outside a GitHub pull request"), "pass a git ref such as main, or the path of an older keys.yaml")
		}
		against = "origin/" + base
	}
	outs, err := o.output.open(nil)
	if err != nil {
		return err
	}
	defer outs.discard()
	reg, err := a.loadReported(o.registry, o.paths, outs, "keyreg/breaking/")
	if err != nil {
		return err
	}
	old, err := a.loadAgainst(ctx, outs, o.registry, against, o.against == "")
	if err != nil {
		return err
	}
	checked := &report.Checked{Families: familyNames(reg), Rules: ruleIDs(rules.KindBreaking)}
	if old == nil {
		// Nothing to compare with: every family is new, and every check passes.
		return a.reportDiagnostics(outs, nil, "keyreg/breaking/", checked, threshold)
	}
	for _, f := range old.Families {
		if _, ok := reg.Family(f.Name); !ok {
			checked.Families = append(checked.Families, f.Name)
		}
	}
	return a.reportDiagnostics(outs, rules.Breaking(old, reg, time.Now()), "keyreg/breaking/", checked, threshold)
}

// loadAgainst loads the older registry. against is a file, a directory
// holding a file named like the registry, or a git ref of the repository
// holding the registry; with mergeBase set it is the base branch of a pull
// request, and the merge base of HEAD with it is used. A registry missing
// at the ref yields nil: everything in the new one is an addition.
func (a *app) loadAgainst(ctx context.Context, outs outputs, regPath, against string, mergeBase bool) (*registry.Registry, error) {
	if !mergeBase {
		if st, err := os.Stat(against); err == nil {
			p := against
			if st.IsDir() {
				p = filepath.Join(against, filepath.Base(regPath))
			}
			old, err := registry.LoadFile(p)
			if err != nil {
				return nil, a.againstError(outs, p, "", err)
			}
			return old, nil
		}
	}
	abs, err := filepath.Abs(regPath)
	if err != nil {
		return nil, runtimeError(err, "")
	}
	dir, name, err := gitfs.Locate(ctx, abs)
	if err != nil {
		if errors.Is(err, gitfs.ErrNotRepository) {
			return nil, runtimeError(fmt.Errorf("--against %q is not a file, and %s is not in a git repository to read a ref from", against, regPath), "pass the path of an older keys.yaml, or run inside the repository")
		}
		return nil, runtimeError(err, "")
	}
	ref, shown, label := against, against, against
	if mergeBase {
		base, err := gitfs.MergeBase(ctx, dir, "HEAD", against)
		if err != nil {
			return nil, gitError(err, "the base branch comes from $GITHUB_BASE_REF")
		}
		ref, shown, label = base, fmt.Sprintf("the merge base of HEAD and %s (%.12s)", against, base), fmt.Sprintf("%.12s", base)
	}
	fsys, err := gitfs.Open(ctx, dir, ref)
	if err != nil {
		return nil, gitError(err, "")
	}
	if c, ok := fsys.(*gitfs.FS); ok && !mergeBase {
		shown = fmt.Sprintf("%s (%.12s)", against, c.Commit())
	}
	old, err := registry.Load(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(a.stderr, "keyreg: %s does not exist at %s: nothing to compare, every family is new\n", name, shown)
		return nil, nil
	}
	if err != nil {
		return nil, a.againstError(outs, name+" at "+shown, label+":"+name, err)
	}
	fmt.Fprintf(a.stderr, "keyreg: comparing %s with %s\n", regPath, shown)
	return old, nil
}

// againstError reports a failure to load the older registry: an invalid one
// exits 2, with its diagnostics in every output (as an invalid new registry
// has), so that --format json still writes a document that says why. file, when set,
// names the registry in their positions instead of its path inside a git
// commit ("main:keys.yaml"), which annotations would put on the keys.yaml
// of the working tree.
func (a *app) againstError(outs outputs, what, file string, err error) error {
	le, ok := listError(err)
	if !ok {
		return runtimeError(fmt.Errorf("loading %s: %w", what, err), "")
	}
	list := slices.Clone(le.List)
	for i := range list {
		if file != "" {
			list[i].Pos.File = file
		}
		list[i].Message = "older registry: " + list[i].Message
	}
	fmt.Fprintf(a.stderr, "keyreg: error: the older registry %s is invalid (its findings are in the report)\n", what)
	if werr := a.writeDiagnostics(outs, list, "keyreg/breaking/", nil); werr != nil {
		return runtimeError(werr, "")
	}
	fmt.Fprintln(a.stderr, "hint: compare with a ref or file whose keys.yaml is valid")
	return &exitError{code: exitUsage}
}

// gitError turns a gitfs error into a runtime error (exit 3) with a hint.
func gitError(err error, note string) error {
	hint := "pass a branch, tag or commit that exists locally (git fetch it first), or the path of an older keys.yaml"
	if errors.Is(err, gitfs.ErrShallow) {
		hint = "this is a shallow clone: fetch the full history, such as fetch-depth: 0 in actions/checkout"
	}
	if note != "" {
		hint += "; " + note
	}
	return runtimeError(err, hint)
}
