package report

import (
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
)

// The json format of an audit report. It mirrors audit.Report field by
// field, so that the documented schema (docs/audit-report.md) changes only
// on purpose: severities are strings, durations are also given in seconds,
// every list is [] rather than null, and binary key names survive.

type auditJSON struct {
	Version       string             `json:"version"`
	Tool          jsonTool           `json:"tool"`
	Registry      string             `json:"registry"`
	Target        string             `json:"target"`
	Mode          string             `json:"mode"`
	Started       time.Time          `json:"started"`
	Partial       bool               `json:"partial"`
	PartialReason string             `json:"partial_reason"`
	Scan          auditScanJSON      `json:"scan"`
	Totals        auditTotalsJSON    `json:"totals"`
	Families      []auditFamilyJSON  `json:"families"`
	Owners        []auditOwnerJSON   `json:"owners"`
	Unregistered  auditUnregJSON     `json:"unregistered"`
	Findings      []auditFindingJSON `json:"findings"`
}

type auditScanJSON struct {
	Nodes           int      `json:"nodes"`
	Keys            int64    `json:"keys"`
	Scanned         int64    `json:"scanned"`
	Duplicates      int64    `json:"duplicates"`
	Vanished        int64    `json:"vanished"`
	Sampled         int64    `json:"sampled"`
	Skipped         int64    `json:"skipped"`
	DurationNS      int64    `json:"duration_ns"`
	DurationSeconds float64  `json:"duration_seconds"`
	KeysPerSecond   float64  `json:"keys_per_second"`
	Notes           []string `json:"notes"`
}

type auditTotalsJSON struct {
	Keys         int64  `json:"keys"`
	Registered   int64  `json:"registered"`
	Unregistered int64  `json:"unregistered"`
	WithTTL      int64  `json:"with_ttl"`
	Memory       *int64 `json:"memory_bytes,omitempty"`
	Errors       int64  `json:"errors"`
	Warnings     int64  `json:"warnings"`
	Infos        int64  `json:"infos"`
}

type auditFamilyJSON struct {
	Name           string  `json:"name"`
	Owner          string  `json:"owner"`
	Position       string  `json:"position"`
	Keys           int64   `json:"keys"`
	WithTTL        int64   `json:"with_ttl"`
	TTLPercent     float64 `json:"ttl_percent"`
	MemoryMeasured bool    `json:"memory_measured"`
	Memory         *int64  `json:"memory_bytes,omitempty"`
	Sampled        int64   `json:"sampled"`
	Findings       int64   `json:"findings"`
}

type auditOwnerJSON struct {
	Name     string   `json:"name"`
	Contact  string   `json:"contact"`
	Families []string `json:"families"`
	Keys     int64    `json:"keys"`
	WithTTL  int64    `json:"with_ttl"`
	Memory   *int64   `json:"memory_bytes,omitempty"`
	Findings int64    `json:"findings"`
}

type auditUnregJSON struct {
	Keys   int64            `json:"keys"`
	Groups []auditGroupJSON `json:"groups"`
	Other  int64            `json:"other"`
}

type auditGroupJSON struct {
	Prefix       string             `json:"prefix"`
	PrefixBase64 string             `json:"prefix_base64,omitempty"`
	Keys         int64              `json:"keys"`
	WithTTL      int64              `json:"with_ttl"`
	Memory       *int64             `json:"memory_bytes,omitempty"`
	Examples     []auditExampleJSON `json:"examples"`
}

type auditFindingJSON struct {
	Rule       string             `json:"rule"`
	Severity   string             `json:"severity"`
	Family     string             `json:"family"`
	Position   string             `json:"position"`
	Path       string             `json:"path,omitempty"`
	Line       int                `json:"line,omitempty"`
	Column     int                `json:"column,omitempty"`
	Count      int64              `json:"count"`
	Of         int64              `json:"of"`
	Message    string             `json:"message"`
	Examples   []auditExampleJSON `json:"examples"`
	Suppressed bool               `json:"suppressed"`
	Reason     string             `json:"reason,omitempty"`
}

// auditExampleJSON is a key name. Key is the name as a JSON string; when
// the name is not valid UTF-8, Key has U+FFFD in place of the bad bytes and
// KeyBase64 holds the exact bytes.
type auditExampleJSON struct {
	Key       string `json:"key"`
	KeyBase64 string `json:"key_base64,omitempty"`
	Detail    string `json:"detail,omitempty"`
}

// rawBase64 returns the standard base64 of s when s is not valid UTF-8,
// and "" when JSON can carry s exactly.
func rawBase64(s string) string {
	if utf8.ValidString(s) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(s))
}

func exampleJSON(key, detail string) auditExampleJSON {
	return auditExampleJSON{Key: validUTF8(key), KeyBase64: rawBase64(key), Detail: detail}
}

// validUTF8 replaces each run of invalid bytes with U+FFFD, as
// encoding/json would, but as the character itself rather than an escape,
// so that the document re-encodes to the same bytes.
func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// memoryJSON returns &n when memory was measured, else nil.
func memoryJSON(measured bool, n int64) *int64 {
	if !measured {
		return nil
	}
	return &n
}

