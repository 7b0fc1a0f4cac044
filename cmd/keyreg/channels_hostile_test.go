package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
)

// TestAuditChannelsHostile: live channel names are anyone's. Subscribers
// hold channels whose names carry terminal escapes, a CR/LF followed by a
// GitHub workflow command, HTML, a markdown heading and list, a Prometheus
// sample, invalid UTF-8, the glob "*" and 100 KB without a separator; one
// audit writes every format. Each output stays small, no control byte
// reaches any of them raw, and none of the injections parses as what it
// imitates.
func TestAuditChannelsHostile(t *testing.T) {
	s := redistest.Standalone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names := []string{
		"evil\x1b[31mred\a\r\n::error::injected",
		"<script>alert(1)</script>|x",
		"# head\n- list",
		"x\"} 1\nfake_metric{a=\"b",
		"zz\x00\xffbad",
		"*",
		strings.Repeat("A", 100_000),
	}
	for _, n := range names {
		holdSubscription(t, ctx, s.Client(t).Subscribe(ctx, n))
	}
	holdSubscription(t, ctx, s.Client(t).SSubscribe(ctx, strings.Repeat("S", 100_000)+"\x1b"))

	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte(channelsKeysYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	formats := []string{"text", "table", "json", "markdown", "html", "github", "sarif", "junit", "gitlab", "prometheus"}
	args := []string{"audit", "--registry", reg, "--url", s.URL(), "--format", "text"}
	for _, f := range formats {
		args = append(args, "--output", f+"="+filepath.Join(dir, "out."+f))
	}
	if code, stdout, stderr := cli(t, args...); code != 1 {
		t.Fatalf("exit %d, want 1\n%.2000s\n%.2000s", code, stdout, stderr)
	}
	sample := regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-z_]+="([^"\\]|\\.)*"(,[a-z_]+="([^"\\]|\\.)*")*\})? [-+0-9.eE]+$|^# (HELP|TYPE) `)
	for _, f := range formats {
		data, err := os.ReadFile(filepath.Join(dir, "out."+f))
		if err != nil {
			t.Fatal(err)
		}
		out := string(data)
		// Eight hostile channels, two of 100 KB: a report keeps 256
		// bytes of a name, so a few of its copies.
		if len(out) > 80_000 {
			t.Errorf("%s: %d bytes", f, len(out))
		}
		for _, b := range []byte{0x1b, 0x07, 0x00} {
			if strings.IndexByte(out, b) >= 0 {
				t.Errorf("%s: a raw %#x byte", f, b)
			}
		}
		for _, line := range strings.Split(out, "\n") {
			switch {
			case strings.HasPrefix(line, "::error::injected"):
				t.Errorf("%s: the injected workflow command is a line of its own", f)
			case f == "markdown" && (strings.HasPrefix(line, "# head") || strings.HasPrefix(line, "- list")):
				t.Errorf("%s: the injected heading or list is a line of its own: %q", f, line)
			case f == "prometheus" && line != "" && !sample.MatchString(line):
				t.Errorf("prometheus: not a sample line: %.200q", line)
			case strings.HasPrefix(line, "fake_metric"):
				t.Errorf("%s: the injected sample is a line of its own", f)
			}
		}
		if f == "html" && strings.Contains(out, "<script>alert") {
			t.Error("html: the channel's <script> is markup")
		}
	}
}
