package snapshot

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/source"
)

// blobKind is the encoded structure a value type holds in one string, and
// group how many of its elements make one member, field or entry.
func blobKind(t byte) (kind string, group int) {
	switch t {
	case tHashZipmap:
		return "zipmap", 2
	case tListZiplist:
		return "ziplist", 1
	case tZsetZiplist, tHashZiplist:
		return "ziplist", 2
	case tSetIntset:
		return "intset", 1
	case tSetListpack:
		return "listpack", 1
	case tHashListpack, tZsetListpack:
		return "listpack", 2
	case tHashListpackExPre, tHashListpackEx:
		return "listpack", 3
	}
	return "", 0
}

// parseHdr parses a string header from the start of p: its kind, length
// (or integer, or LZF lengths) and the bytes it takes.
func parseHdr(p []byte) (h strHdr, used int, ok bool) {
	ln := func(p []byte) (uint64, int, bool, bool) {
		if len(p) < 1 {
			return 0, 0, false, false
		}
		b := p[0]
		switch b >> 6 {
		case 0:
			return uint64(b & 0x3f), 1, false, true
		case 1:
			if len(p) < 2 {
				return 0, 0, false, false
			}
			return uint64(b&0x3f)<<8 | uint64(p[1]), 2, false, true
		case 3:
			return uint64(b & 0x3f), 1, true, true
		}
		if b == 0x80 && len(p) >= 5 {
			return uint64(binary.BigEndian.Uint32(p[1:])), 5, false, true
		}
		if b == 0x81 && len(p) >= 9 {
			return binary.BigEndian.Uint64(p[1:]), 9, false, true
		}
		return 0, 0, false, false
	}
	n, used, special, ok := ln(p)
	if !ok || n >= 1<<62 {
		return h, 0, false
	}
	if !special {
		return strHdr{kind: strRaw, n: int64(n)}, used, true
	}
	switch n {
	case 0, 1, 2:
		w := 1 << n
		if len(p) < 1+w {
			return h, 0, false
		}
		return strHdr{kind: strInt}, 1 + w, true // the integer itself is not needed
	case 3:
		c, u1, s1, ok1 := ln(p[1:])
		if !ok1 || s1 || c >= 1<<62 {
			return h, 0, false
		}
		u, u2, s2, ok2 := ln(p[1+u1:])
		if !ok2 || s2 || u >= 1<<62 {
			return h, 0, false
		}
		return strHdr{kind: strLZF, clen: int64(c), ulen: int64(u)}, 1 + u1 + u2, true
	}
	return h, 0, false
}

