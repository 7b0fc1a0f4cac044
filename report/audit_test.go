package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/audit/auditjson"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/render/rendertest"
)

// partialReport is sampleReport cut short by --max-keys.
func partialReport() *audit.Report {
	r := rendertest.SampleReport()
	r.Partial = true
	r.PartialReason = "--max-keys 12500 reached"
	return r
}

// emptyReport is a clean audit of an empty keyspace without memory figures.
func emptyReport() *audit.Report {
	return &audit.Report{
		Version:  audit.ReportVersion,
		Registry: "keys.yaml",
		Target:   "redis://localhost:6379",
		Mode:     "standalone",
		Started:  time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Families: []*audit.FamilyReport{{Name: "user-session", Owner: "identity", Position: "keys.yaml:12:5"}},
		Owners:   []*audit.OwnerReport{{Name: "identity", Families: []string{"user-session"}}},
	}
}

// channelsReport is emptyReport with a channel audit: declarations,
// unregistered channel groups (one with a hostile name), findings of the
// channel rules, and a node whose PUBSUB was refused, which makes it
// partial.
// channelNamesNotUTF8 is a channel audit whose unregistered channels
// names are not UTF-8, so its json has prefix_base64 and channel_base64.
func channelNamesNotUTF8() *audit.Report {
	r := emptyReport()
	r.Channels = &audit.ChannelsReport{Nodes: 1, Declared: []*audit.ChannelDeclReport{},
		Unregistered: []*audit.ChannelGroup{{Prefix: "bin\xff:", Channels: 1, Subscribers: 1, Examples: []string{"bin\xff:1"}}}}
	r.Findings = []*audit.Finding{{Rule: "channel-unregistered", Severity: diag.Error, Channel: "bin\xff:", Position: "keys.yaml:1:1",
		Pos: diag.Pos{File: "keys.yaml", Line: 1, Col: 1}, Count: 1, Message: "1 live channels match no channel", Examples: []audit.Example{{Key: "bin\xff:1"}}}}
	r.Totals.Errors = 1
	return r
}

func channelsReport() *audit.Report {
	r := emptyReport()
	r.Partial = true
	r.PartialReason = "channel audit: 1 of 3 nodes not read (10.0.0.7:7002: NOPERM)"
	r.Channels = &audit.ChannelsReport{
		Nodes:                3,
		PatternSubscriptions: 2,
		Declared: []*audit.ChannelDeclReport{
			{Name: "chat-room", Mode: "classic", Owner: "chat", Position: "keys.yaml:20:5", Live: 2, Subscribers: 7, Nodes: 3},
			{Name: "orders", Mode: "sharded", Owner: "shop", Position: "keys.yaml:26:5"},
		},
		Unregistered: []*audit.ChannelGroup{
			{Prefix: "tmp:", Channels: 2, Subscribers: 3, Examples: []string{"tmp:a", "tmp:<b>\n|x"}},
		},
		Misplaced:  []string{"10.0.0.5:7000: 1 sharded subscribers of \"orders:{x}:1\", whose slot 77 it does not serve"},
		NotChecked: []string{"10.0.0.7:7002: NOPERM this user has no permissions to run the 'pubsub|channels' command (the channel audit needs +pubsub and +cluster|info in the ACL)"},
	}
	r.Findings = []*audit.Finding{
		{Rule: "channel-unregistered", Severity: diag.Error, Channel: "tmp:", Position: "keys.yaml:1:1", Pos: diag.Pos{File: "keys.yaml", Line: 1, Col: 1}, Count: 2, Message: `2 live channels under "tmp:" match no channel in the registry`,
			Examples: []audit.Example{{Key: "tmp:a"}, {Key: "tmp:<b>\n|x"}}},
		{Rule: "channel-classic-on-cluster", Severity: diag.Warn, Channel: "chat-room", Position: "keys.yaml:20:5", Pos: diag.Pos{File: "keys.yaml", Line: 20, Col: 5}, Count: 2,
			Message:  `channel "chat-room": 2 classic channels on a cluster of 3 nodes: every PUBLISH to them is sent to every node over the cluster bus`,
			Examples: []audit.Example{{Key: "chat:room:1"}}},
		{Rule: "channel-no-subscribers", Severity: diag.Info, Channel: "orders", Position: "keys.yaml:26:5", Pos: diag.Pos{File: "keys.yaml", Line: 26, Col: 5}, Count: 1,
			Message: `channel "orders" has no subscriber on any of the 3 nodes`, Examples: []audit.Example{{Key: "orders:{shop}:*"}}},
	}
	r.Totals.Errors, r.Totals.Warnings, r.Totals.Infos = 2, 2, 1
	audit.SetFanOut(r, &audit.FanOutReport{
		Status: audit.FanOutEstimated, Reason: "an estimate over 2.0s: bus bytes assume a 2256-byte cluster bus header and 8 bytes of lengths per message; channel names and payloads come on top",
		WindowSeconds: 2, WaitedSeconds: 1.5, WindowStart: "2026-03-01T12:00:00Z", WindowEnd: "2026-03-01T12:00:02Z",
		Estimate: &audit.FanOutEstimate{Nodes: 3, Published: 400, PublishedPerSecond: 200, BusMessages: 800, BusMessagesPerSecond: 400, BusHeaderBytes: 2256, BusBytesPerSecondMin: 905600},
	})
	return r
}

var auditCases = []struct {
	name   string
	report func() *audit.Report
}{
	{"full", rendertest.SampleReport},
	{"partial", partialReport},
	{"empty", emptyReport},
	{"channels", channelsReport},
}

