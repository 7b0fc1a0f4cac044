package serve

import (
	"strings"
	"testing"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/source"
)

// TestLabelsPrintable: label values come from live names (unregistered
// channel prefixes here), and someone reads /metrics with curl in a
// terminal: no control byte reaches the exposition. They are written with
// Go escapes, as audit --format prometheus writes them, so that a series
// of the same prefix has the same label in both.
func TestLabelsPrintable(t *testing.T) {
	reg := channelsRegistry(t)
	hostile := "evil\x1b[31mred\a\r\n:x"
	nodes := []source.NodeChannels{{Node: "n\x1b1", Primary: true,
		Classic:      []source.ChannelCount{{Name: hostile, Subscribers: 1}, {Name: "\u009b2J:y", Subscribers: 1}},
		PublishCalls: 1, BusPublishSent: -1, BusPublishReceived: -1}}
	mfs := gather(t, newChannelSnapshot(reg, audit.Channels(reg, nodes), nodes, 20))
	found := false
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				v := lp.GetValue()
				for _, r := range v {
					if r < 0x20 || (r >= 0x7f && r < 0xa0) {
						t.Errorf("%s{%s=%q}: a control character %U", name, lp.GetName(), v, r)
						break
					}
				}
				if v == `evil\x1b[31mred\a\r\n:` {
					found = true
				}
			}
		}
	}
	if !found {
		t.Error("no series of the escaped prefix evil\\x1b[31mred\\a\\r\\n:")
	}
	if got := label("bad\xff:"); got != "bad\uFFFD:" || !strings.HasPrefix(label(strings.Repeat("a", 1000)), "aaa") {
		t.Errorf("label(bad\\xff:) = %q", got)
	}
}
