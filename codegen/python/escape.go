package python

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyStr writes s as a Python string literal in double quotes. Only
// printable ASCII stands for itself (a quote and a backslash escaped);
// every other character is an escape, so the literal is pure ASCII and no
// text of s can end it or the line. A byte that is not valid UTF-8 becomes
// the lone surrogate U+DC80+b, as Python's "surrogateescape" decodes it, so
// s.encode("utf-8", "surrogateescape") gives the bytes back.
func pyStr(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\udc%02x`, s[i])
			i++
			continue
		}
		i += n
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// fLit writes s as the literal text of a Python f-string: pyStr's escapes,
// with the braces doubled, without the quotes.
func fLit(s string) string {
	q := pyStr(s)
	q = q[1 : len(q)-1]
	return strings.NewReplacer("{", "{{", "}", "}}").Replace(q)
}

// comment makes s safe inside a # comment: printable text stays as
// written; a line break (which would end the comment), any other rune
// that is not printable and every byte of invalid UTF-8 is shown as an
// escape, \xHH, \uHHHH or \UHHHHHHHH.
func comment(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
			i++
			continue
		}
		i += n
		switch {
		case r < 0x80 && (r < 0x20 || r == 0x7f):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x80 || unicode.IsPrint(r) && r != '\u00a0':
			b.WriteRune(r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	return b.String()
}

// prose is comment for descriptions: white space runs become one space.
func prose(s string) string {
	return comment(strings.Join(strings.Fields(s), " "))
}

// reLit writes the bytes of a pattern literal as Python regular
// expression text: letters, digits and the underscore stand for
// themselves, every other ASCII character is escaped (a backslash before
// a character that is not a letter or digit is that character), and
// non-ASCII stays as it is (pyStr escapes it for the source).
func reLit(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteByte(s[i]) // pyStr turns it into its surrogate
			i++
			continue
		}
		i += n
		switch {
		case r < 0x80 && (r < 0x20 || r == 0x7f):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x80 && !(r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
