package audit

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/rules"
)

// BaselineVersion is the version of the baseline file format (docs/audit.md).
const BaselineVersion = "1"

// Baseline records the active findings of one audit by stable fingerprint,
// so that a later audit can report only what is new. It holds rule IDs,
// family names and, for unregistered keys, inferred prefixes: never a full
// key name, a value or a URL.
type Baseline struct {
	Version  string    `json:"version"`
	Created  time.Time `json:"created"`
	Registry string    `json:"registry"`
	Findings []Entry   `json:"findings"`

	// Path is the file the baseline was loaded from, for reports.
	Path string `json:"-"`
}

// Entry is one baseline entry: the active findings of one rule on one
// family, or, for unregistered keys, on one prefix group (or on the keys
// beyond the group cap, Other). Fingerprint is computed from the rule, the
// family and the prefix only, so it is stable across runs whatever the
// counts, examples, severities, messages or positions in keys.yaml.
type Entry struct {
	Fingerprint string
	Rule        string
	Severity    diag.Severity // informational
	Family      string
	// Group is set for an unregistered prefix group; Prefix is then its
	// inferred prefix (possibly empty, for the empty key name).
	Group  bool
	Prefix string
	// Other is set for unregistered keys that fell outside the group cap.
	Other bool
	// Channel is set for a channel audit finding: its declaration, or the
	// prefix group of channel-unregistered.
	Channel string
	Count   int64 // keys the finding fired on; informational
}

// entryJSON is the file form of an Entry.
type entryJSON struct {
	Fingerprint  string  `json:"fingerprint"`
	Rule         string  `json:"rule"`
	Severity     string  `json:"severity,omitempty"`
	Family       string  `json:"family,omitempty"`
	Prefix       *string `json:"prefix,omitempty"`
	PrefixBase64 string  `json:"prefix_base64,omitempty"`
	Other        bool    `json:"other,omitempty"`
	Channel      string  `json:"channel,omitempty"`
	// ChannelBase64 holds the exact bytes of Channel when it is not
	// UTF-8: a live channel's name, and so its prefix group, is any bytes.
	ChannelBase64 string `json:"channel_base64,omitempty"`
	Count         int64  `json:"count"`
}

