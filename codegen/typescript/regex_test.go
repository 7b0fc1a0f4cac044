package typescript

import (
	"regexp"
	"strings"
	"testing"
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
			if len(pattern) < 64 && !strings.Contains(pattern, "{") {
				t.Fatalf("no translation of %q", pattern)
			}
			return
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
