package python

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/internal/redistest"
)

const channelsRegistry = "codegen/python/testdata/channels.keys.yaml"

// TestChannelsRoundTrip runs testdata/channels.py (checked with mypy
// --strict against the module) on a real standalone server and on a real
// three-master cluster: classic, sharded and pattern channels published
// and received through the generated code, decoded and typed; refused
// payloads that send nothing (INFO commandstats: publish and spublish move
// by exactly the valid sends); raw messages that break the schema, the
// encoding or the pattern raise while the subscription goes on; on the
// cluster, a sharded channel whose slot is on another master than the
// seed, its SSUBSCRIBE registered on that master only; asyncio on
// standalone.
func TestChannelsRoundTrip(t *testing.T) {
	py := python(t)
	dir := generate(t, loadReq(t, channelsRegistry, codegen.Scope{}))
	script, err := os.ReadFile(filepath.Join(root(t), "codegen/python/testdata/channels.py"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "channels.py"), script, 0o644))
	mypyStrict(t, dir, "channels.py")
	for _, mode := range []string{"standalone", "cluster"} {
		t.Run(mode, func(t *testing.T) {
			var url string
			if mode == "cluster" {
				url = redistest.Cluster(t).URL()
			} else {
				url = redistest.Standalone(t).URL()
			}
			out := strings.TrimSpace(run(t, dir, py, "channels.py", dir, url, mode))
			n, err := strconv.Atoi(strings.TrimPrefix(out, "ok "))
			if err != nil || n < 30 {
				t.Fatalf("channels.py: %q", out)
			}
			t.Logf("%d checks passed", n)
		})
	}
}

// publishRE finds a way to send PUBLISH: the command's name (SPUBLISH
// aside) or redis-py's publish method.
var publishRE = regexp.MustCompile(`(^|[^S])PUBLISH|(?i)[^_s]publish\(|"publish"`)

// TestShardedNeverPublish: a module whose only channel is sharded holds no
// way to send PUBLISH at all, and its publishers send SPUBLISH.
func TestShardedNeverPublish(t *testing.T) {
	req := loadReq(t, channelsRegistry, codegen.Scope{Channels: []string{"room"}})
	files, err := Generator{}.Generate(req)
	must(t, err)
	src := string(files[0].Data)
	if m := publishRE.FindString(src); m != "" {
		t.Errorf("the sharded channel's module can send PUBLISH: %q", m)
	}
	for _, fn := range []string{"def publish_room(", "async def apublish_room(", "def _kr_spublish("} {
		i := strings.Index(src, "\n"+fn)
		if i < 0 {
			t.Fatalf("no %s", fn)
		}
		body := src[i+1:]
		if j := strings.Index(body, "\n\n\n"); j > 0 {
			body = body[:j]
		}
		if !strings.Contains(body, "SPUBLISH") {
			t.Errorf("%s does not send SPUBLISH:\n%s", fn, body)
		}
	}
	// The check itself finds a classic channel's PUBLISH.
	all, err := Generator{}.Generate(loadReq(t, channelsRegistry, codegen.Scope{Channels: []string{"headlines"}}))
	must(t, err)
	if publishRE.FindString(string(all[0].Data)) == "" {
		t.Error("the classic channel's module has no PUBLISH: the check is blind")
	}
}
