// Package auditjson is the json audit report of docs/audit-report.md: the
// document, its encoder (the json format of keyreg audit) and its reader
// (keyreg report merge and keyreg docs --audit), so that reading a report
// back never goes through package report.
package auditjson

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/secret"
)

// Document is the json format of an audit report. It mirrors audit.Report
// field by field, so that the documented schema (docs/audit-report.md)
// changes only on purpose: severities are strings, durations are also
// given in seconds, every list is [] rather than null, and binary key
// names survive.
type Document struct {
	Version       string             `json:"version"`
	Tool          Tool               `json:"tool"`
	Registry      string             `json:"registry"`
	Target        string             `json:"target"`
	Targets       []string           `json:"targets,omitempty"` // a merged report's instances, each redacted
	Mode          string             `json:"mode"`
	FleetTarget   string             `json:"fleet_target,omitempty"` // the target's name in its fleet's target list; absent without --target-list, and when merged
	Started       time.Time          `json:"started"`
	Partial       bool               `json:"partial"`
	PartialReason string             `json:"partial_reason"`
	Scan          auditScanJSON      `json:"scan"`
	Totals        auditTotalsJSON    `json:"totals"`
	Families      []auditFamilyJSON  `json:"families"`
	Owners        []auditOwnerJSON   `json:"owners"`
	Unregistered  auditUnregJSON     `json:"unregistered"`
	Findings      []auditFindingJSON `json:"findings"`
	DBs           []int              `json:"dbs"`
	TopKeys       []auditTopKeyJSON  `json:"top_keys"`
	Types         []auditTypeJSON    `json:"types"`
	TTLHistogram  []ttlBucketJSON    `json:"ttl_histogram"`
	// TTLMemory is the measured memory per TTL bucket; absent in a report
	// of keyreg before it.
	TTLMemory []ttlMemoryJSON `json:"ttl_memory_histogram"`
	// Baseline is present only when the audit was compared with a baseline.
	Baseline *Baseline `json:"baseline,omitempty"`
	// Channels is the channel audit (keyreg audit --channels); absent
	// when the channels were not audited.
	Channels *audit.ChannelsReport `json:"channels,omitempty"`
}

// Baseline sums up the comparison with a baseline: fingerprints
// of new and resolved entries, and every entry with its state.
type Baseline struct {
	File         string                   `json:"file"`
	Created      time.Time                `json:"created"`
	Registry     string                   `json:"registry"`
	New          []string                 `json:"new"`
	Resolved     []string                 `json:"resolved"`
	Unchanged    int                      `json:"unchanged"`
	ResolvedNote string                   `json:"resolved_note,omitempty"`
	Entries      []auditBaselineEntryJSON `json:"entries"`
}

// auditBaselineEntryJSON is one baseline entry with its state. The fields
// after state are those of the baseline file (docs/audit.md).
type auditBaselineEntryJSON struct {
	State        string  `json:"state"` // new, unchanged or resolved
	Fingerprint  string  `json:"fingerprint"`
	Rule         string  `json:"rule"`
	Severity     string  `json:"severity"`
	Family       string  `json:"family"`
	Prefix       *string `json:"prefix,omitempty"`
	PrefixBase64 string  `json:"prefix_base64,omitempty"`
	Other        bool    `json:"other"`
	Count        int64   `json:"count"`
}

func baselineEntryJSON(state string, e audit.Entry) auditBaselineEntryJSON {
	j := auditBaselineEntryJSON{
		State: state, Fingerprint: e.Fingerprint, Rule: e.Rule, Family: e.Family, Other: e.Other, Count: e.Count,
	}
	if e.Severity > diag.Off {
		j.Severity = e.Severity.String()
	}
	if e.Group {
		p := validUTF8(e.Prefix)
		j.Prefix, j.PrefixBase64 = &p, rawBase64(e.Prefix)
	}
	return j
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
	NotChecked      []string `json:"not_checked,omitempty"`
}

type auditTotalsJSON struct {
	Keys         int64  `json:"keys"`
	Registered   int64  `json:"registered"`
	Unregistered int64  `json:"unregistered"`
	WithTTL      int64  `json:"with_ttl"`
	Memory       *int64 `json:"memory_bytes"`
	MemoryKeys   *int64 `json:"memory_keys"`
	KeyBytes     int64  `json:"key_name_bytes"`
	Errors       int64  `json:"errors"`
	Warnings     int64  `json:"warnings"`
	Infos        int64  `json:"infos"`
}

