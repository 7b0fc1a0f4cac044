package registry

import (
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/keyreg/keyreg/diag"
	"go.yaml.in/yaml/v3"
)

// A scalar is a YAML scalar as written in a file, so that a byte offset in
// its value (such as the offset of a pattern error) maps back to the line
// and column where that byte is written: after escapes ("\"", "\u00e9",
// a doubled quote in single quotes), folded line breaks and block indentation. Columns
// count characters, as yaml.v3 and editors do.
type scalar struct {
	file      *lines // the file it is written in
	line, col int    // where the node starts: its first character, quote or block indicator
	style     yaml.Style
	value     string
	start     diag.Pos // the node's own position, the fallback
}

// cursor walks the source of a scalar, keeping the line and column.
type cursor struct {
	src       []byte
	i         int
	line, col int
}

func (c *cursor) done() bool { return c.i >= len(c.src) }
func (c *cursor) peek() byte { return c.src[c.i] }
func (c *cursor) at(k int) byte {
	if c.i+k < len(c.src) {
		return c.src[c.i+k]
	}
	return 0
}

// next moves past one character.
func (c *cursor) next() {
	if c.src[c.i] == '\n' {
		c.i++
		c.line, c.col = c.line+1, 1
		return
	}
	_, n := utf8.DecodeRune(c.src[c.i:])
	c.i += n
	c.col++
}

// mark is the line and column of one value byte.
type mark struct{ line, col int }

// decoder rebuilds a scalar's value from its source, recording where each
// value byte comes from. It stops once it has want bytes.
type decoder struct {
	c    cursor
	out  []byte
	from []mark
	want int
}

func (d *decoder) emit(s string, m mark) {
	for i := 0; i < len(s); i++ {
		d.out = append(d.out, s[i])
		d.from = append(d.from, m)
	}
}

func (d *decoder) full() bool { return len(d.out) >= d.want }

func (d *decoder) here() mark { return mark{d.c.line, d.c.col} }

// marks returns where the first want bytes of s.value are written, or false
// when the source cannot be followed (an unusual form, such as a block
// indentation indicator).
func (s *scalar) marks(want int) ([]mark, bool) {
	want = min(want, len(s.value))
	start, ok := s.file.start(s.line)
	if !ok {
		return nil, false
	}
	d := &decoder{c: cursor{src: s.file.data, i: start, line: s.line, col: 1}, want: want}
	for d.c.col < s.col {
		if d.c.done() || d.c.peek() == '\n' {
			return nil, false
		}
		d.c.next()
	}
	switch {
	case s.style&yaml.DoubleQuotedStyle != 0:
		d.c.next()
		ok = d.flow('"')
	case s.style&yaml.SingleQuotedStyle != 0:
		d.c.next()
		ok = d.flow('\'')
	case s.style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		ok = d.block(s.style&yaml.FoldedStyle != 0)
	default:
		ok = d.flow(0)
	}
	if !ok || len(d.out) < want || string(d.out[:want]) != s.value[:want] {
		return nil, false
	}
	return d.from[:want], true
}

// lines indexes the starts of the lines of a file, on first use.
type lines struct {
	data   []byte
	once   sync.Once
	starts []int32 // byte offset of each line; line n starts at starts[n-1]
}

