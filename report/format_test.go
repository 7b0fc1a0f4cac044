package report

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/explain"
	"github.com/keyreg/keyreg/internal/render"
)

// goldenCases names, per document, the cases whose golden files every
// format of that document must have: testdata/<prefix><case>.<format>.golden.
var goldenCases = map[Document]struct {
	prefix string
	cases  []string
}{
	DocDiagnostics: {"", []string{"mixed", "empty"}},
	DocAudit:       {"audit.", []string{"full", "partial", "empty", "channels"}},
	DocExplain:     {"explain.", []string{"matched", "unmatched", "lock", "stream"}},
	DocRules:       {"rules.", []string{"list"}},
	DocPresets:     {"presets.", []string{"list"}},
}

// extraGoldens are the golden files of a format's side outputs.
var extraGoldens = map[string]bool{}

func init() {
	for _, c := range []string{"mixed", "empty"} {
		extraGoldens[c+".text-summary.golden"] = true
		extraGoldens[c+".github-step-summary.golden"] = true
	}
	for _, c := range []string{"full", "partial", "empty", "channels"} {
		extraGoldens["audit."+c+".text-summary.golden"] = true
		extraGoldens["audit."+c+".github-step-summary.golden"] = true
	}
	extraGoldens["audit.full.table80.golden"] = true // table_test.go: fitted to 80 columns
}

func TestFormatTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range formats {
		for _, name := range append([]string{string(r.name)}, r.aliases...) {
			if seen[name] {
				t.Errorf("format name %q is taken twice", name)
			}
			seen[name] = true
			if name != strings.ToLower(name) || strings.ContainsAny(name, " \t\n,") {
				t.Errorf("format name %q is not a lowercase word", name)
			}
		}
		if r.help == "" || strings.HasSuffix(r.help, ".") || strings.Contains(r.help, "\n") {
			t.Errorf("%s: help %q is empty, ends with a period or spans lines", r.name, r.help)
		}
		if !r.renders(DocDiagnostics) && !r.renders(DocAudit) && !r.renders(DocExplain) && !r.renders(DocRules) {
			t.Errorf("%s renders no document", r.name)
		}
	}
	// The formats keep the order --help has always shown; a new format may
	// go anywhere between them.
	for d, want := range map[Document][]Format{
		DocDiagnostics: {Text, JSON, GitHub, SARIF},
		DocAudit:       {Table, Text, JSON, Markdown, GitHub, SARIF, Prometheus},
		DocExplain:     {Text, JSON},
		DocRules:       {Text, JSON, Markdown},
	} {
		got := Formats(d)
		kept := slices.DeleteFunc(slices.Clone(got), func(f Format) bool { return !slices.Contains(want, f) })
		if !slices.Equal(kept, want) {
			t.Errorf("Formats(%d) = %v, want %v in this order", d, got, want)
		}
	}
	if got, want := join([]string{"a", "b", "c"}, "or"), "a, b or c"; got != want {
		t.Errorf("join = %q, want %q", got, want)
	}
	comps := FormatCompletions(DocExplain)
	if len(comps) != len(Formats(DocExplain)) || !slices.Contains(comps, "text\t"+textFormat.help) || !slices.Contains(comps, "json\t"+jsonFormat.help) {
		t.Errorf("FormatCompletions(DocExplain) = %q", comps)
	}
}

// TestFormatGoldens fails when a format of the table lacks a golden file for
// a document it renders, or when testdata holds a golden file of no format.
func TestFormatGoldens(t *testing.T) {
	want := map[string]bool{}
	for _, r := range formats {
		for d, g := range goldenCases {
			if !r.renders(d) {
				continue
			}
			for _, c := range g.cases {
				name := fmt.Sprintf("%s%s.%s.golden", g.prefix, c, r.name)
				want[name] = true
				if _, err := os.Stat("testdata/" + name); err != nil {
					t.Errorf("format %s renders document %d but has no golden file: %v (add the case, run go test ./report -update)", r.name, d, err)
				}
			}
		}
	}
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".golden") && !want[name] && !extraGoldens[name] {
			t.Errorf("testdata/%s belongs to no format of the table", name)
		}
	}
}

