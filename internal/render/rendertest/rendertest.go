// Package rendertest holds the fixtures and page checks that the tests of
// report and catalogue share: a realistic audit, a hostile one, and the
// assertions every HTML page must pass. Only tests import it.
package rendertest

import (
	"crypto/sha256"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	htmlpage "github.com/keyreg/keyreg/internal/page"
)

// BinaryKey is an unregistered key name that is not valid UTF-8 and holds a
// NUL byte.
const BinaryKey = "\x00\xffbin"

// SampleReport returns a realistic audit: three families of two owners,
// memory measured, unregistered groups (one of binary keys), findings of
// every severity, one suppressed, and text that needs escaping.
func SampleReport() *audit.Report {
	pos := func(line, col int) diag.Pos { return diag.Pos{File: "keys.yaml", Line: line, Col: col} }
	return &audit.Report{
		Version:  audit.ReportVersion,
		Registry: "keys.yaml",
		Target:   "redis://:xxxxx@cache.internal:6379/0",
		Mode:     "standalone",
		Started:  time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Scan: audit.ScanStats{
			Nodes: 1, Keys: 12500, Scanned: 12520, Duplicates: 20, Vanished: 3,
			Sampled: 400, Skipped: 2, Duration: 3250 * time.Millisecond, KeysPerSec: 3846.15,
			Notes: []string{"OBJECT IDLETIME refused under an LFU policy: stale keys not checked"},
		},
		Totals: audit.Totals{
			Keys: 12500, Registered: 12340, Unregistered: 160, WithTTL: 11900,
			Memory: 6881792, MemoryKeys: 12128, Errors: 12, Warnings: 40, Infos: 5,
		},
		Families: []*audit.FamilyReport{
			{Name: "user-session", Owner: "identity", Pos: pos(12, 5), Position: "keys.yaml:12:5",
				Keys: 10000, WithTTL: 10000, Memory: 5242880, MemoryMeasured: true, MemoryKeys: 10000, Sampled: 300, Findings: 12,
				TTL: audit.TTLHistogram{0, 0, 2500, 7500, 0, 0, 0},
				DBs: []*audit.DBReport{{DB: 0, Keys: 9000, WithTTL: 9000, Memory: 4718592, MemoryKeys: 9000}, {DB: 3, Keys: 1000, WithTTL: 1000, Memory: 524288, MemoryKeys: 1000}}},
			{Name: "cart", Owner: "platform", Pos: pos(30, 5), Position: "keys.yaml:30:5",
				Keys: 2000, WithTTL: 1800, Memory: 1572864, MemoryMeasured: true, MemoryKeys: 2000, Sampled: 80, Findings: 45,
				TTL: audit.TTLHistogram{200, 0, 1760, 40, 0, 0, 0},
				DBs: []*audit.DBReport{{DB: 0, Keys: 1500, WithTTL: 1300, Memory: 1048576, MemoryKeys: 1500}, {DB: 3, Keys: 500, WithTTL: 500, Memory: 524288, MemoryKeys: 500}}},
			{Name: "feature-flags", Owner: "platform", Pos: pos(44, 5), Position: "keys.yaml:44:5",
				// Not measured (no max_bytes, no --memory): "-", never 0 B.
				Keys: 340, WithTTL: 0, Sampled: 20, Findings: 0,
				TTL: audit.TTLHistogram{340, 0, 0, 0, 0, 0, 0},
				DBs: []*audit.DBReport{{DB: 0, Keys: 340}}},
		},
		Owners: []*audit.OwnerReport{
			{Name: "identity", Contact: "#identity-oncall", Families: []string{"user-session"},
				Keys: 10000, WithTTL: 10000, Memory: 5242880, MemoryKeys: 10000, Findings: 12},
			{Name: "platform", Contact: "platform@example.com", Families: []string{"cart", "feature-flags"},
				// Measured for cart only: a partial sum, shown as one.
				Keys: 2340, WithTTL: 1800, Memory: 1572864, MemoryKeys: 2000, Findings: 45},
		},
		Unregistered: audit.UnregisteredReport{
			Keys: 160,
			Groups: []*audit.Group{
				{Prefix: "sidekiq:queue:", Keys: 120, WithTTL: 100, Memory: 65536, MemoryKeys: 120, DBs: []int{0},
					Examples: []string{"sidekiq:queue:default", "sidekiq:queue:mailers", "sidekiq:queue:low"}},
				{Prefix: "tmp|x:", Keys: 30, WithTTL: 0, DBs: []int{0, 3}, Examples: []string{"tmp|x:1", "tmp|x:`2`"}},
				{Prefix: BinaryKey, Keys: 8, WithTTL: 0, Memory: 512, MemoryKeys: 8, Examples: []string{BinaryKey, BinaryKey + "\n2"}},
			},
			Other:   2,
			WithTTL: 100, Memory: 66048, MemoryMeasured: true, MemoryKeys: 128,
			TTL: audit.TTLHistogram{60, 0, 100, 0, 0, 0, 0},
		},
		DBs:       []int{0, 3},
		TTL:       audit.TTLHistogram{600, 0, 4360, 7540, 0, 0, 0},
		TTLMemory: audit.TTLHistogram{327680, 0, 2261504, 4292608, 0, 0, 0},
		KeyBytes:  412500,
		TopKeys: audit.TopKeys{
			ByBytes: []*audit.TopKey{
				{Key: "tmp:export:2026-03-01", DB: 0, Type: "string", Bytes: 1 << 20, TTL: -1},
				{Key: "cart:{42}:items", DB: 3, Family: "cart", Type: "hash", Bytes: 65536, Elements: 400, TTL: 2 * time.Hour},
			},
			ByElements: []*audit.TopKey{
				{Key: "cart:{42}:items", DB: 3, Family: "cart", Type: "hash", Bytes: 65536, Elements: 400, TTL: 2 * time.Hour},
				{Key: BinaryKey, DB: 0, Type: "list", Elements: 12, TTL: -1},
			},
		},
		Types: []*audit.TypeStats{
			sampleType("string", 10500, []int64{400, 420, 380, 1 << 20}, nil),
			sampleType("hash", 2000, []int64{800, 65536}, []int64{3, 5, 400}),
		},
		Findings: []*audit.Finding{
			{Rule: "payload-schema", Severity: diag.Error, Family: "user-session", Pos: pos(12, 5), Position: "keys.yaml:12:5",
				Count: 12, Of: 300, Message: `12 of 300 sampled payloads fail the schema`,
				Examples: []audit.Example{{Key: "v2:user:session:0b8e1c4e-5f1a-4d7e-9c1a-2f7e9d1b3a4c", Detail: "/user_id: got string, want integer"}}},
			{Rule: "ttl-exceeds", Severity: diag.Warn, Family: "cart", Pos: pos(30, 5), Position: "keys.yaml:30:5",
				Count: 40, Of: 2000, Message: `40 keys live longer than "max 30m" | checkout writer`,
				Examples: []audit.Example{{Key: "cart:{42}:items", DB: 3, Detail: "ttl 2h, max 30m"}, {Key: "cart:{7}:items", Detail: "ttl 3h, max 30m"}}},
			{Rule: "key-unregistered", Severity: diag.Info, Pos: pos(4, 1), Position: "keys.yaml:4:1",
				Count: 160, Of: 12500, Message: "160 keys match no family",
				Examples: []audit.Example{{Key: BinaryKey}, {Key: "tmp|x:1"}}},
			{Rule: "ttl-missing", Severity: diag.Warn, Family: "cart", Pos: pos(30, 5), Position: "keys.yaml:30:5",
				Count: 5, Of: 2000, Message: "5 keys have no ttl",
				Examples: []audit.Example{{Key: "cart:{9}:items"}}},
			{Rule: "ttl-missing", Severity: diag.Error, Family: "feature-flags", Pos: pos(44, 5), Position: "keys.yaml:44:5",
				Count: 340, Of: 340, Message: "340 keys have no ttl", Examples: []audit.Example{{Key: "ff:checkout"}},
				Suppressed: true, Reason: "flags are persistent, ticket 123"},
		},
	}
}

