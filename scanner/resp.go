package scanner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The probe pipelines are the audit's hot path: a few commands per key, a
// few million per audit. go-redis allocates a command object, an argument
// slice and reply values for each of them, which made up most of the
// client's CPU time and garbage. The probe therefore speaks RESP2 itself on
// connections of its own: commands are written straight into a buffer and
// replies parsed into a reused slice. Sample reads use the same connections,
// parsed with limits (sampleread.go). Everything else (SCAN, INFO, size
// checks, cluster topology) stays on go-redis.
//
// A rawConn is dialled with the go-redis client's own Dialer, so TLS and
// Sentinel master resolution are the client's, and it repeats the client's
// handshake: AUTH, SELECT, READONLY and CLIENT NO-TOUCH.

// reply is one parsed RESP2 reply. Bulk string contents are kept only up
// to maxKeptBulk bytes: the one probe command that answers one is OBJECT
// ENCODING.
type reply struct {
	kind byte   // '+' simple string, ':' integer, '$' bulk, '-' error
	n    int64  // integer value, or bulk length (-1: nil)
	s    string // simple string or error message, or a short bulk string
}

// maxKeptBulk is the longest bulk string a reply keeps.
const maxKeptBulk = 32

func (r reply) isNil() bool { return r.kind == '$' && r.n < 0 }

// err returns the error reply as an error that go-redis' helpers (and
// errors.As with redis.Error) recognise; nil for any other reply.
func (r reply) err() error {
	if r.kind != '-' {
		return nil
	}
	return replyError(r.s)
}

// replyError is an error reply of the server, such as WRONGTYPE or MOVED.
type replyError string

func (e replyError) Error() string { return string(e) }

// RedisError marks replyError as a redis.Error, like go-redis' own.
func (replyError) RedisError() {}

var _ redis.Error = replyError("")

// rawConn is one connection of a rawPool. It is used by one goroutine at a
// time.
type rawConn struct {
	nc      net.Conn
	w       *bufio.Writer
	r       *bufio.Reader
	pending int             // commands written since the last round trip
	num     []byte          // scratch for lengths
	replies []reply         // the probe's reply buffer, reused
	ctx     context.Context // of the current round trip (see begin)
	stop    func() bool     // unregisters the round trip's ctx watch
}

// newRawConn wraps a connection of Conn.dial, without its reply bounds:
// the probe's reader has its own.
func newRawConn(nc net.Conn) *rawConn {
	nc = unbounded(nc)
	return &rawConn{nc: nc, w: bufio.NewWriterSize(nc, 32<<10), r: bufio.NewReaderSize(nc, 32<<10), num: make([]byte, 0, 20)}
}

// cmd queues one command.
func (rc *rawConn) cmd(args ...string) {
	rc.header('*', len(args))
	for _, a := range args {
		rc.header('$', len(a))
		_, _ = rc.w.WriteString(a)
		_, _ = rc.w.WriteString("\r\n")
	}
	rc.pending++
}

// keyCmd queues a command of constant words and one key without building an
// argument slice: the probe's only shape.
func (rc *rawConn) keyCmd(words string, key string) {
	_, _ = rc.w.WriteString(words)
	rc.header('$', len(key))
	_, _ = rc.w.WriteString(key)
	_, _ = rc.w.WriteString("\r\n")
	rc.pending++
}

func (rc *rawConn) header(c byte, n int) {
	_ = rc.w.WriteByte(c)
	rc.num = strconv.AppendInt(rc.num[:0], int64(n), 10)
	_, _ = rc.w.Write(rc.num)
	_, _ = rc.w.WriteString("\r\n")
}

// begin starts a round trip. Its deadline (timeout from now, or ctx's if
// earlier; none when both are unset) is set before any command is queued,
// since queueing flushes whenever the buffer fills: a deadline left over
// from the connection's previous use would fail those writes. ctx's end
// aborts the round trip.
func (rc *rawConn) begin(ctx context.Context, timeout time.Duration) error {
	var dl time.Time
	if timeout > 0 {
		dl = time.Now().Add(timeout)
	}
	if d, ok := ctx.Deadline(); ok && (dl.IsZero() || d.Before(dl)) {
		dl = d
	}
	if err := rc.nc.SetDeadline(dl); err != nil {
		return err
	}
	rc.ctx = ctx
	rc.stop = context.AfterFunc(ctx, func() { _ = rc.nc.SetDeadline(time.Unix(1, 0)) })
	return nil
}

// do sends the commands queued since begin and reads their replies into
// out[:0]. After an error the connection must be discarded.
func (rc *rawConn) do(out []reply) ([]reply, error) {
	n := rc.pending
	rc.pending = 0
	out, err := rc.roundTrip(n, out[:0])
	rc.stop()
	if err != nil && rc.ctx.Err() != nil {
		return out, rc.ctx.Err()
	}
	return out, err
}