func explanations() map[string]*explain.Explanation {
	n, lag, yes := int64(3), int64(1200), true
	return map[string]*explain.Explanation{
		"matched": {
			Key:     "v1:cart:{42}:items",
			Matched: true,
			Family: &explain.FamilyFacts{
				Name: "cart", Description: "Cart <items> | \"quoted\"", Position: "keys.yaml:20:5",
				Pattern: "v1:cart:{{user_id:int}}:items", Glob: "v1:cart:{*}:items", Owner: "platform",
				Contact: "platform@example.com", Type: "list", Encoding: "json", TTL: "max 30m", TTLSource: "defaults",
				Schema:     &explain.SchemaSummary{Path: "schemas/cart.json", Type: "object", Properties: []explain.Property{{Name: "sku", Type: "string", Required: true}}},
				MaxLen:     100,
				MaxIdle:    "30d",
				Deprecated: &explain.Deprecation{Since: "2026-01-01", ReplacedBy: "cart-v2"},
			},
			Params: []explain.ParamValue{{Name: "user_id", Type: "int", Value: "42"}},
			Live: &explain.LiveFacts{Exists: true, DB: 0, Type: "list", TTL: "12m0s", Memory: 512, Len: &n, Encoding: "json",
				Verdict: explain.VerdictFindings, Verdicts: []string{"ttl-exceeds: ttl 2h, max 30m"}},
		},
		"lock": {
			Key:     "v1:lock:invoice:{42}",
			Matched: true,
			Family: &explain.FamilyFacts{
				Name: "invoice-lock", Position: "keys.yaml:8:5", Pattern: "v1:lock:invoice:{{invoice_id:int}}",
				Glob: "v1:lock:invoice:{*}", Owner: "billing", Type: "string", Kind: "lock", Fencing: "invoice-fence", TTL: "max 30s", TTLSource: "family",
			},
			Params: []explain.ParamValue{{Name: "invoice_id", Type: "int", Value: "42"}},
			Live: &explain.LiveFacts{Exists: true, Type: "string", TTL: "24s", Lease: "24s left of 30s", Token: "uuid",
				Fence: &explain.LiveFence{Key: "v1:fence:invoice:{42}", Exists: &yes, Value: "17"}, Verdict: explain.VerdictIncomplete, Verdicts: []string{},
				NotChecked: []explain.NotChecked{{Fact: "idle", Rules: []string{"stale-key"}, Reason: explain.ReasonUnavailable, Detail: "the server gave no idle time"}},
				Touched:    2},
		},
		"stream": {
			Key:     "v1:chat:01HZX3K5V9Q8W7E6R5T4Y3U2I1:messages",
			Matched: true,
			Family: &explain.FamilyFacts{
				Name: "chat-messages", Position: "keys.yaml:18:5", Pattern: "v1:chat:{room_id:ulid}:messages",
				Glob: "v1:chat:*:messages", Owner: "engagement", Type: "stream", TTL: "persistent", TTLSource: "family", MaxLen: 10000,
			},
			Live: &explain.LiveFacts{Exists: true, Type: "stream", TTL: "none", Len: &n, Groups: []explain.LiveGroup{
				{Name: "audit"},
				{Name: "delivery", Exists: true, Consumers: 2, Pending: 3, Lag: &lag, IdleConsumer: "worker-\"7\"", Idle: "11m"},
				{Name: "search", Exists: true, Consumers: 1},
			}, Verdict: explain.VerdictFindings, Verdicts: []string{"warn: stream-consumer-idle (group \"delivery\": consumer \"worker-7\" idle 11m with pending entries (max 10m))"}},
		},
		"unmatched": {
			Key:     "tmp:\x00x",
			Closest: &explain.ClosestFamily{Name: "cart", Pattern: "v1:cart:{{user_id:int}}:items", Position: "keys.yaml:20:5", Reason: `literal "v1:" does not match`},
			Live:    &explain.LiveFacts{Exists: false, DB: 2, Verdict: explain.VerdictAbsent},
		},
	}
}

func TestExplainGolden(t *testing.T) {
	for name, e := range explanations() {
		for _, f := range Formats(DocExplain) {
			t.Run(name+"/"+string(f), func(t *testing.T) {
				var b bytes.Buffer
				if err := WriteExplanation(&b, f, e, Options{}); err != nil {
					t.Fatal(err)
				}
				golden(t, fmt.Sprintf("explain.%s.%s.golden", name, f), b.String())
			})
		}
	}
}