// renderAudit runs Audit and returns stdout, the summary and the step summary.
func renderAudit(t *testing.T, f Format, r *audit.Report) (out, summary, step string) {
	t.Helper()
	var stdout, sum, stepSum bytes.Buffer
	o := Options{
		Tool:        Tool{Name: "keyreg", Version: "1.2.0", InformationURI: "https://github.com/keyreg/keyreg"},
		Summary:     &sum,
		StepSummary: &stepSum,
	}
	if err := Audit(&stdout, f, r, o); err != nil {
		t.Fatalf("Audit(%s): %v", f, err)
	}
	return stdout.String(), sum.String(), stepSum.String()
}

func TestAuditGolden(t *testing.T) {
	for _, tc := range auditCases {
		for _, f := range AuditFormats {
			t.Run(tc.name+"/"+string(f), func(t *testing.T) {
				out, summary, step := renderAudit(t, f, tc.report())
				golden(t, fmt.Sprintf("audit.%s.%s.golden", tc.name, f), out)
				switch f {
				case Text:
					golden(t, "audit."+tc.name+".text-summary.golden", summary)
				case GitHub:
					golden(t, "audit."+tc.name+".github-step-summary.golden", step)
				}
				if f != GitHub && step != "" {
					t.Errorf("%s wrote a step summary", f)
				}
				if f != Text && summary != "" {
					t.Errorf("%s wrote a summary: %q", f, summary)
				}
			})
		}
	}
}

func TestAuditDeterministic(t *testing.T) {
	for _, f := range AuditFormats {
		a, _, sa := renderAudit(t, f, rendertest.SampleReport())
		b, _, sb := renderAudit(t, f, rendertest.SampleReport())
		if a != b || sa != sb {
			t.Errorf("%s: two renderings of the same report differ", f)
		}
	}
}

func TestAuditDoesNotMutate(t *testing.T) {
	r := rendertest.SampleReport()
	for _, f := range AuditFormats {
		renderAudit(t, f, r)
	}
	if !reflect.DeepEqual(r, rendertest.SampleReport()) {
		t.Errorf("Audit changed the report")
	}
}

// fromJSON turns the json document back into an audit.Report with
// reportOf, checking the fields that only repeat others.
func fromJSON(t *testing.T, doc auditjson.Document) *audit.Report {
	t.Helper()
	r, err := doc.Report()
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(doc.Scan.DurationNS).Seconds() != doc.Scan.DurationSeconds {
		t.Errorf("duration_seconds %v disagrees with duration_ns %d", doc.Scan.DurationSeconds, doc.Scan.DurationNS)
	}
	for i, f := range doc.Families {
		if math.Abs(f.TTLPercent-r.Families[i].TTLPercent()) > 1e-9 {
			t.Errorf("family %s: ttl_percent %v", f.Name, f.TTLPercent)
		}
	}
	return r
}

func TestAuditJSONRoundTrip(t *testing.T) {
	for _, tc := range auditCases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.report()
			out, _, _ := renderAudit(t, JSON, want)
			var doc auditjson.Document
			dec := json.NewDecoder(strings.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("json does not decode into the documented shape: %v\n%s", err, out)
			}
			if doc.Version != audit.ReportVersion || doc.Tool.Name != "keyreg" || doc.Tool.Version != "1.2.0" {
				t.Errorf("version %q, tool %+v", doc.Version, doc.Tool)
			}
			got := fromJSON(t, doc)
			// Family positions are json:"-" and not repeated in the document.
			for _, f := range want.Families {
				f.Pos = diag.Pos{}
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				t.Errorf("round trip lost information:\n got %s\nwant %s", g, w)
			}
			// Encoding the decoded document again gives the same bytes.
			var again bytes.Buffer
			if err := encode(&again, doc); err != nil {
				t.Fatal(err)
			}
			if again.String() != out {
				t.Errorf("re-encoded document differs:\n%s\nwant\n%s", again.String(), out)
			}
		})
	}
}

func TestAuditJSONEmptyLists(t *testing.T) {
	r := emptyReport()
	r.Families, r.Owners = nil, nil
	out, _, _ := renderAudit(t, JSON, r)
	for _, want := range []string{`"findings": []`, `"families": []`, `"owners": []`, `"groups": []`, `"notes": []`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	// Memory never measured is null, never 0; nothing else is null.
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "null") && !strings.Contains(line, `"memory_bytes": null`) && !strings.Contains(line, `"memory_percent": null`) {
			t.Errorf("output has a null other than unmeasured memory: %s", line)
		}
	}
	if !strings.Contains(out, `"memory_bytes": null`) || regexp.MustCompile(`"memory_bytes": \d`).MatchString(out) {
		t.Errorf("memory_bytes not null although nothing was measured:\n%s", out)
	}
}

func TestAuditJSONFields(t *testing.T) {
	out, _, _ := renderAudit(t, JSON, rendertest.SampleReport())
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if got := get(doc, "findings", 0, "severity"); got != "error" {
		t.Errorf("first finding severity = %v, want the string error", got)
	}
	if got := get(doc, "scan", "duration_seconds"); got != 3.25 {
		t.Errorf("duration_seconds = %v, want 3.25", got)
	}
	if got := get(doc, "scan", "duration_ns"); got != 3.25e9 {
		t.Errorf("duration_ns = %v", got)
	}
	g := get(doc, "unregistered", "groups", 2)
	if b64, _ := get(g, "prefix_base64").(string); b64 != base64.StdEncoding.EncodeToString([]byte(rendertest.BinaryKey)) {
		t.Errorf("binary prefix_base64 = %q", b64)
	}
	if get(doc, "unregistered", "groups", 0, "prefix_base64") != nil {
		t.Errorf("prefix_base64 printed for a UTF-8 prefix")
	}
	if got := get(doc, "families", 1, "memory_bytes"); got != float64(1572864) {
		t.Errorf("family memory_bytes = %v", got)
	}
}

// promLine matches one line of the text exposition format.
var (
	promComment  = regexp.MustCompile(`^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$`)
	promSampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)` +
		`(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*")*\})?` +
		` (\S+)$`)
)

