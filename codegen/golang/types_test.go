package golang

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/registry"
)

// typeProbes are placeholder values that tell the types apart.
var typeProbes = []string{
	"", "1", "-1", "-", "12-3", "abc", "ABC", "0123abcd", "x y", "a:b", "_", "é",
	"123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000", "123e4567e89b12d3a456426614174000",
	"01ARZ3NDEKTSV4RRFFQ69G5FAV", "01arz3ndektsv4rrffq69g5fav", "01ARZ3NDEKTSV4RRFFQ69G5FAI", "01ARZ3NDEKTSV4RRFFQ69G5FA",
	"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "81ARZ3NDEKTSV4RRFFQ69G5FAV", "Z1ARZ3NDEKTSV4RRFFQ69G5FAV", // past 7, 26 characters overflow 128 bits
}

// TestRuntimeTypesAgree generates code for one family per placeholder type
// of registry.PlaceholderTypes, runs it on typeProbes, and checks that the
// generated runtime accepts exactly the values registry's Valid accepts. A
// type added to the registry's table but not to codegen fails here.
func TestRuntimeTypesAgree(t *testing.T) {
	reg := &registry.Registry{Version: 1, Separator: ':'}
	for i, pt := range registry.PlaceholderTypes() {
		if _, ok := typeConsts[pt]; !ok {
			t.Errorf("type %v has no constant in codegen's typeConsts", pt)
		}
		reg.Families = append(reg.Families, &registry.Family{
			Name: "f" + string(rune('a'+i)), Type: "string", Encoding: "text",
			Pattern: pattern(lit("p:"), ph("v", pt), lit(":e")),
		})
	}
	out, err := Generate(reg, Options{Package: "main", Client: ClientNone})
	if err != nil {
		t.Fatal(err)
	}
	var main strings.Builder
	main.WriteString("package main\n\nimport \"fmt\"\n\nvar probes = []string{")
	for _, p := range typeProbes {
		main.WriteString(strconv.Quote(p) + ", ")
	}
	main.WriteString("}\n\nfunc main() {\n\tfor _, v := range probes {\n\t\tk := \"p:\" + v + \":e\"\n")
	for i := range reg.Families {
		fmt.Fprintf(&main, "\t\t_, err%d := ParseF%c(k)\n\t\tfmt.Print(err%d == nil, \" \")\n", i, 'a'+i, i)
	}
	main.WriteString("\t\tfmt.Println()\n\t}\n}\n")
	dir := mkTempPackageDir(t)
	for name, data := range map[string][]byte{goldenOut: out, "main.go": []byte(main.String())} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", "./"+filepath.ToSlash(dir))
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, got)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != len(typeProbes) {
		t.Fatalf("%d lines for %d probes:\n%s", len(lines), len(typeProbes), got)
	}
	for i, v := range typeProbes {
		fields := strings.Fields(lines[i])
		for j, pt := range registry.PlaceholderTypes() {
			want := pt.Valid(v, ':')
			if j >= len(fields) || fields[j] != strconv.FormatBool(want) {
				t.Errorf("type %v, value %q: generated runtime says %v, registry says %v", pt, v, fields, want)
			}
		}
	}
}