func TestRulesGolden(t *testing.T) {
	rules := []RuleInfo{
		{ID: "ttl-missing", Kind: "key", Doc: "a key of a family with a `ttl` policy has no TTL", Default: diag.Error},
		{ID: "description-missing", Kind: "lint", Doc: "a family has no description | <b>bold</b>\nsecond line", Default: diag.Info},
	}
	for _, f := range Formats(DocRules) {
		t.Run(string(f), func(t *testing.T) {
			var b bytes.Buffer
			if err := Rules(&b, f, rules, Options{}); err != nil {
				t.Fatal(err)
			}
			golden(t, fmt.Sprintf("rules.list.%s.golden", f), b.String())
		})
	}
}

func TestPresetsGolden(t *testing.T) {
	presets := []PresetInfo{{
		Name: "queue-lib", Summary: "A queue library | <b>not bold</b>", Library: "queue-lib", Tested: []string{"queue-lib 1.2"},
		Sources:  []string{"lib/queue.py: Queue.key"},
		Coexists: []string{"other-lib"},
		Params:   []PresetParamInfo{{Name: "queues", Kind: "strings", Default: "[default]", Doc: "queue names"}},
		Families: []PresetFamilyInfo{
			{Name: "queue-lib-queue", Part: "queue-lib-queue", Each: []string{"queues"}, Pattern: "q:default", Type: "list", Encoding: "json", TTL: "persistent", Description: "A queue.", Notes: "No TTL."},
			{Name: "queue-lib-job", Part: "queue-lib-job", Pattern: "q:job:{id:uuid}|`x`", Type: "hash", Encoding: "pickle or int", TTL: "max 24h", Description: "A job."},
		},
	}}
	for _, f := range Formats(DocPresets) {
		t.Run(string(f), func(t *testing.T) {
			var b bytes.Buffer
			if err := Presets(&b, f, presets, Options{}); err != nil {
				t.Fatal(err)
			}
			golden(t, fmt.Sprintf("presets.list.%s.golden", f), b.String())
		})
	}
}

func TestDocumentFormatErrors(t *testing.T) {
	var b bytes.Buffer
	if err := WriteExplanation(&b, SARIF, &explain.Explanation{}, Options{}); err == nil || err.Error() != `unsupported format "sarif" (want `+FormatList(DocExplain)+`)` {
		t.Errorf("WriteExplanation(sarif) error = %v", err)
	}
	if err := Rules(&b, Table, nil, Options{}); err == nil || err.Error() != `unsupported format "table" (want `+FormatList(DocRules)+`)` {
		t.Errorf("Rules(table) error = %v", err)
	}
	if err := Diagnostics(&b, Prometheus, nil, Options{}); err == nil || err.Error() != `unsupported format "prometheus" (want `+FormatList(DocDiagnostics)+`)` {
		t.Errorf("Diagnostics(prometheus) error = %v", err)
	}
	if b.Len() != 0 {
		t.Errorf("wrote %q for an unsupported format", b.String())
	}
}

func TestFormatHelp(t *testing.T) {
	got := FormatHelp(DocExplain, 40)
	want := "Formats: text (plain lines, findings\ngcc-style) and json (one versioned\ndocument)."
	if got != want {
		t.Errorf("FormatHelp = %q, want %q", got, want)
	}
	for _, line := range strings.Split(FormatHelp(DocAudit, 76), "\n") {
		if len(line) > 76 {
			t.Errorf("line over 76 columns: %q", line)
		}
	}
}

// hostile is markdown an attacker would put in a key, a family name or a
// Redis error.
var hostile = []string{
	"a|b",
	"`code` and ``more``",
	"line1\nline2\r\nline3\rline4",
	"<img src=x onerror=alert(1)><script>x</script>",
	"[x](javascript:alert(1))",
	"![x](https://evil/pixel.png)",
	"# heading",
	"   ## heading",
	"- item",
	"+ item",
	"1. item",
	"12) item",
	"**bold** _em_ ~~strike~~",
	`back\slash &amp; entity`,
}