// start returns the byte offset of a 1-based line.
func (l *lines) start(line int) (int, bool) {
	l.once.Do(func() {
		l.starts = append(l.starts, 0)
		for i, b := range l.data {
			if b == '\n' {
				l.starts = append(l.starts, int32(i+1))
			}
		}
	})
	if line < 1 || line > len(l.starts) {
		return 0, false
	}
	return int(l.starts[line-1]), true
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

// flow decodes a plain (quote 0), single- or double-quoted scalar. Line
// breaks fold: blanks around a break go, one break becomes a space, and n
// breaks become n-1 newlines.
func (d *decoder) flow(quote byte) bool {
	c := &d.c
	var blanks []mark // blanks seen but not yet written: they go before a break
	var blankBytes []byte
	flushBlanks := func() {
		for i, m := range blanks {
			d.emit(string(blankBytes[i]), m)
		}
		blanks, blankBytes = blanks[:0], blankBytes[:0]
	}
	for !d.full() && !c.done() {
		b := c.peek()
		switch {
		case quote != 0 && b == quote && !(quote == '\'' && c.at(1) == '\''):
			flushBlanks()
			return true
		case b == '\n' || b == '\r':
			blanks, blankBytes = blanks[:0], blankBytes[:0]
			m := d.here()
			breaks := 0
			for !c.done() && (isBlank(c.peek()) || c.peek() == '\n' || c.peek() == '\r') {
				if c.peek() == '\n' {
					breaks++
				}
				c.next()
			}
			if breaks <= 1 {
				d.emit(" ", m)
			} else {
				for range breaks - 1 {
					d.emit("\n", m)
				}
			}
		case isBlank(b):
			blanks, blankBytes = append(blanks, d.here()), append(blankBytes, b)
			c.next()
		case quote == '\'' && b == '\'':
			flushBlanks()
			d.emit("'", d.here())
			c.next()
			c.next()
		case quote == '"' && b == '\\':
			flushBlanks()
			m := d.here()
			c.next()
			if c.done() {
				return false
			}
			e := c.peek()
			if e == '\n' || e == '\r' {
				// An escaped line break: it and the next line's
				// leading blanks vanish.
				for !c.done() && (c.peek() == '\n' || c.peek() == '\r') {
					c.next()
				}
				for !c.done() && isBlank(c.peek()) {
					c.next()
				}
				continue
			}
			s, n, ok := unescape(c.src[c.i:])
			if !ok {
				return false
			}
			for range n {
				c.next()
			}
			d.emit(s, m)
		default:
			flushBlanks()
			m := d.here()
			start := c.i
			c.next()
			d.emit(string(c.src[start:c.i]), m)
		}
	}
	return d.full()
}

// unescape decodes the escape after a backslash of a double-quoted YAML
// scalar; n is the number of characters it takes.
func unescape(s []byte) (out string, n int, ok bool) {
	simple := map[byte]string{
		'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n", 'v': "\v", 'f': "\f",
		'r': "\r", 'e': "\x1b", ' ': " ", '"': "\"", '/': "/", '\\': "\\",
		'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029",
	}
	if len(s) == 0 {
		return "", 0, false
	}
	if r, ok := simple[s[0]]; ok {
		return r, 1, true
	}
	digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[0]]
	if digits == 0 || len(s) < 1+digits {
		return "", 0, false
	}
	v, err := strconv.ParseUint(string(s[1:1+digits]), 16, 32)
	if err != nil {
		return "", 0, false
	}
	return string(rune(v)), 1 + digits, true
}

// block decodes a literal (|) or folded (>) block scalar. The node starts
// at its indicator; the content starts on the next line.
func (d *decoder) block(folded bool) bool {
	c := &d.c
	for !c.done() && c.peek() != '\n' {
		if isDigit(c.peek()) {
			return false // an indentation indicator: rare, not followed
		}
		c.next()
	}
	if c.done() {
		return false
	}
	c.next()
	// The indentation is that of the first non-empty line.
	indent := -1
	for j := c.i; j < len(c.src); {
		k := j
		for k < len(c.src) && c.src[k] == ' ' {
			k++
		}
		if k < len(c.src) && c.src[k] != '\n' {
			indent = k - j
			break
		}
		j = k + 1
	}
	if indent <= 0 {
		return false
	}
	type kind int
	const (
		none kind = iota
		normal
		more // more indented, or starting with a blank: breaks are kept
	)
	prev, empties := none, 0
	var brk mark // where the last line ended
	for !d.full() && !c.done() {
		// Skip the indentation, or find an empty line.
		n := 0
		for n < indent && !c.done() && c.peek() == ' ' {
			c.next()
			n++
		}
		if c.done() || c.peek() == '\n' {
			if !c.done() {
				brk = d.here()
				c.next()
			}
			empties++
			continue
		}
		if n < indent {
			return d.full() // the block ended
		}
		k := normal
		if isBlank(c.peek()) {
			k = more
		}
		if prev != none {
			switch {
			case !folded:
				for range empties + 1 {
					d.emit("\n", brk)
				}
			case prev == normal && k == normal && empties == 0:
				d.emit(" ", brk)
			case prev == normal && k == normal:
				for range empties {
					d.emit("\n", brk)
				}
			default:
				for range empties + 1 {
					d.emit("\n", brk)
				}
			}
		} else {
			for range empties {
				d.emit("\n", brk)
			}
		}
		empties, prev = 0, k
		for !d.full() && !c.done() && c.peek() != '\n' {
			m := d.here()
			start := c.i
			c.next()
			d.emit(string(c.src[start:c.i]), m)
		}
		if !c.done() && c.peek() == '\n' {
			brk = d.here()
			c.next()
		}
	}
	return d.full()
}

// pos returns the position of the value bytes [off, off+n) of s, or the
// node's position when they cannot be told.
func (s *scalar) pos(off, n int) diag.Pos {
	n = max(n, 1)
	if off < 0 || off+n > len(s.value) {
		return s.start
	}
	ms, ok := s.marks(off + n)
	if !ok {
		return s.start
	}
	first, last := ms[off], ms[off+n-1]
	p := s.start
	p.Line, p.Col = first.line, first.col
	p.EndLine, p.EndCol = last.line, last.col+1
	return p
}
