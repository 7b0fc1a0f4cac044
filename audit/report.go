package audit

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/secret"
	"github.com/keyreg/keyreg/rules"
)

// ReportVersion is the version of the JSON report schema (docs/audit-report.md).
const ReportVersion = "1"

// Report is the outcome of one audit run. Its size depends on the number
// of families, rules and prefix groups, never on the number of keys.
type Report struct {
	Version  string `json:"version"`
	Registry string `json:"registry"` // path of keys.yaml
	Target   string `json:"target"`   // the Redis URL, password redacted
	// Targets lists each instance of a merged report (keyreg report
	// merge), one URL each, so that each is redacted on its own; nil for
	// one audit, whose instance is Target.
	Targets []string  `json:"targets,omitempty"`
	Mode    string    `json:"mode"` // standalone, cluster or sentinel
	Started time.Time `json:"started"`
	// Partial is set when the audit did not cover the whole keyspace
	// (interrupted, --max-keys reached, a node failed); PartialReason says why.
	Partial       bool   `json:"partial"`
	PartialReason string `json:"partial_reason,omitempty"`
	FleetTarget   string `json:"fleet_target,omitempty"` // the target's name in its fleet's target list (audit --target-list); "" otherwise and when merged

	Scan     ScanStats       `json:"scan"`
	Totals   Totals          `json:"totals"`
	Families []*FamilyReport `json:"families"` // in registry order
	Owners   []*OwnerReport  `json:"owners"`   // sorted by name
	// Unregistered groups keys that match no family by inferred prefix,
	// largest first, capped at Options.MaxGroups.
	Unregistered UnregisteredReport `json:"unregistered"`
	// Findings holds one entry per (rule, family) with a count and examples,
	// sorted by severity, then family, then rule.
	Findings []*Finding `json:"findings"`

	// DBs lists the logical databases the audited keys live in, in
	// order; a key's DB matters to a reader only when there are several.
	DBs []int `json:"dbs"`
	// TopKeys holds the largest keys by bytes and by elements, at most
	// Options.Top of each.
	TopKeys TopKeys `json:"-"`
	// Types describes the keys of each Redis type, most keys first.
	Types []*TypeStats `json:"-"`
	// TTL counts every audited key by TTL bucket: the sum of the
	// families' histograms and the unregistered keys'.
	TTL TTLHistogram `json:"-"`
	// TTLMemory sums the measured memory (Totals.MemoryKeys keys) per TTL
	// bucket: what expires soon, and what never does.
	TTLMemory TTLHistogram `json:"-"`
	// KeyBytes sums the lengths of the audited keys' names: what the names
	// alone take, before any value.
	KeyBytes int64 `json:"-"`
	// Channels is the channel audit of the run (keyreg audit --channels);
	// nil when the channels were not audited.
	Channels *ChannelsReport `json:"channels,omitempty"`
}

// MultiDB reports whether the audited keys live in more than one logical
// database, so that a key's database must be named.
func (r *Report) MultiDB() bool { return len(r.DBs) > 1 }

// ScanStats describes the scan itself.
type ScanStats struct {
	Nodes      int           `json:"nodes"`
	Keys       int64         `json:"keys"`       // distinct keys audited
	Scanned    int64         `json:"scanned"`    // SCAN replies, duplicates included
	Duplicates int64         `json:"duplicates"` // SCAN replies dropped as duplicates
	Vanished   int64         `json:"vanished"`   // keys gone between SCAN and the probe
	Sampled    int64         `json:"sampled"`    // payloads read and checked
	Skipped    int64         `json:"skipped"`    // payloads not read: larger than --max-value-bytes
	Duration   time.Duration `json:"duration_ns"`
	KeysPerSec float64       `json:"keys_per_second"`
	Notes      []string      `json:"notes,omitempty"` // non-fatal problems, such as IDLETIME refused
	// NotChecked lists the key rules left unchecked on some keys because
	// the facts they read were not read (a primary's keys not touched),
	// in rule order; the notes say on how many keys and why. A summary of
	// the findings says so: they do not cover these rules.
	NotChecked []string `json:"not_checked,omitempty"`
}

// Totals sums the families. Keys is Registered + Unregistered.
type Totals struct {
	Keys int64 `json:"keys"`
	// Registered counts the keys of the families, including keys with a
	// family's shape but a bad placeholder value (placeholder-invalid).
	Registered int64 `json:"registered"`
	// Unregistered counts the keys of no family and no family's shape:
	// those of UnregisteredReport.
	Unregistered int64 `json:"unregistered"`
	WithTTL      int64 `json:"with_ttl"`
	Memory       int64 `json:"memory_bytes,omitempty"`
	MemoryKeys   int64 `json:"memory_keys"` // keys whose memory was measured: Memory sums these
	Errors       int64 `json:"errors"`      // findings (keys) at error severity
	Warnings     int64 `json:"warnings"`    // at warn severity
	Infos        int64 `json:"infos"`       // at info severity
}

