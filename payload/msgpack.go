package payload

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// mpParser is a single-pass msgpack parser. With build unset it only checks
// the structure (any key type, any ext type, any float) and allocates
// nothing. With build set it produces JSON values and rejects what has no
// JSON equivalent. Counts read from the input only bound loops: every
// element takes at least one byte, so no allocation exceeds the input size.
type mpParser struct {
	b      []byte
	s      string // string(b), made only when building
	i      int
	depth  int
	build  bool
	errOff int
	err    string
}

// parseMsgpack parses one msgpack value that must use every byte.
func parseMsgpack(b []byte, build bool) (any, int, string) {
	p := mpParser{b: b, build: build}
	if build {
		p.s = string(b)
	}
	if len(b) == 0 {
		return nil, 0, "unexpected end of input"
	}
	v, ok := p.value()
	if !ok {
		return nil, p.errOff, p.err
	}
	if p.i < len(b) {
		return nil, p.i, "trailing bytes after value"
	}
	return v, 0, ""
}

// isMsgpack reports whether b is one complete msgpack map, array or ext
// value.
func isMsgpack(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	switch c := b[0]; {
	case c >= 0x80 && c <= 0x9f, // fixmap, fixarray
		c >= 0xdc && c <= 0xdf, // array16/32, map16/32
		c >= 0xc7 && c <= 0xc9, // ext8/16/32
		c >= 0xd4 && c <= 0xd8: // fixext
	default:
		return false
	}
	_, _, reason := parseMsgpack(b, false)
	return reason == ""
}

func (p *mpParser) fail(off int, reason string) (any, bool) {
	if p.err == "" {
		p.errOff, p.err = off, reason
	}
	return nil, false
}

// need checks that n more bytes are available at p.i.
func (p *mpParser) need(n uint64) bool {
	if n > uint64(len(p.b)-p.i) {
		p.fail(len(p.b), "unexpected end of input")
		return false
	}
	return true
}

// uint reads a big-endian unsigned integer of n bytes (1, 2, 4 or 8).
func (p *mpParser) uint(n int) (uint64, bool) {
	if !p.need(uint64(n)) {
		return 0, false
	}
	b := p.b[p.i : p.i+n]
	p.i += n
	switch n {
	case 1:
		return uint64(b[0]), true
	case 2:
		return uint64(binary.BigEndian.Uint16(b)), true
	case 4:
		return uint64(binary.BigEndian.Uint32(b)), true
	}
	return binary.BigEndian.Uint64(b), true
}

func (p *mpParser) value() (any, bool) {
	if p.i >= len(p.b) {
		return p.fail(p.i, "unexpected end of input")
	}
	start := p.i
	c := p.b[p.i]
	p.i++
	switch {
	case c <= 0x7f:
		return p.integer(int64(c))
	case c >= 0xe0:
		return p.integer(int64(int8(c)))
	case c <= 0x8f:
		return p.mapN(start, uint64(c&0x0f))
	case c <= 0x9f:
		return p.arrayN(uint64(c & 0x0f))
	case c <= 0xbf:
		return p.bytes(uint64(c & 0x1f))
	}
	switch c {
	case 0xc0:
		return nil, true
	case 0xc2:
		return false, true
	case 0xc3:
		return true, true
	case 0xc4, 0xc5, 0xc6, 0xd9, 0xda, 0xdb: // bin8/16/32, str8/16/32
		w := 1
		switch c {
		case 0xc5, 0xda:
			w = 2
		case 0xc6, 0xdb:
			w = 4
		}
		n, ok := p.uint(w)
		if !ok {
			return nil, false
		}
		return p.bytes(n)
	case 0xc7, 0xc8, 0xc9: // ext8/16/32
		w := 1 << (c - 0xc7)
		n, ok := p.uint(w)
		if !ok {
			return nil, false
		}
		return p.ext(start, n)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1/2/4/8/16
		return p.ext(start, 1<<(c-0xd4))
	case 0xca:
		u, ok := p.uint(4)
		if !ok {
			return nil, false
		}
		return p.float(start, float64(math.Float32frombits(uint32(u))))
	case 0xcb:
		u, ok := p.uint(8)
		if !ok {
			return nil, false
		}
		return p.float(start, math.Float64frombits(u))
	case 0xcc, 0xcd, 0xce, 0xcf:
		u, ok := p.uint(1 << (c - 0xcc))
		if !ok || !p.build {
			return nil, ok
		}
		return json.Number(strconv.FormatUint(u, 10)), true
	case 0xd0, 0xd1, 0xd2, 0xd3:
		w := 1 << (c - 0xd0)
		u, ok := p.uint(w)
		if !ok {
			return nil, false
		}
		var n int64
		switch w {
		case 1:
			n = int64(int8(u))
		case 2:
			n = int64(int16(u))
		case 4:
			n = int64(int32(u))
		default:
			n = int64(u)
		}
		return p.integer(n)
	case 0xdc, 0xdd:
		n, ok := p.uint(2 << (c - 0xdc))
		if !ok {
			return nil, false
		}
		return p.arrayN(n)
	case 0xde, 0xdf:
		n, ok := p.uint(2 << (c - 0xde))
		if !ok {
			return nil, false
		}
		return p.mapN(start, n)
	}
	return p.fail(start, "invalid type marker") // 0xc1, never used
}

