package serve

import (
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/render"
	"github.com/prometheus/client_golang/prometheus"
)

// OtherGroup is the group label of the unregistered keys outside the
// --max-groups largest prefix groups.
const OtherGroup = "other"

// maxLabelBytes bounds a label value taken from a key name: a prefix is
// a key's first segments, which a hostile writer can make 512 MB long.
const maxLabelBytes = 256

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	famLabels = []string{"family", "owner"}

	familyKeys        = desc("keyreg_family_keys", "Keys of a registry family found by the last complete audit.", famLabels...)
	familyNoTTL       = desc("keyreg_family_keys_without_ttl", "Keys of a registry family without a TTL.", famLabels...)
	familyBytes       = desc("keyreg_family_bytes", "Summed MEMORY USAGE of the keys of a registry family, when measured.", famLabels...)
	familyWithFinding = desc("keyreg_family_keys_with_findings", "Keys of a registry family with at least one active finding.", famLabels...)
	familyTTL         = desc("keyreg_family_ttl_seconds", "TTLs of the keys of a registry family that have one (keys without a TTL are keyreg_family_keys_without_ttl); the sum is not measured (NaN).", famLabels...)
	findings          = desc("keyreg_findings", "Keys an active audit finding fired on, by rule, family, its owner and severity (family and owner empty for unregistered keys).", "family", "owner", "rule", "severity")

	ownerKeys        = desc("keyreg_owner_keys", "Keys of an owner's families.", "owner")
	ownerNoTTL       = desc("keyreg_owner_keys_without_ttl", "Keys of an owner's families without a TTL.", "owner")
	ownerBytes       = desc("keyreg_owner_bytes", "Summed MEMORY USAGE of the measured keys of an owner's families.", "owner")
	ownerWithFinding = desc("keyreg_owner_keys_with_findings", "Keys of an owner's families with at least one active finding.", "owner")

	unregKeys  = desc("keyreg_unregistered_keys", "Keys that match no family, by inferred prefix group: the largest --max-groups groups, the rest as the group other.", "group")
	unregNoTTL = desc("keyreg_unregistered_keys_without_ttl", "Keys that match no family and have no TTL, by prefix group.", "group")
	unregBytes = desc("keyreg_unregistered_bytes", "Summed MEMORY USAGE of the measured keys that match no family, by prefix group.", "group")

	scanKeys     = desc("keyreg_audit_keys", "Distinct keys the last complete audit examined.")
	scanRate     = desc("keyreg_audit_keys_per_second", "Keys per second of the last complete audit.")
	scanVanished = desc("keyreg_audit_vanished_keys", "Keys deleted between SCAN and the probe in the last complete audit.")
	scanNodes    = desc("keyreg_audit_nodes", "Nodes the last complete audit scanned.")
	scanSampled  = desc("keyreg_audit_sampled_keys", "Payloads the last complete audit read and checked.")

	auditSuccess  = desc("keyreg_audit_success", "1 when the last audit completed and covered the whole keyspace, else 0.")
	auditPartial  = desc("keyreg_audit_partial", "1 when the last audit stopped part way (a node failed, a check was refused, --max-keys, --timeout), else 0.")
	auditDuration = desc("keyreg_audit_duration_seconds", "How long the last audit took, complete or not.")
	auditLastOK   = desc("keyreg_audit_last_success_timestamp_seconds", "Unix time at which the last complete audit finished (absent before the first).")
	auditRunning  = desc("keyreg_audit_running", "1 while an audit runs.")
	auditInterval = desc("keyreg_audit_interval_seconds", "The configured time between audits (--interval).")
	auditsTotal   = desc("keyreg_audits_total", "Audits run, by result: success, partial or error.", "result")
	regErrors     = desc("keyreg_registry_load_errors_total", "Changes of the registry file that did not load (the previous registry stays in use).")
	regLoaded     = desc("keyreg_registry_last_load_success_timestamp_seconds", "Unix time at which the registry in use was loaded.")
)