func TestAuditPrometheus(t *testing.T) {
	for _, tc := range auditCases {
		t.Run(tc.name, func(t *testing.T) {
			out, _, _ := renderAudit(t, Prometheus, tc.report())
			if !strings.HasSuffix(out, "\n") || !utf8.ValidString(out) {
				t.Fatalf("output must be UTF-8 and end in a newline:\n%q", out)
			}
			help, typ := map[string]bool{}, map[string]string{}
			series := map[string]bool{}
			samples := map[string]int{}
			for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if m := promComment.FindStringSubmatch(line); m != nil {
					if samples[m[2]] > 0 {
						t.Errorf("line %d: %s after samples of %s", i+1, m[1], m[2])
					}
					if m[1] == "HELP" {
						help[m[2]] = true
					} else {
						typ[m[2]] = m[3]
					}
					continue
				}
				m := promSampleRE.FindStringSubmatch(line)
				if m == nil {
					t.Errorf("line %d does not parse: %q", i+1, line)
					continue
				}
				if !help[m[1]] || typ[m[1]] != "gauge" {
					t.Errorf("line %d: sample of %s without # HELP and # TYPE gauge", i+1, m[1])
				}
				if _, err := strconv.ParseFloat(m[3], 64); err != nil {
					t.Errorf("line %d: value %q: %v", i+1, m[3], err)
				}
				if series[m[1]+m[2]] {
					t.Errorf("line %d: series repeated: %s", i+1, line)
				}
				series[m[1]+m[2]] = true
				samples[m[1]]++
			}
			for _, name := range []string{"keyreg_audit_keys_scanned", "keyreg_audit_vanished_keys",
				"keyreg_audit_duration_seconds", "keyreg_audit_partial", "keyreg_audit_last_run_timestamp_seconds", "keyreg_keys"} {
				if samples[name] == 0 {
					t.Errorf("no sample of %s", name)
				}
			}
			if tc.name == "channels" {
				for _, want := range []string{
					`keyreg_channel_findings{rule="channel-unregistered",channel="tmp:",severity="error"} 2`,
					`keyreg_channel_subscribers{channel="chat-room",mode="classic"} 7`,
					`keyreg_unregistered_channels{prefix="tmp:"} 2`,
					`keyreg_channel_nodes_not_checked 1`,
				} {
					if !strings.Contains(out, want+"\n") {
						t.Errorf("output lacks %s", want)
					}
				}
			}
			if tc.name == "empty" || tc.name == "channels" {
				return
			}
			for _, want := range []string{
				`keyreg_keys{family="user-session",owner="identity"} 10000`,
				`keyreg_keys_with_ttl{family="cart",owner="platform"} 1800`,
				`keyreg_memory_bytes{family="cart",owner="platform"} 1572864`,
				`keyreg_unregistered_memory_bytes{prefix="sidekiq:queue:"} 65536`,
				`keyreg_findings{rule="payload-schema",family="user-session",severity="error"} 12`,
				`keyreg_findings{rule="key-unregistered",family="",severity="info"} 160`,
				`keyreg_unregistered_keys{prefix="\\x00\\xffbin"} 8`,
				`keyreg_audit_duration_seconds 3.25`,
				`keyreg_audit_last_run_timestamp_seconds 1772366403.25`,
			} {
				if !strings.Contains(out, want+"\n") {
					t.Errorf("output lacks %s", want)
				}
			}
			// Memory never measured is absent, never 0.
			for _, absent := range []string{`keyreg_memory_bytes{family="feature-flags"`, `keyreg_unregistered_memory_bytes{prefix="tmp|x:"}`} {
				if strings.Contains(out, absent) {
					t.Errorf("unmeasured memory exported: %s", absent)
				}
			}
			if strings.Contains(out, `family="feature-flags",severity`) {
				t.Errorf("suppressed finding exported:\n%s", out)
			}
			wantPartial := "keyreg_audit_partial 0\n"
			if tc.name == "partial" {
				wantPartial = "keyreg_audit_partial 1\n"
			}
			if !strings.Contains(out, wantPartial) {
				t.Errorf("output lacks %q", wantPartial)
			}
		})
	}
}

func TestAuditPrometheusEscapesLabels(t *testing.T) {
	r := emptyReport()
	r.Unregistered.Groups = []*audit.Group{{Prefix: "a\"b\\c\nd:", Keys: 1}}
	out, _, _ := renderAudit(t, Prometheus, r)
	want := `keyreg_unregistered_keys{prefix="a\"b\\c\\nd:"} 1` + "\n"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !promComment.MatchString(line) && !promSampleRE.MatchString(line) {
			t.Errorf("line %d does not parse: %q", i+1, line)
		}
	}
}

func TestPromLabelEscaping(t *testing.T) {
	if got, want := promLabel.Replace("a\\b\"c\nd"), `a\\b\"c\nd`; got != want {
		t.Errorf("promLabel = %q, want %q", got, want)
	}
}

// mdPipes counts the unescaped | of a markdown table row.
func mdPipes(row string) int {
	n := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

func TestAuditMarkdownEscapes(t *testing.T) {
	out, _, _ := renderAudit(t, Markdown, rendertest.SampleReport())
	for _, want := range []string{
		`40 keys live longer than "max 30m" \| checkout writer`,
		"`\"tmp\\|x:\"`",
		"``\"tmp\\|x:`2`\"``",
		"`\"\\x00\\xffbin\"`",
		"| --- | --- | ---: |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %s:\n%s", want, out)
		}
	}
	// Every row of a table has as many cells as its header.
	lines := strings.Split(out, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") {
			continue
		}
		cols := mdPipes(lines[i])
		for i++; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
			if got := mdPipes(lines[i]); got != cols {
				t.Errorf("line %d has %d cell borders, header has %d: %s", i+1, got, cols, lines[i])
			}
		}
	}
}

