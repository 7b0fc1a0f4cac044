package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/render"
)

// githubFormat is GitHub Actions workflow commands, which GitHub shows as
// annotations, with a markdown step summary.
var githubFormat = renderer{
	name:        GitHub,
	aliases:     []string{"github-actions"},
	help:        "workflow commands; with $GITHUB_STEP_SUMMARY set, a markdown table there too",
	diagnostics: writeGitHub,
	audit:       writeAuditGitHub,
}

// defaultMaxAnnotations is how many annotations of each level GitHub shows
// per step.
const defaultMaxAnnotations = 10

// Escaping as in actions/toolkit packages/core/src/command.ts.
var (
	ghData     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	ghProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// writeGitHub prints active findings as workflow commands, errors first, at
// most o.MaxAnnotations per level, then one notice counting the rest. It
// writes every active finding to o.StepSummary.
func writeGitHub(w io.Writer, l diag.List, o Options) error {
	active := l.Active()
	bySeverity(active)

	limit, hidden := ghLimits(active, o.MaxAnnotations)

	var b bytes.Buffer
	shown := map[string]int{}
	for _, d := range active {
		lvl := ghLevel(d.Severity)
		if limit != nil && shown[lvl] >= limit[lvl] {
			continue
		}
		shown[lvl]++
		line, col := d.Pos.Start()
		fmt.Fprintf(&b, "::%s file=%s,line=%d,col=%d", lvl, ghProperty.Replace(render.SlashPath(d.Pos.File)), line, col)
		if d.Pos.EndLine > 0 {
			endLine, endCol := d.Pos.End()
			fmt.Fprintf(&b, ",endLine=%d,endColumn=%d", endLine, endCol)
		}
		fmt.Fprintf(&b, ",title=%s::%s\n", ghProperty.Replace(d.Rule), ghData.Replace(d.Message))
	}
	if hidden > 0 {
		where := "not annotated"
		if o.StepSummary != nil {
			where = "see job summary"
		}
		fmt.Fprintf(&b, "::notice::%d more %s, %s\n", hidden, diag.Plural(int64(hidden), "finding"), where)
	}
	if b.Len() > 0 {
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
	}
	if o.StepSummary != nil {
		if err := writeStepSummary(o.StepSummary, l, active, o); err != nil {
			return fmt.Errorf("writing step summary: %w", err)
		}
	}
	return nil
}

// ghLimits returns how many annotations of each level to print, and how
// many active findings that leaves out. A nil map means no cap.
func ghLimits(active diag.List, maxPerLevel int) (limit map[string]int, hidden int) {
	if maxPerLevel < 0 {
		return nil, 0
	}
	if maxPerLevel == 0 {
		maxPerLevel = defaultMaxAnnotations
	}
	count := map[string]int{}
	for _, d := range active {
		count[ghLevel(d.Severity)]++
	}
	limit = map[string]int{"error": maxPerLevel, "warning": maxPerLevel, "notice": maxPerLevel}
	over := func() int {
		n := 0
		for lvl, c := range count {
			n += max(0, c-limit[lvl])
		}
		return n
	}
	if over() > 0 && count["notice"] >= maxPerLevel {
		// The closing "N more findings" notice takes one of the notice slots.
		limit["notice"]--
	}
	return limit, over()
}

// ghLevel maps a severity to a workflow command.
func ghLevel(s diag.Severity) string {
	switch {
	case s >= diag.Error:
		return "error"
	case s == diag.Warn:
		return "warning"
	}
	return "notice"
}

// writeStepSummary writes a markdown heading with the counts of all and a
// table of active, which is already in annotation order.
func writeStepSummary(w io.Writer, all, active diag.List, o Options) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### %s: %s\n\n", render.MD(o.Tool.Name, render.MDData), all.Count())
	if len(active) > 0 {
		b.WriteString("| Severity | Location | Rule | Family | Message |\n")
		b.WriteString("| --- | --- | --- | --- | --- |\n")
		for _, d := range active {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n",
				d.Severity.Label(),
				render.MD(render.SlashPath(d.Pos.String()), render.MDData),
				render.MD(d.Rule, render.MDData),
				render.MD(d.Family, render.MDData),
				render.MD(d.Message, render.MDData))
		}
		b.WriteString("\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}