func (rc *rawConn) roundTrip(n int, out []reply) ([]reply, error) {
	if err := rc.w.Flush(); err != nil {
		return out, err
	}
	for range n {
		r, err := rc.read()
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// errProtocol is returned for a reply the probe cannot parse.
var errProtocol = errors.New("unexpected reply from the server (not RESP2)")

// read parses one reply. Arrays are not expected from probe commands and
// fail the read.
func (rc *rawConn) read() (reply, error) {
	line, err := rc.r.ReadSlice('\n')
	if err != nil {
		return reply{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return reply{}, errProtocol
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return reply{kind: '+', s: typeName(body)}, nil
	case '-':
		return reply{kind: '-', s: string(body)}, nil
	case ':', '$':
		v, ok := parseInt(body)
		if !ok || line[0] == '$' && v > maxLength {
			return reply{}, errProtocol
		}
		var s string
		if line[0] == '$' && v >= 0 {
			if v <= maxKeptBulk {
				b, err := rc.r.Peek(int(v))
				if err != nil {
					return reply{}, err
				}
				s = typeName(b)
			}
			if _, err := rc.r.Discard(int(v) + 2); err != nil {
				return reply{}, err
			}
		}
		return reply{kind: line[0], n: v, s: s}, nil
	}
	return reply{}, errProtocol
}

// typeName returns TYPE's answer without allocating for the built-in types,
// nor OBJECT ENCODING's for the encodings of strings.
func typeName(b []byte) string {
	for _, t := range [...]string{"string", "hash", "list", "set", "zset", "stream", "none", "OK", "int", "embstr", "raw"} {
		if string(b) == t {
			return t
		}
	}
	return string(b)
}

// parseInt parses a RESP integer: every int64 Redis can send, negative
// too (a PTTL of PEXPIREAT 1500000000000000000 has 19 digits), and nothing
// beyond. It does not allocate.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	// v accumulates the negated value: -2^63 fits, 2^63 would not.
	const minInt = -1 << 63
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if v < (minInt+d)/10 {
			return 0, false
		}
		v = v*10 - d
	}
	if !neg {
		if v == minInt {
			return 0, false
		}
		v = -v
	}
	return v, true
}

// rawPool keeps the idle rawConns to one node and database.
type rawPool struct {
	opts     *redis.Options // the go-redis client's, for Dialer, credentials and DB
	readOnly bool           // send READONLY (cluster replica)
	noTouch  bool           // send CLIENT NO-TOUCH ON (Redis 7.2+)

	mu     sync.Mutex
	idle   []*rawConn
	closed bool
}

// get returns an idle connection or dials a new one.
func (p *rawPool) get(ctx context.Context) (*rawConn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, redis.ErrClosed
	}
	if n := len(p.idle); n > 0 {
		rc := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return rc, nil
	}
	p.mu.Unlock()
	return p.dial(ctx)
}

// put returns rc to the pool; a connection that failed is closed instead.
func (p *rawPool) put(rc *rawConn, failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if failed || p.closed || len(p.idle) >= probeDepth+1 {
		_ = rc.nc.Close()
		return
	}
	p.idle = append(p.idle, rc)
}

func (p *rawPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, rc := range p.idle {
		_ = rc.nc.Close()
	}
	p.idle = nil
}

// dial opens a connection the way the go-redis client would and sends its
// handshake in one round trip.
func (p *rawPool) dial(ctx context.Context) (*rawConn, error) {
	o := p.opts
	if o.DialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.DialTimeout)
		defer cancel()
	}
	nc, err := o.Dialer(ctx, o.Network, o.Addr)
	if err != nil {
		return nil, err
	}
	rc := newRawConn(nc)
	if err := rc.begin(ctx, o.ReadTimeout); err != nil {
		_ = nc.Close()
		return nil, err
	}
	switch {
	case o.Password != "" && o.Username != "":
		rc.cmd("AUTH", o.Username, o.Password)
	case o.Password != "":
		rc.cmd("AUTH", o.Password)
	}
	if o.DB != 0 {
		rc.cmd("SELECT", strconv.Itoa(o.DB))
	}
	if p.readOnly {
		rc.cmd("READONLY")
	}
	if p.noTouch {
		rc.cmd("CLIENT", "NO-TOUCH", "ON")
	}
	replies, err := rc.do(nil)
	if err == nil {
		for _, r := range replies {
			if err = r.err(); err != nil {
				break
			}
		}
	}
	if err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("opening a probe connection: %w", err)
	}
	return rc, nil
}