type auditFamilyJSON struct {
	Name           string          `json:"name"`
	Owner          string          `json:"owner"`
	Preset         string          `json:"preset,omitempty"`
	Position       string          `json:"position"`
	Keys           int64           `json:"keys"`
	WithTTL        int64           `json:"with_ttl"`
	TTLPercent     float64         `json:"ttl_percent"`
	MemoryMeasured bool            `json:"memory_measured"`
	Memory         *int64          `json:"memory_bytes"`
	MemoryKeys     *int64          `json:"memory_keys"`
	Sampled        int64           `json:"sampled"`
	Findings       int64           `json:"findings"`
	TTLHistogram   []ttlBucketJSON `json:"ttl_histogram"`
	DBs            []auditDBJSON   `json:"dbs"`
}

// auditDBJSON is the part of a family's keys in one database.
type auditDBJSON struct {
	DB         int    `json:"db"`
	Keys       int64  `json:"keys"`
	WithTTL    int64  `json:"with_ttl"`
	Memory     *int64 `json:"memory_bytes"`
	MemoryKeys *int64 `json:"memory_keys"`
}

// ttlMemoryJSON is one bucket of the memory per TTL bucket.
type ttlMemoryJSON struct {
	Bucket string `json:"bucket"`
	Bytes  int64  `json:"bytes"`
}

// ttlBucketJSON is one bucket of a TTL histogram.
type ttlBucketJSON struct {
	Bucket string `json:"bucket"`
	Keys   int64  `json:"keys"`
}

// auditTopKeyJSON is one of the largest keys.
type auditTopKeyJSON struct {
	By        string `json:"by"` // bytes or elements
	Key       string `json:"key"`
	KeyBase64 string `json:"key_base64,omitempty"`
	DB        int    `json:"db"`
	Family    string `json:"family"`
	Type      string `json:"type"`
	Bytes     int64  `json:"bytes"`
	Elements  int64  `json:"elements"`
	TTLMS     int64  `json:"ttl_ms"`
}

// auditTypeJSON describes the keys of one Redis type.
type auditTypeJSON struct {
	Type      string         `json:"type"`
	Keys      int64          `json:"keys"`
	Bytes     distJSON       `json:"bytes"`
	Elements  distJSON       `json:"elements"`
	Encodings []encodingJSON `json:"encodings"`
}

// encodingJSON is the number of keys of a type with one object encoding.
type encodingJSON struct {
	Encoding string `json:"encoding"`
	Keys     int64  `json:"keys"`
}

// distJSON is a size distribution: its percentiles, and the sketch they
// come from, which keyreg report merge merges.
type distJSON struct {
	Measured int64             `json:"measured"`
	Sum      int64             `json:"sum"`
	P50      int64             `json:"p50"`
	P90      int64             `json:"p90"`
	P99      int64             `json:"p99"`
	Max      int64             `json:"max"`
	Sketch   audit.SketchState `json:"sketch"`
}

type auditOwnerJSON struct {
	Name       string   `json:"name"`
	Contact    string   `json:"contact"`
	Families   []string `json:"families"`
	Keys       int64    `json:"keys"`
	WithTTL    int64    `json:"with_ttl"`
	Memory     *int64   `json:"memory_bytes"`
	MemoryKeys *int64   `json:"memory_keys"`
	Findings   int64    `json:"findings"`
}

type auditUnregJSON struct {
	Keys           int64            `json:"keys"`
	WithTTL        int64            `json:"with_ttl"`
	MemoryMeasured bool             `json:"memory_measured"`
	Memory         *int64           `json:"memory_bytes"`
	MemoryKeys     *int64           `json:"memory_keys"`
	TTLHistogram   []ttlBucketJSON  `json:"ttl_histogram"`
	Groups         []auditGroupJSON `json:"groups"`
	Other          int64            `json:"other"`
}

type auditGroupJSON struct {
	Prefix       string             `json:"prefix"`
	PrefixBase64 string             `json:"prefix_base64,omitempty"`
	Keys         int64              `json:"keys"`
	WithTTL      int64              `json:"with_ttl"`
	TTLPercent   float64            `json:"ttl_percent"`
	Memory       *int64             `json:"memory_bytes"`
	MemoryKeys   *int64             `json:"memory_keys"`
	MemoryShare  *float64           `json:"memory_percent"`
	DBs          []int              `json:"dbs"`
	Examples     []auditExampleJSON `json:"examples"`
	New          *bool              `json:"new,omitempty"` // only with a baseline
}