// lzfPrefix decodes up to want bytes (want <= 32) of LZF data held in src
// into buf; it returns less when src ends first or is damaged.
func lzfPrefix(src []byte, want int, buf []byte) []byte {
	out := buf[:0]
	for i := 0; i < len(src) && len(out) < want; {
		ctrl := int(src[i])
		i++
		if ctrl < 32 {
			l := ctrl + 1
			if i+l > len(src) {
				l = len(src) - i
			}
			out = append(out, src[i:i+l]...)
			i += l
			continue
		}
		l := ctrl >> 5
		if l == 7 {
			if i >= len(src) {
				break
			}
			l += int(src[i])
			i++
		}
		if i >= len(src) {
			break
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(src[i]) - 1
		i++
		if ref < 0 || len(out)+l+2 > cap(out) {
			break
		}
		for range l + 2 {
			out = append(out, out[ref])
			ref++
		}
	}
	return out
}

// canonicalInt reports whether Redis would store b as an integer (string2l).
func canonicalInt(b []byte) bool {
	if len(b) == 0 || len(b) > 20 {
		return false
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	return err == nil && strconv.FormatInt(v, 10) == string(b)
}

// peekInfo sets what the value's first bytes tell: Size, Len and a
// string's encoding. It consumes nothing; a damaged header is left for the
// read of the value to report.
func (r *Reader) peekInfo(e *Entry, t byte) {
	o := 0
	if t == tHashMetadata || t == tHashListpackEx {
		o = 8
	}
	p := r.in.peek(o + 32)
	if len(p) < o {
		return
	}
	h, used, ok := parseHdr(p[o:])
	if !ok {
		if t == tString {
			e.Encoding = "raw"
		}
		return
	}
	switch t {
	case tString:
		switch h.kind {
		case strInt:
			e.Size, e.Encoding = int64(used), "int"
			if s, err := parseHdrInt(p[:used]); err == nil {
				e.Len = s
			}
			return
		case strLZF:
			e.Size, e.Len = int64(used)+h.clen, h.ulen
		default:
			e.Size, e.Len = int64(used)+h.n, h.n
		}
		switch {
		case h.kind == strRaw && h.n <= 20 && canonicalInt(r.in.peek(used + int(h.n))[used:]):
			e.Encoding = "int"
		case e.Len <= 44:
			e.Encoding = "embstr"
		default:
			e.Encoding = "raw"
		}
		return
	case tList, tSet, tZset, tHash, tZset2, tHashMetadataPreGA, tHashMetadata:
		if h.kind == strRaw {
			e.Len = h.n
		}
		return
	}
	kind, group := blobKind(t)
	if kind == "" || h.kind == strInt {
		return
	}
	var hb []byte
	if h.kind == strLZF {
		e.Size = int64(o+used) + h.clen
		hb = lzfPrefix(p[o+used:], 10, r.scratch[:])
	} else {
		e.Size = int64(o+used) + h.n
		hb = p[o+used:]
	}
	ulen := h.n
	if h.kind == strLZF {
		ulen = h.ulen
	}
	e.ulen = ulen
	if msg := implausible(kind, hb, ulen); msg != "" {
		// redis-check-rdb rejects the file; so does the read of the value,
		// sampled or not, rather than report a count the bytes cannot hold.
		e.bad = &FormatError{Offset: e.start + int64(o), Expected: "a valid " + kind, Found: msg}
		return
	}
	if n := headerCount(kind, hb); n >= 0 {
		if kind == "zipmap" {
			e.Len = n
		} else {
			e.Len = n / int64(group)
		}
	}
}

// implausible checks the header of an encoded structure of size bytes
// against its size, as far as its first bytes (hb) hold it: the total
// length a listpack or ziplist declares, an intset's width and count, and
// for every kind an element count that its bytes could not hold (each
// element takes at least 2 bytes in a listpack or ziplist, a zipmap pair
// 3). It returns what is wrong, or "".
func implausible(kind string, hb []byte, size int64) string {
	var minHdr, minElem int64
	switch kind {
	case "listpack":
		minHdr, minElem = 7, 2
		if len(hb) >= 4 {
			if tot := int64(binary.LittleEndian.Uint32(hb)); tot != size {
				return fmt.Sprintf("a total length of %d in a string of %d bytes", tot, size)
			}
		}
	case "ziplist":
		minHdr, minElem = 11, 2
		if len(hb) >= 4 {
			if tot := int64(binary.LittleEndian.Uint32(hb)); tot != size {
				return fmt.Sprintf("a total length of %d in a string of %d bytes", tot, size)
			}
		}
	case "intset":
		if len(hb) >= 8 {
			enc := int64(binary.LittleEndian.Uint32(hb))
			n := int64(binary.LittleEndian.Uint32(hb[4:]))
			if enc != 2 && enc != 4 && enc != 8 {
				return fmt.Sprintf("an integer width of %d", enc)
			}
			if 8+enc*n != size {
				return fmt.Sprintf("%d integers of %d bytes in a string of %d bytes", n, enc, size)
			}
		}
		return ""
	case "zipmap":
		minHdr, minElem = 2, 3
	}
	if n := headerCount(kind, hb); n >= 0 {
		if minHdr+minElem*n > size {
			return fmt.Sprintf("%d elements in a string of %d bytes", n, size)
		}
	}
	return ""
}

// parseHdrInt returns the decimal length of an int-encoded string header.
func parseHdrInt(p []byte) (int64, error) {
	var v int64
	switch len(p) {
	case 2:
		v = int64(int8(p[1]))
	case 3:
		v = int64(int16(binary.LittleEndian.Uint16(p[1:])))
	case 5:
		v = int64(int32(binary.LittleEndian.Uint32(p[1:])))
	default:
		return 0, fmt.Errorf("bad int header")
	}
	var buf [20]byte
	return int64(len(strconv.AppendInt(buf[:0], v, 10))), nil
}

// headerCount returns the element count an encoded structure's header
// declares (pairs for a zipmap), or -1.
func headerCount(kind string, hb []byte) int64 {
	switch kind {
	case "listpack":
		if len(hb) >= 6 {
			if n := binary.LittleEndian.Uint16(hb[4:]); n != 65535 {
				return int64(n)
			}
		}
	case "ziplist":
		if len(hb) >= 10 {
			if n := binary.LittleEndian.Uint16(hb[8:]); n != 65535 {
				return int64(n)
			}
		}
	case "intset":
		if len(hb) >= 8 {
			return int64(binary.LittleEndian.Uint32(hb[4:]))
		}
	case "zipmap":
		if len(hb) >= 1 && hb[0] < 254 {
			return int64(hb[0])
		}
	}
	return -1
}

// sampler collects a bounded sample: at most n groups (members, fields,
// entries) and max bytes of their strings. A nil sampler collects nothing.
type sampler struct {
	n      int
	max    int64
	used   int64
	groups int
	full   bool
	cur    int64
	bad    bool
	parts  [][]byte
	smp    payload.Sample
}

// prefix is how many bytes of an encoded structure to read for the sample:
// an element takes at most k bytes in the structure per byte in the sample
// (3 for a listpack, ziplist or zipmap, where a one-byte string takes three;
// 8 for an intset of 64-bit integers), so every element that fits the
// budget lies within it.
func (s *sampler) prefix(k int64) int64 {
	return k*min(s.max-s.used, 1<<58) + 64
}

func (s *sampler) active() bool { return s != nil && !s.full }

func (s *sampler) open() {
	if s != nil {
		s.cur, s.bad, s.parts = 0, s.full, s.parts[:0]
	}
}

// fits reserves l bytes for the next string of the open group.
func (s *sampler) fits(l int64) bool {
	if s == nil || s.bad {
		return false
	}
	if s.used+s.cur+l > s.max {
		s.bad, s.full = true, true
		return false
	}
	s.cur += l
	return true
}

func (s *sampler) add(b []byte) { s.parts = append(s.parts, b) }

// close commits the open group to the sample unless it did not fit.
func (s *sampler) close() {
	if s == nil || s.bad {
		return
	}
	s.used += s.cur
	s.groups++
	switch s.smp.Type {
	case "hash":
		s.smp.Fields[string(s.parts[0])] = s.parts[1]
	case "stream":
		m := make(map[string][]byte, len(s.parts)/2)
		for i := 0; i+1 < len(s.parts); i += 2 {
			m[string(s.parts[i])] = s.parts[i+1]
		}
		s.smp.Entries = append(s.smp.Entries, m)
	default:
		s.smp.Members = append(s.smp.Members, s.parts[0])
	}
	if s.groups >= s.n {
		s.full = true
	}
}

// stop ends sampling (a structure was cut before the budget was reached).
func (s *sampler) stop() {
	if s != nil {
		s.full, s.bad = true, true
	}
}

// Value decodes the entry's value into a payload.Sample: at most n
// elements of a collection (members, hash fields, stream entries) and at
// most maxBytes of their strings in all (and at most Options.MaxValueBytes).
// A collection's sample stops at the element that would cross the budget;
// a string over it is source.ErrTooLarge. Zset scores, field TTLs and
// deleted stream entries are not sampled; a module value samples nothing.
// It reads the whole value, so it must be called before the next Next,
// once, and not after Skip. A FormatError leaves the Reader failed.
func (e *Entry) Value(n int, maxBytes int64) (payload.Sample, error) {
	r := e.r
	if r == nil || r.cur != e || e.consumed || r.err != nil {
		if r != nil && r.err != nil {
			return payload.Sample{}, r.err
		}
		return payload.Sample{}, errSequence
	}
	e.consumed = true
	if e.bad != nil {
		return payload.Sample{}, r.finish(e, e.bad)
	}
	maxBytes = min(maxBytes, r.o.MaxValueBytes)
	smp := payload.Sample{Type: e.Type}
	if e.RDBType == tString {
		h, err := r.readStrHdr("a string value")
		if err == nil {
			e.Len = h.size()
			if e.Len > maxBytes || maxBytes < 0 {
				err = r.skipStr(h, "a string value")
				if err == nil {
					err = source.ErrTooLarge
				}
			} else {
				smp.String, err = r.readStr(h, e.Len, make([]byte, 0, min(e.Len, bufSize)), "a string value")
			}
		}
		return smp, r.finish(e, err)
	}
	if e.Type == "hash" {
		smp.Fields = map[string][]byte{}
	}
	s := &sampler{n: n, max: maxBytes, smp: smp, full: n <= 0 || maxBytes <= 0}
	err := r.walk(e, s)
	return s.smp, r.finish(e, err)
}

// Skip reads the entry's value by its framing without decoding it, and sets
// Size and, where the framing gives it, Len. Next calls it when neither
// Value nor Skip was called.
func (e *Entry) Skip() error {
	r := e.r
	if r == nil || r.cur != e || e.consumed || r.err != nil {
		if r != nil && r.err != nil {
			return r.err
		}
		return errSequence
	}
	e.consumed = true
	if e.bad != nil {
		return r.finish(e, e.bad)
	}
	var err error
	if e.RDBType == tString {
		err = r.skipString("a string value")
	} else {
		err = r.walk(e, nil)
	}
	return r.finish(e, err)
}

func (r *Reader) finish(e *Entry, err error) error {
	if err != nil && err != source.ErrTooLarge {
		r.err = err
		return err
	}
	e.Size = r.in.offset() - e.start
	e.estimate()
	return err
}

// elemStr reads one string of a collection into the open group when it
// fits, else skips it.
func (r *Reader) elemStr(e *Entry, s *sampler, what string) error {
	h, err := r.readStrHdr(what)
	if err != nil {
		return err
	}
	e.mem += sdsAlloc(h.size())
	if l := h.size(); s.fits(l) {
		b, err := r.readStr(h, l, nil, what)
		s.add(b)
		return err
	}
	return r.skipStr(h, what)
}

// walk reads a collection, stream or module value; s samples it when not
// nil.
func (r *Reader) walk(e *Entry, s *sampler) error {
	t := byte(e.RDBType)
	if t == tHashMetadata || t == tHashListpackEx {
		if err := r.in.discard(8, "the hash's minimum field expire time"); err != nil {
			return err
		}
	}
	switch t {
	case tList, tSet, tZset, tZset2, tHash, tHashMetadataPreGA, tHashMetadata:
		return r.walkTable(e, t, s)
	case tListQuicklist, tListQuicklist2:
		return r.walkQuicklist(e, t, s)
	case tStreamListpacks, tStreamListpacks2, tStreamListpacks3:
		return r.walkStream(e, t, s)
	case tModule2:
		return r.skipModule("a module value")
	}
	kind, group := blobKind(t)
	if s == nil {
		return r.skipString("an encoded value")
	}
	what := "a " + kind + " value"
	ratio := int64(3)
	if kind == "intset" {
		ratio = 8
	}
	data, whole, size, at, err := r.blob(s.prefix(ratio), nil, what)
	if err != nil {
		return err
	}
	it, err := newIter(kind, data, whole, size, at)
	if err != nil {
		return err
	}
	var k int64
	for {
		s.open()
		var j int
		for j = 0; j < group; j++ {
			el, ok, err := it.next()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			k++
			// A zset's score and a field's TTL are not sampled.
			if j == 2 || j == 1 && (t == tZsetZiplist || t == tZsetListpack) {
				continue
			}
			if s.fits(el.size()) {
				s.add(el.bytes())
			}
		}
		if j < group {
			if j > 0 && !it.wasCut() {
				return &FormatError{Offset: at, Expected: fmt.Sprintf("a %s of whole groups of %d elements", kind, group), Found: fmt.Sprintf("%d elements", k)}
			}
			s.bad = true
			break
		}
		s.close()
	}
	if it.wasCut() {
		if n := it.count(); n >= 0 {
			e.Len = n / int64(group)
		}
	} else {
		if n := it.count(); n >= 0 && n != k {
			return &FormatError{Offset: at, Expected: "a valid " + kind, Found: fmt.Sprintf("%d elements where its header declares %d", k, n)}
		}
		e.Len = k / int64(group)
	}
	return nil
}

// walkTable reads the types framed as a count of strings.
func (r *Reader) walkTable(e *Entry, t byte, s *sampler) error {
	n, err := r.readCount("an element count")
	if err != nil {
		return err
	}
	for range n {
		switch t {
		case tHashMetadataPreGA, tHashMetadata:
			if !r.valkey {
				if _, err := r.readLen("a hash field TTL"); err != nil {
					return err
				}
			}
		}
		s.open()
		if err := r.elemStr(e, s, "a collection element"); err != nil {
			return err
		}
		switch t {
		case tHash, tHashMetadataPreGA, tHashMetadata:
			if err := r.elemStr(e, s, "a hash value"); err != nil {
				return err
			}
		case tZset:
			b, err := r.in.byte("a zset score")
			if err != nil {
				return err
			}
			if b < 253 {
				if err := r.in.discard(int64(b), "a zset score"); err != nil {
					return err
				}
			}
		case tZset2:
			if err := r.in.discard(8, "a zset score"); err != nil {
				return err
			}
		}
		if r.valkey && t == tHashMetadataPreGA {
			if err := r.in.discard(8, "a hash field expire time"); err != nil {
				return err
			}
		}
		s.close()
	}
	e.Len = n
	return nil
}

// walkQuicklist reads a quicklist: a count of nodes, each a ziplist
// (quicklist 1) or a packed listpack or plain element (quicklist 2).
func (r *Reader) walkQuicklist(e *Entry, t byte, s *sampler) error {
	nodes, err := r.readCount("a quicklist node count")
	if err != nil {
		return err
	}
	kind := "ziplist"
	if t == tListQuicklist2 {
		kind = "listpack"
	}
	var total int64
	known := true
	for range nodes {
		if t == tListQuicklist2 {
			c, err := r.readLen("a quicklist node container")
			if err != nil {
				return err
			}
			if c == 1 { // plain: one element
				s.open()
				e.mem += qlNodeSize
				if err := r.elemStr(e, s, "a plain quicklist node"); err != nil {
					return err
				}
				s.close()
				total++
				continue
			}
			if c != 2 {
				return &FormatError{Offset: r.in.offset() - 1, Expected: "a quicklist node container 1 (plain) or 2 (packed)", Found: fmt.Sprint(c)}
			}
		}
		limit, dst := int64(16), r.scratch[:0]
		if s.active() {
			limit, dst = s.prefix(3), nil
		}
		data, whole, size, at, err := r.blob(limit, dst, "a quicklist node")
		if err != nil {
			return err
		}
		if size == 0 {
			return &FormatError{Offset: at, Expected: "a quicklist node", Found: "an empty string"}
		}
		e.mem += qlNodeSize + jemalloc(size)
		if !s.active() {
			if msg := implausible(kind, data, size); msg != "" {
				return &FormatError{Offset: at, Expected: "a valid " + kind + " quicklist node", Found: msg}
			}
			if n := headerCount(kind, data); n >= 0 {
				total += n
			} else {
				known = false
			}
			continue
		}
		it, err := newIter(kind, data, whole, size, at)
		if err != nil {
			return err
		}
		var k int64
		for {
			el, ok, err := it.next()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			k++
			s.open()
			if s.fits(el.size()) {
				s.add(el.bytes())
			}
			s.close()
		}
		if it.wasCut() {
			s.stop()
			if n := it.count(); n >= 0 {
				total += n
			} else {
				known = false
			}
		} else {
			if n := it.count(); n >= 0 && n != k {
				return &FormatError{Offset: at, Expected: "a valid " + kind + " quicklist node", Found: fmt.Sprintf("%d elements where its header declares %d", k, n)}
			}
			total += k
		}
	}
	if known {
		e.Len = total
	}
	return nil
}

// walkStream reads a stream: its listpacks, metadata, consumer groups,
// their pending entries and consumers.
func (r *Reader) walkStream(e *Entry, t byte, s *sampler) error {
	n, err := r.readCount("a stream listpack count")
	if err != nil {
		return err
	}
	for range n {
		at := r.in.offset()
		h, err := r.readStrHdr("a stream node key")
		if err != nil {
			return err
		}
		if h.size() != 16 {
			return &FormatError{Offset: at, Expected: "a stream node key of 16 bytes", Found: fmt.Sprintf("%d bytes", h.size())}
		}
		if err := r.skipStr(h, "a stream node key"); err != nil {
			return err
		}
		if !s.active() {
			h, err := r.readStrHdr("a stream listpack")
			if err != nil {
				return err
			}
			e.mem += raxNodeSize + jemalloc(h.size())
			if err := r.skipStr(h, "a stream listpack"); err != nil {
				return err
			}
			continue
		}
		data, whole, size, at, err := r.blob(s.prefix(3), nil, "a stream listpack")
		if err != nil {
			return err
		}
		e.mem += raxNodeSize + jemalloc(size)
		it, err := newIter("listpack", data, whole, size, at)
		if err != nil {
			return err
		}
		if err := sampleStreamNode(it, int64(len(data)), at, s); err != nil {
			return err
		}
	}
	length, err := r.readCount("a stream length")
	if err != nil {
		return err
	}
	e.Len = length
	m := streamMeta{length: length, v2: t >= tStreamListpacks2}
	if m.last, err = r.readID("a stream's last id"); err != nil {
		return err
	}
	if m.v2 {
		if m.first, err = r.readID("a stream's first id"); err != nil {
			return err
		}
		if m.maxDeleted, err = r.readID("a stream's max deleted id"); err != nil {
			return err
		}
		if m.entriesAdded, err = r.readLen("a stream's entries added"); err != nil {
			return err
		}
	}
	return r.readGroups(e, t, &m)
}

// sampleStreamNode samples the live entries of one stream listpack.
func sampleStreamNode(it iter, size, at int64, s *sampler) error {
	bad := func(what string) error {
		return &FormatError{Offset: at, Expected: "a stream listpack: " + what}
	}
	get := func() (elem, bool, error) {
		el, ok, err := it.next()
		if err == nil && !ok && !it.wasCut() {
			err = bad("more entries")
		}
		return el, ok, err
	}
	num := func() (int64, bool, error) {
		el, ok, err := get()
		if !ok || err != nil {
			return 0, ok, err
		}
		if el.isInt {
			return el.i, true, nil
		}
		v, perr := strconv.ParseInt(string(el.s), 10, 64)
		if perr != nil {
			return 0, false, bad("an integer")
		}
		return v, true, nil
	}
	var hdr [3]int64
	for i := range hdr {
		v, ok, err := num()
		if !ok || err != nil {
			s.stop()
			return err
		}
		hdr[i] = v
	}
	nf := hdr[2]
	if nf < 0 || nf > size {
		return bad("a master field count")
	}
	var master [][]byte
	for range nf {
		el, ok, err := get()
		if !ok || err != nil {
			s.stop()
			return err
		}
		master = append(master, el.bytes())
	}
	if _, ok, err := num(); !ok || err != nil { // the master entry's terminator
		s.stop()
		return err
	}
	for s.active() {
		flags, ok, err := it.next()
		if err != nil {
			return err
		}
		if !ok {
			if it.wasCut() {
				s.stop()
			}
			return nil
		}
		if !flags.isInt {
			return bad("entry flags")
		}
		for range 2 { // id deltas
			if _, ok, err := num(); !ok || err != nil {
				s.stop()
				return err
			}
		}
		fields := master
		if flags.i&2 == 0 { // not SAMEFIELDS: own field names
			k, ok, err := num()
			if !ok || err != nil {
				s.stop()
				return err
			}
			if k < 0 || k > size {
				return bad("a field count")
			}
			fields = nil
			s.open()
			if flags.i&1 != 0 {
				s.bad = true
			}
			for range k {
				f, ok, err := get()
				if !ok || err != nil {
					s.stop()
					return err
				}
				v, ok, err := get()
				if !ok || err != nil {
					s.stop()
					return err
				}
				if s.fits(f.size()) && s.fits(v.size()) {
					s.add(f.bytes())
					s.add(v.bytes())
				}
			}
		} else {
			s.open()
			if flags.i&1 != 0 {
				s.bad = true
			}
			for _, f := range fields {
				v, ok, err := get()
				if !ok || err != nil {
					s.stop()
					return err
				}
				if s.fits(int64(len(f))) && s.fits(v.size()) {
					s.add(f)
					s.add(v.bytes())
				}
			}
		}
		if _, ok, err := num(); !ok || err != nil { // lp-count
			s.stop()
			return err
		}
		deleted := flags.i&1 != 0
		if deleted {
			continue // s.bad keeps the group out
		}
		s.close()
	}
	return nil
}

// skipModule skips module data by its opcodes, up to the EOF opcode.
func (r *Reader) skipModule(what string) error {
	for {
		op, err := r.readLen(what + " opcode")
		if err != nil {
			return err
		}
		switch op {
		case 0:
			return nil
		case 1, 2:
			_, err = r.readLen(what + " integer")
		case 3:
			err = r.in.discard(4, what+" float")
		case 4:
			err = r.in.discard(8, what+" double")
		case 5:
			err = r.skipString(what + " string")
		default:
			return &FormatError{Offset: r.in.offset() - 1, Expected: what + " opcode (0 to 5)", Found: fmt.Sprint(op)}
		}
		if err != nil {
			return err
		}
	}
}
