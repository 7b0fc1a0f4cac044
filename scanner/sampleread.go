package scanner

import (
	"bufio"
	"context"
	"io"
	"strconv"

	"github.com/keyreg/keyreg/payload"
	"github.com/redis/go-redis/v9"
)

// Sample reads run on the probe's raw connections (resp.go) and are parsed
// here element by element, so that memory is spent only on what is kept:
// a bulk string is allocated only after its length passed both the key's
// limit and the wave's budget, and everything else is discarded from the
// connection's buffer as it arrives. A go-redis pipeline would have read
// every reply whole, a 200 MiB list element as readily as a 20 byte one.

// elemCost is charged for every element kept on top of its bytes: slice
// and map overhead, so that a reply of millions of empty elements is
// bounded too.
const elemCost = 16

// readCommand returns the read of up to n elements of key (the whole value
// of a string), in the order of its arguments; nil for module types, which
// are not read.
func readCommand(typ, key string, n int) []string {
	count := strconv.Itoa(n)
	switch typ {
	case "string":
		return []string{"GET", key}
	case "hash":
		return []string{"HSCAN", key, "0", "COUNT", count}
	case "list":
		return []string{"LRANGE", key, "0", strconv.Itoa(n - 1)}
	case "set":
		return []string{"SSCAN", key, "0", "COUNT", count}
	case "zset":
		return []string{"ZSCAN", key, "0", "COUNT", count}
	case "stream":
		return []string{"XRANGE", key, "-", "+", "COUNT", count}
	}
	return nil
}

// readWave sends the reads of keys[wave] in one pipeline on a raw
// connection of cl and parses the replies with limits: maxBytes per key,
// budget for the wave. again[j] reports that keys[wave[j]] did not fit in
// what was left of the budget: its reply was discarded, and it must be read
// in another wave. An I/O or protocol error fails the keys from there on,
// closes the connection and is returned as broke.
func (c *Conn) readWave(ctx context.Context, cl *redis.Client, keys []KeyInfo, wave []int, n int, maxBytes, budget int64) (ss []payload.Sample, errs []error, again []bool, broke error) {
	ss, errs, again = make([]payload.Sample, len(wave)), make([]error, len(wave)), make([]bool, len(wave))
	fail := func(from int, err error) {
		for j := from; j < len(wave); j++ {
			errs[j] = err
		}
		broke = err
	}
	pool := c.rawPool(cl)
	rc, err := pool.get(ctx)
	if err != nil {
		fail(0, err)
		return
	}
	broken := true
	defer func() { pool.put(rc, broken) }()
	if err := rc.begin(ctx, c.base.ReadTimeout); err != nil {
		fail(0, err)
		return
	}
	defer rc.stop()
	for _, i := range wave {
		rc.cmd(readCommand(keys[i].Type, keys[i].Key, n)...)
	}
	rc.pending = 0
	if err := rc.w.Flush(); err != nil {
		fail(0, rc.ctxErr(err))
		return
	}
	left := budget
	for j, i := range wave {
		cr := capReader{r: rc.r, key: maxBytes, wave: &left}
		s, err := cr.read(keys[i].Type, n)
		switch {
		case err != nil:
			fail(j, rc.ctxErr(err))
			return
		case cr.full:
			again[j] = true
		case cr.over:
			errs[j] = ErrTooLarge
		case cr.reply != nil:
			errs[j] = cr.reply
		default:
			ss[j] = s
		}
	}
	broken = false
	return
}

// ctxErr returns the context's error when it ended the round trip, else err.
func (rc *rawConn) ctxErr(err error) error {
	if rc.ctx.Err() != nil {
		return rc.ctx.Err()
	}
	return err
}

// capReader parses the reply of one sample read, keeping what fits.
type capReader struct {
	r       *bufio.Reader
	key     int64  // bytes the key may still take
	wave    *int64 // bytes the wave may still take
	charged int64  // bytes this key took from the wave
	over    bool   // the key went over its limit: ErrTooLarge
	full    bool   // the wave ran out of budget: read the key again
	reply   error  // an error reply, or redis.Nil for a missing string
}