type auditFindingJSON struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Family   string `json:"family"`
	Channel  string `json:"channel,omitempty"` // a channel audit finding's declaration or prefix group
	// ChannelBase64 holds Channel's exact bytes when they are not UTF-8.
	ChannelBase64 string             `json:"channel_base64,omitempty"`
	Position      string             `json:"position"`
	Path          string             `json:"path,omitempty"`
	Line          int                `json:"line,omitempty"`
	Column        int                `json:"column,omitempty"`
	Count         int64              `json:"count"`
	Of            int64              `json:"of"`
	Message       string             `json:"message"`
	Examples      []auditExampleJSON `json:"examples"`
	Suppressed    bool               `json:"suppressed"`
	Reason        string             `json:"reason,omitempty"`
	New           *bool              `json:"new,omitempty"` // only with a baseline
}

// auditExampleJSON is a key name. Key is the name as a JSON string; when
// the name is not valid UTF-8, Key has U+FFFD in place of the bad bytes and
// KeyBase64 holds the exact bytes.
type auditExampleJSON struct {
	Key       string `json:"key"`
	KeyBase64 string `json:"key_base64,omitempty"`
	DB        *int   `json:"db,omitempty"` // finding examples only
	Detail    string `json:"detail,omitempty"`
	Instance  string `json:"instance,omitempty"` // a merged report's: the target the example comes from
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

// memoryJSON returns &n when the memory of some keys was measured
// (measured is their count), else nil: null, never a 0 that was not
// measured.
func memoryJSON(measured, n int64) *int64 {
	if measured <= 0 {
		return nil
	}
	return &n
}

func int64Ptr(n int64) *int64 { return &n }

// Tool names the program that wrote a document.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Encode writes r, compared with a baseline when c is not nil, as one
// indented json document without HTML escaping.
func Encode(w io.Writer, r *audit.Report, c *audit.Comparison, tool Tool) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(New(r, c, tool))
}

// New converts r, compared with a baseline when c is not nil, to its json
// document.
func New(r *audit.Report, c *audit.Comparison, tool Tool) Document {
	memory := r.MemoryMeasured()
	s := r.Scan
	doc := Document{
		Version:       audit.ReportVersion,
		Tool:          tool,
		Registry:      slashPath(r.Registry),
		Target:        r.DisplayTarget(),
		Targets:       r.RedactedTargets(),
		Mode:          r.Mode,
		FleetTarget:   r.FleetTarget,
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
			NotChecked:      s.NotChecked,
		},
		Totals: auditTotalsJSON{
			Keys: r.Totals.Keys, Registered: r.Totals.Registered, Unregistered: r.Totals.Unregistered,
			WithTTL: r.Totals.WithTTL, Memory: memoryJSON(r.Totals.MemoryKeys, r.Totals.Memory), MemoryKeys: int64Ptr(r.Totals.MemoryKeys), KeyBytes: r.KeyBytes,
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
			Name: f.Name, Owner: f.Owner, Preset: f.Preset, Position: position(f.Position, f.Pos.File, f.Pos.String()),
			Keys: f.Keys, WithTTL: f.WithTTL, TTLPercent: f.TTLPercent(),
			MemoryMeasured: f.MemoryMeasured, Memory: memoryJSON(f.MemoryKeys, f.Memory), MemoryKeys: int64Ptr(f.MemoryKeys),
			Sampled: f.Sampled, Findings: f.Findings,
			TTLHistogram: ttlJSON(&f.TTL), DBs: dbsJSON(f),
		})
	}
	for _, ow := range r.Owners {
		if ow == nil {
			continue
		}
		fams := append(make([]string, 0, len(ow.Families)), ow.Families...)
		doc.Owners = append(doc.Owners, auditOwnerJSON{
			Name: ow.Name, Contact: redact(ow.Contact), Families: fams,
			Keys: ow.Keys, WithTTL: ow.WithTTL, Memory: memoryJSON(ow.MemoryKeys, ow.Memory), MemoryKeys: int64Ptr(ow.MemoryKeys),
			Findings: ow.Findings,
		})
	}
	for _, g := range r.Unregistered.Groups {
		if g == nil {
			continue
		}
		jg := auditGroupJSON{
			Prefix: validUTF8(g.Prefix), PrefixBase64: rawBase64(g.Prefix),
			Keys: g.Keys, WithTTL: g.WithTTL, TTLPercent: percentOf(g.WithTTL, g.Keys),
			Memory:     memoryJSON(g.MemoryKeys, g.Memory),
			MemoryKeys: int64Ptr(g.MemoryKeys),
			DBs:        append([]int{}, g.DBs...),
			Examples:   make([]auditExampleJSON, 0, len(g.Examples)),
		}
		if g.MemoryKeys > 0 {
			share := percentOf(g.Memory, r.Totals.Memory)
			jg.MemoryShare = &share
		}
		for _, k := range g.Examples {
			jg.Examples = append(jg.Examples, exampleJSON(k, ""))
		}
		if c != nil {
			jg.New = boolPtr(c.IsNewGroup(g))
		}
		doc.Unregistered.Groups = append(doc.Unregistered.Groups, jg)
	}
	for _, f := range r.Findings {
		if f == nil || f.Severity <= diag.Off {
			continue
		}
		jf := auditFindingJSON{
			Rule: f.Rule, Severity: f.Severity.String(), Family: f.Family, Channel: validUTF8(f.Channel), ChannelBase64: rawBase64(f.Channel),
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
			ej := exampleJSON(e.Key, e.Detail)
			ej.DB = &e.DB
			ej.Instance = redact(e.Instance)
			jf.Examples = append(jf.Examples, ej)
		}
		if c != nil {
			jf.New = boolPtr(c.IsNew(f))
		}
		doc.Findings = append(doc.Findings, jf)
	}
	statsDoc(&doc, r, memory)
	doc.Channels = channelsDoc(r.Channels)
	if c != nil {
		doc.Baseline = NewBaseline(c)
	}
	return doc
}