func TestAuditTableRows(t *testing.T) {
	out, _, _ := renderAudit(t, Table, rendertest.SampleReport())
	for _, re := range []string{
		`│ user-session +│ identity +│ +10000 │ +5\.0 MiB │ +100\.0% │ +12 │`,
		`│ cart +│ platform +│ +2000 │ +1\.5 MiB │ +90\.0% │ +45 │`,
		`│ feature-flags +│ platform +│ +340 │ +- │ +0\.0% │ +0 │`,
		`│ platform +│ platform@example\.com +│ +2 │ +2340 │ ≥ 1\.5 MiB \(of 2000/2340 keys\) +│`,
		`│ "tmp\|x:" +│ 0, 3 +│ +30 │ +- │ +- │`,
		`│ platform +│ platform@example\.com +│ +2 │ +2340 │`,
		`│ error +│ payload-schema +│ user-session +│ +12/300 │`,
		`│ "\\x00\\xffbin" +│ - +│ +8 │`,
		`(?m)^scan: 1 node, 12500 keys, 3846 keys/s, 3\.25s, 3 vanished, 20 duplicates, 2 skipped, 400 sampled$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("table output lacks a match for %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, "ff:checkout") {
		t.Errorf("suppressed finding shown as active:\n%s", out)
	}
	// Memory is left out when no family measured it.
	out, _, _ = renderAudit(t, Table, emptyReport())
	if strings.Contains(out, "memory") {
		t.Errorf("memory column without measurements:\n%s", out)
	}
}

func TestAuditText(t *testing.T) {
	out, summary, _ := renderAudit(t, Text, rendertest.SampleReport())
	for _, want := range []string{
		"\nkeys.yaml:12:5: error: family \"user-session\": 12 of 300 sampled payloads fail the schema (e.g. \"v2:user:session:0b8e1c4e-5f1a-4d7e-9c1a-2f7e9d1b3a4c\"",
		"\nfamilies:\nfamily         owner     keys   memory   % ttl   keys with findings\nuser-session   identity  10000  5.0 MiB  100.0%  12\n",
		"\nfeature-flags  platform  340    -        0.0%    0\n",
		"  ≥ 1.5 MiB (of 2000/2340 keys)  ",
		"\n\"tmp|x:\"          0, 3  30    -         -         0.0%   ",
		"\nprefix            db    keys  memory    % memory  % ttl  examples\n",
		"\ntype    keys   size of   measured  p50 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "│┌─") {
		t.Errorf("text has box drawing:\n%s", out)
	}
	for i, line := range strings.Split(out, "\n") {
		if strings.TrimRight(line, " ") != line {
			t.Errorf("line %d has trailing spaces: %q", i+1, line)
		}
	}
	if want := "1 error, 2 warnings, 1 info, 1 suppressed\n"; summary != want {
		t.Errorf("summary = %q, want %q", summary, want)
	}
}

func TestAuditPartialBanner(t *testing.T) {
	for _, f := range []Format{Table, Text, Markdown, GitHub} {
		for _, tc := range auditCases {
			out, _, step := renderAudit(t, f, tc.report())
			all := out + step
			has := strings.Contains(all, "PARTIAL AUDIT: --max-keys 12500 reached")
			if want := tc.name == "partial"; has != want {
				t.Errorf("%s/%s: partial banner present = %v, want %v", tc.name, f, has, want)
			}
		}
	}
	out, _, _ := renderAudit(t, Markdown, partialReport())
	if !strings.Contains(out, "> [!WARNING]\n> PARTIAL AUDIT") {
		t.Errorf("markdown banner is not a warning blockquote:\n%s", out)
	}
	r := partialReport()
	r.PartialReason = ""
	out, _, _ = renderAudit(t, Text, r)
	if !strings.Contains(out, "PARTIAL AUDIT: the audit did not cover the whole keyspace") {
		t.Errorf("no banner without a reason:\n%s", out)
	}
}

// TestAuditPartialEveryFormat checks that every format tells a partial
// audit from a complete one, baseline or not: sarif through
// invocations[].executionSuccessful, json through partial, prometheus
// through keyreg_audit_partial, the text summary line, and the banner of
// the human formats.
func TestAuditPartialEveryFormat(t *testing.T) {
	reason := "" // the partial reason of the case under test
	says := map[Format]func(out, summary, step string) bool{
		Table:    func(out, _, _ string) bool { return strings.Contains(out, "PARTIAL AUDIT: "+reason) },
		Markdown: func(out, _, _ string) bool { return strings.Contains(out, "> [!WARNING]\n> PARTIAL AUDIT") },
		HTML: func(out, _, _ string) bool {
			return strings.Contains(out, `<p class="partial" role="alert">PARTIAL AUDIT: `+html.EscapeString(reason))
		},
		GitHub: func(out, _, step string) bool {
			return strings.HasPrefix(out, "::warning title=partial audit::PARTIAL AUDIT") && strings.Contains(step, "PARTIAL AUDIT")
		},
		Text: func(out, summary, _ string) bool {
			return strings.Contains(out, "PARTIAL AUDIT") && strings.HasSuffix(summary, " (partial audit)\n")
		},
		JSON:       func(out, _, _ string) bool { return strings.Contains(out, `"partial": true,`) },
		Prometheus: func(out, _, _ string) bool { return strings.Contains(out, "\nkeyreg_audit_partial 1\n") },
		JUnit: func(out, _, _ string) bool {
			return strings.Contains(out, `<error message="PARTIAL AUDIT: `+html.EscapeString(reason))
		},
		GitLab: func(out, _, _ string) bool { return strings.Contains(out, `"check_name": "partial-audit"`) },
		SARIF: func(out, _, _ string) bool {
			doc := decodeSARIF(t, out)
			ok, _ := get(doc, "runs", 0, "invocations", 0, "executionSuccessful").(bool)
			text, _ := get(doc, "runs", 0, "invocations", 0, "toolExecutionNotifications", 0, "message", "text").(string)
			level := get(doc, "runs", 0, "invocations", 0, "toolExecutionNotifications", 0, "level")
			if get(doc, "runs", 0, "invocations", 0, "executionSuccessful") == nil {
				t.Errorf("sarif: no invocations[0].executionSuccessful:\n%s", out)
			}
			return !ok && level == "error" && strings.Contains(text, "PARTIAL AUDIT: "+reason)
		},
	}
	for _, f := range AuditFormats {
		for _, tc := range auditCases {
			for _, base := range []bool{false, true} {
				r := tc.report()
				reason = r.PartialReason
				var out, sum, step bytes.Buffer
				o := Options{Summary: &sum, StepSummary: &step}
				var c *audit.Comparison
				if base {
					c = audit.Compare(r, audit.NewBaseline(rendertest.SampleReport()))
				}
				if err := AuditBaseline(&out, f, r, c, o); err != nil {
					t.Fatal(err)
				}
				if got, want := says[f](out.String(), sum.String(), step.String()), r.Partial; got != want {
					t.Errorf("%s/%s (baseline %v): says partial = %v, want %v\n%s", tc.name, f, base, got, want, out.String())
				}
			}
		}
	}
}

