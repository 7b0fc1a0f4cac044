package audit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/source"
)

// clusterNodes is a reading of three cluster masters, with one classic
// subscriber when subscribed, and the counters given per node.
func clusterNodes(subscribed bool, publish, sent [3]int64) []source.NodeChannels {
	var out []source.NodeChannels
	for i := range 3 {
		n := source.NodeChannels{Node: "10.0.0.1:700" + string(rune('0'+i)), Primary: true, Slots: [][2]int{{i * 5000, i*5000 + 4999}},
			PublishCalls: publish[i], BusPublishSent: sent[i], BusPublishReceived: 0, Server: "redis", Version: "7.0.15"}
		if subscribed && i == 1 {
			n.Classic = []source.ChannelCount{{Name: "news", Subscribers: 1}}
		}
		out = append(out, n)
	}
	return out
}

func TestFanOutStates(t *testing.T) {
	ctx := context.Background()
	before := clusterNodes(false, [3]int64{10, 0, 0}, [3]int64{20, 0, 0})
	noRead := func(context.Context) ([]source.NodeChannels, error) {
		t.Fatal("read again without a wait")
		return nil, nil
	}
	long := &fanOutPlan{before: before, started: time.Now().Add(-3 * time.Second), window: time.Second, read: noRead}

	// Standalone: no bus.
	if fr := fanOut(ctx, long, []source.NodeChannels{{Node: "a", Primary: true, PublishCalls: 5, BusPublishSent: -1}}, time.Now()); fr.Status != FanOutNoBus || fr.Estimate != nil {
		t.Errorf("standalone: %+v", fr)
	}
	// A window longer than the minimum: the channel phase's reading is
	// the second, and the bytes assume Redis's full header.
	fr := fanOut(ctx, long, clusterNodes(true, [3]int64{110, 0, 0}, [3]int64{220, 0, 0}), long.started.Add(2*time.Second))
	if fr.Status != FanOutEstimated || fr.Estimate == nil || fr.WaitedSeconds != 0 {
		t.Fatalf("estimate: %+v", fr)
	}
	if e := fr.Estimate; e.Published != 100 || e.BusMessages != 200 || e.PublishedPerSecond != 50 || e.BusMessagesPerSecond != 100 ||
		e.BusHeaderBytes != BusHeaderRedis || e.BusBytesPerSecondMin != 100*(BusHeaderRedis+8) {
		t.Errorf("estimate %+v", *e)
	}
	// Too short, no classic subscriber: no wait, no estimate.
	short := &fanOutPlan{before: before, started: time.Now(), window: time.Hour, read: noRead}
	if fr := fanOut(ctx, short, clusterNodes(false, [3]int64{11, 0, 0}, [3]int64{22, 0, 0}), time.Now()); fr.Status != FanOutSkipped || !strings.Contains(fr.Reason, "no classic channel") {
		t.Errorf("short, unsubscribed: %+v", fr)
	}
	// Too short with a classic subscriber: the wait is taken, then a third
	// reading; a cancelled wait gives unknown, not zero.
	reads := 0
	var told time.Duration
	waitPlan := &fanOutPlan{before: before, started: time.Now(), window: 50 * time.Millisecond, read: func(context.Context) ([]source.NodeChannels, error) {
		reads++
		return clusterNodes(true, [3]int64{20, 0, 0}, [3]int64{40, 0, 0}), nil
	}, waiting: func(d time.Duration) { told = d }}
	fr = fanOut(ctx, waitPlan, clusterNodes(true, [3]int64{11, 0, 0}, [3]int64{22, 0, 0}), time.Now())
	if reads != 1 || fr.Status != FanOutEstimated || fr.Estimate.Published != 10 || fr.WindowSeconds < 0.05 || fr.WaitedSeconds <= 0 {
		t.Errorf("waited: %d reads, %+v", reads, fr)
	}
	if told <= 0 || told > 50*time.Millisecond || told.Seconds() != fr.WaitedSeconds {
		t.Errorf("told of a wait of %s, waited %vs", told, fr.WaitedSeconds)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	waitPlan.started, waitPlan.window = time.Now(), time.Hour
	if fr := fanOut(cctx, waitPlan, clusterNodes(true, [3]int64{}, [3]int64{}), time.Now()); fr.Status != FanOutUnknown || fr.Estimate != nil {
		t.Errorf("cancelled wait: %+v", fr)
	}
	// A node without CLUSTER INFO: unknown at once, saying why.
	denied := clusterNodes(true, [3]int64{10, 0, 0}, [3]int64{20, -1, 0})
	denied[1].CountersErr = errors.New("CLUSTER INFO: NOPERM (the fan-out estimate needs +info and +cluster|info in the ACL)")
	deniedPlan := &fanOutPlan{before: denied, started: time.Now(), window: time.Hour, read: noRead}
	if fr := fanOut(ctx, deniedPlan, denied, time.Now()); fr.Status != FanOutUnknown || fr.Estimate != nil || !strings.Contains(fr.Reason, "+cluster|info") {
		t.Errorf("denied: %+v", fr)
	}
	// The first reading failed.
	if fr := fanOut(ctx, &fanOutPlan{err: errors.New("boom"), window: time.Second}, clusterNodes(true, [3]int64{}, [3]int64{}), time.Now()); fr.Status != FanOutUnknown || !strings.Contains(fr.Reason, "boom") {
		t.Errorf("failed first reading: %+v", fr)
	}
	// Window 0.
	if fr := fanOut(ctx, &fanOutPlan{}, clusterNodes(true, [3]int64{}, [3]int64{}), time.Now()); fr.Status != FanOutSkipped {
		t.Errorf("window 0: %+v", fr)
	}
}

func TestFanOutBusReset(t *testing.T) {
	before := clusterNodes(true, [3]int64{100, 0, 0}, [3]int64{200, 0, 0})
	after := clusterNodes(true, [3]int64{5, 0, 0}, [3]int64{10, 0, 0}) // CONFIG RESETSTAT in between
	fo := EstimateFanOut(before, after, 1)
	if !fo.Known || fo.Published != 5 || fo.BusSent != 10 {
		t.Errorf("after a reset: %+v", fo)
	}
}

func TestBusHeaderBytes(t *testing.T) {
	for _, c := range []struct {
		server, version string
		want            int
	}{
		{"redis", "7.0.15", BusHeaderRedis}, {"redis", "7.4.1", BusHeaderRedis},
		{"valkey", "7.2.5", BusHeaderRedis}, {"valkey", "8.0.1", BusHeaderValkeyLight},
		{"", "", BusHeaderValkeyLight},
	} {
		if got := busHeaderBytes(c.server, c.version); got != c.want {
			t.Errorf("%s %s: %d, want %d", c.server, c.version, got, c.want)
		}
	}
}

// Merging sums the estimates of separate targets, and refuses to add two
// of the same target, or one whose traffic is unknown.
func TestMergeFanOut(t *testing.T) {
	est := func(target string, pub float64, status string) *Report {
		r := &Report{Version: "1", Target: target, Findings: []*Finding{}, Channels: &ChannelsReport{Declared: []*ChannelDeclReport{}, Unregistered: []*ChannelGroup{}}}
		f := &FanOutReport{Status: status, Reason: "why " + target, WindowSeconds: pub / 10, WindowStart: "x"}
		if status == FanOutEstimated {
			f.Estimate = &FanOutEstimate{Nodes: 3, Published: int64(pub), PublishedPerSecond: pub, BusMessages: int64(2 * pub), BusMessagesPerSecond: 2 * pub, BusHeaderBytes: BusHeaderRedis, BusBytesPerSecondMin: 2 * pub * 2264}
		}
		r.Channels.FanOut = f
		return r
	}
	m, err := Merge([]*Report{est("redis://a", 100, FanOutEstimated), est("redis://b", 50, FanOutEstimated), est("redis://c", 0, FanOutNoBus)}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := m.Channels.FanOut
	if f.Status != FanOutEstimated || f.Estimate.Nodes != 6 || f.Estimate.PublishedPerSecond != 150 || f.Estimate.BusMessagesPerSecond != 300 || f.WindowSeconds != 5 || f.WindowStart != "" {
		t.Errorf("merged separate targets: %+v %+v", f, f.Estimate)
	}
	for _, c := range [][]*Report{
		{est("redis://a", 100, FanOutEstimated), est("redis://a", 100, FanOutEstimated)},
		{est("redis://a", 100, FanOutEstimated), est("redis://b", 0, FanOutUnknown)},
		{est("redis://b", 0, FanOutSkipped), est("redis://a", 100, FanOutEstimated)},
	} {
		m, err := Merge(c, MergeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if f := m.Channels.FanOut; f.Status != FanOutUnknown || f.Estimate != nil {
			t.Errorf("merge of %s and %s: %+v, want unknown", c[0].Target, c[1].Target, f)
		}
	}
}