// statsDoc adds the keyspace statistics of r to doc.
func statsDoc(doc *Document, r *audit.Report, memory bool) {
	u := &r.Unregistered
	doc.Unregistered.WithTTL = u.WithTTL
	doc.Unregistered.MemoryMeasured = u.MemoryMeasured
	doc.Unregistered.Memory = memoryJSON(u.MemoryKeys, u.Memory)
	doc.Unregistered.MemoryKeys = int64Ptr(u.MemoryKeys)
	doc.Unregistered.TTLHistogram = ttlJSON(&u.TTL)
	doc.DBs = append([]int{}, r.DBs...)
	doc.TTLHistogram = ttlJSON(&r.TTL)
	doc.TTLMemory = make([]ttlMemoryJSON, len(r.TTLMemory))
	for i, n := range r.TTLMemory {
		doc.TTLMemory[i] = ttlMemoryJSON{Bucket: audit.TTLBuckets[i], Bytes: n}
	}
	doc.TopKeys = []auditTopKeyJSON{}
	for _, l := range []struct {
		by   string
		keys []*audit.TopKey
	}{{"bytes", r.TopKeys.ByBytes}, {"elements", r.TopKeys.ByElements}} {
		for _, t := range l.keys {
			if t == nil {
				continue
			}
			doc.TopKeys = append(doc.TopKeys, auditTopKeyJSON{
				By: l.by, Key: validUTF8(t.Key), KeyBase64: rawBase64(t.Key), DB: t.DB,
				Family: t.Family, Type: t.Type, Bytes: t.Bytes, Elements: t.Elements, TTLMS: ttlMS(t.TTL),
			})
		}
	}
	doc.Types = []auditTypeJSON{}
	for _, t := range r.Types {
		if t == nil {
			continue
		}
		jt := auditTypeJSON{
			Type: t.Type, Keys: t.Keys,
			Bytes: distOf(&t.BytesDist, t.Bytes), Elements: distOf(&t.ElementsDist, t.Elements),
			Encodings: make([]encodingJSON, 0, len(t.Encodings)),
		}
		for _, e := range t.Encodings {
			jt.Encodings = append(jt.Encodings, encodingJSON{Encoding: e.Encoding, Keys: e.Keys})
		}
		doc.Types = append(doc.Types, jt)
	}
}

func distOf(s *audit.Sketch, sum int64) distJSON {
	return distJSON{
		Measured: s.Count(), Sum: sum,
		P50: s.Quantile(0.5), P90: s.Quantile(0.9), P99: s.Quantile(0.99), Max: s.Max(),
		Sketch: s.State(),
	}
}

// ttlMS is a TTL in milliseconds, -1 for none.
func ttlMS(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return d.Milliseconds()
}

