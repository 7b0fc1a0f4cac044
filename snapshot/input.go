package snapshot

import (
	"errors"
	"fmt"
	"hash/crc64"
	"io"
)

// FormatError reports damaged or truncated input: the byte offset in the
// file where reading stopped and what was expected there.
type FormatError struct {
	Offset   int64
	Expected string // what the reader wanted, such as "a length encoding"
	Found    string // what it found instead, such as "end of file"; may be empty
}

func (e *FormatError) Error() string {
	if e.Found == "" {
		return fmt.Sprintf("offset %d: want %s", e.Offset, e.Expected)
	}
	return fmt.Sprintf("offset %d: want %s, found %s", e.Offset, e.Expected, e.Found)
}

// bufSize is the size of the read buffer: every peek and every fixed-size
// read fits in it, and discarded bytes pass through it in chunks of it.
const bufSize = 64 << 10

// The Jones polynomial of Redis's crc64.c in the reversed form that
// hash/crc64 takes.
var crcTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// crcUpdate is Redis's crc64(crc, p): hash/crc64 complements the CRC before
// and after, Redis does neither.
func crcUpdate(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, crcTable, p)
}

// input is a buffered reader over the file that knows its offset and keeps
// the CRC64 of every byte consumed so far.
type input struct {
	src   io.Reader
	buf   []byte
	r, w  int
	base  int64 // file offset of buf[0]
	crc   uint64
	crcAt int        // buf[:crcAt] is in crc (or handed to sums)
	sums  *crcWorker // when set, the CRC is computed on its goroutine
	err   error
}

// crcWorker computes the CRC64 of the bytes handed to it on a goroutine of
// its own, so that checksumming (about a fifth of reading a file) runs on
// another core than parsing. The bytes are copied into one of a few
// buffers, which bounds what is in flight.
type crcWorker struct {
	chunks chan []byte // a nil chunk asks for the sum so far
	free   chan []byte
	sum    chan uint64
	closed bool
}

const crcBuffers = 4

func newCRCWorker() *crcWorker {
	w := &crcWorker{chunks: make(chan []byte, crcBuffers), free: make(chan []byte, crcBuffers), sum: make(chan uint64)}
	for range crcBuffers {
		w.free <- make([]byte, bufSize)
	}
	go func() {
		var crc uint64
		for b := range w.chunks {
			if b == nil {
				w.sum <- crc
				continue
			}
			crc = crcUpdate(crc, b)
			w.free <- b[:cap(b)]
		}
	}()
	return w
}

func (w *crcWorker) add(p []byte) {
	for len(p) > 0 {
		b := <-w.free
		n := copy(b, p)
		w.chunks <- b[:n]
		p = p[n:]
	}
}

func (w *crcWorker) total() uint64 {
	w.chunks <- nil
	return <-w.sum
}

func (w *crcWorker) close() {
	if !w.closed {
		w.closed = true
		close(w.chunks)
	}
}

// addCRC adds consumed bytes to the checksum.
func (in *input) addCRC(p []byte) {
	if in.sums != nil {
		in.sums.add(p)
		return
	}
	in.crc = crcUpdate(in.crc, p)
}

func newInput(src io.Reader) *input {
	return &input{src: src, buf: make([]byte, bufSize)}
}

func (in *input) offset() int64 { return in.base + int64(in.r) }

// fill makes n bytes available (n <= bufSize) and reports whether it could.
func (in *input) fill(n int) bool {
	if in.w-in.r >= n {
		return true
	}
	if len(in.buf)-in.r < n {
		in.addCRC(in.buf[in.crcAt:in.r])
		copy(in.buf, in.buf[in.r:in.w])
		in.base += int64(in.r)
		in.w -= in.r
		in.r, in.crcAt = 0, 0
	}
	for in.w-in.r < n && in.err == nil {
		m, err := in.src.Read(in.buf[in.w:])
		in.w += m
		if err != nil {
			in.err = err
		} else if m == 0 {
			// A reader that returns nothing and no error forever would hang
			// us; io.ReadFull's contract allows a few, so count them.
			in.err = in.retry()
		}
	}
	return in.w-in.r >= n
}

// retry gives a source that returned 0, nil another chance a bounded number
// of times, as bufio does.
func (in *input) retry() error {
	for range 100 {
		m, err := in.src.Read(in.buf[in.w:])
		in.w += m
		if m > 0 || err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// fail is the error for wanting what in cannot give at the current offset.
func (in *input) fail(what string) error {
	if in.err != nil && !errors.Is(in.err, io.EOF) {
		return fmt.Errorf("snapshot: offset %d: reading %s: %w", in.offset(), what, in.err)
	}
	return &FormatError{Offset: in.offset(), Expected: what, Found: "end of file"}
}

func (in *input) byte(what string) (byte, error) {
	if in.r < in.w || in.fill(1) {
		b := in.buf[in.r]
		in.r++
		return b, nil
	}
	return 0, in.fail(what)
}

// next consumes n bytes (n <= bufSize) and returns them; the slice is valid
// until the next call on in.
func (in *input) next(n int, what string) ([]byte, error) {
	if !in.fill(n) {
		return nil, in.fail(what)
	}
	b := in.buf[in.r : in.r+n]
	in.r += n
	return b, nil
}

// peek returns up to n bytes (n <= bufSize) without consuming them; fewer
// near the end of the file.
func (in *input) peek(n int) []byte {
	in.fill(n)
	return in.buf[in.r:min(in.w, in.r+n)]
}

// discard consumes n bytes, in chunks of the buffer.
func (in *input) discard(n int64, what string) error {
	for n > 0 {
		if in.r == in.w && !in.fill(1) {
			return in.fail(what)
		}
		k := int64(in.w - in.r)
		if k > n {
			k = n
		}
		in.r += int(k)
		n -= k
	}
	return nil
}

// appendN reads n bytes and appends them to dst, growing dst only by what
// has been read.
func (in *input) appendN(dst []byte, n int64, what string) ([]byte, error) {
	for n > 0 {
		if in.r == in.w && !in.fill(1) {
			return dst, in.fail(what)
		}
		k := int64(in.w - in.r)
		if k > n {
			k = n
		}
		dst = append(dst, in.buf[in.r:in.r+int(k)]...)
		in.r += int(k)
		n -= k
	}
	return dst, nil
}

// sum returns the CRC64 of every byte consumed so far.
func (in *input) sum() uint64 {
	in.addCRC(in.buf[in.crcAt:in.r])
	in.crcAt = in.r
	if in.sums != nil {
		return in.sums.total()
	}
	return in.crc
}
