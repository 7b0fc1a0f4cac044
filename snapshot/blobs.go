package snapshot

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// elem is one element of an encoded structure: a string or an integer.
type elem struct {
	s     []byte
	i     int64
	isInt bool
}

func (e elem) size() int64 {
	if e.isInt {
		return int64(len(strconv.AppendInt(make([]byte, 0, 20), e.i, 10)))
	}
	return int64(len(e.s))
}

func (e elem) bytes() []byte {
	if e.isInt {
		return strconv.AppendInt(nil, e.i, 10)
	}
	return e.s
}

// iter walks the elements of an encoded structure held in memory: all of
// it (whole) or its first bytes. next returns false at the end, or where a
// partial structure is cut (then cut is set); a damaged structure is a
// FormatError.
type iter interface {
	next() (elem, bool, error)
	count() int64 // the element count its header declares, or -1
	wasCut() bool
}

type blobIter struct {
	kind  string // "listpack", "ziplist", "intset", "zipmap"
	data  []byte
	whole bool
	at    int64 // file offset of the string holding it
	pos   int
	cut   bool
	done  bool
	n     int64
}

func (b *blobIter) wasCut() bool { return b.cut }

// next on a bare blobIter is for a structure cut before its header ends.
func (b *blobIter) next() (elem, bool, error) { return elem{}, false, nil }
func (b *blobIter) count() int64              { return b.n }
func (b *blobIter) errf(format string, a ...any) error {
	return &FormatError{Offset: b.at, Expected: "a valid " + b.kind, Found: fmt.Sprintf("at byte %d of it, ", b.pos) + fmt.Sprintf(format, a...)}
}

// need reports whether k more bytes from pos are present; when they are
// not, the structure is damaged if whole, else cut.
func (b *blobIter) need(k int64) (bool, error) {
	if int64(len(b.data)-b.pos) >= k {
		return true, nil
	}
	if b.whole {
		return false, b.errf("the end of the data where %d more bytes are needed", k)
	}
	b.cut = true
	return false, nil
}

// newIter returns the iterator for an encoded structure of the given kind.
func newIter(kind string, data []byte, whole bool, size, at int64) (iter, error) {
	b := &blobIter{kind: kind, data: data, whole: whole, at: at, n: -1}
	var hdr int64
	switch kind {
	case "listpack":
		hdr = 6
	case "ziplist":
		hdr = 10
	case "intset":
		hdr = 8
	case "zipmap":
		hdr = 1
	}
	ok, err := b.need(hdr)
	if !ok {
		return b, err
	}
	switch kind {
	case "listpack":
		if tot := binary.LittleEndian.Uint32(data); int64(tot) != size {
			return nil, b.errf("a total length of %d in a string of %d bytes", tot, size)
		}
		if n := binary.LittleEndian.Uint16(data[4:]); n != 65535 {
			b.n = int64(n)
		}
		b.pos = 6
		return (*lpIter)(b), nil
	case "ziplist":
		if tot := binary.LittleEndian.Uint32(data); int64(tot) != size {
			return nil, b.errf("a total length of %d in a string of %d bytes", tot, size)
		}
		if n := binary.LittleEndian.Uint16(data[8:]); n != 65535 {
			b.n = int64(n)
		}
		b.pos = 10
		return (*zlIter)(b), nil
	case "intset":
		enc := binary.LittleEndian.Uint32(data)
		n := binary.LittleEndian.Uint32(data[4:])
		if enc != 2 && enc != 4 && enc != 8 {
			return nil, b.errf("an integer width of %d", enc)
		}
		if 8+uint64(enc)*uint64(n) != uint64(size) {
			return nil, b.errf("%d integers of %d bytes in a string of %d bytes", n, enc, size)
		}
		b.n = int64(n)
		b.pos = 8
		return &isIter{blobIter: b, width: int(enc), left: int64(n)}, nil
	case "zipmap":
		if data[0] < 254 {
			b.n = int64(data[0]) * 2
		}
		b.pos = 1
		return &zmIter{blobIter: b}, nil
	}
	return nil, b.errf("an unknown structure")
}

