package report

import (
	"reflect"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/audit/auditjson"
)

// TestFanOutRoundTrip: the estimate survives the json round trip, and a
// document whose fan_out contradicts itself is refused by the reader.
func TestFanOutRoundTrip(t *testing.T) {
	r := channelsReport()
	js, _, _ := renderAudit(t, JSON, r)
	back, err := auditjson.Read(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Channels.FanOut, r.Channels.FanOut) {
		t.Errorf("fan_out read back as %+v, want %+v", back.Channels.FanOut, r.Channels.FanOut)
	}
	for _, bad := range []struct{ from, to string }{
		{`"status": "estimated"`, `"status": "guessed"`},
		{`"status": "estimated"`, `"status": "unknown"`}, // an estimate without its status
		{`"published_per_second": 200`, `"published_per_second": -200`},
	} {
		doc := strings.Replace(js, bad.from, bad.to, 1)
		if doc == js {
			t.Fatalf("%q is not in the json", bad.from)
		}
		if _, err := auditjson.Read(strings.NewReader(doc)); err == nil || !strings.Contains(err.Error(), "fan_out") {
			t.Errorf("%s: read %v, want a fan_out error", bad.to, err)
		}
	}
}

// TestFanOutUnknown renders a report whose fan-out is unknown in every
// audit format: none shows a figure, the human formats and the finding say
// why, and a hostile reason is escaped.
func TestFanOutUnknown(t *testing.T) {
	r := channelsReport()
	for _, f := range r.Findings {
		if i := strings.Index(f.Message, "; fan-out"); i >= 0 {
			f.Message = f.Message[:i]
		}
	}
	audit.SetFanOut(r, &audit.FanOutReport{Status: audit.FanOutUnknown,
		Reason: "fan-out unknown: counters not read on 10.0.0.6:7001: CLUSTER INFO: NOPERM <script>x</script>\n::error::y (the fan-out estimate needs +info and +cluster|info in the ACL)"})
	for _, f := range AuditFormats {
		out, _, _ := renderAudit(t, f, r)
		for _, no := range []string{"bus_messages_per_second", "keyreg_channel_publish_per_second", "keyreg_channel_bus", "bus messages/s", "\n::error::y"} {
			if strings.Contains(out, no) {
				t.Errorf("%s: an unknown fan-out shows %q", f, no)
			}
		}
		if f == HTML && strings.Contains(out, "<script>x") {
			t.Errorf("html: the reason is not escaped")
		}
		if f == Prometheus {
			continue // no finding messages: the gauges are absent
		}
		if !strings.Contains(out, "fan-out unknown") || !strings.Contains(out, "cluster|info") {
			t.Errorf("%s does not say the fan-out is unknown and why:\n%s", f, out)
		}
	}
	for _, f := range []Format{Text, Table, Markdown, HTML} {
		if out, _, _ := renderAudit(t, f, r); !strings.Contains(strings.ToLower(out), "classic pub/sub fan-out unknown: counters not read") {
			t.Errorf("%s has no fan-out note", f)
		}
	}
}
