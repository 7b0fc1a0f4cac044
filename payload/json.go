package payload

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonParser is a single-pass JSON parser. With build unset it only checks
// the syntax and allocates nothing. With build set it produces the same
// values as encoding/json with UseNumber: map[string]any, []any, string,
// json.Number, bool and nil. Strings and numbers without escapes are
// substrings of one copy of the input, which saves an allocation each.
//
// Errors carry a byte offset and a fixed reason; they never quote input.
type jsonParser struct {
	b      []byte
	s      string // string(b), made only when building
	i      int
	depth  int
	build  bool
	errOff int
	err    string
}

// Limits on number literals. jsonschema v6 turns every number it checks
// into a big.Rat, which costs time quadratic in the digits: a 1 MB literal
// takes seconds. Real payloads never come close to these limits.
const (
	maxNumberLen      = 100 // bytes in a number literal
	maxExponentDigits = 4   // digits in its exponent
)

// parseJSON parses one JSON document. On failure it returns the byte offset
// and a value-free reason.
func parseJSON(b []byte, build bool) (any, int, string) {
	p := jsonParser{b: b, build: build}
	if build {
		p.s = string(b)
	}
	p.ws()
	v, ok := p.value()
	if !ok {
		return nil, p.errOff, p.err
	}
	p.ws()
	if p.i < len(p.b) {
		return nil, p.i, "invalid character after top-level value"
	}
	return v, 0, ""
}

// validJSON reports whether b is exactly one JSON document.
func validJSON(b []byte) bool {
	// Quick rejection: every JSON document starts with one of these.
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	if i == len(b) {
		return false
	}
	switch c := b[i]; {
	case c == '{', c == '[', c == '"', c == 't', c == 'f', c == 'n', c == '-', c >= '0' && c <= '9':
	default:
		return false
	}
	_, _, reason := parseJSON(b, false)
	return reason == ""
}

func (p *jsonParser) fail(off int, reason string) (any, bool) {
	if p.err == "" {
		p.errOff, p.err = off, reason
	}
	return nil, false
}

func (p *jsonParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (any, bool) {
	if p.i >= len(p.b) {
		return p.fail(p.i, "unexpected end of input")
	}
	switch c := p.b[p.i]; c {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		s, ok := p.str()
		if !ok || !p.build {
			return nil, ok
		}
		return s, true
	case 't':
		return p.literal("true", true)
	case 'f':
		return p.literal("false", false)
	case 'n':
		return p.literal("null", nil)
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return p.number()
		}
		return p.fail(p.i, "invalid character looking for beginning of value")
	}
}

func (p *jsonParser) literal(word string, v any) (any, bool) {
	for k := 0; k < len(word); k++ {
		if p.i+k >= len(p.b) {
			return p.fail(p.i+k, "unexpected end of input")
		}
		if p.b[p.i+k] != word[k] {
			return p.fail(p.i+k, "invalid character in literal "+word)
		}
	}
	p.i += len(word)
	return v, true
}

func (p *jsonParser) number() (any, bool) {
	start := p.i
	b := p.b
	if b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i >= len(b):
		return p.fail(p.i, "unexpected end of input")
	case b[p.i] == '0':
		p.i++
	case b[p.i] >= '1' && b[p.i] <= '9':
		for p.i < len(b) && b[p.i] >= '0' && b[p.i] <= '9' {
			p.i++
		}
	default:
		return p.fail(p.i, "invalid character in numeric literal")
	}
	if p.i < len(b) && b[p.i] == '.' {
		p.i++
		if !p.digits() {
			return nil, false
		}
	}
	if p.i < len(b) && (b[p.i] == 'e' || b[p.i] == 'E') {
		p.i++
		if p.i < len(b) && (b[p.i] == '+' || b[p.i] == '-') {
			p.i++
		}
		e := p.i
		if !p.digits() {
			return nil, false
		}
		if p.i-e > maxExponentDigits {
			return p.fail(e, "number exponent out of range")
		}
	}
	if p.i-start > maxNumberLen {
		return p.fail(start, "number longer than 100 bytes")
	}
	if !p.build {
		return nil, true
	}
	return json.Number(p.s[start:p.i]), true
}

// digits consumes one or more decimal digits.
func (p *jsonParser) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == start {
		if p.i >= len(p.b) {
			p.fail(p.i, "unexpected end of input")
		} else {
			p.fail(p.i, "invalid character in numeric literal")
		}
		return false
	}
	return true
}

func (p *jsonParser) enter() bool {
	p.depth++
	if p.depth > MaxDepth {
		p.fail(p.i, "nesting too deep")
		return false
	}
	return true
}

func (p *jsonParser) object() (any, bool) {
	if !p.enter() {
		return nil, false
	}
	p.i++ // '{'
	var m map[string]any
	if p.build {
		m = make(map[string]any)
	}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		p.depth--
		if !p.build {
			return nil, true
		}
		return m, true
	}
	for {
		if p.i >= len(p.b) {
			return p.fail(p.i, "unexpected end of input")
		}
		if p.b[p.i] != '"' {
			return p.fail(p.i, "invalid character looking for beginning of object key string")
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.ws()
		if p.i >= len(p.b) {
			return p.fail(p.i, "unexpected end of input")
		}
		if p.b[p.i] != ':' {
			return p.fail(p.i, "invalid character after object key")
		}
		p.i++
		p.ws()
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		if p.build {
			m[k] = v
		}
		p.ws()
		if p.i >= len(p.b) {
			return p.fail(p.i, "unexpected end of input")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.ws()
		case '}':
			p.i++
			p.depth--
			if !p.build {
				return nil, true
			}
			return m, true
		default:
			return p.fail(p.i, "invalid character after object key:value pair")
		}
	}
}

