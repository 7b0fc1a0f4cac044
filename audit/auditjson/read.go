package auditjson

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
)

// MaxBytes bounds the size of a json audit report that Read accepts: a report's size does not grow with the keyspace, so
// anything larger is not one keyreg wrote.
const MaxBytes = 64 << 20

// Read reads a json audit report (the format of docs/audit-report.md)
// back into an audit.Report, for keyreg report merge. It reads at most
// MaxBytes, refuses unknown versions, unknown severities, bad
// base64 and sketches that State could not have written. Family positions
// come back as strings only; finding positions from path, line and column.
func Read(r io.Reader) (*audit.Report, error) {
	// Decoded as it is read, not read whole first: a merge holds one
	// input's document at a time, not its bytes as well.
	lr := &limitedReader{r: r, n: MaxBytes}
	var doc Document
	dec := json.NewDecoder(lr)
	err := dec.Decode(&doc)
	switch {
	case lr.over:
		return nil, fmt.Errorf("larger than %d MiB: not an audit report", MaxBytes>>20)
	case doc.Version != "" && doc.Version != audit.ReportVersion:
		return nil, fmt.Errorf("audit report version %q, this keyreg reads version %q", doc.Version, audit.ReportVersion)
	case err != nil:
		return nil, fmt.Errorf("not a json audit report: %w", err)
	case doc.Version == "":
		return nil, errors.New(`not a json audit report: no "version" field`)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a json audit report: more after the document")
	}
	if err := checkRanges(reflect.ValueOf(doc), "$"); err != nil {
		return nil, err
	}
	return doc.Report()
}

// limitedReader reads at most n bytes of r, and says when r had more.
type limitedReader struct {
	r    io.Reader
	n    int64
	over bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		if k, _ := l.r.Read(one[:]); k > 0 {
			l.over = true
			return 0, errors.New("too large")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}

// checkRanges checks every number of a decoded document against what an
// audit can write: counts, sizes and sums from 0 to audit.MaxCount, so
// that merging them cannot overflow (a TTL may be -1 and any length, and
// durations any positive value, since they are not summed). The error
// names the JSON path of the first number out of range, such as
// $.families[2].keys.
func checkRanges(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return checkRanges(v.Elem(), path)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			return nil
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			if err := checkRanges(v.Field(i), path+"."+name); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := checkRanges(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Int, reflect.Int64:
		n := v.Int()
		lo, hi := int64(0), int64(audit.MaxCount)
		switch {
		case strings.HasSuffix(path, ".ttl_ms"):
			lo, hi = -1, math.MaxInt64
		case strings.HasSuffix(path, ".duration_ns"):
			hi = math.MaxInt64
		}
		if n < lo || n > hi {
			return fmt.Errorf("%s is %d, out of range: an audit writes %d to %d", path, n, lo, hi)
		}
	case reflect.Float64:
		if f := v.Float(); f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s is %v, out of range: an audit writes a number of 0 or more", path, f)
		}
	}
	return nil
}

