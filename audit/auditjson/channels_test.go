package auditjson

import (
	"bytes"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
)

// TestChannelNamesNotUTF8RoundTrip: a live channel's name is any bytes. The
// json report shows an unregistered group's prefix and a finding's channel
// as valid UTF-8 and keeps their exact bytes in prefix_base64 and
// channel_base64, which Read gives back, so that a merge or a baseline of
// the report names the same channels.
func TestChannelNamesNotUTF8RoundTrip(t *testing.T) {
	const name = "tmp\xff\xfe:"
	rep := &audit.Report{Version: audit.ReportVersion, Target: "redis://x",
		Channels: &audit.ChannelsReport{Nodes: 1, Declared: []*audit.ChannelDeclReport{},
			Unregistered: []*audit.ChannelGroup{{Prefix: name, Channels: 2, Subscribers: 3, Examples: []string{name + "a"}}}},
		Findings: []*audit.Finding{{Rule: audit.RuleChannelUnregistered, Severity: diag.Error, Channel: name, Count: 2, Message: "2 live channels", Examples: []audit.Example{}}},
	}
	var b bytes.Buffer
	if err := Encode(&b, rep, nil, Tool{Name: "keyreg", Version: "test"}); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	for _, want := range []string{`"prefix_base64": "dG1w//46"`, `"channel_base64": "dG1w//46"`} {
		if !strings.Contains(doc, want) {
			t.Errorf("the json report lacks %s", want)
		}
	}
	if strings.Contains(doc, "\xff") {
		t.Error("the json report holds bytes that are not UTF-8")
	}
	got, err := Read(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if g := got.Channels.Unregistered; len(g) != 1 || g[0].Prefix != name || g[0].PrefixBase64 != "" {
		t.Errorf("read back the group %+v, want prefix %q", g, name)
	}
	var ch []string
	for _, f := range got.Findings {
		ch = append(ch, f.Channel)
	}
	if len(ch) != 1 || ch[0] != name {
		t.Errorf("read back the finding channels %q, want %q", ch, name)
	}
}