func TestAuditEscapesKeys(t *testing.T) {
	r := rendertest.SampleReport()
	r.Findings[0].Message += "\x1b[31m"
	r.Findings[0].Examples[0].Detail = "bad\rdetail"
	r.Unregistered.Groups[0].Prefix = "evil\x1b]0;title\x07:"
	for _, f := range AuditFormats {
		out, _, step := renderAudit(t, f, r)
		for name, s := range map[string]string{"output": out, "step summary": step} {
			if !utf8.ValidString(s) {
				t.Errorf("%s %s is not valid UTF-8", f, name)
			}
			for i, c := range []byte(s) {
				if c < 0x20 && c != '\n' || c == 0x7f {
					t.Errorf("%s %s has control byte %#x at %d: %q", f, name, c, i, s[max(0, i-20):min(len(s), i+20)])
					break
				}
			}
		}
		if f == Table || f == Text || f == Markdown {
			if !strings.Contains(out, `\x00\xffbin`) {
				t.Errorf("%s does not show the binary key escaped", f)
			}
		}
	}
}

func TestAuditRedactsPasswords(t *testing.T) {
	r := rendertest.SampleReport()
	r.Target = "redis://default:hunter2@cache:6379"
	r.Partial, r.PartialReason = true, "node redis://:hunter2@10.0.0.2:6379 failed"
	r.Scan.Notes = []string{"sentinel_password=hunter2 rejected"}
	for _, f := range AuditFormats {
		out, _, step := renderAudit(t, f, r)
		if strings.Contains(out+step, "hunter2") {
			t.Errorf("%s prints the password:\n%s", f, out+step)
		}
	}
}

func TestAuditSARIF(t *testing.T) {
	out, _, _ := renderAudit(t, SARIF, rendertest.SampleReport())
	doc := decodeSARIF(t, out)
	validateSARIF(t, doc)
	if id := get(doc, "runs", 0, "automationDetails", "id"); id != "keyreg/audit/" {
		t.Errorf("automationDetails.id = %v, want keyreg/audit/", id)
	}
	results := sarifResults(t, doc)
	if len(results) != 5 {
		t.Fatalf("got %d results, want 5 (suppressed included)", len(results))
	}
	var suppressed int
	for _, res := range results {
		if get(res, "suppressions") != nil {
			suppressed++
		}
	}
	if suppressed != 1 {
		t.Errorf("got %d suppressed results, want 1", suppressed)
	}
	// A caller's own category wins.
	var b bytes.Buffer
	if err := Audit(&b, SARIF, rendertest.SampleReport(), Options{Automation: "keyreg/audit/prod/"}); err != nil {
		t.Fatal(err)
	}
	if id := get(decodeSARIF(t, b.String()), "runs", 0, "automationDetails", "id"); id != "keyreg/audit/prod/" {
		t.Errorf("automationDetails.id = %v, want keyreg/audit/prod/", id)
	}
}

func TestAuditGitHub(t *testing.T) {
	out, _, step := renderAudit(t, GitHub, rendertest.SampleReport())
	for _, want := range []string{
		"::error file=keys.yaml,line=12,col=5,title=payload-schema::family \"user-session\": 12 of 300 sampled payloads fail the schema",
		"::warning file=keys.yaml,line=30,col=5,title=ttl-exceeds::family \"cart\": ",
		"::notice file=keys.yaml,line=4,col=1,title=key-unregistered::160 keys match no family (e.g. \"\\x00\\xffbin\"",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("annotations lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ff:checkout") {
		t.Errorf("suppressed finding annotated:\n%s", out)
	}
	if !strings.HasPrefix(step, "## keyreg audit\n") || strings.Contains(step, "| Severity | Location |") {
		t.Errorf("step summary is not the audit report:\n%s", step)
	}
	// Without a step summary writer nothing else is written.
	var b bytes.Buffer
	if err := Audit(&b, GitHub, rendertest.SampleReport(), Options{}); err != nil {
		t.Fatal(err)
	}
	if b.String() != out {
		t.Errorf("annotations depend on the step summary writer:\n%s\nwant\n%s", b.String(), out)
	}
}

func TestAuditGitHubSeeSummary(t *testing.T) {
	r := rendertest.SampleReport()
	for i := range 12 {
		r.Findings = append(r.Findings, &audit.Finding{Rule: fmt.Sprintf("r%02d", i), Severity: diag.Error,
			Pos: diag.Pos{File: "keys.yaml", Line: 2}, Message: "m"})
	}
	out, _, _ := renderAudit(t, GitHub, r)
	if !strings.Contains(out, "::notice::3 more findings, see job summary\n") {
		t.Errorf("no overflow notice pointing at the job summary:\n%s", out)
	}
}

func TestAuditFormats(t *testing.T) {
	for _, f := range AuditFormats {
		got, err := ParseFormat(string(f), AuditFormats...)
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q, AuditFormats...) = %q, %v", f, got, err)
		}
	}
	var b bytes.Buffer
	err := Audit(&b, "xml", rendertest.SampleReport(), Options{})
	if err == nil || !strings.Contains(err.Error(), `unsupported format "xml" (want table, text, json, markdown, html, github, sarif, junit, gitlab or prometheus)`) {
		t.Errorf("err = %v", err)
	}
	if b.Len() != 0 {
		t.Errorf("wrote %q for an unknown format", b.String())
	}
	if err := Audit(&b, Text, nil, Options{}); err == nil {
		t.Errorf("nil report: no error")
	}
}

