package registry

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// PlaceholderType is the byte language of a placeholder.
type PlaceholderType uint8

// Placeholder types. Word is the default for an untyped {name}.
const (
	Word PlaceholderType = iota // one or more bytes, none of them the separator
	Int                         // -?[0-9]+
	UUID                        // 8-4-4-4-12 hex digits, either case
	Hex                         // [0-9a-fA-F]+
	ULID                        // 26 Crockford base32 characters, either case, the first 0-7 (128 bits)
	Any                         // one or more bytes of any kind, separator included
)

// placeholderTypeNames is the one table of placeholder types, indexed by
// PlaceholderType: its length is the number of types, so a type added to
// the constants above and named here is known to every table built from
// it (the matcher's byte classes, the automaton, the overlap proof).
// AcceptsAt and FixedLen say what its values are; codegen's runtime and the
// demo's value generator have tests that fail when they miss a type of
// PlaceholderTypes.
var placeholderTypeNames = [...]string{Word: "word", Int: "int", UUID: "uuid", Hex: "hex", ULID: "ulid", Any: "any"}

// numTypes is the number of placeholder types.
const numTypes = len(placeholderTypeNames)

// PlaceholderTypes returns every placeholder type, in declaration order.
func PlaceholderTypes() []PlaceholderType {
	ts := make([]PlaceholderType, numTypes)
	for i := range ts {
		ts[i] = PlaceholderType(i)
	}
	return ts
}

// String returns the name used in patterns, such as "uuid".
func (t PlaceholderType) String() string {
	if int(t) < len(placeholderTypeNames) {
		return placeholderTypeNames[t]
	}
	return fmt.Sprintf("placeholder(%d)", int(t))
}

// ParsePlaceholderType parses a type name used in {name:type}.
func ParsePlaceholderType(s string) (PlaceholderType, bool) {
	for i, n := range placeholderTypeNames {
		if n == s {
			return PlaceholderType(i), true
		}
	}
	return 0, false
}

// FixedLen returns the length of every value of t, or 0 when it varies.
func (t PlaceholderType) FixedLen() int {
	switch t {
	case UUID:
		return 36
	case ULID:
		return 26
	}
	return 0
}

// AcceptsAt reports whether byte b may stand at index i of a value of type t.
// For variable-length types the index does not matter. Int accepts '-' only
// at index 0. The separator is never accepted, except by Any.
func (t PlaceholderType) AcceptsAt(i int, b, sep byte) bool {
	switch t {
	case Any:
		return true
	case Word:
		return b != sep
	case Int:
		return isDigit(b) || (i == 0 && b == '-')
	case Hex:
		return isHex(b) && b != sep
	case UUID:
		if i == 8 || i == 13 || i == 18 || i == 23 {
			return b == '-'
		}
		return isHex(b) && b != sep
	case ULID:
		if i == 0 {
			// 26 characters of 5 bits hold 130: a ULID's 128 bits leave
			// the first at most 7.
			return '0' <= b && b <= '7' && b != sep
		}
		return isCrockford(b) && b != sep
	}
	return false
}

// Valid reports whether the whole of s is a value of type t.
func (t PlaceholderType) Valid(s string, sep byte) bool {
	if s == "" {
		return false
	}
	if n := t.FixedLen(); n != 0 && len(s) != n {
		return false
	}
	if t == Int && s == "-" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !t.AcceptsAt(i, s[i], sep) {
			return false
		}
	}
	return true
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// isControl reports whether b is an ASCII control byte, which a pattern
// must spell as an escape.
func isControl(b byte) bool { return b < 0x20 || b == 0x7f }

// unhex returns the value of a hex digit.
func unhex(b byte) byte {
	switch {
	case isDigit(b):
		return b - '0'
	case 'a' <= b && b <= 'f':
		return b - 'a' + 10
	}
	return b - 'A' + 10
}

func isHex(b byte) bool {
	return isDigit(b) || ('a' <= b && b <= 'f') || ('A' <= b && b <= 'F')
}

// isCrockford reports whether b is a Crockford base32 digit (no I, L, O, U).
func isCrockford(b byte) bool {
	if 'a' <= b && b <= 'z' {
		b -= 'a' - 'A'
	}
	switch {
	case isDigit(b):
		return true
	case 'A' <= b && b <= 'Z':
		return b != 'I' && b != 'L' && b != 'O' && b != 'U'
	}
	return false
}