// auditDoc converts r to its json document.
func auditDoc(r *audit.Report, o Options) auditJSON {
	memory := false
	for _, f := range r.Families {
		if f != nil && f.MemoryMeasured {
			memory = true
		}
	}
	s := r.Scan
	doc := auditJSON{
		Version:       audit.ReportVersion,
		Tool:          jsonTool{Name: o.Tool.Name, Version: o.Tool.Version},
		Registry:      slashPath(r.Registry),
		Target:        redact(r.Target),
		Mode:          r.Mode,
		Started:       r.Started.UTC(),
		Partial:       r.Partial,
		PartialReason: redact(r.PartialReason),
		Scan: auditScanJSON{
			Nodes: s.Nodes, Keys: s.Keys, Scanned: s.Scanned, Duplicates: s.Duplicates,
			Vanished: s.Vanished, Sampled: s.Sampled, Skipped: s.Skipped,
			DurationNS:      int64(s.Duration),
			DurationSeconds: s.Duration.Seconds(),
			KeysPerSecond:   finite(s.KeysPerSec),
			Notes:           make([]string, 0, len(s.Notes)),
		},
		Totals: auditTotalsJSON{
			Keys: r.Totals.Keys, Registered: r.Totals.Registered, Unregistered: r.Totals.Unregistered,
			WithTTL: r.Totals.WithTTL, Memory: memoryJSON(memory, r.Totals.Memory),
			Errors: r.Totals.Errors, Warnings: r.Totals.Warnings, Infos: r.Totals.Infos,
		},
		Families: make([]auditFamilyJSON, 0, len(r.Families)),
		Owners:   make([]auditOwnerJSON, 0, len(r.Owners)),
		Unregistered: auditUnregJSON{
			Keys:   r.Unregistered.Keys,
			Groups: make([]auditGroupJSON, 0, len(r.Unregistered.Groups)),
			Other:  r.Unregistered.Other,
		},
		Findings: make([]auditFindingJSON, 0, len(r.Findings)),
	}
	for _, n := range s.Notes {
		doc.Scan.Notes = append(doc.Scan.Notes, redact(n))
	}
	for _, f := range r.Families {
		if f == nil {
			continue
		}
		doc.Families = append(doc.Families, auditFamilyJSON{
			Name: f.Name, Owner: f.Owner, Position: position(f.Position, f.Pos.File, f.Pos.String()),
			Keys: f.Keys, WithTTL: f.WithTTL, TTLPercent: f.TTLPercent(),
			MemoryMeasured: f.MemoryMeasured, Memory: memoryJSON(f.MemoryMeasured, f.Memory),
			Sampled: f.Sampled, Findings: f.Findings,
		})
	}
	for _, ow := range r.Owners {
		if ow == nil {
			continue
		}
		fams := append(make([]string, 0, len(ow.Families)), ow.Families...)
		doc.Owners = append(doc.Owners, auditOwnerJSON{
			Name: ow.Name, Contact: redact(ow.Contact), Families: fams,
			Keys: ow.Keys, WithTTL: ow.WithTTL, Memory: memoryJSON(memory, ow.Memory), Findings: ow.Findings,
		})
	}
	for _, g := range r.Unregistered.Groups {
		if g == nil {
			continue
		}
		jg := auditGroupJSON{
			Prefix: validUTF8(g.Prefix), PrefixBase64: rawBase64(g.Prefix),
			Keys: g.Keys, WithTTL: g.WithTTL, Memory: memoryJSON(memory, g.Memory),
			Examples: make([]auditExampleJSON, 0, len(g.Examples)),
		}
		for _, k := range g.Examples {
			jg.Examples = append(jg.Examples, exampleJSON(k, ""))
		}
		doc.Unregistered.Groups = append(doc.Unregistered.Groups, jg)
	}
	for _, f := range r.Findings {
		if f == nil || f.Severity <= diag.Off {
			continue
		}
		jf := auditFindingJSON{
			Rule: f.Rule, Severity: f.Severity.String(), Family: f.Family,
			Position: position(f.Position, f.Pos.File, f.Pos.String()),
			Count:    f.Count, Of: f.Of, Message: f.Message,
			Examples:   make([]auditExampleJSON, 0, len(f.Examples)),
			Suppressed: f.Suppressed, Reason: f.Reason,
		}
		if f.Pos.File != "" {
			jf.Path = slashPath(f.Pos.File)
			jf.Line, jf.Column = f.Pos.Start()
		}
		for _, e := range f.Examples {
			jf.Examples = append(jf.Examples, exampleJSON(e.Key, e.Detail))
		}
		doc.Findings = append(doc.Findings, jf)
	}
	return doc
}

// position returns the audit's position string, or one made from the Pos
// when the audit left it empty and the Pos names a file.
func position(given, file, fromPos string) string {
	if given != "" || file == "" {
		return given
	}
	return fromPos
}
