package typescript

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

// TestJSRegexSource checks what the translation writes: printable ASCII
// only (every other character is a \u{…} escape, so no pattern can end
// the literal or the line it is written in), non-capturing groups, and
// nothing for a pattern Go does not compile.
func TestJSRegexSource(t *testing.T) {
	for pattern, want := range map[string]string{
		`^a\.b$`:             `(?:^)(?:a\u{2E}b)(?:$)`,
		`\s`:                 `[\u{9}-\u{A}\u{C}-\u{D}\u{20}]`,
		`(?i)k`:              `[Kk\u{212A}]`,
		`(x)+?`:              `(?:(?:x))+?`,
		`a{2,}`:              `(?:a){2,}`,
		`(?m)^b$`:            `(?:(?<![^\n]))(?:b)(?:(?![^\n]))`,
		`(?s).\z`:            `(?:[\s\S])(?:$)`,
		`[^\x00-\x{10FFFF}]`: `[^\s\S]`,
		`(?i)abc`:            `[Aa][Bb][Cc]`,
	} {
		got, ok := jsRegex(pattern)
		if !ok || got != want {
			t.Errorf("jsRegex(%q) = %q, %v; want %q", pattern, got, ok, want)
		}
	}
	for _, bad := range []string{`(a)\1`, `(?=a)`, `a**`, `[z-a]`, `\C`} {
		if got, ok := jsRegex(bad); ok {
			t.Errorf("jsRegex(%q) = %q, want no translation", bad, got)
		}
	}
}

// FuzzJSRegex translates any pattern Go compiles: the translation exists,
// is bounded and is printable ASCII.
func FuzzJSRegex(f *testing.F) {
	for _, p := range diffPatterns {
		f.Add(p)
	}
	f.Add(`\pL{1000}`)
	f.Add("\u2028`${x}\"'*/")
	f.Fuzz(func(t *testing.T, pattern string) {
		if _, err := regexp.Compile(pattern); err != nil {
			return
		}
		src, ok := jsRegex(pattern)
		if !ok {
			return // longer than maxRegexSource (many Unicode classes)
		}
		if len(src) > maxRegexSource {
			t.Fatalf("translation of %d bytes", len(src))
		}
		for i := 0; i < len(src); i++ {
			if src[i] < 0x20 || src[i] > 0x7e {
				t.Fatalf("jsRegex(%q) has byte %#x", pattern, src[i])
			}
		}
	})
}

// TestPatternSourcesBounded generates a module whose schema has 300
// patterns of five Unicode classes (23 KiB of translation each): the
// translations stop at maxRegexSources, and the module stays bounded.
func TestPatternSourcesBounded(t *testing.T) {
	var props []string
	for i := range 300 {
		props = append(props, fmt.Sprintf(`"p%d":{"pattern":"^\\pL\\pN\\pS\\pP\\pM{%d}$"}`, i, i+1))
	}
	y := "version: 1\nfamilies:\n  - name: f\n    pattern: \"v1:f:{id}\"\n    type: string\n    encoding: json\n    ttl: 1h\n    schema: {\"properties\":{" + strings.Join(props, ",") + "}}\n"
	reg, err := registry.Parse(fstest.MapFS{}, "keys.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	req, err := codegen.NewRequest(reg, codegen.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generator{Client: ClientRedis}.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[0].Data)
	n := strings.Count(src, `  ["^\\pL\\pN`)
	if n == 0 || n >= 300 {
		t.Errorf("%d of 300 patterns translated, want some but not all", n)
	}
	if len(src) > maxRegexSources+1<<20 {
		t.Errorf("the module is %d bytes", len(src))
	}
}
