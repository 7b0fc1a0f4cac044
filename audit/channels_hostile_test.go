package audit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/source"
)

// TestChannelMessagesBounded: a live channel's name is anyone's, and a
// 100 KB name with no separator is its own prefix group. Every message
// and note the channel audit writes about it stays bounded, whatever the
// name's length (the examples are clipped to MaxKeyBytes already).
func TestChannelMessagesBounded(t *testing.T) {
	huge := strings.Repeat("A", 100_000)
	reg := parseCaptureRegistry(t, "version: 1\nfamilies: []\nchannels:\n  - name: room\n    pattern: \"v1:room:{{id:int}}\"\n    mode: sharded\n")
	nodes := []source.NodeChannels{{
		Node: "a", Primary: true, Slots: [][2]int{{0, 1}},
		Classic:      []source.ChannelCount{{Name: huge, Subscribers: 1}},
		Sharded:      []source.ChannelCount{{Name: "v1:room:{" + huge + "}", Subscribers: 1, Slot: 9000}},
		PublishCalls: -1, BusPublishSent: -1, BusPublishReceived: -1,
	}}
	cr := Channels(reg, nodes)
	rep := &Report{Version: ReportVersion}
	AddChannels(rep, reg, cr)
	const bound = 4 * MaxKeyBytes
	if len(rep.Findings) == 0 {
		t.Fatal("no findings")
	}
	for _, f := range rep.Findings {
		if len(f.Message) > bound || len(f.Channel) > bound {
			t.Errorf("%s: message of %d bytes, channel of %d, want at most %d", f.Rule, len(f.Message), len(f.Channel), bound)
		}
	}
	if len(rep.Channels.Misplaced) != 1 {
		t.Fatalf("misplaced %d, want 1", len(rep.Channels.Misplaced))
	}
	for _, m := range rep.Channels.Misplaced {
		if len(m) > bound {
			t.Errorf("misplaced note of %d bytes, want at most %d", len(m), bound)
		}
	}
}

