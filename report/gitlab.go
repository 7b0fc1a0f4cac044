package report

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/render"
)

// GitLab prints a GitLab Code Quality report: a JSON array with one issue
// per active finding (description, check_name, fingerprint, severity,
// location.path, location.lines.begin), which GitLab shows in merge
// requests. Fingerprints are the SARIF ones, so they survive reordering
// keys.yaml. Suppressed findings are left out.
const GitLab Format = "gitlab"

// gitlabFormat is GitLab Code Quality JSON.
var gitlabFormat = renderer{
	name:        GitLab,
	aliases:     []string{"codequality", "code-quality"},
	help:        "GitLab Code Quality JSON, for merge request widgets",
	diagnostics: writeGitLab,
	audit:       writeAuditGitLab,
}

type gitlabIssue struct {
	Description string         `json:"description"`
	CheckName   string         `json:"check_name"`
	Fingerprint string         `json:"fingerprint"`
	Severity    string         `json:"severity"`
	Location    gitlabLocation `json:"location"`
}

type gitlabLocation struct {
	Path  string      `json:"path"`
	Lines gitlabLines `json:"lines"`
}

type gitlabLines struct {
	Begin int `json:"begin"`
}

// writeGitLab prints the active findings of l as Code Quality issues.
func writeGitLab(w io.Writer, l diag.List, _ Options) error {
	return encode(w, gitlabIssues(l))
}

// gitlabIssues converts l, prepared. Fingerprints are computed over all of
// l, suppressed findings included, so that each equals the SARIF one.
func gitlabIssues(l diag.List) []gitlabIssue {
	fps := fingerprints(l)
	out := []gitlabIssue{}
	for i, d := range l {
		if d.Suppressed {
			continue
		}
		line, _ := d.Pos.Start()
		out = append(out, gitlabIssue{
			Description: nonEmpty(d.Message, d.Rule),
			CheckName:   d.Rule,
			Fingerprint: fps[i],
			Severity:    gitlabSeverity(d.Severity),
			Location:    gitlabLocation{Path: render.SlashPath(d.Pos.File), Lines: gitlabLines{Begin: line}},
		})
	}
	return out
}

// writeAuditGitLab prints the audit's findings as Code Quality issues (with
// a baseline, only the new ones, as the exit code counts them). A partial
// audit adds one blocker issue, check_name "partial-audit", on the
// registry, so that the merge request says the report is incomplete.
func writeAuditGitLab(w io.Writer, r *audit.Report, c *audit.Comparison, _ Options) error {
	shown := r
	if c != nil {
		shown = c.Filter(r)
	}
	issues := gitlabIssues(prepare(auditDiagnostics(shown)))
	if r.Partial {
		sum := sha256.Sum256([]byte("partial-audit|" + r.Registry))
		issues = append([]gitlabIssue{{
			Description: render.PartialBanner(r),
			CheckName:   "partial-audit",
			Fingerprint: hex.EncodeToString(sum[:]),
			Severity:    "blocker",
			Location:    gitlabLocation{Path: render.SlashPath(nonEmpty(render.Printable(r.Registry), "keys.yaml")), Lines: gitlabLines{Begin: 1}},
		}}, issues...)
	}
	if msg := notCheckedBanner(r); msg != "" {
		sum := sha256.Sum256([]byte("rules-not-checked|" + r.Registry + "|" + strings.Join(r.Scan.NotChecked, ",")))
		issues = append(issues, gitlabIssue{
			Description: msg,
			CheckName:   "rules-not-checked",
			Fingerprint: hex.EncodeToString(sum[:]),
			Severity:    "minor",
			Location:    gitlabLocation{Path: render.SlashPath(nonEmpty(render.Printable(r.Registry), "keys.yaml")), Lines: gitlabLines{Begin: 1}},
		})
	}
	return encode(w, issues)
}

// gitlabSeverity maps a severity to Code Quality's info, minor, major,
// critical or blocker. An error is critical, since it fails the run; a
// warning is major and a note is info. Blocker is kept for a partial audit.
func gitlabSeverity(s diag.Severity) string {
	switch {
	case s >= diag.Error:
		return "critical"
	case s == diag.Warn:
		return "major"
	}
	return "info"
}