// FamilyReport aggregates one family.
type FamilyReport struct {
	Name     string   `json:"name"`
	Owner    string   `json:"owner"`
	Preset   string   `json:"preset,omitempty"` // the preset the family was expanded from
	Pos      diag.Pos `json:"-"`
	Position string   `json:"position"` // keys.yaml:line:col, of the preset entry for a preset's family
	// Keys counts the keys that match the family, and those with its
	// shape but a bad placeholder value (placeholder-invalid).
	Keys    int64 `json:"keys"`
	WithTTL int64 `json:"with_ttl"`
	// Memory is the summed MEMORY USAGE of the family's keys, when measured.
	Memory         int64 `json:"memory_bytes,omitempty"`
	MemoryMeasured bool  `json:"memory_measured"`
	// MemoryKeys counts the keys whose memory was measured: all of them
	// for a family with max_bytes or under --memory, else none.
	MemoryKeys int64 `json:"memory_keys"`
	Sampled    int64 `json:"sampled"`
	Findings   int64 `json:"findings"` // keys with at least one active finding
	// TTL counts the family's keys by TTL bucket.
	TTL TTLHistogram `json:"-"`
	// DBs splits the family's keys by logical database, in DB order; one
	// entry per database that holds some of them.
	DBs []*DBReport `json:"-"`
}

// DBReport is the part of a family's keys that lives in one database.
type DBReport struct {
	DB      int
	Keys    int64
	WithTTL int64
	Memory  int64 // summed MEMORY USAGE, when measured
	// MemoryKeys counts the keys whose memory was measured.
	MemoryKeys int64
}

// TTLPercent is the share of the family's keys that have a TTL, 0 to 100.
func (f *FamilyReport) TTLPercent() float64 { return percent(f.WithTTL, f.Keys) }

// OwnerReport rolls families up per owner.
type OwnerReport struct {
	Name     string   `json:"name"`
	Contact  string   `json:"contact,omitempty"`
	Families []string `json:"families"`
	Keys     int64    `json:"keys"`
	WithTTL  int64    `json:"with_ttl"`
	Memory   int64    `json:"memory_bytes,omitempty"`
	// MemoryKeys counts the keys of the owner's families whose memory was
	// measured: Memory is a total only when it equals Keys.
	MemoryKeys int64 `json:"memory_keys"`
	Findings   int64 `json:"findings"`
}

// UnregisteredReport groups keys that match no family.
type UnregisteredReport struct {
	// Keys counts every key of no family and no family's shape: the keys
	// of the groups plus Other, and the count of the unregistered-key
	// finding. A key with a family's shape but a placeholder value of the
	// wrong type is a key of that family, reported as placeholder-invalid.
	Keys   int64    `json:"keys"`
	Groups []*Group `json:"groups"`
	// Other counts keys whose group did not fit under the group cap.
	Other int64 `json:"other"`
	// WithTTL and Memory sum the unregistered keys; MemoryMeasured says
	// whether the memory of some of them was measured.
	WithTTL        int64 `json:"-"`
	Memory         int64 `json:"-"`
	MemoryMeasured bool  `json:"-"`
	MemoryKeys     int64 `json:"-"` // keys whose memory was measured
	// TTL counts the unregistered keys by TTL bucket.
	TTL TTLHistogram `json:"-"`
}

// Group is a set of unregistered keys sharing an inferred prefix.
type Group struct {
	Prefix  string `json:"prefix"` // such as "sidekiq:queue:" or "tmp:"
	Keys    int64  `json:"keys"`
	WithTTL int64  `json:"with_ttl"`
	Memory  int64  `json:"memory_bytes,omitempty"`
	// MemoryKeys counts the keys whose memory was measured.
	MemoryKeys int64 `json:"memory_keys"`
	// DBs lists the logical databases the group's keys live in, in
	// order, at most maxDBs of them.
	DBs      []int    `json:"dbs"`
	Examples []string `json:"examples"` // up to 3 key names
}

