package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
)

// MaxAuditJSON is the largest json audit report [ParseAuditJSON] reads. A
// report's size depends on the registry, not the keyspace, so a real one
// is far smaller.
const MaxAuditJSON = 64 << 20

// ParseAuditJSON reads an audit report written by the json format (see
// docs/audit-report.md) back into an [audit.Report], as keyreg docs --audit
// does. Binary key names come back exactly from their base64 copies;
// positions come back as text only. It fails on a document of another
// version, or larger than MaxAuditJSON.
func ParseAuditJSON(data []byte) (*audit.Report, error) {
	if len(data) > MaxAuditJSON {
		return nil, fmt.Errorf("audit report is %d bytes, more than %d", len(data), MaxAuditJSON)
	}
	var doc auditJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("reading audit report: %w", err)
	}
	if doc.Version != audit.ReportVersion {
		return nil, fmt.Errorf("audit report version %q (want %q, as keyreg audit --format json writes)", doc.Version, audit.ReportVersion)
	}
	r := &audit.Report{
		Version: doc.Version, Registry: doc.Registry, Target: doc.Target, Mode: doc.Mode, Started: doc.Started,
		Partial: doc.Partial, PartialReason: doc.PartialReason,
		Scan: audit.ScanStats{
			Nodes: doc.Scan.Nodes, Keys: doc.Scan.Keys, Scanned: doc.Scan.Scanned, Duplicates: doc.Scan.Duplicates,
			Vanished: doc.Scan.Vanished, Sampled: doc.Scan.Sampled, Skipped: doc.Scan.Skipped,
			Duration: time.Duration(doc.Scan.DurationNS), KeysPerSec: doc.Scan.KeysPerSecond, Notes: doc.Scan.Notes,
		},
		Totals: audit.Totals{
			Keys: doc.Totals.Keys, Registered: doc.Totals.Registered, Unregistered: doc.Totals.Unregistered,
			WithTTL: doc.Totals.WithTTL, Memory: deref(doc.Totals.Memory),
			Errors: doc.Totals.Errors, Warnings: doc.Totals.Warnings, Infos: doc.Totals.Infos,
		},
		Unregistered: audit.UnregisteredReport{Keys: doc.Unregistered.Keys, Other: doc.Unregistered.Other},
	}
	for _, f := range doc.Families {
		r.Families = append(r.Families, &audit.FamilyReport{
			Name: f.Name, Owner: f.Owner, Preset: f.Preset, Position: f.Position, Keys: f.Keys, WithTTL: f.WithTTL,
			Memory: deref(f.Memory), MemoryMeasured: f.MemoryMeasured, Sampled: f.Sampled, Findings: f.Findings,
		})
	}
	for _, o := range doc.Owners {
		r.Owners = append(r.Owners, &audit.OwnerReport{
			Name: o.Name, Contact: o.Contact, Families: o.Families, Keys: o.Keys, WithTTL: o.WithTTL,
			Memory: deref(o.Memory), Findings: o.Findings,
		})
	}
	for _, g := range doc.Unregistered.Groups {
		prefix, err := exact(g.Prefix, g.PrefixBase64)
		if err != nil {
			return nil, err
		}
		ng := &audit.Group{Prefix: prefix, Keys: g.Keys, WithTTL: g.WithTTL, Memory: deref(g.Memory)}
		for _, e := range g.Examples {
			k, err := exact(e.Key, e.KeyBase64)
			if err != nil {
				return nil, err
			}
			ng.Examples = append(ng.Examples, k)
		}
		r.Unregistered.Groups = append(r.Unregistered.Groups, ng)
	}
	for _, f := range doc.Findings {
		sev, err := diag.ParseSeverity(f.Severity)
		if err != nil {
			return nil, fmt.Errorf("reading audit report: finding %q: %w", f.Rule, err)
		}
		nf := &audit.Finding{
			Rule: f.Rule, Severity: sev, Family: f.Family, Position: f.Position, Count: f.Count, Of: f.Of,
			Message: f.Message, Suppressed: f.Suppressed, Reason: f.Reason,
		}
		if f.Path != "" {
			nf.Pos = diag.Pos{File: f.Path, Line: f.Line, Col: f.Column}
		}
		for _, e := range f.Examples {
			k, err := exact(e.Key, e.KeyBase64)
			if err != nil {
				return nil, err
			}
			nf.Examples = append(nf.Examples, audit.Example{Key: k, Detail: e.Detail})
		}
		r.Findings = append(r.Findings, nf)
	}
	return r, nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// exact returns a key name from its json text, or from its base64 copy
// when the name was not valid UTF-8.
func exact(text, b64 string) (string, error) {
	if b64 == "" {
		return text, nil
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", fmt.Errorf("reading audit report: bad base64 key name: %w", err)
	}
	return string(b), nil
}
