package typescript

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

// TestUnknownEnumValueName checks that a string enum's type holds
// UnknownEnumValue, and that a family whose value type would take that
// name (unknown-enum) gets a suffix instead of redeclaring it.
func TestUnknownEnumValueName(t *testing.T) {
	y := "version: 1\nfamilies:\n  - name: unknown-enum\n    pattern: \"v1:u:{id}\"\n    type: string\n    encoding: json\n    ttl: 1h\n    schema: {\"enum\": [\"a\", \"b\"]}\n"
	reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	req, err := codegen.NewRequest(reg, codegen.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	for _, client := range []string{ClientRedis, ClientNone} {
		files, err := Generator{Client: client}.Generate(req)
		if err != nil {
			t.Fatal(err)
		}
		src := string(files[0].Data)
		if n := strings.Count(src, "export type UnknownEnumValue ="); n != 1 {
			t.Errorf("%s: UnknownEnumValue declared %d times", client, n)
		}
		if client == ClientRedis && !strings.Contains(src, `export type UnknownEnum2Value = "a" | "b" | UnknownEnumValue;`) {
			t.Errorf("%s: the family's value type is not the enum's literals and UnknownEnumValue", client)
		}
	}
}