// targetDescs are the series of each target (with a target label when
// there are several); registryDescs the exporter's own.
var (
	// snapshotDescs are a complete audit's, encoded once per audit;
	// statusDescs are its status, collected by every scrape.
	snapshotDescs = []*prometheus.Desc{
		familyKeys, familyNoTTL, familyBytes, familyWithFinding, familyTTL, findings,
		ownerKeys, ownerNoTTL, ownerBytes, ownerWithFinding,
		unregKeys, unregNoTTL, unregBytes,
		scanKeys, scanRate, scanVanished, scanNodes, scanSampled,
		// The channel reads' (channels.go).
		channelLive, channelSubscribers, channelFindings, unregChannels, unregChannelSubs,
		channelPatterns, channelNodes, channelSkipped, channelReplicas, publishCalls, busPublishSent, busPublishRecv,
	}
	statusDescs = []*prometheus.Desc{
		auditSuccess, auditPartial, auditDuration, auditLastOK, auditRunning, auditInterval, auditsTotal,
		channelSuccess, channelPartial, channelNotChecked, channelLastOK,
	}
	targetDescs   = append(slices.Clone(snapshotDescs), statusDescs...)
	registryDescs = []*prometheus.Desc{regErrors, regLoaded}
	allDescs      = append(slices.Clone(targetDescs), registryDescs...)
)

// ttlUpper are the upper bounds, in seconds, of audit.TTLBuckets after
// "none": <1m, <1h, <1d, <7d, <30d (and >=30d in +Inf).
var ttlUpper = [...]float64{60, 3600, 86400, 7 * 86400, 30 * 86400}

// snapshot is the metrics of one complete audit, built once.
type snapshot struct {
	metrics []prometheus.Metric
}

// label makes a value safe as a label value: valid UTF-8 (client_golang
// refuses anything else), control characters written as Go escapes (as
// audit --format prometheus writes them: /metrics is read in terminals),
// and at most maxLabelBytes, cut at a rune.
func label(s string) string {
	s = cutLabel(strings.ToValidUTF8(s, "\uFFFD"))
	if p := render.Printable(s); p != s { // escapes lengthen it: cut again
		s = cutLabel(p)
	}
	return s
}

