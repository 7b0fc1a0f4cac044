package audit

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// TestSocketIOCaptureAuditsClean is the bar of the preset channels: the
// Pub/Sub state a real socket.io + @socket.io/redis-adapter run left on
// Redis (testdata/frameworks/socket.io.channels.txt, captured by
// scripts/capture/capture-socket.io.sh), audited against a registry of
// the socket.io preset alone, has no finding. Without the preset, every
// captured channel is unregistered: the audit does judge them.
func TestSocketIOCaptureAuditsClean(t *testing.T) {
	node := socketIOCapture(t)
	const preset = `version: 1
owners: {team: {contact: team}}
families: []
presets:
  - use: socket.io
    owner: team
    with: {namespaces: ["/", "/chat"]}
`
	reg := parseCaptureRegistry(t, preset)
	rep := Channels(reg, []source.NodeChannels{node})
	if len(rep.Findings) != 0 || len(rep.Partial) != 0 {
		t.Errorf("the socket.io capture against its preset: %d findings, partial %v:\n%+v", len(rep.Findings), rep.Partial, rep.Findings)
	}
	var live int
	for _, lc := range rep.Channels {
		if lc.Channel == "" {
			t.Errorf("captured channel %q matches no preset channel", lc.Name)
		}
		live++
	}
	if live != len(node.Classic) || live == 0 {
		t.Errorf("%d live channels audited, want the %d captured", live, len(node.Classic))
	}

	bare := parseCaptureRegistry(t, "version: 1\nowners: {team: {contact: team}}\nfamilies: []\n")
	rep = Channels(bare, []source.NodeChannels{node})
	n := 0
	for _, f := range rep.Findings {
		if f.Rule == RuleChannelUnregistered {
			n += f.Count
		}
	}
	if n != len(node.Classic) {
		t.Errorf("without the preset: %d unregistered channels, want %d", n, len(node.Classic))
	}
}

func parseCaptureRegistry(t *testing.T, src string) *registry.Registry {
	t.Helper()
	reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// socketIOCapture reads the capture as one node's PUBSUB state: each
// SUBSCRIBEd channel with its subscribers, and the PSUBSCRIBEd globs as
// NUMPAT.
func socketIOCapture(t *testing.T) source.NodeChannels {
	t.Helper()
	f, err := os.Open("../testdata/frameworks/socket.io.channels.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	node := source.NodeChannels{Node: "capture", Primary: true, PublishCalls: -1, BusPublishSent: -1, BusPublishReceived: -1}
	subs := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		kind, name, ok := strings.Cut(sc.Text(), " ")
		switch {
		case !ok || strings.HasPrefix(kind, "#"):
		case kind == "subscribed":
			if subs[name] == 0 {
				node.Classic = append(node.Classic, source.ChannelCount{Name: name})
			}
			subs[name]++
		case kind == "psubscribed":
			node.NumPat++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for i := range node.Classic {
		node.Classic[i].Subscribers = int64(subs[node.Classic[i].Name])
	}
	if len(node.Classic) == 0 || node.NumPat == 0 {
		t.Fatalf("the capture has %d subscribed channels and %d patterns", len(node.Classic), node.NumPat)
	}
	return node
}