// Report turns a decoded document back into an audit.Report. Read also
// checks the document's numbers against the ranges an audit writes; a
// caller that decodes a document itself gets only Report's own checks.
func (doc *Document) Report() (*audit.Report, error) {
	var bad error
	raw := func(s, b64 string) string {
		if b64 == "" {
			return s
		}
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			bad = cmpErr(bad, fmt.Errorf("bad base64 %q: %w", b64, err))
			return s
		}
		return string(b)
	}
	mem := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	// memKeys is the count of keys whose memory was measured; a document
	// of keyreg before memory_keys says only whether memory is there.
	memKeys := func(p, memory *int64, keys int64) int64 {
		switch {
		case p != nil:
			return *p
		case memory != nil:
			return keys
		}
		return 0
	}
	r := &audit.Report{
		Version: doc.Version, Registry: doc.Registry, Target: doc.Target, Targets: doc.Targets, Mode: doc.Mode,
		Started: doc.Started, Partial: doc.Partial, PartialReason: doc.PartialReason, FleetTarget: doc.FleetTarget,
		Scan: audit.ScanStats{
			Nodes: doc.Scan.Nodes, Keys: doc.Scan.Keys, Scanned: doc.Scan.Scanned, Duplicates: doc.Scan.Duplicates,
			Vanished: doc.Scan.Vanished, Sampled: doc.Scan.Sampled, Skipped: doc.Scan.Skipped,
			Duration: time.Duration(doc.Scan.DurationNS), KeysPerSec: doc.Scan.KeysPerSecond,
		},
		Totals: audit.Totals{
			Keys: doc.Totals.Keys, Registered: doc.Totals.Registered, Unregistered: doc.Totals.Unregistered,
			WithTTL: doc.Totals.WithTTL, Memory: mem(doc.Totals.Memory), MemoryKeys: memKeys(doc.Totals.MemoryKeys, doc.Totals.Memory, doc.Totals.Keys),
			Errors: doc.Totals.Errors, Warnings: doc.Totals.Warnings, Infos: doc.Totals.Infos,
		},
		Unregistered: audit.UnregisteredReport{
			Keys: doc.Unregistered.Keys, Other: doc.Unregistered.Other,
			WithTTL: doc.Unregistered.WithTTL, Memory: mem(doc.Unregistered.Memory), MemoryMeasured: doc.Unregistered.MemoryMeasured,
			MemoryKeys: memKeys(doc.Unregistered.MemoryKeys, doc.Unregistered.Memory, doc.Unregistered.Keys),
			TTL:        histogramOf(doc.Unregistered.TTLHistogram, &bad),
		},
		TTL: histogramOf(doc.TTLHistogram, &bad),
	}
	if len(doc.DBs) > 0 {
		r.DBs = doc.DBs
	}
	r.KeyBytes = doc.Totals.KeyBytes
	if doc.TTLMemory != nil {
		if len(doc.TTLMemory) != len(r.TTLMemory) {
			bad = cmpErr(bad, fmt.Errorf("ttl_memory_histogram has %d buckets, want %d", len(doc.TTLMemory), len(r.TTLMemory)))
		}
		for i, b := range doc.TTLMemory {
			if i >= len(r.TTLMemory) {
				break
			}
			if b.Bucket != audit.TTLBuckets[i] || b.Bytes < 0 {
				bad = cmpErr(bad, fmt.Errorf("ttl_memory_histogram bucket %d is %q with %d bytes, want %q", i, b.Bucket, b.Bytes, audit.TTLBuckets[i]))
			}
			r.TTLMemory[i] = b.Bytes
		}
	}
	if len(doc.Scan.Notes) > 0 {
		r.Scan.Notes = doc.Scan.Notes
	}
	if len(doc.Scan.NotChecked) > 0 {
		r.Scan.NotChecked = doc.Scan.NotChecked
	}
	for _, f := range doc.Families {
		fr := &audit.FamilyReport{
			Name: f.Name, Owner: f.Owner, Preset: f.Preset, Position: f.Position, Keys: f.Keys, WithTTL: f.WithTTL,
			Memory: mem(f.Memory), MemoryMeasured: f.MemoryMeasured, MemoryKeys: memKeys(f.MemoryKeys, f.Memory, f.Keys),
			Sampled: f.Sampled, Findings: f.Findings,
			TTL: histogramOf(f.TTLHistogram, &bad),
		}
		for _, d := range f.DBs {
			fr.DBs = append(fr.DBs, &audit.DBReport{DB: d.DB, Keys: d.Keys, WithTTL: d.WithTTL, Memory: mem(d.Memory), MemoryKeys: memKeys(d.MemoryKeys, d.Memory, d.Keys)})
		}
		r.Families = append(r.Families, fr)
	}
	for _, o := range doc.Owners {
		r.Owners = append(r.Owners, &audit.OwnerReport{
			Name: o.Name, Contact: o.Contact, Families: o.Families, Keys: o.Keys, WithTTL: o.WithTTL,
			Memory: mem(o.Memory), MemoryKeys: memKeys(o.MemoryKeys, o.Memory, o.Keys), Findings: o.Findings,
		})
	}
	for _, g := range doc.Unregistered.Groups {
		ag := &audit.Group{Prefix: raw(g.Prefix, g.PrefixBase64), Keys: g.Keys, WithTTL: g.WithTTL, Memory: mem(g.Memory), MemoryKeys: memKeys(g.MemoryKeys, g.Memory, g.Keys)}
		if len(g.DBs) > 0 {
			ag.DBs = g.DBs
		}
		for _, e := range g.Examples {
			ag.Examples = append(ag.Examples, raw(e.Key, e.KeyBase64))
		}
		r.Unregistered.Groups = append(r.Unregistered.Groups, ag)
	}
	for _, f := range doc.Findings {
		sev, err := diag.ParseSeverity(f.Severity)
		if err != nil {
			bad = cmpErr(bad, fmt.Errorf("finding %q: %w", f.Rule, err))
		}
		af := &audit.Finding{
			Rule: f.Rule, Severity: sev, Family: f.Family, Channel: raw(f.Channel, f.ChannelBase64), Pos: posOf(f.Path, f.Line, f.Column), Position: f.Position,
			Count: f.Count, Of: f.Of, Message: f.Message, Suppressed: f.Suppressed, Reason: f.Reason,
		}
		for _, e := range f.Examples {
			ex := audit.Example{Key: raw(e.Key, e.KeyBase64), Detail: e.Detail, Instance: e.Instance}
			if e.DB != nil {
				ex.DB = *e.DB
			}
			af.Examples = append(af.Examples, ex)
		}
		r.Findings = append(r.Findings, af)
	}
	for _, t := range doc.TopKeys {
		tk := &audit.TopKey{
			Key: raw(t.Key, t.KeyBase64), DB: t.DB, Family: t.Family, Type: t.Type,
			Bytes: t.Bytes, Elements: t.Elements, TTL: time.Duration(t.TTLMS) * time.Millisecond,
		}
		if t.TTLMS < 0 {
			tk.TTL = -1
		}
		switch t.By {
		case "bytes":
			r.TopKeys.ByBytes = append(r.TopKeys.ByBytes, tk)
		case "elements":
			r.TopKeys.ByElements = append(r.TopKeys.ByElements, tk)
		default:
			bad = cmpErr(bad, fmt.Errorf("top key by %q: want bytes or elements", t.By))
		}
	}
	for _, t := range doc.Types {
		ts := &audit.TypeStats{Type: t.Type, Keys: t.Keys, Bytes: t.Bytes.Sum, Elements: t.Elements.Sum}
		var err error
		if ts.BytesDist, err = audit.SketchFrom(t.Bytes.Sketch); err != nil {
			bad = cmpErr(bad, fmt.Errorf("type %q bytes: %w", t.Type, err))
		}
		if ts.ElementsDist, err = audit.SketchFrom(t.Elements.Sketch); err != nil {
			bad = cmpErr(bad, fmt.Errorf("type %q elements: %w", t.Type, err))
		}
		for i, e := range t.Encodings {
			if i == audit.MaxEncodings || e.Keys < 0 {
				bad = cmpErr(bad, fmt.Errorf("type %q: more than %d encodings, or a negative count", t.Type, audit.MaxEncodings))
				break
			}
			ts.Encodings = append(ts.Encodings, audit.EncodingCount{Encoding: e.Encoding, Keys: e.Keys})
		}
		r.Types = append(r.Types, ts)
	}
	if c := doc.Channels; c != nil {
		for _, d := range c.Declared {
			if d == nil {
				bad = cmpErr(bad, errors.New("channels: a null declaration"))
			}
		}
		for _, g := range c.Unregistered {
			if g == nil {
				bad = cmpErr(bad, errors.New("channels: a null unregistered group"))
			} else {
				g.Prefix, g.PrefixBase64 = raw(g.Prefix, g.PrefixBase64), ""
				if g.Examples == nil {
					g.Examples = []string{}
				}
			}
		}
		if c.Declared == nil {
			c.Declared = []*audit.ChannelDeclReport{}
		}
		if c.Unregistered == nil {
			c.Unregistered = []*audit.ChannelGroup{}
		}
		if f := c.FanOut; f != nil {
			switch {
			case f.Status != audit.FanOutEstimated && f.Status != audit.FanOutNoBus && f.Status != audit.FanOutSkipped && f.Status != audit.FanOutUnknown:
				bad = cmpErr(bad, fmt.Errorf("channels: fan_out status %q is not estimated, no-bus, skipped or unknown", f.Status))
			case (f.Status == audit.FanOutEstimated) != (f.Estimate != nil):
				bad = cmpErr(bad, errors.New("channels: a fan_out estimate goes with status estimated, and only with it"))
			case f.WindowSeconds < 0 || f.WaitedSeconds < 0 || f.Estimate != nil && (f.Estimate.Nodes < 0 || f.Estimate.Published < 0 || f.Estimate.BusMessages < 0 ||
				f.Estimate.PublishedPerSecond < 0 || f.Estimate.BusMessagesPerSecond < 0 || f.Estimate.BusBytesPerSecondMin < 0 || f.Estimate.BusHeaderBytes < 0):
				bad = cmpErr(bad, errors.New("channels: a negative fan_out figure"))
			}
		}
		r.Channels = c
	}
	if bad != nil {
		return nil, bad
	}
	return r, nil
}

// cmpErr keeps the first error.
func cmpErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

func posOf(path string, line, col int) diag.Pos {
	if path == "" {
		return diag.Pos{}
	}
	return diag.Pos{File: path, Line: line, Col: col}
}

// histogramOf reads a TTL histogram; a document without one (or with
// buckets out of order) is refused, since its counts could not add up.
func histogramOf(bs []ttlBucketJSON, bad *error) audit.TTLHistogram {
	var h audit.TTLHistogram
	if len(bs) != len(h) {
		*bad = cmpErr(*bad, fmt.Errorf("ttl_histogram has %d buckets, want %d", len(bs), len(h)))
		return h
	}
	for i, b := range bs {
		if b.Bucket != audit.TTLBuckets[i] || b.Keys < 0 {
			*bad = cmpErr(*bad, fmt.Errorf("ttl_histogram bucket %d is %q with %d keys, want %q", i, b.Bucket, b.Keys, audit.TTLBuckets[i]))
		}
		h[i] = b.Keys
	}
	return h
}
