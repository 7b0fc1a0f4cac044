package audit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/keyreg/keyreg/source"
)

// The fan-out estimate's states (FanOutReport.Status).
const (
	// FanOutEstimated: both readings of every node were taken; Estimate is set.
	FanOutEstimated = "estimated"
	// FanOutNoBus: not a Redis Cluster, so no message crosses a cluster bus.
	FanOutNoBus = "no-bus"
	// FanOutSkipped: the estimate was not taken (a window of 0, or a window
	// too short while no classic channel was subscribed, so not waited out).
	FanOutSkipped = "skipped"
	// FanOutUnknown: a node's counters could not be read in one of the
	// readings; the cost is unknown, never 0.
	FanOutUnknown = "unknown"
)

// DefaultFanOutWindow is the shortest window keyreg audit estimates the
// fan-out over. A tiny keyspace audits in milliseconds, too short a time
// for a rate: at 1.5 s a publisher of 10 messages/s is counted as 15 ± 1
// messages, within 7%, and the audit of a cluster with classic channels
// waits at most that long.
const DefaultFanOutWindow = 1500 * time.Millisecond

// MaxFanOutWindow bounds the minimum window a caller may ask for: an audit
// never waits longer than this for the estimate.
const MaxFanOutWindow = 5 * time.Minute

// Cluster bus header sizes of a PUBLISH message, from the servers' source.
// Redis (7.0 to 7.4, src/cluster.h and cluster_legacy.h) sends every
// PUBLISH with the full clusterMsg header, which carries the sender's
// 16384-bit slot bitmap (offsetof(clusterMsg, data) == 2256), followed by
// two 32-bit lengths, the channel and the payload. Valkey 8 sends a
// 16-byte clusterMsgLight header to peers that support it.
const (
	BusHeaderRedis       = 2256
	BusHeaderValkeyLight = 16
	busPublishLengths    = 8 // channel_len and message_len
)

// FanOutReport is the cluster bus cost of classic Pub/Sub as the audit
// measured it: two readings of every node's publish counters, one when the
// audit started and one at its channel phase (after a wait, when the audit
// was shorter than the minimum window and a classic channel is subscribed).
type FanOutReport struct {
	Status string `json:"status"` // FanOutEstimated, FanOutNoBus, FanOutSkipped or FanOutUnknown
	// Reason says why there is no estimate, or what it assumes.
	Reason string `json:"reason,omitempty"`
	// WindowSeconds is the time between the two readings; WaitedSeconds
	// the part of it the audit waited out after its own work.
	WindowSeconds float64 `json:"window_seconds,omitempty"`
	WaitedSeconds float64 `json:"waited_seconds,omitempty"`
	// WindowStart and WindowEnd are when the two readings started
	// (RFC 3339, UTC, nanoseconds); empty in a merged report.
	WindowStart string `json:"window_start,omitempty"`
	WindowEnd   string `json:"window_end,omitempty"`
	// Estimate is set when Status is FanOutEstimated.
	Estimate *FanOutEstimate `json:"estimate,omitempty"`
}

// FanOutEstimate is the fan-out over the window, summed over the nodes.
type FanOutEstimate struct {
	Nodes int `json:"nodes"`
	// Published is the PUBLISH commands the nodes ran (cmdstat_publish),
	// classic Pub/Sub to any channel, registered or not.
	Published          int64   `json:"published"`
	PublishedPerSecond float64 `json:"published_per_second"`
	// BusMessages is the messages the nodes sent each other over the
	// cluster bus for them (cluster_stats_messages_publish_sent): about
	// Published × (Nodes − 1).
	BusMessages          int64   `json:"bus_messages"`
	BusMessagesPerSecond float64 `json:"bus_messages_per_second"`
	// BusHeaderBytes is the cluster bus header assumed per message (the
	// smallest of the nodes', when they differ), and BusBytesPerSecondMin
	// the bus bytes per second it gives: a lower bound, since channel
	// names and payloads come on top and Redis does not count them.
	BusHeaderBytes       int     `json:"bus_header_bytes"`
	BusBytesPerSecondMin float64 `json:"bus_bytes_per_second_min"`
}

