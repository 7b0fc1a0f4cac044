package report

import (
	"io"
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/render"
)

// sarifFormat is a SARIF 2.1.0 log for GitHub code scanning.
var sarifFormat = renderer{
	name:        SARIF,
	help:        "2.1.0, for GitHub code scanning",
	diagnostics: writeSARIF,
	audit:       writeAuditSARIF,
}

// SARIF constants. The fingerprint key is versioned so that its recipe can
// change without colliding with alerts made by an older keyreg.
const (
	sarifVersion   = "2.1.0"
	sarifSchema    = "https://json.schemastore.org/sarif-2.1.0.json"
	fingerprintKey = "keyregFindingHash/v1"
	srcRoot        = "%SRCROOT%"
)

type sarifLog struct {
	Version string     `json:"version"`
	Schema  string     `json:"$schema"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool              sarifTool         `json:"tool"`
	AutomationDetails *sarifAutomation  `json:"automationDetails,omitempty"`
	Invocations       []sarifInvocation `json:"invocations,omitempty"`
	Results           []sarifResult     `json:"results"`
}

// sarifInvocation says whether the tool's run completed. Code scanning
// reads executionSuccessful false, with its error notifications, as a run
// whose results are incomplete.
type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level   string    `json:"level"`
	Message sarifText `json:"message"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name            string      `json:"name"`
	Version         string      `json:"version,omitempty"`
	SemanticVersion string      `json:"semanticVersion,omitempty"`
	InformationURI  string      `json:"informationUri,omitempty"`
	Rules           []sarifRule `json:"rules"`
}

type sarifAutomation struct {
	ID string `json:"id"`
}

type sarifRule struct {
	ID                   string              `json:"id"`
	Name                 string              `json:"name"`
	ShortDescription     sarifText           `json:"shortDescription"`
	FullDescription      *sarifText          `json:"fullDescription,omitempty"`
	Help                 *sarifText          `json:"help,omitempty"`
	DefaultConfiguration *sarifRuleConfig    `json:"defaultConfiguration,omitempty"`
	Properties           sarifRuleProperties `json:"properties"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRuleConfig struct {
	Level string `json:"level"`
}

type sarifRuleProperties struct {
	Tags []string `json:"tags"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations"`
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	Properties          *sarifResultProps  `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysicalLocation  `json:"physicalLocation"`
	LogicalLocations []sarifLogicalLocation `json:"logicalLocations,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           sarifRegion           `json:"region"`
}

type sarifArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

// sarifRegion leaves out the end when it is unknown, which SARIF reads as
// "to the end of the start line".
type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
	EndLine     int `json:"endLine,omitempty"`
	EndColumn   int `json:"endColumn,omitempty"`
}

type sarifLogicalLocation struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification,omitempty"`
}

type sarifResultProps struct {
	JSONPointer string `json:"jsonPointer"`
}

// writeSARIF prints l as a SARIF 2.1.0 log with one run.
func writeSARIF(w io.Writer, l diag.List, o Options) error {
	driver := sarifDriver{
		Name:           o.Tool.Name,
		Version:        o.Tool.Version,
		InformationURI: o.Tool.InformationURI,
		Rules:          []sarifRule{},
	}
	if v := strings.TrimPrefix(o.Tool.Version, "v"); semver.MatchString(v) {
		driver.SemanticVersion = v
	}
	index := map[string]int{}
	addRule := func(r sarifRule) {
		if _, ok := index[r.ID]; !ok {
			index[r.ID] = len(driver.Rules)
			driver.Rules = append(driver.Rules, r)
		}
	}
	for _, r := range o.Rules {
		if r.ID != "" {
			addRule(sarifRuleFor(r))
		}
	}
	for _, d := range l {
		addRule(sarifRule{
			ID:               d.Rule,
			Name:             camelCase(d.Rule),
			ShortDescription: sarifText{Text: nonEmpty(d.Rule, "unnamed rule")},
			Properties:       sarifRuleProperties{Tags: []string{"keyreg"}},
		})
	}

	run := sarifRun{
		Tool:    sarifTool{Driver: driver},
		Results: make([]sarifResult, 0, len(l)),
	}
	if o.Automation != "" {
		run.AutomationDetails = &sarifAutomation{ID: o.Automation}
	}
	if o.invocation != nil {
		run.Invocations = []sarifInvocation{*o.invocation}
	}
	fps := fingerprints(l)
	for i, d := range l {
		run.Results = append(run.Results, sarifResultFor(d, index[d.Rule], fps[i]))
	}
	return encode(w, sarifLog{Version: sarifVersion, Schema: sarifSchema, Runs: []sarifRun{run}})
}

// sarifRuleFor builds the full rule metadata.
func sarifRuleFor(r RuleInfo) sarifRule {
	doc := nonEmpty(r.Doc, r.ID)
	tags := []string{"keyreg"}
	if r.Kind != "" {
		tags = append(tags, r.Kind)
	}
	return sarifRule{
		ID:                   r.ID,
		Name:                 camelCase(r.ID),
		ShortDescription:     sarifText{Text: doc},
		FullDescription:      &sarifText{Text: doc},
		Help:                 &sarifText{Text: doc},
		DefaultConfiguration: &sarifRuleConfig{Level: sarifLevel(r.Default)},
		Properties:           sarifRuleProperties{Tags: tags},
	}
}

// sarifResultFor builds one result.
func sarifResultFor(d diag.Diagnostic, ruleIndex int, fingerprint string) sarifResult {
	line, col := d.Pos.Start()
	region := sarifRegion{StartLine: line, StartColumn: col}
	if d.Pos.EndLine > 0 {
		region.EndLine, region.EndColumn = d.Pos.End()
	}
	loc := sarifLocation{PhysicalLocation: sarifPhysicalLocation{
		ArtifactLocation: sarifArtifactLocation{URI: artifactURI(d.Pos.File), URIBaseID: srcRoot},
		Region:           region,
	}}
	if d.Family != "" {
		loc.LogicalLocations = []sarifLogicalLocation{{Name: d.Family, Kind: "module"}}
	}
	r := sarifResult{
		RuleID:              d.Rule,
		RuleIndex:           ruleIndex,
		Level:               sarifLevel(d.Severity),
		Message:             sarifText{Text: nonEmpty(d.Message, d.Rule)},
		Locations:           []sarifLocation{loc},
		PartialFingerprints: map[string]string{fingerprintKey: fingerprint},
	}
	if d.Suppressed {
		r.Suppressions = []sarifSuppression{{Kind: "inSource", Justification: d.Reason}}
	}
	if d.Pointer != "" {
		r.Properties = &sarifResultProps{JSONPointer: d.Pointer}
	}
	return r
}

// sarifLevel maps a severity to a SARIF level.
func sarifLevel(s diag.Severity) string {
	switch {
	case s >= diag.Error:
		return "error"
	case s == diag.Warn:
		return "warning"
	case s == diag.Info:
		return "note"
	}
	return "none"
}

// artifactURI turns a file path into a relative URI reference with forward
// slashes, percent-encoding what needs it.
func artifactURI(p string) string {
	u := url.URL{Path: render.SlashPath(p)}
	return u.String()
}

// semver matches a Semantic Versioning 2.0 version without a leading "v".
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// camelCase turns a kebab-case rule ID into a SARIF rule name:
// "pattern-overlap" becomes "PatternOverlap".
func camelCase(id string) string {
	var b strings.Builder
	upper := true
	for _, r := range id {
		if r == '-' || r == '_' || r == '.' || unicode.IsSpace(r) {
			upper = true
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func nonEmpty(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
