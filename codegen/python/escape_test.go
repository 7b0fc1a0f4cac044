package python

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// pyUnquote reads a double-quoted literal as Python does for the escapes
// pyStr writes (\xHH is the code point HH, as in Python, not a byte).
func pyUnquote(q string) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	q = q[1 : len(q)-1]
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if q[i] == '"' {
			return "", false
		}
		if q[i] != '\\' {
			b.WriteByte(q[i])
			continue
		}
		if i+1 >= len(q) {
			return "", false
		}
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[q[i+1]]
		if n == 0 {
			if q[i+1] != '"' && q[i+1] != '\\' {
				return "", false
			}
			b.WriteByte(q[i+1])
			i++
			continue
		}
		if i+2+n > len(q) {
			return "", false
		}
		r, err := strconv.ParseUint(q[i+2:i+2+n], 16, 32)
		if err != nil {
			return "", false
		}
		b.WriteRune(rune(r))
		i += 1 + n
	}
	return b.String(), true
}

// FuzzEscape: pyStr writes a literal of printable ASCII only that reads
// back, with Python's escapes, as s; fLit
// doubles every brace; comment leaves no line break and nothing
// unprintable. Run: go test ./codegen/python -run '^$' -fuzz FuzzEscape.
func FuzzEscape(f *testing.F) {
	for _, s := range hostileStrings {
		f.Add(s)
	}
	f.Add("{x}}{")
	f.Fuzz(func(t *testing.T, s string) {
		q := pyStr(s)
		for i := 0; i < len(q); i++ {
			if q[i] < 0x20 || q[i] >= 0x7f {
				t.Fatalf("pyStr(%q) = %q holds byte %#x", s, q, q[i])
			}
		}
		if utf8.ValidString(s) {
			if u, ok := pyUnquote(q); !ok || u != s {
				t.Fatalf("pyStr(%q) = %q reads back as %q, %v", s, q, u, ok)
			}
		}
		if l := fLit(s); strings.Count(l, "{") != 2*strings.Count(s, "{") || strings.Count(l, "}") != 2*strings.Count(s, "}") {
			t.Fatalf("fLit(%q) = %q", s, l)
		}
		c := comment(s)
		if !utf8.ValidString(c) || strings.ContainsAny(c, "\n\r\x00\x0b\x0c\x1c\x1d\x1e\u0085\u2028\u2029") {
			t.Fatalf("comment(%q) = %q", s, c)
		}
		for _, r := range c {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("comment(%q) = %q holds %U", s, c, r)
			}
		}
	})
}

// TestNames: snake case, and the arguments that would shadow a keyword,
// a builtin or another parameter.
func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"cart-items": "cart_items", "userId": "user_id", "HTML-fragment": "html_fragment", "9lives": "k9lives", "--": "key",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
	taken := map[string]bool{}
	for in, want := range map[string]string{"class": "class_", "type": "type_", "client": "client_", "user_id": "user_id"} {
		if got := argName(in, taken); got != want {
			t.Errorf("argName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := argName("user-id", taken); got != "user_id2" {
		t.Errorf("a second user_id: %q", got)
	}
}
