package registry

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// sampleValue returns a valid value for a placeholder type, or "" when the
// separator makes the usual sample invalid.
func sampleValue(t PlaceholderType, sep byte) string {
	v := map[PlaceholderType]string{Word: "w", Int: "7", UUID: uuidLower, Hex: "ab", ULID: ulidOK, Any: "x"}[t]
	if !t.Valid(v, sep) {
		return ""
	}
	return v
}

// globParts splits a glob made by Pattern.Glob back into literals, with
// "*" standing for each placeholder.
func globParts(g string) []string {
	var out []string
	var lit strings.Builder
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '\\':
			i++
			lit.WriteByte(g[i])
		case '*':
			if lit.Len() > 0 {
				out = append(out, lit.String())
				lit.Reset()
			}
			out = append(out, "*")
		default:
			lit.WriteByte(g[i])
		}
	}
	if lit.Len() > 0 {
		out = append(out, lit.String())
	}
	return out
}

// escapeSource writes p back as a source in which every literal byte that
// is not printable ASCII is a \xHH escape.
func escapeSource(p *Pattern) string {
	var b strings.Builder
	for i, pt := range p.Parts {
		if pt.IsPlaceholder() {
			body := pt.Name
			if pt.Typed {
				body += ":" + pt.Type.String()
			}
			if pt.HashTag {
				body = "{" + body + "}"
			}
			b.WriteString("{" + body + "}")
			continue
		}
		lit := pt.Lit
		// A hash tag's braces are the last byte of the literal before it
		// and the first of the one after; the tag writes them.
		if i > 0 && p.Parts[i-1].HashTag {
			lit = lit[1:]
		}
		if i+1 < len(p.Parts) && p.Parts[i+1].HashTag {
			lit = lit[:len(lit)-1]
		}
		for j := 0; j < len(lit); j++ {
			switch c := lit[j]; {
			case c == '{' || c == '}' || c == '\\':
				b.WriteString(`\` + string(c))
			case c < 0x20 || c >= 0x7f:
				fmt.Fprintf(&b, `\x%02x`, c)
			default:
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

// sameParts compares parts ignoring their offsets.
func sameParts(a, b []Part) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Lit != y.Lit || x.Name != y.Name || x.Type != y.Type || x.Typed != y.Typed || x.HashTag != y.HashTag {
			return false
		}
	}
	return true
}

func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{
		"v2:user:session:{session_id:uuid}", "cart:{{user_id:int}}:items", ":1:{key:any}",
		`a\{b\}c\\d:{x}`, "{a}{b}", "{a}:{a}", "{A}", "{a:nope}", "{", "}", "{{a}", "{{a}}}", `\`, `\x`,
		"x*y?[z]:{id:hex}", "{a:ulid}-{b:int}.{c:word}", "\x00\xff:{id}", "café:{n:int}", "{}", "{:int}",
		`celery\x06\x16{p:int}`, `a\x2a\x5C\x7b{b}\x7D`, `\x0`, `\xg0`, `a\x`, "a\n{b}", "a\x7f", `\x00{a}\xff`,
	} {
		f.Add(s, byte(':'))
	}
	f.Add("a/{b}/c", byte('/'))
	f.Add("a-{b:int}-c", byte('-'))
	f.Fuzz(func(t *testing.T, src string, sep byte) {
		p, err := ParsePattern(src, sep)
		if err != nil {
			var pe *PatternError
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > len(src) {
				t.Fatalf("ParsePattern(%q): error %v is not a PatternError within the source", src, err)
			}
			return
		}
		if len(p.Parts) == 0 {
			t.Fatalf("ParsePattern(%q): no parts", src)
		}
		if len(src) > MaxPatternLen || len(p.Placeholders()) > MaxPlaceholders {
			t.Fatalf("%q: parsed beyond the limits", src)
		}
		for i := 0; i < len(src); i++ {
			if isControl(src[i]) {
				t.Fatalf("%q: raw control byte at %d accepted", src, i)
			}
		}
		// Written back with escapes, the pattern parses to the same parts:
		// an escaped byte is exactly one literal byte.
		if again, err := ParsePattern(escapeSource(p), sep); err != nil || !sameParts(again.Parts, p.Parts) {
			t.Fatalf("%q: rewritten as %q parses to %+v, %v; want %+v", src, escapeSource(p), again, err, p.Parts)
		}
		lits, names := 0, map[string]bool{}
		for i, pt := range p.Parts {
			if pt.IsPlaceholder() {
				if pt.Lit != "" || names[pt.Name] {
					t.Fatalf("%q: bad placeholder %+v", src, pt)
				}
				names[pt.Name] = true
				if i > 0 && p.Parts[i-1].IsPlaceholder() {
					t.Fatalf("%q: adjacent placeholders", src)
				}
				continue
			}
			if pt.Lit == "" || (i > 0 && !p.Parts[i-1].IsPlaceholder()) {
				t.Fatalf("%q: empty or unmerged literal at part %d", src, i)
			}
			lits += len(pt.Lit)
		}
		if lits != p.LiteralBytes() || len(names) != len(p.Placeholders()) {
			t.Fatalf("%q: LiteralBytes or Placeholders inconsistent", src)
		}
		// The glob has one "*" per placeholder and the literals in between.
		gp := globParts(p.Glob())
		if len(gp) != len(p.Parts) {
			t.Fatalf("%q: glob %q has %d parts, pattern %d", src, p.Glob(), len(gp), len(p.Parts))
		}
		for i, pt := range p.Parts {
			if want := pt.Lit; pt.IsPlaceholder() && gp[i] != "*" || !pt.IsPlaceholder() && gp[i] != want {
				t.Fatalf("%q: glob part %d is %q, pattern part %+v", src, i, gp[i], pt)
			}
		}
		// Build from sample values, and match the key back.
		values := map[string]string{}
		for _, pt := range p.Placeholders() {
			v := sampleValue(pt.Type, sep)
			if v == "" {
				return
			}
			values[pt.Name] = v
		}
		key, err := p.Build(values)
		if err != nil {
			t.Fatalf("%q: Build(%v): %v", src, values, err)
		}
		fams := []*Family{{Name: "f", Pattern: p}}
		m := NewMatcher(fams, sep)
		fam, params := m.MatchParams(key, nil)
		if fam == nil {
			t.Fatalf("%q: built key %q does not match", src, key)
		}
		got := map[string]string{}
		for _, prm := range params {
			got[prm.Name] = prm.Value
		}
		if again, err := p.Build(got); err != nil || again != key {
			t.Fatalf("%q: key %q binds %v, which builds %q (%v)", src, key, params, again, err)
		}
		checkAgainstRef(t, m, fams, key)
	})
}

func FuzzMatch(f *testing.F) {
	seeds := [][4]string{
		{"v2:user:session:{session_id:uuid}", "v2:user:{user_id:int}:sessions", "cart:{{user_id:int}}:items", "v2:user:session:" + uuidLower},
		{"v2:user:session:{session_id:uuid}", "v2:user:{user_id:int}:sessions", "cart:{{user_id:int}}:items", "v2:user:42:sessions"},
		{"v2:user:session:{session_id:uuid}", "v2:user:{user_id:int}:sessions", "cart:{{user_id:int}}:items", "cart:{42}:items"},
		{"a:{x:any}:{y:any}", "a:{x}:{y:any}", "a:{n:int}:b", "a:1:b:c"},
		{"i18n:{lang}-{region}", "i18n:{lang:hex}-{n:int}", "{all:any}", "i18n:ab-12"},
		{"{a:int}-{b:int}", "{a:hex}-{b}", "-{x}", "-1--2"},
		{"l:{id:ulid}", "l:{id:hex}", "l:{id}", "l:" + ulidOK},
		{"v1:{k:any}", "v1:user:{id}", "v1:user:42", "v1:user:42"},
		{`\{{x}\}`, "{{x}}", "{x}", "{a}"},
		{"\x00{a}\xff", "{b:any}\xff", "\x00x", "\x00a\xff"},
		{"{a:any}:{b:any}:{c:any}:end", "{a:any}:x", "{z}", strings.Repeat(":", 40) + "end"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], byte(':'))
	}
	f.Add("a/{b}/{c:any}", "a/{b:int}/x", "{d}", "a/1/x", byte('/'))
	f.Fuzz(func(t *testing.T, p1, p2, p3, key string, sep byte) {
		if len(key) > 512 {
			return
		}
		var fams []*Family
		for _, src := range []string{p1, p2, p3} {
			p, err := ParsePattern(src, sep)
			if err != nil {
				continue
			}
			fams = append(fams, &Family{Index: len(fams), Name: src, Pattern: p})
		}
		m := NewMatcher(fams, sep)
		checkAgainstRef(t, m, fams, key)
		cf, reason := m.Closest(key)
		if mf := m.Match(key); mf != nil {
			if cf != mf || reason != "" {
				t.Fatalf("key %q matches %s but Closest = %s, %q", key, famName(mf), famName(cf), reason)
			}
		} else if cf != nil && reason == "" {
			t.Fatalf("key %q matches nothing but Closest gives %s without a reason", key, famName(cf))
		}
	})
}