// take charges n bytes to the key and the wave. When they do not fit, it
// sets over or full, gives the key's bytes back to the wave (they will be
// dropped) and returns false, as it does for everything after.
func (cr *capReader) take(n int64) bool {
	if cr.over || cr.full {
		return false
	}
	switch {
	case n > cr.key:
		cr.over = true
	case n > *cr.wave:
		cr.full = true
	default:
		cr.key -= n
		*cr.wave -= n
		cr.charged += n
		return true
	}
	*cr.wave += cr.charged
	cr.charged = 0
	return false
}

// dropped reports whether what was kept so far is lost anyway.
func (cr *capReader) dropped() bool { return cr.over || cr.full }

// header reads a reply header: its kind and its length or integer, or the
// message of an error reply.
func (cr *capReader) header() (kind byte, n int64, msg string, err error) {
	line, err := cr.r.ReadSlice('\n')
	if err != nil {
		if err == bufio.ErrBufferFull {
			err = errProtocol
		}
		return 0, 0, "", err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return 0, 0, "", errProtocol
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '-':
		return '-', 0, string(body), nil
	case '+':
		return '+', 0, "", nil
	case ':', '$', '*':
		v, ok := parseInt(body)
		if !ok || line[0] != ':' && v > maxLength {
			return 0, 0, "", errProtocol
		}
		return line[0], v, "", nil
	}
	return 0, 0, "", errProtocol
}

// maxLength bounds the length a bulk or array header may announce, so that
// the sums over it (a bulk's CRLF, an element's cost) cannot overflow. No
// Redis reply comes near: a bulk string holds at most 512 MiB by default.
const maxLength = 1 << 62

// discard skips n bytes of the connection.
func (cr *capReader) discard(n int64) error {
	for n > 0 {
		step := min(n, 1<<30)
		if _, err := cr.r.Discard(int(step)); err != nil {
			return err
		}
		n -= step
	}
	return nil
}

