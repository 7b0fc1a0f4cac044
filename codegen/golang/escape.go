package golang

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Registry text reaches the generated code in three forms only:
//   - identifiers, made by exported and unexported from ASCII letters and
//     digits, and made unique by a namer;
//   - string literals, always written with strconv.Quote (printf "%q" in
//     the templates), never inside raw `…` strings or format strings; the
//     one raw string, a struct tag, holds only names that pass validTag,
//     which rejects the backquote;
//   - comment text, always passed through comment, which leaves printable
//     text as written and escapes everything that could end a // comment,
//     break the Go scanner or mislead a reader (newlines, CR, NUL, other
//     control bytes, invalid UTF-8, U+2028, bidirectional controls, BOM).

// comment makes s safe to write after "// " on one line of a comment. A
// printable rune (strconv.IsPrint: letters, marks, numbers, punctuation,
// symbols and the ASCII space) is kept; any other byte below 0x80 and any
// byte of invalid UTF-8 becomes \xHH, any other rune \uHHHH or \UHHHHHHHH,
// as in a Go string literal. Backslashes are kept as they are, so comment
// is idempotent.
func comment(s string) string {
	if safeComment(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case strconv.IsPrint(r):
			b.WriteString(s[:n])
		case r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		s = s[n:]
	}
	return b.String()
}

// safeComment reports whether comment leaves s as it is.
func safeComment(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}
