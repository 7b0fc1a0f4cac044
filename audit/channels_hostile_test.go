package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