func (p *mpParser) integer(n int64) (any, bool) {
	if !p.build {
		return nil, true
	}
	return json.Number(strconv.FormatInt(n, 10)), true
}

func (p *mpParser) float(start int, f float64) (any, bool) {
	if !p.build {
		return nil, true
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return p.fail(start, "non-finite float has no JSON equivalent")
	}
	return f, true
}

// bytes reads a str or bin body of n bytes as a string.
func (p *mpParser) bytes(n uint64) (any, bool) {
	if !p.need(n) {
		return nil, false
	}
	s := p.i
	p.i += int(n)
	if !p.build {
		return nil, true
	}
	return p.s[s:p.i], true
}

// ext reads an ext body: a type byte and n bytes of data. Only the
// timestamp type (-1) has a JSON equivalent, an RFC 3339 string.
func (p *mpParser) ext(start int, n uint64) (any, bool) {
	if !p.need(1) {
		return nil, false
	}
	typ := int8(p.b[p.i])
	p.i++
	if !p.need(n) {
		return nil, false
	}
	data := p.b[p.i : p.i+int(n)]
	p.i += int(n)
	if !p.build {
		return nil, true
	}
	if typ != -1 {
		return p.fail(start, "msgpack ext type "+strconv.Itoa(int(typ))+" has no JSON equivalent")
	}
	var sec int64
	var nsec uint32
	switch len(data) {
	case 4:
		sec = int64(binary.BigEndian.Uint32(data))
	case 8:
		u := binary.BigEndian.Uint64(data)
		nsec = uint32(u >> 34)
		sec = int64(u & (1<<34 - 1))
	case 12:
		nsec = binary.BigEndian.Uint32(data)
		sec = int64(binary.BigEndian.Uint64(data[4:]))
	default:
		return p.fail(start, "invalid timestamp length")
	}
	if nsec >= 1e9 {
		return p.fail(start, "invalid timestamp nanoseconds")
	}
	t := time.Unix(sec, int64(nsec)).UTC()
	if t.Year() < 0 || t.Year() > 9999 {
		return p.fail(start, "timestamp out of range")
	}
	return t.Format(time.RFC3339Nano), true
}

func (p *mpParser) enter(start int) bool {
	p.depth++
	if p.depth > MaxDepth {
		p.fail(start, "nesting too deep")
		return false
	}
	return true
}

// prealloc caps the capacity reserved from a declared count. Nested
// containers could otherwise each reserve the rest of the input.
const prealloc = 16

func (p *mpParser) arrayN(n uint64) (any, bool) {
	if !p.enter(p.i - 1) {
		return nil, false
	}
	if !p.need(n) { // every element takes at least one byte
		return nil, false
	}
	var a []any
	if p.build {
		a = make([]any, 0, min(n, prealloc))
	}
	for k := uint64(0); k < n; k++ {
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		if p.build {
			a = append(a, v)
		}
	}
	p.depth--
	if !p.build {
		return nil, true
	}
	return a, true
}

func (p *mpParser) mapN(start int, n uint64) (any, bool) {
	if !p.enter(start) {
		return nil, false
	}
	if n > uint64(len(p.b)-p.i)/2 { // every entry takes at least two bytes
		return p.fail(len(p.b), "unexpected end of input")
	}
	var m map[string]any
	if p.build {
		m = make(map[string]any, min(n, prealloc))
	}
	for k := uint64(0); k < n; k++ {
		kstart := p.i
		if p.i >= len(p.b) {
			return p.fail(p.i, "unexpected end of input")
		}
		if p.build {
			c := p.b[p.i]
			if !(c >= 0xa0 && c <= 0xbf || c >= 0xd9 && c <= 0xdb || c >= 0xc4 && c <= 0xc6) {
				return p.fail(kstart, "map key is not a string")
			}
		}
		key, ok := p.value()
		if !ok {
			return nil, false
		}
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		if p.build {
			ks, _ := key.(string)
			m[ks] = v
		}
	}
	p.depth--
	if !p.build {
		return nil, true
	}
	return m, true
}