func TestAuditWriteErrors(t *testing.T) {
	for _, f := range AuditFormats {
		if err := Audit(failWriter{}, f, rendertest.SampleReport(), Options{}); !errors.Is(err, errWrite) {
			t.Errorf("%s: err = %v, want %v", f, err, errWrite)
		}
	}
	if err := Audit(&bytes.Buffer{}, GitHub, rendertest.SampleReport(), Options{StepSummary: failWriter{}}); !errors.Is(err, errWrite) {
		t.Errorf("step summary: err = %v", err)
	}
	if err := Audit(&bytes.Buffer{}, Text, rendertest.SampleReport(), Options{Summary: failWriter{}}); !errors.Is(err, errWrite) {
		t.Errorf("summary: err = %v", err)
	}
}

// docBlocks returns the fenced code blocks of docs/audit-report.md that
// open with the given info string.
func docBlocks(t *testing.T, info string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "audit-report.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	parts := strings.Split(string(b), "```")
	for i := 1; i < len(parts); i += 2 {
		if first, rest, _ := strings.Cut(parts[i], "\n"); first == info {
			blocks = append(blocks, rest)
		}
	}
	return blocks
}

func TestAuditDocs(t *testing.T) {
	blocks := docBlocks(t, "json")
	if len(blocks) != 1 {
		t.Fatalf("docs/audit-report.md has %d json examples, want 1", len(blocks))
	}
	var doc auditjson.Document
	dec := json.NewDecoder(strings.NewReader(blocks[0]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Errorf("the documented example does not decode into the json format: %v", err)
	}
	if doc.Version != audit.ReportVersion {
		t.Errorf("documented example has version %q, the report writes %q", doc.Version, audit.ReportVersion)
	}
	// Every key path of the json of full reports is documented in a table
	// row of its own, and every documented path is written.
	written := map[string]bool{}
	full := rendertest.SampleReport()
	full.Families[2].Preset = "celery"
	full.FleetTarget = "cache-eu-1" // an audit of one target of a fleet's list
	for _, rc := range []struct {
		r *audit.Report
		c *audit.Comparison
	}{
		{full, nil},
		{rendertest.SampleReport(), audit.Compare(rendertest.SampleReport(), audit.NewBaseline(emptyReport()))},
		{emptyReport(), audit.Compare(emptyReport(), audit.NewBaseline(rendertest.SampleReport()))},
		{partialReport(), audit.Compare(partialReport(), audit.NewBaseline(rendertest.SampleReport()))},
		{mergedReport(t), nil},
		{channelsReport(), nil},
		{channelNamesNotUTF8(), nil},
	} {
		var b bytes.Buffer
		if err := AuditBaseline(&b, JSON, rc.r, rc.c, Options{}); err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		jsonPaths(v, "", written)
	}
	documented := documentedPaths(t)
	for p := range written {
		if !documented[p] {
			t.Errorf("json path %q is not documented in docs/audit-report.md", p)
		}
	}
	for p := range documented {
		if !written[p] {
			t.Errorf("docs/audit-report.md documents %q, which no report writes", p)
		}
	}
	// The prometheus example shows lines the format really writes.
	out, _, _ := renderAudit(t, Prometheus, rendertest.SampleReport())
	var prom []string
	for _, b := range docBlocks(t, "") {
		if strings.HasPrefix(b, "# HELP") {
			prom = append(prom, b)
		}
	}
	if len(prom) != 1 {
		t.Fatalf("found %d prometheus examples, want 1", len(prom))
	}
	for _, line := range strings.Split(strings.TrimSuffix(prom[0], "\n"), "\n") {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("documented prometheus line is not in the output: %s", line)
		}
	}
}

// jsonPaths adds the key paths of v to paths: "scan.keys", "families[].dbs[].db".
func jsonPaths(v any, prefix string, paths map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			paths[p] = true
			jsonPaths(x, p, paths)
		}
	case []any:
		for _, x := range v {
			jsonPaths(x, prefix+"[]", paths)
		}
	}
}

// documentedPaths reads the field tables of docs/audit-report.md: a row
// "| `name` |" under a heading "### `prefix`" documents "prefix.name";
// a heading may name several prefixes, and "Top level" names the root.
// The examples table documents the fields of every examples list.
// mergedReport is sampleReport merged with a copy of another target: it
// lists its targets, and its examples their instances.
func mergedReport(t *testing.T) *audit.Report {
	t.Helper()
	other := rendertest.SampleReport()
	other.Target = "redis://10.0.0.2:6379"
	other.Scan.NotChecked = []string{"payload-invalid"}
	m, err := audit.Merge([]*audit.Report{rendertest.SampleReport(), other}, audit.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func documentedPaths(t *testing.T) map[string]bool {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "docs", "audit-report.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, fields, _ := strings.Cut(string(text), "## JSON report")
	fields, _, _ = strings.Cut(fields, "## Prometheus")
	paths := map[string]bool{}
	var prefixes []string
	code := regexp.MustCompile("`([^`]+)`")
	row := regexp.MustCompile("^\\| `([a-z_\\[\\].0-9]+)` \\|")
	for _, line := range strings.Split(fields, "\n") {
		if h, ok := strings.CutPrefix(line, "### "); ok {
			prefixes = nil
			switch {
			case h == "Top level":
				prefixes = []string{""}
			case strings.HasPrefix(h, "Examples"):
				prefixes = []string{"findings[].examples[].", "unregistered.groups[].examples[]."}
			default:
				for _, m := range code.FindAllStringSubmatch(h, -1) {
					prefixes = append(prefixes, m[1]+".")
				}
			}
			continue
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, p := range prefixes {
			path := p + m[1]
			if strings.HasPrefix(p, "unregistered.groups[].examples[].") && (m[1] == "db" || m[1] == "detail" || m[1] == "instance") {
				continue // finding examples only
			}
			paths[path] = true
			// A parent written out ("groups[].prefix") is documented too.
			for i := strings.LastIndexByte(path, '.'); i > len(p)-1 && i > 0; i = strings.LastIndexByte(path[:i], '.') {
				paths[strings.TrimSuffix(path[:i], "[]")] = true
			}
		}
	}
	return paths
}

// unmeasuredReport is an audit without --memory of families without
// max_bytes or max_len: no key's memory measured, no length read.
func unmeasuredReport() *audit.Report {
	r := emptyReport()
	r.Totals = audit.Totals{Keys: 2551, Registered: 2500, Unregistered: 51, WithTTL: 2551}
	r.Families[0].Keys, r.Families[0].WithTTL = 2500, 2500
	r.Owners[0].Keys, r.Owners[0].WithTTL = 2500, 2500
	r.Unregistered = audit.UnregisteredReport{Keys: 51, WithTTL: 51,
		Groups: []*audit.Group{{Prefix: "legacy:", Keys: 51, WithTTL: 51, Examples: []string{"legacy:1"}}}}
	r.TopKeys = audit.TopKeys{ByBytes: []*audit.TopKey{{Key: "legacy:1", Type: "string"}}, ByElements: []*audit.TopKey{{Key: "legacy:1", Type: "set"}}}
	r.Types = []*audit.TypeStats{{Type: "string", Keys: 2500}, {Type: "set", Keys: 51}}
	return r
}

// TestUnmeasuredIsNotZero: memory never measured is "-" in the human
// formats, null in JSON and absent in Prometheus, never 0; statistics
// over no measured key are left out with a one-line note; a partial sum
// says it is partial.
func TestUnmeasuredIsNotZero(t *testing.T) {
	r := unmeasuredReport()
	// One family measured, as max_bytes makes it, gives the report a
	// memory column: the others must still not read 0 B.
	r.Families = append(r.Families, &audit.FamilyReport{Name: "cart", Owner: "identity", Position: "keys.yaml:30:5",
		Keys: 51, Memory: 1258291, MemoryMeasured: true, MemoryKeys: 51})
	r.Owners[0].Families = append(r.Owners[0].Families, "cart")
	r.Owners[0].Keys += 51
	r.Owners[0].Memory, r.Owners[0].MemoryKeys = 1258291, 51
	r.Totals.Memory, r.Totals.MemoryKeys = 1258291, 51
	zero := regexp.MustCompile(`(^|[^.\d])0 B`)
	for _, f := range []Format{Text, Table, Markdown, HTML} {
		out, _, _ := renderAudit(t, f, r)
		out = html.UnescapeString(out)
		if zero.MatchString(out) {
			t.Errorf("%s shows 0 B for memory never measured:\n%s", f, out)
		}
		for _, want := range []string{
			"≥ 1.2 MiB (of 51/2551 keys)",
			"no key's memory was measured",
			"no collection's length was read",
		} {
			if !strings.Contains(out, want) && !strings.Contains(out, upperFirst(want)) {
				t.Errorf("%s lacks %q:\n%s", f, want, out)
			}
		}
		if strings.Contains(strings.ToLower(out), "largest keys by bytes\n") || strings.Contains(out, `"legacy:1"  0`) {
			t.Errorf("%s lists largest keys of which none was measured:\n%s", f, out)
		}
	}
	out, _, _ := renderAudit(t, Text, r)
	if !regexp.MustCompile(`(?m)^"legacy:" +51 +- +- `).MatchString(out) {
		t.Errorf("the unregistered group's memory is not -:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^string +2500 +bytes +0 +- `).MatchString(out) {
		t.Errorf("the types row does not say its percentiles come from 0 keys:\n%s", out)
	}
	js, _, _ := renderAudit(t, JSON, r)
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	for _, path := range [][]any{
		{"families", 0, "memory_bytes"}, {"unregistered", "memory_bytes"}, {"unregistered", "groups", 0, "memory_bytes"},
		{"unregistered", "groups", 0, "memory_percent"},
	} {
		if v, ok := lookupJSON(doc, path...); !ok || v != nil {
			t.Errorf("json %v = %v (present %v), want null", path, v, ok)
		}
	}
	if v, _ := lookupJSON(doc, "owners", 0, "memory_keys"); v != float64(51) {
		t.Errorf("owners[0].memory_keys = %v, want 51", v)
	}
	prom, _, _ := renderAudit(t, Prometheus, r)
	if strings.Contains(prom, `keyreg_memory_bytes{family="user-session"`) || strings.Contains(prom, "keyreg_unregistered_memory_bytes{") {
		t.Errorf("prometheus exports memory never measured:\n%s", prom)
	}
	if !strings.Contains(prom, `keyreg_memory_bytes{family="cart",owner="identity"} 1258291`) {
		t.Errorf("prometheus lacks the measured family's memory:\n%s", prom)
	}
}

// lookupJSON walks a decoded JSON document; ok is false when a step is
// missing.
func lookupJSON(v any, path ...any) (any, bool) {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil, false
			}
			v = a[k]
		}
	}
	return v, true
}

// TestSingularKey: one key is "1 key", never "1 keys", in the scan line and
// the unregistered summary.
func TestSingularKey(t *testing.T) {
	r := unmeasuredReport()
	r.Scan.Keys, r.Scan.Nodes = 1, 1
	r.Unregistered.Keys = 1
	r.Unregistered.Groups = r.Unregistered.Groups[:1]
	for _, f := range []Format{Text, Table, Markdown, HTML} {
		out, _, _ := renderAudit(t, f, r)
		if regexp.MustCompile(`\b1 (keys|nodes|prefix groups)\b`).MatchString(out) {
			t.Errorf("%s says 1 with a plural:\n%s", f, out)
		}
		if !strings.Contains(out, "1 node, 1 key,") {
			t.Errorf("%s lacks the scan line's 1 key", f)
		}
	}
}

// TestKeyNamesAndTTLMemory: the report says what the key names take, and
// how the measured memory splits by TTL, in every human format; a bucket
// without keys is "-", not 0 B.
func TestKeyNamesAndTTLMemory(t *testing.T) {
	r := rendertest.SampleReport()
	for _, f := range []Format{Text, Table, Markdown, HTML} {
		out, _, _ := renderAudit(t, f, r)
		for _, want := range []string{"key names", "402.8 KiB", "memory (12128 measured)", "2.2 MiB"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
	}
	out, _, _ := renderAudit(t, Text, r)
	if !regexp.MustCompile(`(?m)^memory \(12128 measured\) +6\.6 MiB +320\.0 KiB +- +2\.2 MiB +4\.1 MiB +- +- +-$`).MatchString(out) {
		t.Errorf("the TTL histogram's memory row is wrong:\n%s", out)
	}
	page, _, _ := renderAudit(t, HTML, r)
	if !strings.Contains(page, "<figcaption>Memory per TTL bucket") {
		t.Error("the audit page has no chart of memory per TTL bucket")
	}
}

// TestEncodingsSeen: the encodings read per type show in the types table
// of every human format and survive the json round trip.
func TestEncodingsSeen(t *testing.T) {
	r := rendertest.SampleReport()
	r.Types[0].Encodings = []audit.EncodingCount{{Encoding: "embstr", Keys: 9000}, {Encoding: "int", Keys: 1500}}
	for _, f := range []Format{Text, Table, Markdown, HTML} {
		if out, _, _ := renderAudit(t, f, r); !strings.Contains(out, "embstr 9000, int 1500") {
			t.Errorf("%s does not show the encodings seen", f)
		}
	}
	js, _, _ := renderAudit(t, JSON, r)
	back, err := auditjson.Read(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Types[0].Encodings, r.Types[0].Encodings) {
		t.Errorf("encodings read back as %v, want %v", back.Types[0].Encodings, r.Types[0].Encodings)
	}
}

// TestAuditSaysNotChecked renders a report whose payload rules did not
// run on some keys (a primary's values not read) in every audit format:
// each must say so in its own terms, never show those rules as passed.
func TestAuditSaysNotChecked(t *testing.T) {
	r := rendertest.SampleReport()
	r.Scan.NotChecked = []string{"payload-invalid", "encoding-mismatch"}
	want := map[Format][]string{
		Text:       {"not checked: payload-invalid, encoding-mismatch"},
		Markdown:   {"not checked: payload-invalid, encoding-mismatch"},
		HTML:       {"not checked: payload-invalid, encoding-mismatch"},
		JSON:       {`"not_checked": [`},
		GitHub:     {"::warning title=rules not checked::NOT CHECKED: payload-invalid, encoding-mismatch"},
		GitLab:     {`"check_name": "rules-not-checked"`},
		SARIF:      {`"level": "warning"`, "NOT CHECKED: payload-invalid, encoding-mismatch"},
		JUnit:      {}, // below, with the rules keyreg passes
		Table:      {"not checked: payload-invalid, encoding-mismatch"},
		Prometheus: {`keyreg_audit_rule_not_checked{rule="payload-invalid"} 1`, `keyreg_audit_rule_not_checked{rule="encoding-mismatch"} 1`},
	}
	for _, f := range AuditFormats {
		out, summary, _ := renderAudit(t, f, r)
		ws, ok := want[f]
		if !ok {
			t.Errorf("format %s: no expectation: say how it shows rules not checked", f)
			continue
		}
		for _, w := range ws {
			if !strings.Contains(out+summary, w) {
				t.Errorf("format %s does not say %q:\n%s", f, w, out+summary)
			}
		}
		// Without NotChecked, none of it appears.
		clean, csum, _ := renderAudit(t, f, rendertest.SampleReport())
		if strings.Contains(clean+csum, "NOT CHECKED") || strings.Contains(clean+csum, "not checked:") || strings.Contains(clean, "rule_not_checked{") {
			t.Errorf("format %s says not checked for a report that checked everything", f)
		}
	}
	// JUnit: every family's testcase of a rule not checked is skipped, with
	// the reason, and counted as skipped, not as a pass.
	r.Scan.NotChecked = []string{"payload-schema"}
	var b bytes.Buffer
	if err := Audit(&b, JUnit, r, Options{Rules: auditRules()}); err != nil {
		t.Fatal(err)
	}
	d := checkJUnit(t, b.Bytes())
	n := 0
	for _, s := range d.Suites {
		for _, c := range s.Cases {
			if c.Name != "payload-schema" {
				continue
			}
			n++
			if c.Failure != nil {
				continue // a finding still fails
			}
			if c.Skipped == nil || !strings.HasPrefix(c.Skipped.Message, "NOT CHECKED: payload-schema") {
				t.Errorf("suite %s: payload-schema is not skipped as not checked: %+v", s.Name, c)
			}
		}
	}
	if n != len(r.Families) {
		t.Errorf("%d payload-schema testcases, want one per family (%d)", n, len(r.Families))
	}
}