// Part is one piece of a pattern: a literal run or a placeholder.
type Part struct {
	Lit     string          // the literal bytes, unescaped; empty for a placeholder
	Name    string          // the placeholder name; empty for a literal
	Type    PlaceholderType // the placeholder type
	Typed   bool            // the placeholder was written {name:type}
	HashTag bool            // the placeholder was written {{name}}: a Redis Cluster hash tag
	Offset  int             // byte offset of the part in the pattern source
}

// IsPlaceholder reports whether p is a placeholder.
func (p Part) IsPlaceholder() bool { return p.Name != "" }

// Pattern is a parsed key pattern such as "v2:user:session:{id:uuid}".
// Parts alternate freely between literals and placeholders, but two
// placeholders are never adjacent and two literals are always merged.
type Pattern struct {
	Source string
	Sep    byte
	Parts  []Part
}

// PatternError is a syntax error at a byte offset of a pattern.
type PatternError struct {
	Offset int
	Msg    string
}

// Error returns the message with the offset, counted from 1.
func (e *PatternError) Error() string { return fmt.Sprintf("column %d: %s", e.Offset+1, e.Msg) }

// Limits on a pattern, so that a hostile registry cannot make loading,
// matching or the overlap proof slow or large. Real key patterns are a few
// dozen bytes with a handful of placeholders.
const (
	// MaxPatternLen is the longest pattern source, in bytes as written
	// (escapes count as written, so "\x06" is four bytes).
	MaxPatternLen = 1024
	// MaxPlaceholders is the largest number of placeholders in a pattern.
	MaxPlaceholders = 32
)

// ParsePattern parses src. sep is the registry's segment separator.
//
// Besides placeholders, the grammar has the escapes "\{", "\}", "\\" and
// "\xHH" (exactly two hex digits, either case) for any byte. A raw control
// byte (0x00-0x1F or 0x7F) is an error: it must be written as "\xHH", so
// that a pattern never hides a line break or another invisible byte.
func ParsePattern(src string, sep byte) (*Pattern, error) {
	p := &Pattern{Source: src, Sep: sep}
	if src == "" {
		return nil, &PatternError{0, "pattern is empty"}
	}
	if len(src) > MaxPatternLen {
		return nil, &PatternError{0, fmt.Sprintf("pattern is %d bytes long, more than the limit of %d", len(src), MaxPatternLen)}
	}
	for i := 0; i < len(src); i++ {
		if c := src[i]; isControl(c) {
			return nil, &PatternError{i, fmt.Sprintf(`control byte %s in the pattern: write it as "\x%02x" (in a double-quoted YAML string "\\x%02x", or single-quote the pattern)`, strconv.QuoteRune(rune(c)), c, c)}
		}
	}
	var lit strings.Builder
	litStart := 0
	flush := func() {
		if lit.Len() > 0 {
			p.Parts = append(p.Parts, Part{Lit: lit.String(), Offset: litStart})
			lit.Reset()
		}
	}
	addLit := func(off int, s string) {
		if lit.Len() == 0 {
			litStart = off
		}
		lit.WriteString(s)
	}
	seen := map[string]bool{}
	for i := 0; i < len(src); {
		switch c := src[i]; c {
		case '\\':
			if i+1 >= len(src) {
				return nil, &PatternError{i, `trailing "\" (write "\\" for a literal backslash)`}
			}
			switch n := src[i+1]; n {
			case '{', '}', '\\':
				addLit(i, string(n))
				i += 2
			case 'x':
				if i+3 >= len(src) || !isHex(src[i+2]) || !isHex(src[i+3]) {
					return nil, &PatternError{i, `bad escape: "\x" takes exactly two hex digits, such as "\x06"`}
				}
				addLit(i, string([]byte{unhex(src[i+2])<<4 | unhex(src[i+3])}))
				i += 4
			default:
				_, size := utf8.DecodeRuneInString(src[i+1:])
				return nil, &PatternError{i, fmt.Sprintf(`unknown escape "\%s" (want "\{", "\}", "\\" or "\xHH")`, src[i+1:i+1+size])}
			}
		case '}':
			return nil, &PatternError{i, `unbalanced "}" (write "\}" for a literal brace)`}
		case '{':
			hashTag := i+1 < len(src) && src[i+1] == '{'
			open := 1
			if hashTag {
				open = 2
			}
			body := i + open
			end := strings.IndexByte(src[body:], '}')
			if end < 0 {
				return nil, &PatternError{i, `unbalanced "{": placeholder is not closed (write "\{" for a literal brace)`}
			}
			end += body
			if hashTag && (end+1 >= len(src) || src[end+1] != '}') {
				return nil, &PatternError{end, `hash tag "{{" must close with "}}"`}
			}
			ph, err := parsePlaceholder(src[body:end], body)
			if err != nil {
				return nil, err
			}
			if len(seen) == MaxPlaceholders {
				return nil, &PatternError{i, fmt.Sprintf("pattern has more than %d placeholders", MaxPlaceholders)}
			}
			if seen[ph.Name] {
				return nil, &PatternError{body, fmt.Sprintf("placeholder %q appears twice", ph.Name)}
			}
			seen[ph.Name] = true
			ph.HashTag = hashTag
			if hashTag {
				addLit(i, "{")
			}
			if lit.Len() == 0 && len(p.Parts) > 0 && p.Parts[len(p.Parts)-1].IsPlaceholder() {
				prev := p.Parts[len(p.Parts)-1]
				return nil, &PatternError{i, fmt.Sprintf("placeholders %q and %q are adjacent, so their boundary is ambiguous: separate them with a literal", prev.Name, ph.Name)}
			}
			flush()
			p.Parts = append(p.Parts, ph)
			i = end + 1
			if hashTag {
				addLit(end+1, "}")
				i++
			}
		default:
			addLit(i, src[i:i+1])
			i++
		}
	}
	flush()
	return p, nil
}

