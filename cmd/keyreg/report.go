package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/audit/auditjson"
	"github.com/keyreg/keyreg/report"
	"github.com/spf13/cobra"
)

type mergeOptions struct {
	output outputOptions
	failOn string
	top    int
	expect int
	list   string
}

func (a *app) reportCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "report",
		Short: "Work with audit reports written by keyreg audit --format json",
		Args:  args(cobra.NoArgs),
	}
	c.AddCommand(a.reportMergeCmd())
	return c
}

func (a *app) reportMergeCmd() *cobra.Command {
	var o mergeOptions
	c := &cobra.Command{
		Use:   "merge report.json...",
		Short: "Merge json audit reports of disjoint keyspaces into one report",
		Long: `Merge combines json audit reports (keyreg audit --format json) of disjoint
keyspaces, such as one per cluster shard or one per Redis instance written by
separate jobs, into one report in any audit format. Every count adds up, the
size sketches and TTL histograms merge, the largest keys are the largest of
all, and examples stay bounded. The reports must come from audits against the
same registry (the same families, in the same order, and the same channels
in the reports that audited them).

A finding that fires on no key (family-unused) is kept only when every report
has it. The merged scan duration is the longest of the inputs'.

The inputs are read one at a time and folded in, so memory does not grow
with their number. Every number of an input must be one an audit writes
(counts from 0 to 2^48), so that no sum overflows. The merged report lists
each input's target, and each finding example names its instance.

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 a file that is not
a json audit report of a version this keyreg reads, or holds a number out of
range (the error names the file and the JSON path), or reports of different
registries, 3 when an input report is partial, or when --expect N (or
--target-list, one report per target) names more reports than were given (a
fleet's failed target writes none): the merged report is printed, marked
partial. A directory argument stands for the .json files in it.

With --target-list, each report an audit --target-list wrote names its
target (fleet_target), and each target of the list must have at most one
report: a second report of a target, or the report of a target the list
does not hold, is exit 2, and the partial reason names the missing
targets. Reports without the name (older, or audited without a list) are
only counted.`,
		Example: `  keyreg report merge shard-*.json --format markdown >> "$GITHUB_STEP_SUMMARY"
  keyreg report merge eu.json us.json --output json=fleet.json --output junit=fleet.xml
  keyreg report merge --expect 40 /reports/*.json --format markdown
  keyreg report merge --target-list /etc/keyreg/targets/targets.txt /reports --output html=/published/fleet.html`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, files []string) error {
			return a.runMerge(o, files)
		},
	}
	f := c.Flags()
	outputFlags(c, &o.output, "", report.DocAudit, report.FormatList(report.DocAudit)+" (default: table on a terminal, else text)")
	f.StringVar(&o.failOn, "fail-on", "error", "exit 1 on findings of this severity or above: error, warn, info or never")
	f.StringVar(&o.list, "target-list", "", "a fleet's target list (docs/fleet.md): expect one report per target, as --expect does")
	f.IntVar(&o.expect, "expect", 0, "the number of reports expected (a fleet's targets); fewer make the merged report partial (0: any)")
	f.IntVar(&o.top, "top", audit.DefaultTopN, fmt.Sprintf("largest keys to keep per measure, bytes and elements (0: none; at most %d)", audit.MaxTopN))
	return c
}

func (a *app) runMerge(o mergeOptions, files []string) error {
	outs, threshold, err := a.auditOutput(&o.output, o.failOn)
	if err != nil {
		return err
	}
	defer outs.discard()
	top, err := topFlag(o.top)
	if err != nil {
		return err
	}
	files, err = mergeInputs(files)
	if err != nil {
		return err
	}
	var targets []fleetTarget
	if o.list != "" {
		if o.expect != 0 {
			return usageError(errors.New("--expect and --target-list both say how many reports to expect"), "")
		}
		f, err := os.Open(o.list)
		if err != nil {
			return usageError(err, "")
		}
		targets, err = readTargets(o.list, f)
		f.Close()
		if err != nil {
			return usageError(err, "")
		}
		o.expect = len(targets)
	}
	if o.expect < 0 || o.expect > audit.MaxMergeInputs {
		return usageError(fmt.Errorf("--expect %d is not between 0 and %d", o.expect, audit.MaxMergeInputs), "")
	}
	if o.expect > 0 && len(files) > o.expect {
		return usageError(fmt.Errorf("%d reports to merge, more than --expect %d", len(files), o.expect), "remove the reports of an earlier run")
	}
	if len(files) > audit.MaxMergeInputs {
		return usageError(fmt.Errorf("%d reports to merge, at most %d at once", len(files), audit.MaxMergeInputs), "merge them in groups, then merge the results")
	}
	// One input is read and folded in at a time: the memory held is the
	// merged state and one input, however many there are.
	m := audit.NewMerger(audit.MergeOptions{Top: top, Examples: audit.Defaults().Examples})
	fleet := newFleetMatch(o.list, targets)
	for _, name := range files {
		r, err := readReport(name)
		if err != nil {
			return usageError(fmt.Errorf("%s: %w", name, err), "write reports with keyreg audit --format json")
		}
		if err := fleet.add(name, r.FleetTarget); err != nil {
			return err
		}
		if err := m.Add(r); err != nil {
			return usageError(fmt.Errorf("%s: %w", name, err), "")
		}
	}
	rep, err := m.Report()
	if err != nil {
		return usageError(err, "")
	}
	if o.expect > len(files) {
		missing := fmt.Sprintf("%d of %d expected reports missing", o.expect-len(files), o.expect) + fleet.missing()
		rep.Partial = true
		if rep.PartialReason != "" {
			missing += "; " + rep.PartialReason
		}
		rep.PartialReason = missing
	}
	if err := a.writeAudit(outs, rep, nil); err != nil {
		return runtimeError(err, "")
	}
	if rep.Partial {
		return runtimeError(fmt.Errorf("an input report is partial (%s); %s", rep.PartialReason, outs.partialNote("merged report")), "")
	}
	if failed(rep.Diagnostics(), threshold) {
		return errFindings
	}
	return nil
}