// end checks the end byte 0xFF at pos is the last byte.
func (b *blobIter) end() error {
	if b.pos != len(b.data)-1 && b.whole {
		return b.errf("an end byte followed by %d more bytes", len(b.data)-1-b.pos)
	}
	b.done = true
	return nil
}

type lpIter blobIter

func lpBacklen(l int64) int64 {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

func (it *lpIter) wasCut() bool { return it.cut }
func (it *lpIter) count() int64 { return it.n }

func (it *lpIter) next() (elem, bool, error) {
	b := (*blobIter)(it)
	if b.done || b.cut {
		return elem{}, false, nil
	}
	if ok, err := b.need(1); !ok {
		return elem{}, false, err
	}
	d := b.data[b.pos:]
	c := d[0]
	var hl, dl int64 // header and data lengths
	var e elem
	switch {
	case c == 0xFF:
		return elem{}, false, b.end()
	case c&0x80 == 0:
		hl, e = 1, elem{i: int64(c & 0x7f), isInt: true}
	case c&0xC0 == 0x80:
		hl, dl = 1, int64(c&0x3f)
	case c&0xE0 == 0xC0:
		hl = 2
	case c&0xF0 == 0xE0:
		hl = 2
	case c == 0xF0:
		hl = 5
	case c == 0xF1:
		hl, dl = 1, 2
	case c == 0xF2:
		hl, dl = 1, 3
	case c == 0xF3:
		hl, dl = 1, 4
	case c == 0xF4:
		hl, dl = 1, 8
	default:
		return elem{}, false, b.errf("the entry encoding 0x%02x", c)
	}
	if ok, err := b.need(hl); !ok {
		return elem{}, false, err
	}
	switch {
	case c&0xE0 == 0xC0:
		v := int64(c&0x1f)<<8 | int64(d[1])
		if v >= 1<<12 {
			v -= 1 << 13
		}
		e = elem{i: v, isInt: true}
	case c&0xF0 == 0xE0:
		dl = int64(c&0x0f)<<8 | int64(d[1])
	case c == 0xF0:
		dl = int64(binary.LittleEndian.Uint32(d[1:]))
	}
	tot := hl + dl + lpBacklen(hl+dl)
	if ok, err := b.need(tot); !ok {
		return elem{}, false, err
	}
	p := d[hl : hl+dl]
	switch c {
	case 0xF1:
		e = elem{i: int64(int16(binary.LittleEndian.Uint16(p))), isInt: true}
	case 0xF2:
		e = elem{i: int64(int32(uint32(p[0])<<8|uint32(p[1])<<16|uint32(p[2])<<24) >> 8), isInt: true}
	case 0xF3:
		e = elem{i: int64(int32(binary.LittleEndian.Uint32(p))), isInt: true}
	case 0xF4:
		e = elem{i: int64(binary.LittleEndian.Uint64(p)), isInt: true}
	default:
		if !e.isInt {
			e = elem{s: p}
		}
	}
	b.pos += int(tot)
	return e, true, nil
}

type zlIter blobIter

func (it *zlIter) wasCut() bool { return it.cut }
func (it *zlIter) count() int64 { return it.n }

func (it *zlIter) next() (elem, bool, error) {
	b := (*blobIter)(it)
	if b.done || b.cut {
		return elem{}, false, nil
	}
	if ok, err := b.need(1); !ok {
		return elem{}, false, err
	}
	d := b.data[b.pos:]
	if d[0] == 0xFF {
		return elem{}, false, b.end()
	}
	var pl int64 = 1 // prevlen length
	if d[0] == 0xFE {
		pl = 5
	}
	if ok, err := b.need(pl + 1); !ok {
		return elem{}, false, err
	}
	c := d[pl]
	var hl, dl int64
	switch c >> 6 {
	case 0:
		hl, dl = 1, int64(c&0x3f)
	case 1:
		hl = 2
	case 2:
		if c != 0x80 {
			return elem{}, false, b.errf("the entry encoding 0x%02x", c)
		}
		hl = 5
	default:
		hl = 1
		switch {
		case c == 0xC0:
			dl = 2
		case c == 0xD0:
			dl = 4
		case c == 0xE0:
			dl = 8
		case c == 0xF0:
			dl = 3
		case c == 0xFE:
			dl = 1
		case c >= 0xF1 && c <= 0xFD:
		default:
			return elem{}, false, b.errf("the entry encoding 0x%02x", c)
		}
	}
	if ok, err := b.need(pl + hl); !ok {
		return elem{}, false, err
	}
	switch c >> 6 {
	case 1:
		dl = int64(c&0x3f)<<8 | int64(d[pl+1])
	case 2:
		dl = int64(binary.BigEndian.Uint32(d[pl+1:]))
	}
	tot := pl + hl + dl
	if ok, err := b.need(tot); !ok {
		return elem{}, false, err
	}
	p := d[pl+hl : tot]
	var e elem
	switch {
	case c>>6 != 3:
		e = elem{s: p}
	case c == 0xC0:
		e = elem{i: int64(int16(binary.LittleEndian.Uint16(p))), isInt: true}
	case c == 0xD0:
		e = elem{i: int64(int32(binary.LittleEndian.Uint32(p))), isInt: true}
	case c == 0xE0:
		e = elem{i: int64(binary.LittleEndian.Uint64(p)), isInt: true}
	case c == 0xF0:
		e = elem{i: int64(int32(uint32(p[0])<<8|uint32(p[1])<<16|uint32(p[2])<<24) >> 8), isInt: true}
	case c == 0xFE:
		e = elem{i: int64(int8(p[0])), isInt: true}
	default:
		e = elem{i: int64(c&0x0f) - 1, isInt: true}
	}
	b.pos += int(tot)
	return e, true, nil
}

type isIter struct {
	*blobIter
	width int
	left  int64
}

func (it *isIter) next() (elem, bool, error) {
	if it.left == 0 || it.cut {
		return elem{}, false, nil
	}
	if ok, err := it.need(int64(it.width)); !ok {
		return elem{}, false, err
	}
	p := it.data[it.pos:]
	var v int64
	switch it.width {
	case 2:
		v = int64(int16(binary.LittleEndian.Uint16(p)))
	case 4:
		v = int64(int32(binary.LittleEndian.Uint32(p)))
	default:
		v = int64(binary.LittleEndian.Uint64(p))
	}
	it.pos += it.width
	it.left--
	return elem{i: v, isInt: true}, true, nil
}

// zmIter yields a zipmap's keys and values alternately.
type zmIter struct {
	*blobIter
	value bool // the next string is a value
}

func (it *zmIter) next() (elem, bool, error) {
	b := it.blobIter
	if b.done || b.cut {
		return elem{}, false, nil
	}
	if ok, err := b.need(1); !ok {
		return elem{}, false, err
	}
	d := b.data[b.pos:]
	if d[0] == 0xFF {
		if it.value {
			return elem{}, false, b.errf("the end byte where a value length is needed")
		}
		return elem{}, false, b.end()
	}
	var hl, dl int64 = 1, int64(d[0])
	if d[0] == 254 {
		hl = 5
		if ok, err := b.need(5); !ok {
			return elem{}, false, err
		}
		dl = int64(binary.LittleEndian.Uint32(d[1:]))
	}
	var free int64
	if it.value {
		if ok, err := b.need(hl + 1); !ok {
			return elem{}, false, err
		}
		free = int64(d[hl])
		hl++
	}
	tot := hl + dl + free
	if ok, err := b.need(tot); !ok {
		return elem{}, false, err
	}
	e := elem{s: d[hl : hl+dl]}
	b.pos += int(tot)
	it.value = !it.value
	return e, true, nil
}
