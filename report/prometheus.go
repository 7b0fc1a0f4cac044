package report

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/render"
)

// Prometheus prints an audit report as gauges in the Prometheus text
// exposition format, for the node_exporter textfile collector.
const Prometheus Format = "prometheus"

// prometheusFormat is gauges for the node_exporter textfile collector.
var prometheusFormat = renderer{
	name: Prometheus,
	help: "gauges for the node_exporter textfile collector",
	audit: buffered(func(b *bytes.Buffer, r *audit.Report, c *audit.Comparison, _ Options) error {
		writeAuditPrometheus(b, r, c)
		return nil
	}),
}

// promMetric is one metric family of the exposition format: all gauges.
type promMetric struct {
	name, help string
	samples    []promSample
}

type promSample struct {
	labels [][2]string // name, value
	value  float64
}

// promLabel escapes a label value per the exposition format. Key names and
// other text first get Go escapes for non-printable bytes, because label
// values must be valid UTF-8.
var promLabel = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// promHelp escapes HELP text.
var promHelp = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

// writeAuditPrometheus prints r as gauges in the text exposition format, for
// the node_exporter textfile collector. Families without samples are left
// out; samples are sorted by their label values.
func writeAuditPrometheus(b *bytes.Buffer, r *audit.Report, c *audit.Comparison) {
	keys := promMetric{name: "keyreg_keys", help: "Keys of a registry family found by the last audit."}
	withTTL := promMetric{name: "keyreg_keys_with_ttl", help: "Keys of a registry family that have a TTL."}
	memory := promMetric{name: "keyreg_memory_bytes", help: "Summed MEMORY USAGE of the keys of a registry family, when measured."}
	for _, f := range r.Families {
		if f == nil {
			continue
		}
		l := [][2]string{{"family", f.Name}, {"owner", f.Owner}}
		keys.samples = append(keys.samples, promSample{l, float64(f.Keys)})
		withTTL.samples = append(withTTL.samples, promSample{l, float64(f.WithTTL)})
		if f.MemoryKeys > 0 {
			memory.samples = append(memory.samples, promSample{l, float64(f.Memory)})
		}
	}

	findings := promMetric{name: "keyreg_findings", help: "Keys an active audit finding fired on, by rule, family and severity."}
	chFindings := promMetric{name: "keyreg_channel_findings", help: "Live channels an active channel audit finding fired on, by rule, channel (or prefix) and severity."}
	for _, f := range r.Findings {
		if f == nil || f.Suppressed || f.Severity <= diag.Off {
			continue
		}
		if f.Channel != "" {
			chFindings.samples = append(chFindings.samples, promSample{
				[][2]string{{"rule", f.Rule}, {"channel", f.Channel}, {"severity", f.Severity.String()}}, float64(f.Count),
			})
			continue
		}
		findings.samples = append(findings.samples, promSample{
			[][2]string{{"rule", f.Rule}, {"family", f.Family}, {"severity", f.Severity.String()}}, float64(f.Count),
		})
	}

	unreg := promMetric{name: "keyreg_unregistered_keys", help: "Keys that match no family, by inferred prefix (largest groups only)."}
	unregTTL := promMetric{name: "keyreg_unregistered_keys_with_ttl", help: "Keys that match no family and have a TTL, by inferred prefix (largest groups only)."}
	unregMem := promMetric{name: "keyreg_unregistered_memory_bytes", help: "Summed MEMORY USAGE of keys that match no family, by inferred prefix (largest groups only), when measured."}
	for _, g := range r.Unregistered.Groups {
		if g != nil {
			l := [][2]string{{"prefix", g.Prefix}}
			unreg.samples = append(unreg.samples, promSample{l, float64(g.Keys)})
			unregTTL.samples = append(unregTTL.samples, promSample{l, float64(g.WithTTL)})
			// Absent, never 0, where nothing was measured.
			if g.MemoryKeys > 0 {
				unregMem.samples = append(unregMem.samples, promSample{l, float64(g.Memory)})
			}
		}
	}

	single := func(name, help string, v float64) promMetric {
		return promMetric{name: name, help: help, samples: []promSample{{nil, v}}}
	}
	partial := 0.0
	if r.Partial {
		partial = 1
	}
	metrics := []promMetric{
		keys, withTTL, memory, findings, chFindings, unreg, unregTTL, unregMem,
		single("keyreg_unregistered_other_keys", "Keys that match no family and fell outside the largest prefix groups.", float64(r.Unregistered.Other)),
		single("keyreg_audit_keys_scanned", "Distinct keys the last audit examined.", float64(r.Scan.Keys)),
		single("keyreg_audit_unregistered_keys", "Keys that match no family.", float64(r.Unregistered.Keys)),
		single("keyreg_audit_vanished_keys", "Keys deleted between SCAN and the probe.", float64(r.Scan.Vanished)),
		single("keyreg_audit_duration_seconds", "How long the last audit took.", r.Scan.Duration.Seconds()),
		single("keyreg_audit_partial", "1 when the last audit did not cover the whole keyspace, else 0.", partial),
	}
	notChecked := promMetric{name: "keyreg_audit_rule_not_checked", help: "1 for each key rule the last audit left unchecked on some keys (their values or lengths were not read; see the notes)."}
	for _, id := range r.Scan.NotChecked {
		notChecked.samples = append(notChecked.samples, promSample{[][2]string{{"rule", id}}, 1})
	}
	metrics = append(metrics, notChecked)
	if ch := r.Channels; ch != nil {
		subs := promMetric{name: "keyreg_channel_subscribers", help: "Subscribers of the live channels of each channel declaration, summed over every node."}
		live := promMetric{name: "keyreg_channel_live", help: "Live channels (classic and sharded) of each channel declaration."}
		for _, d := range ch.Declared {
			l := [][2]string{{"channel", d.Name}, {"mode", d.Mode}}
			subs.samples = append(subs.samples, promSample{l, float64(d.Subscribers)})
			live.samples = append(live.samples, promSample{l, float64(d.Live)})
		}
		unregCh := promMetric{name: "keyreg_unregistered_channels", help: "Live channels of no channel declaration, by prefix."}
		for _, g := range ch.Unregistered {
			unregCh.samples = append(unregCh.samples, promSample{[][2]string{{"prefix", g.Prefix}}, float64(g.Channels)})
		}
		metrics = append(metrics, subs, live, unregCh,
			single("keyreg_channel_nodes_not_checked", "Nodes whose PUBSUB the last audit could not read.", float64(len(ch.NotChecked))))
		// The fan-out estimate: absent, never 0, when there is none.
		if f := ch.FanOut; f != nil && f.Estimate != nil {
			e := f.Estimate
			metrics = append(metrics,
				single("keyreg_channel_publish_per_second", "Classic PUBLISH commands per second over the last audit's window (cmdstat_publish), summed over every cluster node.", e.PublishedPerSecond),
				single("keyreg_channel_bus_messages_per_second", "Cluster bus messages per second the classic PUBLISH commands cost (cluster_stats_messages_publish_sent), summed over every node.", e.BusMessagesPerSecond),
				single("keyreg_channel_bus_bytes_per_second_min", "A lower bound of the cluster bus bytes per second of classic PUBLISH: bus messages times the header and lengths (channel names and payloads not counted).", e.BusBytesPerSecondMin),
				single("keyreg_channel_fanout_window_seconds", "The window the last audit estimated the Pub/Sub fan-out over.", f.WindowSeconds))
		}
	}
	if c != nil {
		metrics = append(metrics,
			single("keyreg_baseline_new_findings", "Baseline entries (rule and family, or unregistered prefix) the last audit found that the baseline lacks.", float64(len(c.New))),
			single("keyreg_baseline_unchanged_findings", "Baseline entries the last audit found again.", float64(len(c.Unchanged))))
		if c.ResolvedNote == "" {
			metrics = append(metrics, single("keyreg_baseline_resolved_findings", "Baseline entries the last audit no longer found.", float64(len(c.Resolved))))
		}
	}
	if !r.Started.IsZero() {
		end := r.Started.Add(r.Scan.Duration)
		metrics = append(metrics, single("keyreg_audit_last_run_timestamp_seconds",
			"Unix time at which the last audit finished.", float64(end.Unix())+float64(end.Nanosecond())/1e9))
	}

	for _, m := range metrics {
		if len(m.samples) == 0 {
			continue
		}
		slices.SortStableFunc(m.samples, func(a, b promSample) int {
			for i := range min(len(a.labels), len(b.labels)) {
				if c := cmp.Compare(a.labels[i][1], b.labels[i][1]); c != 0 {
					return c
				}
			}
			return 0
		})
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s gauge\n", m.name, promHelp.Replace(m.help), m.name)
		for _, s := range m.samples {
			b.WriteString(m.name)
			if len(s.labels) > 0 {
				b.WriteString("{")
				for i, l := range s.labels {
					if i > 0 {
						b.WriteString(",")
					}
					fmt.Fprintf(b, `%s="%s"`, l[0], promLabel.Replace(render.Printable(l[1])))
				}
				b.WriteString("}")
			}
			fmt.Fprintf(b, " %s\n", promValue(s.value))
		}
	}
}

// promValue formats a sample value: integers without an exponent, NaN and
// infinities as the format spells them.
func promValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