// sampleType is the stats of keys of type typ with the given sizes.
func sampleType(typ string, keys int64, bytes, elements []int64) *audit.TypeStats {
	t := &audit.TypeStats{Type: typ, Keys: keys}
	for _, b := range bytes {
		t.Bytes += b
		t.BytesDist.Add(b)
	}
	for _, e := range elements {
		t.Elements += e
		t.ElementsDist.Add(e)
	}
	return t
}

var (
	inlineRe = regexp.MustCompile(`(?s)<(script|style)([^>]*)>(.*?)</(?:script|style)>`)
	cspRe    = regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`)
	linkRe   = regexp.MustCompile(`\s(?:src|href|xlink:href|action)="([^"]*)"`)
)

// CheckPage asserts what every page must hold: one CSP that allows no
// source but the page's own inline script and style, by their hashes; no
// other script or style element; no link or source outside the page except
// under allowed.
func CheckPage(t *testing.T, page string, allowed string) {
	t.Helper()
	m := cspRe.FindAllStringSubmatch(page, -1)
	if len(m) != 1 {
		t.Fatalf("%d CSP meta tags, want 1", len(m))
	}
	csp := strings.ReplaceAll(m[0][1], "&#39;", "'")
	csp = strings.ReplaceAll(csp, "&#43;", "+")
	if !strings.HasPrefix(csp, "default-src 'none';") {
		t.Errorf("CSP %q does not start with default-src 'none'", csp)
	}
	inline := inlineRe.FindAllStringSubmatch(page, -1)
	if len(inline) != 2 {
		t.Fatalf("%d inline script and style elements, want 2", len(inline))
	}
	for _, el := range inline {
		if el[2] != "" {
			t.Errorf("<%s%s>: want no attributes", el[1], el[2])
		}
		sum := sha256.Sum256([]byte(el[3]))
		want := el[1] + "-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q, the hash of the page's %s", csp, want, el[1])
		}
	}
	for _, l := range linkRe.FindAllStringSubmatch(page, -1) {
		if strings.HasPrefix(l[1], "#") || (allowed != "" && strings.HasPrefix(l[1], allowed)) {
			continue
		}
		t.Errorf("link %q leaves the page", l[1])
	}
	if strings.Contains(htmlpage.Style(), "url(") || strings.Contains(htmlpage.Style(), "@import") {
		t.Error("the page's CSS loads a resource")
	}
}