// cutLabel cuts s at maxLabelBytes, at a rune, marked with "…".
func cutLabel(s string) string {
	if len(s) <= maxLabelBytes {
		return s
	}
	n := maxLabelBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// gauge is a const gauge; desc and labels are ours, so it cannot fail
// (label values went through label).
func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func counter(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

// newSnapshot builds the metrics of rep. Its series are bounded by the
// registry (families, owners, rules) and by maxGroups, never by the
// keyspace.
func newSnapshot(rep *audit.Report, maxGroups int) *snapshot {
	var ms []prometheus.Metric
	owner := map[string]string{}
	for _, f := range rep.Families {
		if f == nil {
			continue
		}
		fam, own := label(f.Name), label(f.Owner)
		owner[f.Name] = own
		ms = append(ms,
			gauge(familyKeys, float64(f.Keys), fam, own),
			gauge(familyNoTTL, float64(f.Keys-f.WithTTL), fam, own),
			gauge(familyWithFinding, float64(f.Findings), fam, own))
		if f.MemoryKeys > 0 {
			ms = append(ms, gauge(familyBytes, float64(f.Memory), fam, own))
		}
		ms = append(ms, ttlHistogram(&f.TTL, fam, own))
	}
	for _, f := range rep.Findings {
		// A channel finding is the channel snapshot's (channels.go).
		if f == nil || f.Suppressed || f.Severity <= diag.Off || f.Channel != "" {
			continue
		}
		ms = append(ms, gauge(findings, float64(f.Count), label(f.Family), owner[f.Family], label(f.Rule), f.Severity.String()))
	}
	for _, o := range rep.Owners {
		if o == nil {
			continue
		}
		own := label(o.Name)
		ms = append(ms,
			gauge(ownerKeys, float64(o.Keys), own),
			gauge(ownerNoTTL, float64(o.Keys-o.WithTTL), own),
			gauge(ownerWithFinding, float64(o.Findings), own))
		if o.MemoryKeys > 0 {
			ms = append(ms, gauge(ownerBytes, float64(o.Memory), own))
		}
	}
	ms = append(ms, unregistered(&rep.Unregistered, maxGroups)...)
	s := rep.Scan
	rate := s.KeysPerSec
	if math.IsNaN(rate) || math.IsInf(rate, 0) {
		rate = 0
	}
	ms = append(ms,
		gauge(scanKeys, float64(s.Keys)),
		gauge(scanRate, rate),
		gauge(scanVanished, float64(s.Vanished)),
		gauge(scanNodes, float64(s.Nodes)),
		gauge(scanSampled, float64(s.Sampled)))
	return &snapshot{metrics: ms}
}

// ttlHistogram is a family's TTL histogram as a Prometheus histogram of
// the keys that have a TTL.
func ttlHistogram(h *audit.TTLHistogram, fam, own string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(ttlUpper))
	var cum uint64
	for i, up := range ttlUpper {
		cum += uint64(max(h[i+1], 0))
		buckets[up] = cum
	}
	count := cum + uint64(max(h[len(h)-1], 0))
	return prometheus.MustNewConstHistogram(familyTTL, count, math.NaN(), buckets, fam, own)
}

// groupRow is one exported group's sums.
type groupRow struct {
	name                string
	keys, noTTL, memory int64
	measured            bool
}

// unregistered exports the largest maxGroups prefix groups and sums the
// rest, and the keys over the audit's own group cap, as group="other". A
// group whose label would be "other", or the same as a larger group's
// once clipped, is folded into the one with that label, so that no series
// repeats.
func unregistered(u *audit.UnregisteredReport, maxGroups int) []prometheus.Metric {
	var rows []*groupRow
	at := map[string]*groupRow{}
	var keys, noTTL, memory int64
	for _, g := range u.Groups {
		if g == nil {
			continue
		}
		name := label(g.Prefix)
		r := at[name]
		if r == nil {
			if name == OtherGroup || len(rows) == maxGroups {
				continue
			}
			r = &groupRow{name: name}
			at[name] = r
			rows = append(rows, r)
		}
		r.keys += g.Keys
		r.noTTL += g.Keys - g.WithTTL
		r.memory += g.Memory
		r.measured = r.measured || g.MemoryKeys > 0
		keys += g.Keys
		noTTL += g.Keys - g.WithTTL
		memory += g.Memory
	}
	other := &groupRow{name: OtherGroup,
		keys:     max(u.Keys-keys, 0),
		noTTL:    max(u.Keys-u.WithTTL-noTTL, 0),
		memory:   max(u.Memory-memory, 0),
		measured: u.MemoryKeys > 0,
	}
	rows = append(rows, other)
	ms := make([]prometheus.Metric, 0, 3*len(rows))
	for _, r := range rows {
		ms = append(ms, gauge(unregKeys, float64(r.keys), r.name), gauge(unregNoTTL, float64(r.noTTL), r.name))
		if r.measured {
			ms = append(ms, gauge(unregBytes, float64(r.memory), r.name))
		}
	}
	return ms
}

// snapshotCollector hands out one snapshot, for its encoding. It
// describes nothing (unchecked), so that one registry takes the snapshots
// of every target, each under its target label.
type snapshotCollector struct{ s *snapshot }

func (c snapshotCollector) Describe(chan<- *prometheus.Desc) {}

func (c snapshotCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.s.metrics {
		ch <- m
	}
}

// collector hands out a target's audit status, the part of its series
// that changes between audits: a scrape reads memory only.
type collector struct {
	e *Exporter
	t *target
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range statusDescs {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	e, t := c.e, c.t
	st := &t.st
	st.mu.Lock()
	defer st.mu.Unlock()
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	ch <- gauge(auditSuccess, b(st.success))
	ch <- gauge(auditPartial, b(st.partial))
	ch <- gauge(auditDuration, st.duration.Seconds())
	ch <- gauge(auditRunning, b(st.running))
	ch <- gauge(auditInterval, e.o.Interval.Seconds())
	if !st.lastSuccess.IsZero() {
		ch <- gauge(auditLastOK, unixSeconds(st.lastSuccess))
	}
	for _, r := range [...]string{"success", "partial", "error"} {
		ch <- counter(auditsTotal, float64(st.audits[r]), r)
	}
	if cs := st.ch; cs.attempted {
		ch <- gauge(channelSuccess, b(cs.success))
		ch <- gauge(channelPartial, b(!cs.success))
		ch <- gauge(channelNotChecked, float64(cs.notChecked))
		if !cs.lastSuccess.IsZero() {
			ch <- gauge(channelLastOK, unixSeconds(cs.lastSuccess))
		}
	}
}

// registryCollector is the registry watcher's state.
type registryCollector struct{ e *Exporter }

func (c registryCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range registryDescs {
		ch <- d
	}
}

func (c registryCollector) Collect(ch chan<- prometheus.Metric) {
	st := &c.e.regSt
	st.mu.Lock()
	defer st.mu.Unlock()
	ch <- counter(regErrors, float64(st.loadErrors))
	ch <- gauge(regLoaded, unixSeconds(st.lastLoadOK))
}

func unixSeconds(t time.Time) float64 {
	return float64(t.UnixNano()) / 1e9
}
