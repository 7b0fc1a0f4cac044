package registry

import (
	"errors"
	"strings"
	"testing"
)

// TestPatternHexEscape: "\xHH" is one literal byte everywhere a pattern is
// used: its literal, the matcher and its automaton, shapes, the glob and the
// overlap proof.
func TestPatternHexEscape(t *testing.T) {
	// kombu's priority queues: the queue name, "\x06\x16", the priority.
	p, err := ParsePattern(`celery\x06\x16{priority:int}`, ':')
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Parts[0].Lit; got != "celery\x06\x16" {
		t.Fatalf("literal %q, want %q", got, "celery\x06\x16")
	}
	if p.Source != `celery\x06\x16{priority:int}` || p.LiteralBytes() != 8 {
		t.Errorf("source %q, %d literal bytes; want the source as written and 8", p.Source, p.LiteralBytes())
	}
	if got := p.Glob(); got != "celery\x06\x16*" {
		t.Errorf("Glob() = %q, want the raw bytes", got)
	}
	fams := []*Family{{Name: "kombu", Pattern: p}}
	m := NewMatcher(fams, ':')
	for key, want := range map[string]bool{
		"celery\x06\x163": true, "celery\x06\x16": false, `celery\x06\x163`: false, "celery\x06\x173": false,
	} {
		if got := m.Match(key) != nil; got != want {
			t.Errorf("Match(%q) = %v, want %v", key, got, want)
		}
		checkDFA(t, m, key, true)
		f, params := m.MatchParams(key, nil)
		if want && (f == nil || len(params) != 1 || params[0].Value != "3") {
			t.Errorf("MatchParams(%q) = %v, %v", key, f, params)
		}
	}
	if got := (&Registry{Families: fams, Separator: ':'}).ShapeMatcher().Match("celery\x06\x16x"); got == nil {
		t.Error("shape of the escaped pattern does not match a key with the escaped bytes")
	}
	// Either case of hex digit; escaped glob metacharacters are escaped in the glob.
	q, err := ParsePattern(`a\x2A\x5c\x7b{b}\x7D`, ':')
	if err != nil {
		t.Fatal(err)
	}
	if q.Parts[0].Lit != `a*\{` || q.Parts[2].Lit != "}" || q.Glob() != `a\*\\{*}` {
		t.Errorf("parts %+v, glob %q", q.Parts, q.Glob())
	}
	// The overlap proof reads the escaped byte, and its example holds it.
	if ex, ok := ovPair(t, ':', `q\x06{p:int}`, `q\x06{p}`); !ok || ex != "q\x060" {
		t.Errorf("overlap example %q, %v; want %q", ex, ok, "q\x060")
	}
	if ex, ok := ovPair(t, ':', `q\x06{p}`, `q\x07{p}`); ok {
		t.Errorf("different escaped bytes overlap, example %q", ex)
	}
}

func TestPatternControlBytes(t *testing.T) {
	for _, tc := range []struct {
		src  string
		off  int
		want string
	}{
		{"v1:a:{id:int}\nvar _, _ = fmt.Println(\"INJECTED\")\n//", 13, `control byte '\n' in the pattern: write it as "\x0a" (in a double-quoted YAML string "\\x0a", or single-quote the pattern)`},
		{"celery\x06\x16{p:int}", 6, `control byte '\x06' in the pattern: write it as "\x06"`},
		{"a\x7f{b}", 1, `control byte '\x7f'`},
		{"a\t{b}", 1, `control byte '\t'`},
		{"{a\x00}", 2, `control byte '\x00'`},
		{`a\x6`, 1, `bad escape: "\x" takes exactly two hex digits, such as "\x06"`},
		{`a\x6g{b}`, 1, `bad escape: "\x"`},
		{`a\é`, 1, `unknown escape "\é" (want "\{", "\}", "\\" or "\xHH")`},
		{`a\n{b}`, 1, `unknown escape "\n"`},
	} {
		_, err := ParsePattern(tc.src, ':')
		var pe *PatternError
		if !errors.As(err, &pe) || pe.Offset != tc.off || !strings.Contains(pe.Msg, tc.want) {
			t.Errorf("ParsePattern(%q) = %v; want an error at offset %d containing %s", tc.src, err, tc.off, tc.want)
		}
	}
	// Non-ASCII UTF-8 stays allowed, raw.
	if p, err := ParsePattern("café:{n:int}", ':'); err != nil || p.Parts[0].Lit != "café:" {
		t.Errorf("non-ASCII pattern: %v, %v", p, err)
	}
}
