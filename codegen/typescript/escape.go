package typescript

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// str writes s as a TypeScript string literal in double quotes that holds
// only printable ASCII: quotes and backslashes are escaped and every other
// character is a \uXXXX escape of its UTF-16 code units, so no registry
// text can end the literal or the line. s must be valid UTF-8 (the
// request's literals are; a family whose bytes are not is refused).
func str(s string) string {
	return quote(s, '"')
}

// tmplLit writes s as the text of a template literal type (between
// backquotes): as str, with backquote and $ escaped too.
func tmplLit(s string) string {
	q := quote(s, '`')
	return q[1 : len(q)-1]
}

func quote(s string, q byte) string {
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\' || r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '$':
			b.WriteString(`\u0024`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16Pair(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// comment makes s safe inside a /** … */ or // comment: printable
// characters stay as written, "*/" becomes "*\/", and every other
// character (line breaks, U+2028, U+2029, controls, bidirectional
// controls, invalid UTF-8 bytes) is shown as \xHH or \uHHHH.
func comment(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '*' && strings.HasPrefix(s[i+1:], "/"):
			b.WriteString(`*\`)
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}