func (p *jsonParser) array() (any, bool) {
	if !p.enter() {
		return nil, false
	}
	p.i++ // '['
	var a []any
	if p.build {
		a = []any{}
	}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		p.depth--
		if !p.build {
			return nil, true
		}
		return a, true
	}
	for {
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		if p.build {
			a = append(a, v)
		}
		p.ws()
		if p.i >= len(p.b) {
			return p.fail(p.i, "unexpected end of input")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.ws()
		case ']':
			p.i++
			p.depth--
			if !p.build {
				return nil, true
			}
			return a, true
		default:
			return p.fail(p.i, "invalid character after array element")
		}
	}
}

// str parses a string starting at the opening quote. It returns the
// unescaped string when building, else "".
func (p *jsonParser) str() (string, bool) {
	b := p.b
	p.i++ // opening quote
	start := p.i
	// Fast path: printable ASCII and valid UTF-8 without escapes.
	for p.i < len(b) {
		c := b[p.i]
		switch {
		case c == '"':
			p.i++
			if !p.build {
				return "", true
			}
			return p.s[start : p.i-1], true
		case c == '\\':
			return p.slowStr(start)
		case c < 0x20:
			p.fail(p.i, "invalid control character in string literal")
			return "", false
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, n := utf8.DecodeRune(b[p.i:])
			if r == utf8.RuneError && n == 1 {
				return p.slowStr(start)
			}
			p.i += n
		}
	}
	p.fail(p.i, "unexpected end of input")
	return "", false
}

// slowStr continues a string that has escapes or invalid UTF-8, from p.i;
// b[start:p.i] is clean. Invalid UTF-8 becomes U+FFFD byte by byte, and an
// unpaired surrogate escape becomes U+FFFD, as in encoding/json.
func (p *jsonParser) slowStr(start int) (string, bool) {
	b := p.b
	var buf []byte
	if p.build {
		buf = make([]byte, 0, p.i-start+16)
		buf = append(buf, b[start:p.i]...)
	}
	for p.i < len(b) {
		c := b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), true
		case c == '\\':
			if p.i+1 >= len(b) {
				p.fail(p.i+1, "unexpected end of input")
				return "", false
			}
			e := b[p.i+1]
			var out byte
			switch e {
			case '"', '\\', '/':
				out = e
			case 'b':
				out = '\b'
			case 'f':
				out = '\f'
			case 'n':
				out = '\n'
			case 'r':
				out = '\r'
			case 't':
				out = '\t'
			case 'u':
				r, ok := p.u4(p.i)
				if !ok {
					return "", false
				}
				p.i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok2 := p.peekU4(p.i); ok2 {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							p.i += 6
							if p.build {
								buf = utf8.AppendRune(buf, dec)
							}
							continue
						}
					}
					r = utf8.RuneError
				}
				if p.build {
					buf = utf8.AppendRune(buf, r)
				}
				continue
			default:
				p.fail(p.i+1, "invalid character in string escape code")
				return "", false
			}
			if p.build {
				buf = append(buf, out)
			}
			p.i += 2
		case c < 0x20:
			p.fail(p.i, "invalid control character in string literal")
			return "", false
		case c < utf8.RuneSelf:
			if p.build {
				buf = append(buf, c)
			}
			p.i++
		default:
			r, n := utf8.DecodeRune(b[p.i:])
			if p.build {
				if r == utf8.RuneError && n == 1 {
					buf = utf8.AppendRune(buf, utf8.RuneError)
				} else {
					buf = append(buf, b[p.i:p.i+n]...)
				}
			}
			p.i += n
		}
	}
	p.fail(p.i, "unexpected end of input")
	return "", false
}

// u4 reads the \uXXXX escape at b[i:], failing on bad hex.
func (p *jsonParser) u4(i int) (rune, bool) {
	var r rune
	for k := 2; k < 6; k++ {
		if i+k >= len(p.b) {
			p.fail(i+k, "unexpected end of input")
			return 0, false
		}
		h, ok := unhex(p.b[i+k])
		if !ok {
			p.fail(i+k, "invalid character in \\u hexadecimal character escape")
			return 0, false
		}
		r = r<<4 | h
	}
	return r, true
}

// peekU4 reads a \uXXXX escape at b[i:] if there is a well-formed one.
func (p *jsonParser) peekU4(i int) (rune, bool) {
	if i+6 > len(p.b) || p.b[i] != '\\' || p.b[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for k := 2; k < 6; k++ {
		h, ok := unhex(p.b[i+k])
		if !ok {
			return 0, false
		}
		r = r<<4 | h
	}
	return r, true
}

func unhex(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10), true
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10), true
	}
	return 0, false
}