// HostileReport is an audit whose names hold markup, control bytes and a
// 100 KB key.
func HostileReport() *audit.Report {
	long := strings.Repeat("<script>alert(1)</script>", 100<<10/25)
	return &audit.Report{
		Version: audit.ReportVersion, Target: "redis://x/<script>alert(1)</script>", Started: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		Partial: true, PartialReason: "<script>alert(1)</script>",
		Totals:   audit.Totals{Keys: 3, Registered: 1, Unregistered: 2},
		Families: []*audit.FamilyReport{{Name: "evil", Owner: "team", Keys: 1}, {Name: "<script>alert(1)</script>\x00\x1b[2J", Owner: "<b>", Keys: 1}},
		Owners:   []*audit.OwnerReport{{Name: "team", Contact: "<img src=x onerror=alert(1)>", Families: []string{"evil"}, Keys: 1}},
		Unregistered: audit.UnregisteredReport{Keys: 2, Groups: []*audit.Group{
			{Prefix: "<script>alert(1)</script>:", Keys: 1, Examples: []string{long, "\x00\x07\xff"}},
		}},
		Findings: []*audit.Finding{{Rule: "unregistered-key", Severity: diag.Error, Count: 2, Of: 3,
			Message: "<script>alert(1)</script>", Examples: []audit.Example{{Key: long, Detail: "</td><script>"}}}},
	}
}

// CheckInert asserts that no markup from the input survived as markup and
// that no control byte reached the page.
func CheckInert(t *testing.T, name, page string) {
	t.Helper()
	for _, bad := range []string{"<script>alert", "<img", "<b>", "</script><script>", "onerror=alert(1)>"} {
		if strings.Contains(page, bad) {
			i := strings.Index(page, bad)
			t.Errorf("%s: %q survived: %q", name, bad, page[max(0, i-60):min(len(page), i+60)])
		}
	}
	for i := 0; i < len(page); i++ {
		if c := page[i]; c < 0x20 && c != '\n' && c != '\t' {
			t.Fatalf("%s: control byte %#x at %d: %q", name, c, i, page[max(0, i-40):min(len(page), i+40)])
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("%s: the hostile text is not shown escaped", name)
	}
}

// StripCode removes markdown code spans and fenced blocks, whose text
// shows as typed: a run of N backticks up to the next run of exactly N.
func StripCode(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return b.String() + s
		}
		b.WriteString(s[:i])
		n := i
		for n < len(s) && s[n] == '`' {
			n++
		}
		fence := s[i:n]
		rest := s[n:]
		for {
			j := strings.Index(rest, fence)
			if j < 0 {
				return b.String() + s[i:] // unclosed: keep it, so the check sees it
			}
			k := j + len(fence)
			if k < len(rest) && rest[k] == '`' {
				for k < len(rest) && rest[k] == '`' {
					k++
				}
				rest = rest[k:]
				continue
			}
			s = rest[k:]
			break
		}
	}
}

var (
	tableRe = regexp.MustCompile(`(?s)<table[^>]*>(.*?)</table>`)
	headRe  = regexp.MustCompile(`(?s)<thead>(.*?)</thead>`)
	bodyRe  = regexp.MustCompile(`(?s)<tbody>(.*?)</tbody>`)
	rowRe   = regexp.MustCompile(`(?s)<tr[^>]*>(.*?)</tr>`)
	cellRe  = regexp.MustCompile(`<t[dh][ >]`)
)

// CheckCells fails when a row of a table of page has more or fewer cells
// than its head has columns: a cell left out slides the rest under the
// wrong heading.
func CheckCells(t *testing.T, name, page string) {
	t.Helper()
	tables := tableRe.FindAllStringSubmatch(page, -1)
	if len(tables) == 0 {
		t.Fatalf("%s: no table", name)
	}
	for i, tb := range tables {
		head := headRe.FindStringSubmatch(tb[1])
		body := bodyRe.FindStringSubmatch(tb[1])
		if head == nil || body == nil {
			t.Errorf("%s: table %d has no thead or tbody", name, i)
			continue
		}
		cols := len(cellRe.FindAllString(head[1], -1))
		for _, row := range rowRe.FindAllStringSubmatch(body[1], -1) {
			if n := len(cellRe.FindAllString(row[1], -1)); n != cols {
				t.Errorf("%s: table %d: a row has %d cells under %d headings: %.300s", name, i, n, cols, row[0])
			}
		}
	}
}