// TestBaselineChannelNotUTF8: a live channel's name is any bytes, and so
// is the prefix group channel-unregistered is about. A baseline keyreg
// writes of such a finding loads back, and the same audit compares
// unchanged against it (the file used to hold the name with U+FFFD, whose
// fingerprint no longer matched: every later audit refused the baseline).
func TestBaselineChannelNotUTF8(t *testing.T) {
	reg := parseCaptureRegistry(t, "version: 1\nfamilies: []\n")
	nodes := []source.NodeChannels{{Node: "a", Primary: true,
		Classic:      []source.ChannelCount{{Name: "zz\x00\xffbad", Subscribers: 1}, {Name: "ok:1", Subscribers: 1}},
		PublishCalls: -1, BusPublishSent: -1, BusPublishReceived: -1}}
	rep := &Report{Version: ReportVersion, Registry: "keys.yaml"}
	AddChannels(rep, reg, Channels(reg, nodes))
	path := filepath.Join(t.TempDir(), "baseline.json")
	if err := WriteBaseline(path, NewBaseline(rep)); err != nil {
		t.Fatal(err)
	}
	b, err := LoadBaseline(path)
	if err != nil {
		t.Fatalf("a baseline keyreg wrote does not load: %v", err)
	}
	c := Compare(rep, b)
	if len(c.New) != 0 || len(c.Resolved) != 0 || len(c.Unchanged) != 2 {
		t.Errorf("new %v, resolved %v, unchanged %d; want 2 unchanged", c.New, c.Resolved, len(c.Unchanged))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"channel_base64": "enoA/2JhZA=="`) {
		t.Errorf("baseline lacks the channel's bytes:\n%s", data)
	}
}

// TestChannelGroupsOfClippedPrefixes: two live channels of 300-byte names
// without a separator that agree on their first MaxKeyBytes bytes are one
// prefix group once clipped, as unregistered keys are: two groups (and two
// findings) under one printed prefix were two identical Prometheus series,
// which a scrape refuses, and two baseline entries of one fingerprint.
func TestChannelGroupsOfClippedPrefixes(t *testing.T) {
	long := strings.Repeat("B", 300)
	reg := parseCaptureRegistry(t, "version: 1\nfamilies: []\n")
	nodes := []source.NodeChannels{{Node: "a", Primary: true,
		Classic:      []source.ChannelCount{{Name: long + "1", Subscribers: 1}, {Name: long + "2", Subscribers: 2}},
		PublishCalls: -1, BusPublishSent: -1, BusPublishReceived: -1}}
	rep := &Report{Version: ReportVersion, Registry: "keys.yaml"}
	AddChannels(rep, reg, Channels(reg, nodes))
	if n := len(rep.Channels.Unregistered); n != 1 {
		t.Fatalf("%d unregistered groups, want 1", n)
	}
	if g := rep.Channels.Unregistered[0]; g.Channels != 2 || g.Subscribers != 3 {
		t.Errorf("group %d channels, %d subscribers; want 2, 3", g.Channels, g.Subscribers)
	}
	var fs []*Finding
	for _, f := range rep.Findings {
		if f.Rule == RuleChannelUnregistered {
			fs = append(fs, f)
		}
	}
	if len(fs) != 1 || fs[0].Count != 2 || !strings.HasPrefix(fs[0].Message, "2 live channels") {
		for _, f := range fs {
			t.Logf("%s %d %.40q", f.Rule, f.Count, f.Message)
		}
		t.Errorf("%d channel-unregistered findings, want 1 of 2 channels", len(fs))
	}
	if es := NewBaseline(rep).Findings; len(es) != 1 {
		t.Errorf("%d baseline entries, want 1", len(es))
	}
}

// TestChannelNamedStar: a live channel may be named "*", which is also
// the name of the group of channels past the prefix cap (OtherChannels).
// Under the cap, it is a group like any other, and its message does not
// claim more prefixes than the report keeps.
func TestChannelNamedStar(t *testing.T) {
	reg := parseCaptureRegistry(t, "version: 1\nfamilies: []\n")
	nodes := []source.NodeChannels{{Node: "a", Primary: true,
		Classic:      []source.ChannelCount{{Name: "*", Subscribers: 1}, {Name: "tmp:1", Subscribers: 1}},
		PublishCalls: -1, BusPublishSent: -1, BusPublishReceived: -1}}
	cr := Channels(reg, nodes)
	for _, f := range cr.Findings {
		if f.Channel == OtherChannels && f.Message != `1 live channels under "*" match no channel in the registry` {
			t.Errorf("channel * : %q", f.Message)
		}
	}
}

// scanFails is a source whose key scan fails at once.
type scanFails struct{}

func (scanFails) ScanKeys(context.Context, source.Planner, func([]source.KeyInfo) error) (source.Stats, error) {
	return source.Stats{Partial: true}, errors.New("node 10.0.0.1:7000 failed")
}

func (scanFails) SampleEach(context.Context, []source.KeyInfo, int, int64, func([]int, []payload.Sample, []error)) {
}

func (scanFails) Touch() source.TouchState { return source.TouchState{} }

// TestChannelsNotAuditedNoted: when the key scan fails, the channel phase
// does not run, and the report says the channels were not audited rather
// than leaving out their section without a word.
func TestChannelsNotAuditedNoted(t *testing.T) {
	reg := parseCaptureRegistry(t, "version: 1\nfamilies: []\nchannels:\n  - name: news\n    pattern: v1:news\n")
	read := func(context.Context) ([]source.NodeChannels, error) {
		t.Error("the channels were read after the scan failed")
		return nil, nil
	}
	rep, err := Run(context.Background(), scanFails{}, reg, Options{Channels: read})
	if err == nil || rep == nil || !rep.Partial {
		t.Fatalf("err %v, report %+v: want a partial report and the error", err, rep)
	}
	if rep.Channels != nil || !strings.Contains(strings.Join(rep.Scan.Notes, "\n"), "channels not audited") {
		t.Errorf("channels %+v, notes %q: want no section and a note", rep.Channels, rep.Scan.Notes)
	}
}