// mergeInputs replaces each directory among the arguments with the .json
// files in it, sorted, so that a job without a shell (the distroless image)
// merges a directory of reports.
func mergeInputs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			out = append(out, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, usageError(err, "")
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
				out = append(out, filepath.Join(a, e.Name()))
			}
			if len(out) > audit.MaxMergeInputs {
				return nil, usageError(fmt.Errorf("%s: more than %d reports", a, audit.MaxMergeInputs), "merge them in groups, then merge the results")
			}
		}
	}
	return out, nil
}

// topFlag checks --top and maps it to audit.Options.Top, where 0 means the
// default and a negative number none.
func topFlag(n int) (int, error) {
	if n < 0 || n > audit.MaxTopN {
		return 0, usageError(fmt.Errorf("--top %d is not between 0 and %d", n, audit.MaxTopN), "")
	}
	if n == 0 {
		return -1, nil
	}
	return n, nil
}

// readReport reads one json audit report file, bounded in size.
func readReport(name string) (*audit.Report, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, errors.Unwrap(err) // the *PathError names the file again
	}
	defer f.Close()
	return auditjson.Read(f)
}

// fleetMatch matches the reports of a merge --target-list to the list's
// targets by the name each report carries (Report.FleetTarget, written by
// audit --target-list): each target has at most one report, and every
// report is of a target of the list. A report without the name (an audit
// without --target-list, or of keyreg before the field) is only counted,
// as every report was before.
type fleetMatch struct {
	list    string
	targets []fleetTarget
	index   map[string]int
	seen    []string // per target, the file of its report
	unnamed int
}

func newFleetMatch(list string, targets []fleetTarget) *fleetMatch {
	f := &fleetMatch{list: list, targets: targets, index: make(map[string]int, len(targets)), seen: make([]string, len(targets))}
	for i, t := range targets {
		f.index[t.Name] = i
	}
	return f
}

// add records that file is a report of the target named name ("" when
// the report names none); a target not in the list, or a second report of
// one, is a usage error (exit 2).
func (f *fleetMatch) add(file, name string) error {
	if f.list == "" {
		return nil
	}
	if name == "" {
		f.unnamed++
		return nil
	}
	i, ok := f.index[name]
	if !ok {
		return usageError(fmt.Errorf("%s is the report of target %s, which %s does not list", file, strconv.Quote(clipName(name)), f.list), "remove the reports of other fleets, or merge with their target list")
	}
	if prev := f.seen[i]; prev != "" {
		return usageError(fmt.Errorf("%s and %s are both reports of target %s", prev, file, name), "remove the report of an earlier run")
	}
	f.seen[i] = file
	return nil
}

// maxMissingNamed bounds the missing targets a partial reason names.
const maxMissingNamed = 20

// missing names the targets of the list without a report, for the partial
// reason, when every report named its target (else which are missing is not
// known).
func (f *fleetMatch) missing() string {
	if f.list == "" {
		return ""
	}
	if f.unnamed > 0 {
		some := fmt.Sprintf("%d reports name", f.unnamed)
		if f.unnamed == 1 {
			some = "1 report names"
		}
		return " (" + some + " no target, written without --target-list or by an older keyreg: which targets are missing is not known)"
	}
	var names []string
	n := 0
	for i, t := range f.targets {
		if f.seen[i] != "" {
			continue
		}
		n++
		if len(names) < maxMissingNamed {
			names = append(names, t.Name)
		}
	}
	s := ": " + strings.Join(names, ", ")
	if n > len(names) {
		s += fmt.Sprintf(" and %d more", n-len(names))
	}
	return s
}
