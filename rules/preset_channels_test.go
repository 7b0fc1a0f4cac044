package rules

import (
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/registry"
)

// TestPresetChannelsLintClean lints a registry made of the channel
// presets only (socket.io with several namespaces and keys, so that its
// channels meet one another): it is clean, and with cluster: true only the classic
// and pattern channels (PUBLISH, copied to every node) are warned about.
func TestPresetChannelsLintClean(t *testing.T) {
	src := `version: 1
owners: {team: {contact: team}}
families: []
presets:
  - use: celery
    owner: team
  - use: socket.io
    owner: team
    with: {namespaces: ["/", "/chat", "/admin"], key: [socket.io, app]}
`
	for _, cluster := range []bool{false, true} {
		text := src
		if cluster {
			text = "cluster: true\n" + src
		}
		reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(text)}}, "keys.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if len(reg.Channels) != 2+5*3*2 {
			t.Fatalf("%d channels, want %d", len(reg.Channels), 2+5*3*2)
		}
		var rules []string
		for _, d := range Lint(reg) {
			if d.Rule != ChannelClassicCluster.ID {
				t.Errorf("cluster %v: %s", cluster, d)
			}
			rules = append(rules, d.Rule)
		}
		sort.Strings(rules)
		if !cluster && len(rules) != 0 {
			t.Errorf("without cluster: %v", rules)
		}
		if cluster && len(rules) == 0 {
			t.Errorf("cluster: true, and no %s warning for socket.io's classic channels", ChannelClassicCluster.ID)
		}
		if cluster && len(rules) != 2+5*3*2 {
			t.Errorf("cluster: true: %d warnings (%s), want one per channel", len(rules), strings.Join(rules, ","))
		}
	}
}