func TestMarkdownEscape(t *testing.T) {
	for _, s := range hostile {
		for _, m := range []render.MDMode{render.MDData, render.MDBlock, render.MDDoc} {
			got := render.MD(s, m)
			if strings.ContainsAny(got, "<>\n\r") && !onlyBreaks(got) {
				t.Errorf("md(%q, %d) = %q: raw HTML or a line break", s, m, got)
			}
			if strings.Contains(strings.ReplaceAll(got, `\|`, ""), "|") {
				t.Errorf("md(%q, %d) = %q: an unescaped pipe splits the table cell", s, m, got)
			}
			if m == render.MDDoc {
				continue
			}
			for _, syntax := range []string{"](", "**", "_em", "~~", "`", "&amp;amp"} {
				if syntax == "&amp;amp" {
					if strings.Contains(s, "&amp;") && !strings.Contains(got, "&amp;amp;") {
						t.Errorf("md(%q, %d) = %q: an entity is not shown as typed", s, m, got)
					}
					continue
				}
				if strings.Contains(unescaped(got), syntax) {
					t.Errorf("md(%q, %d) = %q: markdown syntax %q left live", s, m, got, syntax)
				}
			}
		}
	}
	for in, want := range map[string]string{
		"# heading":    `\# heading`,
		"   ## h":      `   \## h`,
		"- item":       `\- item`,
		"+ item":       `\+ item`,
		"1. item":      `1\. item`,
		"12) item":     `12\) item`,
		"1 error":      "1 error",
		"    # code":   "    # code",
		"":             "",
		"a # b":        "a # b",
		"PARTIAL: a_b": `PARTIAL: a\_b`,
	} {
		if got := render.MD(in, render.MDBlock); got != want {
			t.Errorf("md(%q, render.MDBlock) = %q, want %q", in, got, want)
		}
	}
	// Data inside a cell keeps its leading # (a cell cannot be a heading).
	if got := render.MD("#identity-oncall", render.MDData); got != "#identity-oncall" {
		t.Errorf("md(#identity-oncall, render.MDData) = %q", got)
	}
	// Rule docs keep their code spans.
	if got := render.MD("set `ttl` | <b>", render.MDDoc); got != "set `ttl` \\| &lt;b&gt;" {
		t.Errorf("md(doc) = %q", got)
	}
}

// onlyBreaks reports whether every < and > in s belongs to a <br>.
func onlyBreaks(s string) bool {
	return !strings.ContainsAny(strings.ReplaceAll(s, "<br>", ""), "<>\n\r")
}

// unescaped drops backslash-escaped characters from s, leaving the syntax
// markdown would still read.
func unescaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestStepSummaryEscapesMarkdown: a message quoting a hostile value must not
// turn into a link, code or emphasis in the job summary.
func TestStepSummaryEscapesMarkdown(t *testing.T) {
	l := diag.List{{Pos: diag.Pos{File: "keys.yaml", Line: 3, Col: 5}, Severity: diag.Error, Rule: "owner-unknown",
		Family: "a_b", Message: "owner \"[x](javascript:alert(1))\" is not declared, `see` **docs**"}}
	var step bytes.Buffer
	if err := Diagnostics(&bytes.Buffer{}, GitHub, l, Options{StepSummary: &step}); err != nil {
		t.Fatal(err)
	}
	row := step.String()
	for _, live := range []string{"[x](", "`see`", "**docs**"} {
		if strings.Contains(row, live) {
			t.Errorf("step summary keeps %q live:\n%s", live, row)
		}
	}
	if !strings.Contains(row, `\[x\](javascript:alert(1))`) || !strings.Contains(row, `a\_b`) {
		t.Errorf("step summary lost the text as typed:\n%s", row)
	}
}

// TestAuditMarkdownBlockMarkers: a note that starts with # or - must not
// become a heading or a list inside its quote block.
func TestAuditMarkdownBlockMarkers(t *testing.T) {
	r := emptyReport()
	r.Scan.Notes = []string{"- injected list", "## injected heading"}
	out, _, _ := renderAudit(t, Markdown, r)
	for _, want := range []string{"> \\- injected list\n", "> \\## injected heading\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}
