package snapshot

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// String encodings in the file.
const (
	strRaw = iota
	strInt
	strLZF
)

// strHdr is the header of a string in the file: its length and encoding.
// For strInt the integer has already been read.
type strHdr struct {
	kind       uint8
	n          int64 // strRaw: the length; strInt: the value
	clen, ulen int64 // strLZF: compressed and uncompressed lengths
}

// size is the length of the string's value in bytes.
func (h strHdr) size() int64 {
	switch h.kind {
	case strInt:
		return int64(len(strconv.AppendInt(make([]byte, 0, 20), h.n, 10)))
	case strLZF:
		return h.ulen
	}
	return h.n
}

// readLen reads a length encoding (not a special encoding).
func (r *Reader) readLen(what string) (uint64, error) {
	n, special, err := r.readLenOrEnc(what)
	if err == nil && special {
		return 0, &FormatError{Offset: r.in.offset() - 1, Expected: what + " (a length encoding)", Found: fmt.Sprintf("the special encoding %d", n)}
	}
	return n, err
}

// readLenOrEnc reads a length encoding; special is true for the 11xxxxxx
// form, where n is the special encoding's number.
func (r *Reader) readLenOrEnc(what string) (n uint64, special bool, err error) {
	b, err := r.in.byte(what)
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case 0:
		return uint64(b & 0x3f), false, nil
	case 1:
		c, err := r.in.byte(what)
		return uint64(b&0x3f)<<8 | uint64(c), false, err
	case 3:
		return uint64(b & 0x3f), true, nil
	}
	switch b {
	case 0x80:
		p, err := r.in.next(4, what)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case 0x81:
		p, err := r.in.next(8, what)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, &FormatError{Offset: r.in.offset() - 1, Expected: what + " (a length encoding)", Found: fmt.Sprintf("byte 0x%02x", b)}
}

// readInt reads a length encoding that must fit an int64 count.
func (r *Reader) readCount(what string) (int64, error) {
	n, err := r.readLen(what)
	if err == nil && n > math.MaxInt64 {
		return 0, &FormatError{Offset: r.in.offset(), Expected: what, Found: "a length over 2^63"}
	}
	return int64(n), err
}

// readStrHdr reads the header of a string.
func (r *Reader) readStrHdr(what string) (strHdr, error) {
	at := r.in.offset()
	n, special, err := r.readLenOrEnc(what)
	if err != nil {
		return strHdr{}, err
	}
	if !special {
		if n > math.MaxInt64 {
			return strHdr{}, &FormatError{Offset: at, Expected: what, Found: "a length over 2^63"}
		}
		return strHdr{kind: strRaw, n: int64(n)}, nil
	}
	switch n {
	case 0:
		b, err := r.in.byte(what)
		return strHdr{kind: strInt, n: int64(int8(b))}, err
	case 1:
		p, err := r.in.next(2, what)
		if err != nil {
			return strHdr{}, err
		}
		return strHdr{kind: strInt, n: int64(int16(binary.LittleEndian.Uint16(p)))}, nil
	case 2:
		p, err := r.in.next(4, what)
		if err != nil {
			return strHdr{}, err
		}
		return strHdr{kind: strInt, n: int64(int32(binary.LittleEndian.Uint32(p)))}, nil
	case 3:
		c, err := r.readLen("an LZF compressed length")
		if err != nil {
			return strHdr{}, err
		}
		u, err := r.readLen("an LZF uncompressed length")
		if err != nil {
			return strHdr{}, err
		}
		if c > math.MaxInt64 || u > math.MaxInt64 {
			return strHdr{}, &FormatError{Offset: at, Expected: what, Found: "an LZF length over 2^63"}
		}
		return strHdr{kind: strLZF, clen: int64(c), ulen: int64(u)}, nil
	}
	return strHdr{}, &FormatError{Offset: at, Expected: what + " (a string encoding)", Found: fmt.Sprintf("the special encoding %d", n)}
}

// skipStr consumes the rest of a string whose header was read.
func (r *Reader) skipStr(h strHdr, what string) error {
	switch h.kind {
	case strRaw:
		return r.in.discard(h.n, what)
	case strLZF:
		return r.in.discard(h.clen, what)
	}
	return nil
}

// readStr appends the first min(size, limit) bytes of a string whose header
// was read to dst and consumes the rest.
func (r *Reader) readStr(h strHdr, limit int64, dst []byte, what string) ([]byte, error) {
	switch h.kind {
	case strInt:
		b := strconv.AppendInt(dst, h.n, 10)
		if int64(len(b)-len(dst)) > limit {
			b = b[:len(dst)+int(limit)]
		}
		return b, nil
	case strLZF:
		return lzfDecode(r.in, h.clen, h.ulen, limit, dst)
	}
	k := min(h.n, limit)
	dst, err := r.in.appendN(dst, k, what)
	if err != nil {
		return dst, err
	}
	return dst, r.in.discard(h.n-k, what)
}

// skipString reads and skips a whole string.
func (r *Reader) skipString(what string) error {
	h, err := r.readStrHdr(what)
	if err != nil {
		return err
	}
	return r.skipStr(h, what)
}

// blob reads a string that holds an encoded structure (listpack, ziplist,
// intset, zipmap): its first min(size, limit) bytes, whether that is all of
// it, and its size; it consumes the rest.
func (r *Reader) blob(limit int64, dst []byte, what string) (data []byte, whole bool, size int64, at int64, err error) {
	at = r.in.offset()
	h, err := r.readStrHdr(what)
	if err != nil {
		return nil, false, 0, at, err
	}
	if h.kind == strInt {
		return nil, false, 0, at, &FormatError{Offset: at, Expected: what, Found: "an integer"}
	}
	size = h.size()
	data, err = r.readStr(h, limit, dst, what)
	return data, int64(len(data)) == size, size, at, err
}
