package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/audit/auditjson"
	"github.com/keyreg/keyreg/internal/render"
)

// baselineView is the comparison with a baseline, prepared for the human
// formats.
type baselineView struct {
	line          string // such as "baseline base.json (recorded …): 1 new, 2 resolved, 5 unchanged"
	added         grid   // the new entries
	resolved      grid   // the resolved entries
	resolvedTitle string // the count, or why resolved entries are not listed
	resolvedNote  string // why resolved entries are not listed, if they are not
}

// newAuditViewFor prepares r for the human formats; with a comparison, its
// findings are only the new ones and the view carries the baseline.
func newAuditViewFor(r *audit.Report, c *audit.Comparison) *auditView {
	if c == nil {
		return newAuditView(r)
	}
	v := newAuditView(c.Filter(r))
	v.findingsTitle = "findings new since baseline"
	for i := range v.header {
		if v.header[i][0] == "findings" {
			v.header[i][0] = "new findings"
		}
	}
	bv := &baselineView{line: baselineLine(c)}
	bv.added = entryGrid(c.New, true)
	bv.resolved = entryGrid(c.Resolved, false)
	if c.ResolvedNote != "" {
		bv.resolvedNote = render.Printable(c.ResolvedNote)
		bv.resolvedTitle = "not listed: " + bv.resolvedNote
	} else {
		bv.resolvedTitle = fmt.Sprint(len(c.Resolved))
	}
	v.baseline = bv
	return v
}

// baselineLine sums up a comparison in one line.
func baselineLine(c *audit.Comparison) string {
	s := "baseline"
	if c.File != "" {
		s += " " + render.Printable(render.SlashPath(c.File))
	}
	if !c.Created.IsZero() {
		s += " (recorded " + c.Created.UTC().Format(time.RFC3339) + ")"
	}
	resolved := fmt.Sprintf("%d resolved", len(c.Resolved))
	if c.ResolvedNote != "" {
		resolved = "resolved not listed"
	}
	return fmt.Sprintf("%s: %d new, %s, %d unchanged", s, len(c.New), resolved, len(c.Unchanged))
}

// entryGrid lists baseline entries: severity, rule, family, the prefix of
// unregistered keys, and the key count (now for new entries, at the time of
// the baseline for resolved ones).
func entryGrid(es []audit.Entry, now bool) grid {
	keys := "keys"
	if !now {
		keys = "keys then"
	}
	g := grid{
		head:  []string{"severity", "rule", "family", "prefix", keys},
		right: []bool{false, false, false, false, true},
	}
	for _, e := range es {
		prefix := cell{text: "-"}
		switch {
		case e.Group:
			prefix = cell{keys: []string{e.Prefix}}
		case e.Other:
			prefix = cell{text: "(other prefixes)"}
		}
		g.rows = append(g.rows, []cell{
			{text: render.OrDash(e.Severity.Label())}, {text: render.Printable(e.Rule)}, {text: render.OrDash(render.Printable(e.Family))},
			prefix, txt("%d", e.Count),
		})
	}
	return g
}

// upperFirst capitalises the first ASCII letter of s, for headings.
func upperFirst(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// The SARIF log of an audit compared with a baseline: the plain log, with
// baselineState on each result and the baseline in the run's properties.
// Resolved entries are listed there rather than as "absent" results,
// because GitHub code scanning ignores baselineState and would open an
// alert for every absent result.
type (
	sarifBaselineLog struct {
		Version string             `json:"version"`
		Schema  string             `json:"$schema"`
		Runs    []sarifBaselineRun `json:"runs"`
	}
	sarifBaselineRun struct {
		Tool              sarifTool             `json:"tool"`
		AutomationDetails *sarifAutomation      `json:"automationDetails,omitempty"`
		Invocations       []sarifInvocation     `json:"invocations,omitempty"`
		Results           []sarifBaselineResult `json:"results"`
		Properties        sarifBaselineProps    `json:"properties"`
	}
	sarifBaselineResult struct {
		sarifResult
		BaselineState string `json:"baselineState"`
	}
	sarifBaselineProps struct {
		Baseline auditjson.Baseline `json:"keyregBaseline"`
	}
)

// writeAuditSARIFBaseline prints the SARIF log of r, each result marked
// "new" or "unchanged" against the baseline.
func writeAuditSARIFBaseline(w io.Writer, r *audit.Report, c *audit.Comparison, o Options) error {
	var plain bytes.Buffer
	if err := renderList(&plain, writeSARIF, auditDiagnostics(r), o); err != nil {
		return err
	}
	var log sarifBaselineLog
	if err := json.Unmarshal(plain.Bytes(), &log); err != nil {
		return err
	}
	// Results are found by rule and family, which name one finding.
	type key struct{ rule, family string }
	isNew := map[key]bool{}
	for _, f := range r.Findings {
		if f != nil {
			isNew[key{render.Printable(f.Rule), render.Printable(f.Family)}] = c.IsNew(f)
		}
	}
	for i := range log.Runs {
		run := &log.Runs[i]
		run.Properties.Baseline = *auditjson.NewBaseline(c)
		for j := range run.Results {
			res := &run.Results[j]
			family := ""
			if locs := res.Locations; len(locs) > 0 && len(locs[0].LogicalLocations) > 0 {
				family = locs[0].LogicalLocations[0].Name
			}
			res.BaselineState = "unchanged"
			if isNew[key{res.RuleID, family}] {
				res.BaselineState = "new"
			}
		}
	}
	return encode(w, log)
}