// bulk reads the body of a bulk string of length n (its header read): the
// bytes when keep is set and they fit, else nil, discarded.
func (cr *capReader) bulk(n int64, keep bool) ([]byte, error) {
	if n < 0 {
		return nil, nil
	}
	if !keep || !cr.take(n+elemCost) {
		return nil, cr.discard(n + 2)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(cr.r, b); err != nil {
		return nil, err
	}
	return b, cr.crlf()
}

func (cr *capReader) crlf() error {
	var end [2]byte
	if _, err := io.ReadFull(cr.r, end[:]); err != nil {
		return err
	}
	if end != [2]byte{'\r', '\n'} {
		return errProtocol
	}
	return nil
}

// maxPending bounds the elements skip accepts announced at once; no real
// reply comes near it.
const maxPending = 1 << 40

// skip discards a whole reply whose header was read, however nested,
// without recursion.
func (cr *capReader) skip(kind byte, n int64) error {
	var pending int64
	for {
		switch kind {
		case '$':
			if n >= 0 {
				if err := cr.discard(n + 2); err != nil {
					return err
				}
			}
		case '*':
			if n > 0 {
				if pending += n; pending > maxPending {
					return errProtocol
				}
			}
		case ':', '+', '-':
		default:
			return errProtocol
		}
		if pending == 0 {
			return nil
		}
		pending--
		var err error
		if kind, n, _, err = cr.header(); err != nil {
			return err
		}
	}
}

// element reads one element of an array: a bulk string, kept when keep is
// set and it fits. Anything else is skipped.
func (cr *capReader) element(keep bool) ([]byte, error) {
	kind, n, _, err := cr.header()
	if err != nil {
		return nil, err
	}
	if kind != '$' {
		return nil, cr.skip(kind, n)
	}
	return cr.bulk(n, keep)
}

// array reads the header of an array; size is -1 for a nil array. Any
// other reply is skipped and reported as errProtocol, or recorded in
// cr.reply when it is an error reply.
func (cr *capReader) array() (size int64, err error) {
	kind, n, msg, err := cr.header()
	switch {
	case err != nil:
		return 0, err
	case kind == '*':
		return n, nil
	case kind == '-':
		cr.reply = replyError(msg)
		return -1, nil
	}
	if err := cr.skip(kind, n); err != nil {
		return 0, err
	}
	return 0, errProtocol
}

// elements reads an array of size bulk strings and calls keep(e, b) for
// element e when want(e) says it is wanted and it fits.
func (cr *capReader) elements(size int64, want func(e int64) bool, keep func(e int64, b []byte)) error {
	for e := int64(0); e < size; e++ {
		b, err := cr.element(want(e) && !cr.dropped())
		if err != nil {
			return err
		}
		if b != nil {
			keep(e, b)
		}
	}
	return nil
}

// scanReply reads the [cursor, [elements...]] reply of HSCAN, SSCAN and
// ZSCAN and returns the size of the elements array (-1 after an error
// reply).
func (cr *capReader) scanReply() (int64, error) {
	size, err := cr.array()
	if err != nil || size < 0 {
		return -1, err
	}
	if size != 2 {
		for range size {
			if _, err := cr.element(false); err != nil {
				return 0, err
			}
		}
		return 0, errProtocol
	}
	if _, err := cr.element(false); err != nil { // the cursor
		return 0, err
	}
	return cr.array()
}

// read parses the reply of readCommand(typ, key, n) into a sample of at
// most n elements. A value over the limits sets over or full; the reply is
// consumed either way. err is an I/O or protocol error only.
func (cr *capReader) read(typ string, n int) (payload.Sample, error) {
	var s payload.Sample
	limit := int64(n)
	var err error
	switch typ {
	case "string":
		var kind byte
		var size int64
		var msg string
		if kind, size, msg, err = cr.header(); err != nil {
			return s, err
		}
		switch {
		case kind == '-':
			cr.reply = replyError(msg)
		case kind != '$':
			if err := cr.skip(kind, size); err != nil {
				return s, err
			}
			return s, errProtocol
		case size < 0:
			cr.reply = redis.Nil
		default:
			s.String, err = cr.bulk(size, true)
		}
	case "list", "set", "zset":
		var size int64
		if typ == "list" {
			size, err = cr.array()
		} else {
			size, err = cr.scanReply()
		}
		if err != nil || size < 0 {
			return s, err
		}
		stride := int64(1)
		if typ == "zset" {
			stride = 2 // member, score pairs; scores are not kept
		}
		s.Members = make([][]byte, 0, min(size/stride, limit))
		err = cr.elements(size, func(e int64) bool { return e%stride == 0 && e/stride < limit },
			func(_ int64, b []byte) { s.Members = append(s.Members, b) })
	case "hash":
		var size int64
		if size, err = cr.scanReply(); err != nil || size < 0 {
			return s, err
		}
		s.Fields = make(map[string][]byte, min(size/2, limit))
		var field []byte
		err = cr.elements(size, func(e int64) bool { return e/2 < limit },
			func(e int64, b []byte) {
				if e%2 == 0 {
					field = b
				} else if field != nil {
					s.Fields[string(field)] = b
					field = nil
				}
			})
	case "stream":
		var size int64
		if size, err = cr.array(); err != nil || size < 0 {
			return s, err
		}
		for e := int64(0); e < size && err == nil; e++ {
			var entry map[string][]byte
			entry, err = cr.entry(e < limit && !cr.dropped())
			if entry != nil {
				s.Entries = append(s.Entries, entry)
			}
		}
	default:
		kind, size, _, err := cr.header()
		if err == nil {
			err = cr.skip(kind, size)
		}
		return s, err
	}
	if cr.dropped() {
		return payload.Sample{}, err
	}
	return s, err
}

// entry reads one [id, [field, value, ...]] stream entry; nil when not
// kept.
func (cr *capReader) entry(keep bool) (map[string][]byte, error) {
	size, err := cr.array()
	if err != nil {
		return nil, err
	}
	if size != 2 {
		if cr.reply != nil {
			return nil, errProtocol
		}
		for range max(size, 0) {
			if _, err := cr.element(false); err != nil {
				return nil, err
			}
		}
		return nil, errProtocol
	}
	if _, err := cr.element(false); err != nil { // the entry ID
		return nil, err
	}
	fields, err := cr.array()
	if err != nil {
		return nil, err
	}
	if cr.reply != nil {
		return nil, errProtocol
	}
	var e map[string][]byte
	if keep && cr.take(elemCost) {
		e = make(map[string][]byte, min(max(fields, 0)/2, 64))
	}
	var field []byte
	err = cr.elements(fields, func(int64) bool { return e != nil },
		func(i int64, b []byte) {
			if i%2 == 0 {
				field = b
			} else if field != nil {
				e[string(field)] = b
				field = nil
			}
		})
	if cr.dropped() {
		return nil, err
	}
	return e, err
}
