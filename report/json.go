package report

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/audit/auditjson"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/render"
)

// jsonFormat is one versioned JSON document per run.
var jsonFormat = renderer{
	name:        JSON,
	help:        "one versioned document",
	diagnostics: writeJSON,
	audit: buffered(func(b *bytes.Buffer, r *audit.Report, c *audit.Comparison, o Options) error {
		return auditjson.Encode(b, r, c, auditjson.Tool{Name: o.Tool.Name, Version: o.Tool.Version})
	}),
	explain: writeExplanationJSON,
	rules:   writeRulesJSON,
	presets: writePresetsJSON,
}

// jsonVersion is the version of the json format's document schema.
const jsonVersion = "1"

type jsonDoc struct {
	Version  string        `json:"version"`
	Tool     jsonTool      `json:"tool"`
	Summary  jsonSummary   `json:"summary"`
	Findings []jsonFinding `json:"findings"`
}

type jsonTool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type jsonSummary struct {
	Error      int `json:"error"`
	Warn       int `json:"warn"`
	Info       int `json:"info"`
	Suppressed int `json:"suppressed"`
}

type jsonFinding struct {
	RuleID      string        `json:"rule_id"`
	Severity    diag.Severity `json:"severity"`
	Family      string        `json:"family"`
	Path        string        `json:"path"`
	StartLine   int           `json:"start_line"`
	StartColumn int           `json:"start_column"`
	EndLine     int           `json:"end_line"`
	EndColumn   int           `json:"end_column"`
	JSONPointer string        `json:"json_pointer,omitempty"`
	Message     string        `json:"message"`
	Suppressed  bool          `json:"suppressed,omitempty"`
	Reason      string        `json:"reason,omitempty"`
	Fingerprint string        `json:"fingerprint"`
}

// writeJSON prints l as one versioned JSON document, suppressed findings
// included.
func writeJSON(w io.Writer, l diag.List, o Options) error {
	c := l.Count()
	doc := jsonDoc{
		Version:  jsonVersion,
		Tool:     jsonTool{Name: o.Tool.Name, Version: o.Tool.Version},
		Summary:  jsonSummary{Error: c.Error, Warn: c.Warn, Info: c.Info, Suppressed: c.Suppressed},
		Findings: make([]jsonFinding, 0, len(l)),
	}
	fps := fingerprints(l)
	for i, d := range l {
		line, col := d.Pos.Start()
		endLine, endCol := d.Pos.End()
		doc.Findings = append(doc.Findings, jsonFinding{
			RuleID:      d.Rule,
			Severity:    d.Severity,
			Family:      d.Family,
			Path:        render.SlashPath(d.Pos.File),
			StartLine:   line,
			StartColumn: col,
			EndLine:     endLine,
			EndColumn:   endCol,
			JSONPointer: d.Pointer,
			Message:     d.Message,
			Suppressed:  d.Suppressed,
			Reason:      d.Reason,
			Fingerprint: "sha256:" + fps[i],
		})
	}
	return encode(w, doc)
}

// encode writes v as indented JSON without HTML escaping.
func encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
