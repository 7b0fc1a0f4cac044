package scanner

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// go-redis parses the replies of SCAN, INFO, CLUSTER NODES, ROLE and the
// sentinel's commands, and trusts their headers: "*2000000000" makes it
// allocate a slice of two billion elements before reading one, and
// "$2000000000" a 2 GB buffer. Every connection go-redis reads from is
// therefore a boundedConn, which follows the RESP stream as it is read and
// fails the read whose bytes would announce more than a reply may hold, so
// that go-redis never sees the header. The probe's own connections (resp.go)
// parse with their own limits and read through the plain connection.

// The bounds of one reply read by go-redis, nested values included. They
// are far above what keyreg asks for: a SCAN reply holds about Count keys,
// INFO a few kilobytes, CLUSTER NODES about 200 bytes per node.
const (
	maxReplyElems = 1 << 20  // elements of every array, set, map and push
	maxReplyBytes = 64 << 20 // bytes, headers included
)

// ErrReplyTooLarge is returned when a server's reply to a command go-redis
// parses announces more than maxReplyElems elements or maxReplyBytes bytes.
var ErrReplyTooLarge = errors.New("reply too large")

// boundedConn is a net.Conn whose reads are checked by a respBound.
type boundedConn struct {
	net.Conn
	b   respBound
	err error
}

// bounded wraps nc; when nc is a socket, the result is one too, so that
// go-redis' health check of idle connections keeps working.
func bounded(nc net.Conn) net.Conn {
	bc := &boundedConn{Conn: nc}
	if _, ok := nc.(syscall.Conn); ok {
		return &boundedSocket{bc}
	}
	return bc
}

// unbounded returns the connection a bounded one wraps.
func unbounded(nc net.Conn) net.Conn {
	switch c := nc.(type) {
	case *boundedConn:
		return c.Conn
	case *boundedSocket:
		return c.Conn
	}
	return nc
}

func (c *boundedConn) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		if berr := c.b.feed(p[:n]); berr != nil {
			c.err = berr
			return 0, berr
		}
	}
	return n, err
}

// NetConn returns the wrapped connection, as tls.Conn's does: go-redis
// walks NetConn down to the socket to see whether data (such as a TLS
// alert) waits on a connection.
func (c *boundedConn) NetConn() net.Conn { return c.Conn }

// boundedSocket is a boundedConn over a socket.
type boundedSocket struct{ *boundedConn }

func (s *boundedSocket) SyscallConn() (syscall.RawConn, error) {
	return s.Conn.(syscall.Conn).SyscallConn()
}

// respBound follows a RESP2 or RESP3 stream byte by byte, with no memory
// beyond a header's first bytes.
type respBound struct {
	pending int64    // values still to come in the current reply; 0 between replies
	elems   int64    // elements announced in the current reply
	bytes   int64    // bytes of the current reply so far
	skip    int64    // bytes of a bulk payload and its CRLF still to pass
	line    [24]byte // the first bytes of the current header line
	lineLen int
}

// feed checks the next bytes of the stream.
func (b *respBound) feed(p []byte) error {
	for i := 0; i < len(p); {
		if b.skip > 0 {
			k := min(b.skip, int64(len(p)-i))
			b.skip -= k
			i += int(k)
			if b.skip == 0 {
				b.done()
			}
			continue
		}
		c := p[i]
		i++
		if b.bytes++; b.bytes > maxReplyBytes {
			return b.tooLarge(fmt.Sprintf("more than %d bytes", maxReplyBytes))
		}
		if b.lineLen < len(b.line) {
			b.line[b.lineLen] = c
		}
		b.lineLen++
		if c != '\n' {
			continue
		}
		err := b.header()
		b.lineLen = 0
		if err != nil {
			return err
		}
	}
	return nil
}

// header handles a complete header line.
func (b *respBound) header() error {
	if b.pending == 0 {
		b.pending = 1 // a new reply
	}
	kind := b.line[0]
	switch kind {
	case '+', '-', ':', ',', '#', '(', '_':
		b.done()
		return nil
	}
	if b.lineLen > len(b.line) || b.lineLen < 4 || b.line[b.lineLen-2] != '\r' {
		return fmt.Errorf("%w: a malformed %q header", errProtocol, kind)
	}
	n, ok := parseInt(b.line[1 : b.lineLen-2])
	switch {
	case !ok || n < -1:
		return fmt.Errorf("%w: a malformed %q header", errProtocol, kind)
	case n == -1:
		b.done() // a RESP2 null
		return nil
	}
	switch kind {
	case '$', '!', '=':
		if n > maxReplyBytes-b.bytes {
			return b.tooLarge(fmt.Sprintf("a string of %d bytes", n))
		}
		b.bytes += n + 2
		b.skip = n + 2
		return nil
	case '*', '~', '>', '%', '|':
		if kind == '%' || kind == '|' {
			if n > maxReplyElems {
				return b.tooLarge(fmt.Sprintf("a map of %d entries", n))
			}
			n *= 2
		}
		if n > maxReplyElems-b.elems {
			return b.tooLarge(fmt.Sprintf("an aggregate of %d elements", n))
		}
		b.elems += n
		b.pending += n
		if kind != '|' { // an attribute precedes the value it describes
			b.done()
		}
		return nil
	}
	return fmt.Errorf("%w: a reply of kind %q", errProtocol, kind)
}

// done ends one value; the reply ends with its last value.
func (b *respBound) done() {
	b.pending--
	if b.pending == 0 {
		b.elems, b.bytes = 0, 0
	}
}

func (b *respBound) tooLarge(what string) error {
	return fmt.Errorf("%w: the server announced %s (keyreg takes at most %d elements and %d MiB per reply)",
		ErrReplyTooLarge, what, maxReplyElems, maxReplyBytes>>20)
}