// Finding is one rule firing on one family (or on unregistered keys).
type Finding struct {
	Rule     string        `json:"rule"`
	Severity diag.Severity `json:"severity"`
	Family   string        `json:"family,omitempty"`
	// Channel is set on a channel audit finding: the channel declaration,
	// or for channel-unregistered the prefix group; its examples are
	// channel names.
	Channel  string    `json:"channel,omitempty"`
	Pos      diag.Pos  `json:"-"`
	Position string    `json:"position,omitempty"`
	Count    int64     `json:"count"`    // keys it fired on
	Of       int64     `json:"of"`       // keys of the family checked by the rule
	Message  string    `json:"message"`  // summary, no payload values
	Examples []Example `json:"examples"` // up to Options.Examples
	// Suppressed is set when the family ignores the rule; Reason says why.
	Suppressed bool   `json:"suppressed,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// Example is one key a finding fired on, with a value-free detail such as
// "ttl 30d, max 24h" or "/user_id: got string, want integer".
type Example struct {
	Key    string `json:"key"`
	DB     int    `json:"db"` // the logical database of the key
	Detail string `json:"detail,omitempty"`
	// Instance is the target of the audit the example comes from, in a
	// merged report; empty in one audit's.
	Instance string `json:"instance,omitempty"`
}

func percent(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// Diagnostics turns the findings into one diagnostic each, positioned on
// the family's line in keys.yaml (or the families: key for unregistered
// keys), so GitHub annotations and SARIF land on the registry. Messages
// start with the family they are about (`family "cart": …`), name up to
// three example keys, quoted, and never a value.
func (r *Report) Diagnostics() diag.List {
	var l diag.List
	for _, f := range r.Findings {
		msg := rules.NameFamily(f.Family, f.Message)
		if len(f.Examples) > 0 {
			var ex []string
			for i, e := range f.Examples {
				if i == 3 {
					break
				}
				q := strconv.Quote(e.Key)
				if r.MultiDB() {
					q += " (db " + strconv.Itoa(e.DB) + ")"
				}
				if e.Detail != "" {
					q += ": " + e.Detail
				}
				ex = append(ex, q)
			}
			msg += " (e.g. " + strings.Join(ex, "; ") + ")"
		}
		l = append(l, diag.Diagnostic{
			Pos:        f.Pos,
			Severity:   f.Severity,
			Rule:       f.Rule,
			Family:     f.Family,
			Message:    msg,
			Suppressed: f.Suppressed,
			Reason:     f.Reason,
		})
	}
	return l
}

// MaxKeyBytes is how many bytes of a key name or prefix a report keeps. A
// longer example key is cut to that many bytes (fewer, to end on a UTF-8
// boundary) followed by "…(+N bytes)", N being the bytes cut; a longer
// prefix is cut likewise and ends in "…", since it stands for keys of many
// lengths. An example's detail keeps at most maxDetailBytes.
const MaxKeyBytes = 256

// maxDetailBytes bounds an example's detail, which may quote part of the
// key (a placeholder value) or, with ShowValues, a value.
const maxDetailBytes = 1024

// shortKey returns key as a report keeps it: at most MaxKeyBytes of it and
// a marker of what was cut. The result never shares memory with key, so a
// report does not keep a scan's buffers alive.
func shortKey(key string) string { return clip(key, MaxKeyBytes, true) }

// shortPrefix is shortKey for an inferred prefix, marked with "…" only.
func shortPrefix(p string) string { return clip(p, MaxKeyBytes, false) }

func clip(s string, n int, count bool) string {
	if len(s) <= n {
		return strings.Clone(s)
	}
	cut := n
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
		cut--
	}
	if !count {
		return s[:cut] + "…"
	}
	return s[:cut] + "…(+" + strconv.Itoa(len(s)-cut) + " bytes)"
}

// MemoryMeasured reports whether the memory of some keys of r was
// measured.
func (r *Report) MemoryMeasured() bool {
	for _, f := range r.Families {
		if f != nil && f.MemoryMeasured {
			return true
		}
	}
	return r.Unregistered.MemoryMeasured
}

// DisplayTarget is the report's target as every output shows it: each
// instance of a merged report redacted on its own and joined, since
// "a, b" is not one URL; a run's one target redacted again, a second line
// of defence for a URL keyreg did not build.
func (r *Report) DisplayTarget() string {
	if len(r.Targets) > 0 {
		return strings.Join(r.RedactedTargets(), ", ")
	}
	return secret.Redact(r.Target)
}

// RedactedTargets returns the instances of a merged report, each redacted
// on its own; nil for a single run's report.
func (r *Report) RedactedTargets() []string {
	if r.Targets == nil {
		return nil
	}
	out := make([]string, len(r.Targets))
	for i, t := range r.Targets {
		out[i] = secret.Redact(t)
	}
	return out
}