// MarshalJSON writes the entry as documented in docs/audit.md: prefix only
// for prefix groups, prefix_base64 as well when the prefix is not UTF-8.
func (e Entry) MarshalJSON() ([]byte, error) {
	j := entryJSON{Fingerprint: e.Fingerprint, Rule: e.Rule, Family: e.Family, Other: e.Other, Channel: strings.ToValidUTF8(e.Channel, "\uFFFD"), Count: e.Count}
	if !utf8.ValidString(e.Channel) {
		j.ChannelBase64 = base64.StdEncoding.EncodeToString([]byte(e.Channel))
	}
	if e.Severity > diag.Off {
		j.Severity = e.Severity.String()
	}
	if e.Group {
		p := strings.ToValidUTF8(e.Prefix, "\uFFFD")
		j.Prefix = &p
		if !utf8.ValidString(e.Prefix) {
			j.PrefixBase64 = base64.StdEncoding.EncodeToString([]byte(e.Prefix))
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads an entry and checks that its fingerprint is the one
// its rule, family and prefix give.
func (e *Entry) UnmarshalJSON(data []byte) error {
	var j entryJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*e = Entry{Fingerprint: j.Fingerprint, Rule: j.Rule, Family: j.Family, Other: j.Other, Channel: j.Channel, Count: j.Count}
	if j.Rule == "" {
		return errors.New("entry without a rule")
	}
	if j.Severity != "" {
		sev, err := diag.ParseSeverity(j.Severity)
		if err != nil {
			return fmt.Errorf("rule %q: %w", j.Rule, err)
		}
		e.Severity = sev
	}
	if j.ChannelBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(j.ChannelBase64)
		if err != nil || len(b) == 0 {
			return fmt.Errorf("rule %q: bad channel_base64", j.Rule)
		}
		e.Channel = string(b)
	}
	if j.Prefix != nil || j.PrefixBase64 != "" {
		if j.Other {
			return fmt.Errorf("rule %q: an entry has either a prefix or other, not both", j.Rule)
		}
		e.Group = true
		if j.Prefix != nil {
			e.Prefix = *j.Prefix
		}
		if j.PrefixBase64 != "" {
			b, err := base64.StdEncoding.DecodeString(j.PrefixBase64)
			if err != nil {
				return fmt.Errorf("rule %q: bad prefix_base64: %w", j.Rule, err)
			}
			e.Prefix = string(b)
		}
	}
	if !validFingerprint(j.Fingerprint) {
		return fmt.Errorf("rule %q: fingerprint %q is not \"sha256:\" and 64 hex digits", j.Rule, j.Fingerprint)
	}
	if want := e.fingerprint(); want != j.Fingerprint {
		return fmt.Errorf("rule %q: fingerprint %q does not match its rule, family and prefix (want %q)", j.Rule, j.Fingerprint, want)
	}
	return nil
}

func validFingerprint(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// fingerprint is the SHA-256 of the entry's kind, rule, family and prefix,
// NUL-separated. The prefix, the only field that may hold any byte, comes
// last, so no two entries share an input.
func (e Entry) fingerprint() string {
	kind := "family"
	switch {
	case e.Channel != "":
		return fingerprintOf("channel", e.Rule, "", e.Channel)
	case e.Group:
		kind = "prefix"
	case e.Other:
		kind = "other"
	}
	return fingerprintOf(kind, e.Rule, e.Family, e.Prefix)
}

// fingerprintOf hashes an entry's kind, rule, family and the field that
// may hold any byte (a prefix, a channel name), last.
func fingerprintOf(kind, rule, family, last string) string {
	sum := sha256.Sum256([]byte("keyreg-baseline/v1\x00" + kind + "\x00" + rule + "\x00" + family + "\x00" + last))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Label describes the entry in one line: the rule and the family, the
// quoted prefix or "other prefixes".
func (e Entry) Label() string {
	switch {
	case e.Channel != "":
		return fmt.Sprintf("%s channel %q", e.Rule, e.Channel)
	case e.Group:
		return fmt.Sprintf("%s %q", e.Rule, e.Prefix)
	case e.Other:
		return e.Rule + " (other prefixes)"
	case e.Family != "":
		return e.Rule + " " + e.Family
	}
	return e.Rule
}

func activeFinding(f *Finding) bool {
	return f != nil && !f.Suppressed && f.Severity > diag.Off
}

// findingEntries returns the baseline entries of one active finding: one,
// or for a finding on keys of no family (unregistered-key) one per prefix
// group plus one for the keys beyond the group cap.
func (r *Report) findingEntries(f *Finding) []Entry {
	if f.Channel != "" {
		e := Entry{Rule: f.Rule, Severity: f.Severity, Channel: f.Channel, Count: f.Count}
		e.Fingerprint = e.fingerprint()
		return []Entry{e}
	}
	if f.Family != "" {
		e := Entry{Rule: f.Rule, Severity: f.Severity, Family: f.Family, Count: f.Count}
		e.Fingerprint = e.fingerprint()
		return []Entry{e}
	}
	var out []Entry
	for _, g := range r.Unregistered.Groups {
		if g == nil {
			continue
		}
		e := Entry{Rule: f.Rule, Severity: f.Severity, Family: f.Family, Group: true, Prefix: g.Prefix, Count: g.Keys}
		e.Fingerprint = e.fingerprint()
		out = append(out, e)
	}
	if r.Unregistered.Other > 0 || len(out) == 0 {
		e := Entry{Rule: f.Rule, Severity: f.Severity, Family: f.Family, Other: true, Count: r.Unregistered.Other}
		if len(out) == 0 {
			e.Count = f.Count
		}
		e.Fingerprint = e.fingerprint()
		out = append(out, e)
	}
	return out
}

// Entries returns the baseline entries of the report's active findings
// (neither suppressed nor off), in the order of the findings.
func (r *Report) Entries() []Entry {
	var out []Entry
	for _, f := range r.Findings {
		if activeFinding(f) {
			out = append(out, r.findingEntries(f)...)
		}
	}
	return out
}

// NewBaseline records the active findings of r, sorted by rule, family and
// prefix so that the file diffs well. Its creation time is the audit's start.
func NewBaseline(r *Report) *Baseline {
	created := r.Started
	if created.IsZero() {
		created = time.Now()
	}
	b := &Baseline{
		Version:  BaselineVersion,
		Created:  created.UTC().Truncate(time.Second),
		Registry: filepath.ToSlash(r.Registry),
		Findings: r.Entries(),
	}
	if b.Findings == nil {
		b.Findings = []Entry{}
	}
	slices.SortFunc(b.Findings, func(x, y Entry) int {
		return cmp.Or(strings.Compare(x.Rule, y.Rule), strings.Compare(x.Family, y.Family),
			cmp.Compare(kindOrder(x), kindOrder(y)), strings.Compare(x.Prefix, y.Prefix))
	})
	return b
}

func kindOrder(e Entry) int {
	switch {
	case e.Group:
		return 1
	case e.Other:
		return 2
	}
	return 0
}

// Marshal returns the baseline as indented JSON with a final newline.
func (b *Baseline) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteBaseline writes b to path, replacing the file in one rename so that
// a reader never sees half a baseline.
func WriteBaseline(path string, b *Baseline) error {
	data, err := b.Marshal()
	if err != nil {
		return fmt.Errorf("writing baseline %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing baseline %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing baseline %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing baseline %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing baseline %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing baseline %s: %w", path, err)
	}
	return nil
}

// LoadBaseline reads and checks the baseline file at path.
func LoadBaseline(path string) (*Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading baseline: %w", err)
	}
	defer f.Close()
	// Read at most one byte past the limit, whatever the file is (a pipe,
	// /dev/zero), so a huge one is refused without being read whole.
	data, err := io.ReadAll(io.LimitReader(f, MaxBaselineBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading baseline: %w", err)
	}
	if len(data) > MaxBaselineBytes {
		return nil, fmt.Errorf("baseline %s: larger than %d MiB; a baseline holds one entry per finding and prefix group, so this is not one", path, MaxBaselineBytes>>20)
	}
	b, err := ParseBaseline(data)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	b.Path = path
	return b, nil
}

// MaxBaselineBytes bounds the size of a baseline file. Baselines are
// bounded by the registry (one entry per finding and per unregistered prefix
// group, whose count is capped), so real ones are far smaller.
const MaxBaselineBytes = 16 << 20

// ParseBaseline parses a baseline document: one JSON object of version
// "1" whose entries carry valid fingerprints. Unknown fields are ignored,
// as fields may be added without a new version.
func ParseBaseline(data []byte) (*Baseline, error) {
	var raw struct {
		Version  *string   `json:"version"`
		Created  time.Time `json:"created"`
		Registry string    `json:"registry"`
		Findings *[]Entry  `json:"findings"`
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("not a baseline file: the file is empty")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("parsing: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("not a baseline file: data after the JSON object")
	}
	switch {
	case raw.Version == nil:
		return nil, errors.New("not a baseline file: no version")
	case *raw.Version != BaselineVersion:
		return nil, fmt.Errorf("unsupported baseline version %q (want %q)", *raw.Version, BaselineVersion)
	case raw.Findings == nil:
		return nil, errors.New("not a baseline file: no findings list")
	}
	return &Baseline{Version: *raw.Version, Created: raw.Created, Registry: raw.Registry, Findings: *raw.Findings}, nil
}

// Comparison is the outcome of comparing an audit with a baseline.
type Comparison struct {
	File     string    // the baseline file
	Created  time.Time // when the baseline was recorded
	Registry string    // the registry the baseline was recorded against

	// New holds the entries of the audit that the baseline lacks, in the
	// order of the report's findings; Unchanged those it has.
	New       []Entry
	Unchanged []Entry
	// Resolved holds the baseline entries the audit no longer has, in the
	// baseline's order. It is empty when ResolvedNote is set.
	Resolved []Entry
	// ResolvedNote, when set, says why resolved entries are not listed: a
	// partial audit cannot tell a resolved finding from an unscanned one.
	ResolvedNote string

	newFindings map[*Finding]bool
	newPrefixes map[string]bool
	newOther    bool
}

// Compare compares the active findings of r with the baseline b.
func Compare(r *Report, b *Baseline) *Comparison {
	c := &Comparison{
		File: b.Path, Created: b.Created, Registry: b.Registry,
		New: []Entry{}, Unchanged: []Entry{}, Resolved: []Entry{},
		newFindings: map[*Finding]bool{}, newPrefixes: map[string]bool{},
	}
	known := make(map[string]bool, len(b.Findings))
	for _, e := range b.Findings {
		known[e.Fingerprint] = true
	}
	seen := map[string]bool{}
	for _, f := range r.Findings {
		if !activeFinding(f) {
			continue
		}
		for _, e := range r.findingEntries(f) {
			seen[e.Fingerprint] = true
			if known[e.Fingerprint] {
				c.Unchanged = append(c.Unchanged, e)
				continue
			}
			c.New = append(c.New, e)
			c.newFindings[f] = true
			switch {
			case e.Group:
				c.newPrefixes[e.Prefix] = true
			case e.Other:
				c.newOther = true
			}
		}
	}
	if r.Partial {
		c.ResolvedNote = "the audit is partial, so findings it did not see are not listed as resolved"
		return c
	}
	done := map[string]bool{}
	for _, e := range b.Findings {
		if !seen[e.Fingerprint] && !done[e.Fingerprint] {
			done[e.Fingerprint] = true
			c.Resolved = append(c.Resolved, e)
		}
	}
	return c
}

// IsNew reports whether f, a finding of the compared report, has an entry
// the baseline lacks.
func (c *Comparison) IsNew(f *Finding) bool { return c != nil && c.newFindings[f] }

// IsNewGroup reports whether the unregistered keys of g are a new finding.
func (c *Comparison) IsNewGroup(g *Group) bool {
	return c != nil && g != nil && c.newPrefixes[g.Prefix]
}

// Filter returns a shallow copy of r (the compared report) whose findings
// are only the new ones, plus the suppressed and off ones, which a baseline
// does not record. A finding on keys of no family (unregistered-key) is
// narrowed to the keys of its new prefix groups. Everything else is r's.
func (c *Comparison) Filter(r *Report) *Report {
	out := *r
	out.Findings = make([]*Finding, 0, len(c.newFindings))
	for _, f := range r.Findings {
		switch {
		case !activeFinding(f):
			out.Findings = append(out.Findings, f)
		case !c.newFindings[f]:
		case f.Family == "":
			out.Findings = append(out.Findings, c.narrow(r, f))
		default:
			out.Findings = append(out.Findings, f)
		}
	}
	return &out
}

// narrow returns a copy of f, a finding on keys of no family, that covers only
// the keys of the new prefix groups.
func (c *Comparison) narrow(r *Report, f *Finding) *Finding {
	n := *f
	n.Count, n.Examples = 0, []Example{}
	var parts []string
	shown := 0
	for _, g := range r.Unregistered.Groups {
		if g == nil || !c.newPrefixes[g.Prefix] {
			continue
		}
		n.Count += g.Keys
		for _, k := range g.Examples {
			if len(n.Examples) < max(len(f.Examples), 1) {
				n.Examples = append(n.Examples, Example{Key: k})
			}
		}
		if shown < 3 {
			parts = append(parts, fmt.Sprintf("%q (%d)", g.Prefix, g.Keys))
			shown++
		}
	}
	if more := len(c.newPrefixes) - shown; more > 0 {
		parts = append(parts, fmt.Sprintf("%d more", more))
	}
	if c.newOther {
		n.Count += r.Unregistered.Other
		if len(c.newPrefixes) == 0 {
			n.Count = max(n.Count, f.Count)
		}
		parts = append(parts, fmt.Sprintf("other prefixes (%d)", r.Unregistered.Other))
	}
	summary := f.Rule
	if rule, ok := rules.Lookup(f.Rule); ok && rule.Summary != nil {
		summary = rule.Summary(nil)
	}
	n.Message = fmt.Sprintf("%s: %d of %d under new prefixes: %s", summary, n.Count, f.Of, strings.Join(parts, ", "))
	return &n
}