func parsePlaceholder(body string, off int) (Part, error) {
	name, typ, typed := strings.Cut(body, ":")
	if name == "" {
		return Part{}, &PatternError{off, "placeholder has no name"}
	}
	for j := 0; j < len(name); j++ {
		c := name[j]
		if !('a' <= c && c <= 'z' || c == '_' || (j > 0 && isDigit(c))) {
			return Part{}, &PatternError{off + j, fmt.Sprintf("bad placeholder name %q (want [a-z_][a-z0-9_]*)", name)}
		}
	}
	ph := Part{Name: name, Offset: off, Typed: typed}
	if typed {
		t, ok := ParsePlaceholderType(typ)
		if !ok {
			return Part{}, &PatternError{off + len(name) + 1, fmt.Sprintf("unknown placeholder type %q (want int, uuid, hex, ulid, word or any)", typ)}
		}
		ph.Type = t
	}
	return ph, nil
}

// Placeholders returns the placeholder parts in order.
func (p *Pattern) Placeholders() []Part {
	var out []Part
	for _, pt := range p.Parts {
		if pt.IsPlaceholder() {
			out = append(out, pt)
		}
	}
	return out
}

// LiteralBytes counts the literal bytes of p. When two families match one
// key, the one with more literal bytes wins.
func (p *Pattern) LiteralBytes() int {
	n := 0
	for _, pt := range p.Parts {
		n += len(pt.Lit)
	}
	return n
}

// LiteralPrefix returns the literal bytes before the first placeholder.
func (p *Pattern) LiteralPrefix() string {
	if len(p.Parts) > 0 && !p.Parts[0].IsPlaceholder() {
		return p.Parts[0].Lit
	}
	return ""
}

// Glob returns a Redis SCAN MATCH glob that matches every key of p (and
// possibly more: placeholders become "*"). Glob metacharacters in literals
// are escaped. A byte written as an escape ("\x06", "\{") stands in the
// glob as itself, since a glob has no hex escapes and SCAN MATCH is binary
// safe: the result may hold control bytes, so escape it before printing.
func (p *Pattern) Glob() string {
	var b strings.Builder
	for _, pt := range p.Parts {
		if pt.IsPlaceholder() {
			b.WriteByte('*')
			continue
		}
		b.WriteString(EscapeGlob(pt.Lit))
	}
	return b.String()
}

// EscapeGlob escapes the Redis glob metacharacters *, ?, [, ] and \ in s.
func EscapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Build renders a key from placeholder values. It fails when a value is
// missing or does not fit its placeholder type.
func (p *Pattern) Build(values map[string]string) (string, error) {
	var b strings.Builder
	for _, pt := range p.Parts {
		if !pt.IsPlaceholder() {
			b.WriteString(pt.Lit)
			continue
		}
		v, ok := values[pt.Name]
		if !ok {
			return "", fmt.Errorf("missing value for placeholder %q", pt.Name)
		}
		if !pt.Type.Valid(v, p.Sep) {
			return "", fmt.Errorf("value %q does not fit placeholder {%s:%s}", v, pt.Name, pt.Type)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// String returns the pattern source.
func (p *Pattern) String() string { return p.Source }