func ttlJSON(h *audit.TTLHistogram) []ttlBucketJSON {
	out := make([]ttlBucketJSON, len(h))
	for i, n := range h {
		out[i] = ttlBucketJSON{Bucket: audit.TTLBuckets[i], Keys: n}
	}
	return out
}

func dbsJSON(f *audit.FamilyReport) []auditDBJSON {
	out := make([]auditDBJSON, 0, len(f.DBs))
	for _, d := range f.DBs {
		out = append(out, auditDBJSON{DB: d.DB, Keys: d.Keys, WithTTL: d.WithTTL, Memory: memoryJSON(d.MemoryKeys, d.Memory), MemoryKeys: int64Ptr(d.MemoryKeys)})
	}
	return out
}

// percentOf is n as a share of of, 0 to 100; 0 when of is 0.
func percentOf(n, of int64) float64 {
	if of <= 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func boolPtr(b bool) *bool { return &b }

// NewBaseline converts the comparison to its json object.
func NewBaseline(c *audit.Comparison) *Baseline {
	d := &Baseline{
		File: slashPath(c.File), Created: c.Created.UTC(), Registry: c.Registry,
		New: []string{}, Resolved: []string{}, Unchanged: len(c.Unchanged),
		ResolvedNote: c.ResolvedNote, Entries: []auditBaselineEntryJSON{},
	}
	for _, e := range c.New {
		d.New = append(d.New, e.Fingerprint)
		d.Entries = append(d.Entries, baselineEntryJSON("new", e))
	}
	for _, e := range c.Unchanged {
		d.Entries = append(d.Entries, baselineEntryJSON("unchanged", e))
	}
	for _, e := range c.Resolved {
		d.Resolved = append(d.Resolved, e.Fingerprint)
		d.Entries = append(d.Entries, baselineEntryJSON("resolved", e))
	}
	return d
}

// position returns the audit's position string, or one made from the Pos
// when the audit left it empty and the Pos names a file.
func position(given, file, fromPos string) string {
	if given != "" || file == "" {
		return given
	}
	return fromPos
}

// slashPath returns a path with forward slashes, as CI systems expect.
func slashPath(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return p
}

// redact hides passwords in URLs and password parameters (see
// internal/secret). The audit already redacts its target; this is a second
// line of defence for free text such as notes.
func redact(s string) string { return secret.Redact(s) }

// finite returns f, or 0 when f is NaN or infinite.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// channelsDoc copies the channel audit for the document: names made valid
// UTF-8, the reasons of unread nodes redacted, every list [] not null.
func channelsDoc(c *audit.ChannelsReport) *audit.ChannelsReport {
	if c == nil {
		return nil
	}
	out := &audit.ChannelsReport{Nodes: c.Nodes, PatternSubscriptions: c.PatternSubscriptions,
		Declared: []*audit.ChannelDeclReport{}, Unregistered: []*audit.ChannelGroup{}}
	for _, d := range c.Declared {
		if d != nil {
			cp := *d
			cp.Pos = diag.Pos{}
			out.Declared = append(out.Declared, &cp)
		}
	}
	for _, g := range c.Unregistered {
		if g == nil {
			continue
		}
		cp := &audit.ChannelGroup{Prefix: validUTF8(g.Prefix), PrefixBase64: rawBase64(g.Prefix), Channels: g.Channels, Subscribers: g.Subscribers, Examples: []string{}}
		for _, e := range g.Examples {
			cp.Examples = append(cp.Examples, validUTF8(e))
		}
		out.Unregistered = append(out.Unregistered, cp)
	}
	for _, n := range c.NotChecked {
		out.NotChecked = append(out.NotChecked, redact(n))
	}
	for _, m := range c.Misplaced {
		out.Misplaced = append(out.Misplaced, validUTF8(m))
	}
	if f := c.FanOut; f != nil {
		cp := *f
		cp.Status, cp.Reason = validUTF8(f.Status), validUTF8(redact(f.Reason))
		cp.WindowSeconds, cp.WaitedSeconds = finite(f.WindowSeconds), finite(f.WaitedSeconds)
		cp.WindowStart, cp.WindowEnd = validUTF8(f.WindowStart), validUTF8(f.WindowEnd)
		if e := f.Estimate; e != nil {
			ce := *e
			ce.PublishedPerSecond, ce.BusMessagesPerSecond, ce.BusBytesPerSecondMin = finite(e.PublishedPerSecond), finite(e.BusMessagesPerSecond), finite(e.BusBytesPerSecondMin)
			cp.Estimate = &ce
		}
		out.FanOut = &cp
	}
	return out
}