// fanOutPlan is what runChannels needs for the estimate.
type fanOutPlan struct {
	before  []source.NodeChannels
	err     error // the first reading failed
	started time.Time
	window  time.Duration // the minimum window; 0 skips
	read    func(context.Context) ([]source.NodeChannels, error)
	waiting func(time.Duration) // Options.FanOutWaiting
}

// firstReading takes the audit's first counter reading, when o asks for
// an estimate.
func firstReading(ctx context.Context, o Options) *fanOutPlan {
	if o.Channels == nil || o.ChannelCounters == nil {
		return nil
	}
	p := &fanOutPlan{window: min(max(o.FanOutWindow, 0), MaxFanOutWindow), read: o.ChannelCounters, waiting: o.FanOutWaiting}
	if p.window == 0 {
		return p
	}
	p.started = time.Now()
	p.before, p.err = o.ChannelCounters(ctx)
	return p
}

// fanOut is the estimate of the run, from the plan's first reading and the
// channel phase's reading nodes, taken at read. It waits out the rest of
// the minimum window only on a cluster with a classic channel subscribed.
func fanOut(ctx context.Context, p *fanOutPlan, nodes []source.NodeChannels, read time.Time) *FanOutReport {
	cluster, classic := false, false
	for _, n := range nodes {
		cluster = cluster || len(n.Slots) > 0
		for _, c := range n.Classic {
			classic = classic || c.Subscribers > 0
		}
	}
	switch {
	case !cluster:
		return &FanOutReport{Status: FanOutNoBus, Reason: "not a Redis Cluster: a PUBLISH is not copied to other nodes, there is no cluster bus"}
	case p == nil:
		return &FanOutReport{Status: FanOutSkipped, Reason: "not estimated: the publish counters were not read"}
	case p.window == 0:
		return &FanOutReport{Status: FanOutSkipped, Reason: "not estimated: the fan-out window is 0"}
	case p.err != nil:
		return &FanOutReport{Status: FanOutUnknown, Reason: clip("fan-out unknown: the first counter reading failed: "+p.err.Error(), maxDetailBytes, true)}
	}
	if !EstimateFanOut(p.before, p.before, 1).Known {
		// The first reading already lacks a counter: no wait can help.
		return &FanOutReport{Status: FanOutUnknown, Reason: clip("fan-out unknown: "+unreadCounters(p.before, nil), maxDetailBytes, true)}
	}
	after := nodes
	var waited time.Duration
	if elapsed := read.Sub(p.started); elapsed < p.window {
		if !classic {
			return &FanOutReport{Status: FanOutSkipped, Reason: fmt.Sprintf("not estimated: no classic channel is subscribed, and the audit took %s, under the %s minimum window (not waited out)", seconds(elapsed), seconds(p.window))}
		}
		waited = p.window - elapsed
		if p.waiting != nil {
			p.waiting(waited)
		}
		t := time.NewTimer(waited)
		select {
		case <-ctx.Done():
			t.Stop()
			return &FanOutReport{Status: FanOutUnknown, Reason: "fan-out unknown: interrupted while waiting out the window"}
		case <-t.C:
		}
		read = time.Now()
		var err error
		if after, err = p.read(ctx); err != nil {
			return &FanOutReport{Status: FanOutUnknown, Reason: clip("fan-out unknown: the second counter reading failed: "+err.Error(), maxDetailBytes, true)}
		}
	}
	secs := read.Sub(p.started).Seconds()
	fr := &FanOutReport{
		WindowSeconds: secs, WaitedSeconds: waited.Seconds(),
		WindowStart: p.started.UTC().Format(time.RFC3339Nano), WindowEnd: read.UTC().Format(time.RFC3339Nano),
	}
	fo := EstimateFanOut(p.before, after, secs)
	if !fo.Known {
		fr.Status = FanOutUnknown
		fr.Reason = clip("fan-out unknown: "+unreadCounters(p.before, after), maxDetailBytes, true)
		return fr
	}
	est := &FanOutEstimate{
		Nodes: fo.Nodes, Published: fo.Published, PublishedPerSecond: fo.PublishedPerSecond,
		BusMessages: fo.BusSent, BusMessagesPerSecond: fo.BusSentPerSecond,
	}
	// Bytes per node: its sent messages × its header.
	prev := map[string]source.NodeChannels{}
	for _, n := range p.before {
		prev[n.Node] = n
	}
	for _, n := range after {
		if n.Skipped != "" {
			continue
		}
		h := busHeaderBytes(n.Server, n.Version)
		if est.BusHeaderBytes == 0 || h < est.BusHeaderBytes {
			est.BusHeaderBytes = h
		}
		sent := max(n.BusPublishSent-prev[n.Node].BusPublishSent, 0)
		if n.BusPublishSent < prev[n.Node].BusPublishSent {
			sent = n.BusPublishSent
		}
		if secs > 0 {
			est.BusBytesPerSecondMin += float64(sent) * float64(h+busPublishLengths) / secs
		}
	}
	fr.Status, fr.Estimate = FanOutEstimated, est
	fr.Reason = fmt.Sprintf("an estimate over %s: bus bytes assume a %d-byte cluster bus header and 8 bytes of lengths per message; channel names and payloads come on top", seconds(time.Duration(secs*float64(time.Second))), est.BusHeaderBytes)
	return fr
}

