package registry

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// TestSocketIOChannelCapture checks the socket.io preset against the
// channels the real @socket.io/redis-adapter used
// (testdata/frameworks/socket.io.channels.txt, written by
// scripts/capture/capture-socket.io.sh): every channel published to or
// SUBSCRIBEd belongs to one channel of the preset, a SUBSCRIBEd one to a
// classic channel, every PSUBSCRIBE glob is a pattern channel's
// subscribe_glob, and every channel of the preset was seen.
func TestSocketIOChannelCapture(t *testing.T) {
	f, err := os.Open("../testdata/frameworks/socket.io.channels.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src := `version: 1
owners: {team: {contact: team}}
families: []
presets:
  - use: socket.io
    owner: team
    with: {namespaces: ["/", "/chat"]}
`
	reg, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	globs := map[string]bool{}
	for _, c := range reg.Channels {
		if c.Mode == ModePattern {
			globs[c.SubscribeGlob] = true
		}
	}
	seen := map[string]bool{}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		kind, name, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		n++
		if kind == "psubscribed" {
			if !globs[name] {
				t.Errorf("the adapter PSUBSCRIBEd %q, no pattern channel's subscribe_glob", name)
			}
			seen["glob "+name] = true
			continue
		}
		fam := reg.ChannelMatcher().Match(name)
		if fam == nil {
			t.Errorf("%s %q belongs to no channel of the preset", kind, name)
			continue
		}
		c := reg.Channels[fam.Index]
		seen[c.Name] = true
		if kind == "subscribed" && c.Mode != ModeClassic {
			t.Errorf("%q is SUBSCRIBEd, and its channel %s is %s", name, c.Name, c.Mode)
		}
		if c.Glob != nil && !c.Glob.Match(name) {
			t.Errorf("%q (channel %s) is not matched by its subscribe_glob %q", name, c.Name, c.SubscribeGlob)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("empty capture")
	}
	for _, c := range reg.Channels {
		if !seen[c.Name] {
			t.Errorf("channel %s (%s) does not occur in the capture", c.Name, c.Pattern.Source)
		}
	}
	for g := range globs {
		if !seen["glob "+g] {
			t.Errorf("subscribe_glob %q was not PSUBSCRIBEd by the adapter", g)
		}
	}
}