// unreadCounters says which nodes' counters a reading lacks, and why.
func unreadCounters(before, after []source.NodeChannels) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range [][]source.NodeChannels{before, after} {
		for _, n := range r {
			if seen[n.Node] || len(out) >= maxChannelExamples || n.Skipped != "" {
				continue
			}
			why := ""
			switch {
			case n.Err != nil:
				why = n.Err.Error()
			case n.CountersErr != nil:
				why = n.CountersErr.Error()
			case n.PublishCalls < 0 || n.BusPublishSent < 0:
				why = "no publish counters"
			default:
				continue
			}
			seen[n.Node] = true
			out = append(out, n.Node+": "+why)
		}
	}
	if len(out) == 0 {
		return "the nodes changed between the two readings"
	}
	return "counters not read on " + strings.Join(out, "; ")
}

// busHeaderBytes is the cluster bus header of a PUBLISH a node of this
// server and version sends: Valkey 8 and later may send the light header,
// so its lower bound is that; Redis, and an unknown server, the full one
// unless the server is Valkey.
func busHeaderBytes(server, version string) int {
	if server == "valkey" {
		major, _, _ := strings.Cut(version, ".")
		if n, err := strconv.Atoi(major); err != nil || n >= 8 {
			return BusHeaderValkeyLight
		}
		return BusHeaderRedis
	}
	if server == "" {
		return BusHeaderValkeyLight // unknown: the smallest header is the bound
	}
	return BusHeaderRedis
}

// seconds formats d for a reason: "1.5s", "30ms".
func seconds(d time.Duration) string {
	if d >= time.Second {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Millisecond).String()
}

// fanOutMessage is the estimate as a channel-classic-on-cluster finding
// says it.
func fanOutMessage(fr *FanOutReport) string {
	if fr == nil {
		return ""
	}
	if fr.Estimate == nil {
		if strings.HasPrefix(fr.Reason, "fan-out ") {
			return "; " + fr.Reason
		}
		return "; fan-out " + fr.Reason
	}
	e := fr.Estimate
	over := "summed over the merged reports"
	if fr.WindowStart != "" {
		over = "over the audit's " + seconds(time.Duration(fr.WindowSeconds*float64(time.Second)))
	}
	return fmt.Sprintf("; fan-out of all classic PUBLISH %s: %s messages/s published, %s bus messages/s across %d nodes, at least %s of cluster bus traffic (estimate)",
		over, Rate(e.PublishedPerSecond), Rate(e.BusMessagesPerSecond), e.Nodes, ByteRate(e.BusBytesPerSecondMin))
}

// Rate formats a per-second rate: "0", "0.4", "12", "1.2k", "3.4M".
func Rate(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case v >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case v >= 10 || v == 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
}

// ByteRate formats bytes per second in decimal units: "880 B/s", "2.3 MB/s".
func ByteRate(v float64) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 1, 64) + " GB/s"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + " MB/s"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + " kB/s"
	default:
		return strconv.FormatFloat(v, 'f', 0, 64) + " B/s"
	}
}
