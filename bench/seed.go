package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
)

// The seeder writes generated RESP straight to a TCP connection, with a
// goroutine draining the replies, so Redis ingests commands as fast as it can
// parse them. The keyspace is a pure function of (n, seed): the same flags
// always produce the same keys and values (stream IDs are explicit).

// kind is one class of seeded keys.
type kind int

const (
	kSession kind = iota
	kSessionIndex
	kProduct
	kPage
	kCart
	kLeaderboard
	kStream
	kCelery
	kLock
	kCounter
	kJunk
	numKinds
)

var kindNames = [numKinds]string{
	"user-session", "user-session-index", "product-cache", "page-cache", "cart-items",
	"leaderboard", "chat-messages", "celery-task-result", "lock", "view-counter", "unregistered",
}

// mix is the share of each kind, in per mille; it sums to 1000.
var mix = [numKinds]int{
	kSession:      400,
	kSessionIndex: 50,
	kProduct:      100,
	kPage:         50,
	kCart:         100,
	kLeaderboard:  30,
	kStream:       1,
	kCelery:       50,
	kLock:         20,
	kCounter:      99,
	kJunk:         100,
}

// brokenPerMille is the share of JSON payloads written so that they break
// their schema.
const brokenPerMille = 10

// seedStats describes what was seeded.
type seedStats struct {
	Keys     int64            `json:"keys"`
	Commands int64            `json:"commands"`
	Broken   int64            `json:"broken_json_payloads"`
	JSON     int64            `json:"json_payloads"`
	ByKind   map[string]int64 `json:"by_kind"`
	Duration time.Duration    `json:"duration_ns"`
}

// cumulative thresholds for picking a kind from a number in [0, 1000).
var kindCut = func() [numKinds]int {
	var c [numKinds]int
	sum := 0
	for i, m := range mix {
		sum += m
		c[i] = sum
	}
	return c
}()

// gen generates the keyspace one key at a time.
type gen struct {
	r     *rand.Rand
	buf   []byte // RESP of the current key's commands
	ncmd  int    // commands in buf
	key   string
	kind  kind
	junk  int // junk keys generated
	stats seedStats
	// base is the time used in payload timestamps; fixed for determinism.
	base time.Time
}

func newGen(seed uint64) *gen {
	return &gen{
		r:     rand.New(rand.NewPCG(seed, 0x6b6579726567)),
		base:  time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		stats: seedStats{ByKind: map[string]int64{}},
	}
}

// cmd appends one RESP command to g.buf.
func (g *gen) cmd(args ...string) {
	g.buf = append(g.buf, '*')
	g.buf = strconv.AppendInt(g.buf, int64(len(args)), 10)
	g.buf = append(g.buf, '\r', '\n')
	for _, a := range args {
		g.buf = append(g.buf, '$')
		g.buf = strconv.AppendInt(g.buf, int64(len(a)), 10)
		g.buf = append(g.buf, '\r', '\n')
		g.buf = append(g.buf, a...)
		g.buf = append(g.buf, '\r', '\n')
	}
	g.ncmd++
}

const hexDigits = "0123456789abcdef"
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

func (g *gen) hex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = hexDigits[g.r.IntN(16)]
	}
	return string(b)
}

// uuid returns a version-4 shaped UUID whose last 32 bits are i, so UUIDs of
// different i never collide.
func (g *gen) uuid(i int) string {
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%04x%08x", g.r.Uint32(), g.r.IntN(1<<16), g.r.IntN(1<<12),
		0x8000|g.r.IntN(1<<14), g.r.IntN(1<<16), uint32(i))
}

// ulid returns a ULID-shaped ID whose last 10 characters encode i.
func (g *gen) ulid(i int) string {
	b := []byte("01HZ")
	for range 12 {
		b = append(b, crockford[g.r.IntN(32)])
	}
	for k := 9; k >= 0; k-- {
		b = append(b, crockford[(i>>(5*k))&31])
	}
	return string(b)
}

func (g *gen) ts(offset time.Duration) string {
	return g.base.Add(offset).Format(time.RFC3339)
}

// ttlSecs returns a TTL between lo and hi. Every TTL is at least 2h so no
// key expires during a benchmark run.
func (g *gen) ttlSecs(lo, hi time.Duration) string {
	s := int64(lo/time.Second) + g.r.Int64N(int64((hi-lo)/time.Second)+1)
	return strconv.FormatInt(s, 10)
}

// broken decides whether this JSON payload breaks its schema.
func (g *gen) broken() bool {
	g.stats.JSON++
	if g.r.IntN(1000) < brokenPerMille {
		g.stats.Broken++
		return true
	}
	return false
}

var authMethods = []string{"password", "sso", "passkey", "magic_link"}
var locales = []string{"en-us", "en-gb", "de-de", "fr-fr", "es-es", "ja-jp", "pt-br"}
var junkPrefixes = []string{"tmp:debug:", "legacy_cache_", "sess:", "test:foo:", "scratch/", "migration:2023:"}

// The junk that issue 22 found inference to get wrong, a third of the junk
// keys: hex ids glued to a literal, siblings of one shape (scratch areas,
// locales), and one-off keys, the first junk keys written. Each of
// hostileShapes is one true shape; the one-offs are none.
var (
	scratchAreas  = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	cmsLocales    = []string{"de", "en", "fr", "ja"}
	oneOffs       = []string{"foo", "x", "test", "asdf", "v2:user:session:12345"}
	hostileShapes = []string{"sess_{id:hex}", "scratch:{area}:{n:int}", "v1:cms:page:{page_id:int}:{locale}"}
)

// next generates key i: it sets g.key and g.kind and fills g.buf.
func (g *gen) next(i int) {
	g.buf, g.ncmd = g.buf[:0], 0
	x := g.r.IntN(1000)
	k := kind(0)
	for x >= kindCut[k] {
		k++
	}
	g.kind = k
	const h, d = time.Hour, 24 * time.Hour
	switch k {
	case kSession:
		g.key = "v2:user:session:" + g.uuid(i)
		uid := strconv.Itoa(1 + g.r.IntN(5_000_000))
		if g.broken() {
			uid = `"u` + uid + `"` // a string where the schema wants an integer
		}
		v := `{"user_id":` + uid + `,"created_at":"` + g.ts(-time.Duration(g.r.IntN(86400))*time.Second) +
			`","expires_at":"` + g.ts(24*h) + `","csrf_token":"` + g.hex(64) + `","auth_method":"` +
			authMethods[g.r.IntN(len(authMethods))] + `","mfa":` + strconv.FormatBool(g.r.IntN(3) == 0) +
			`,"roles":["customer"],"ip":"10.` + strconv.Itoa(g.r.IntN(256)) + `.` + strconv.Itoa(g.r.IntN(256)) + `.` +
			strconv.Itoa(g.r.IntN(256)) + `","user_agent":"Mozilla/5.0 (X11; Linux x86_64) Firefox/1` + strconv.Itoa(20+g.r.IntN(20)) + `.0"}`
		g.cmd("SET", g.key, v, "EX", g.ttlSecs(2*h, 24*h))
	case kSessionIndex:
		g.key = "v2:user:" + strconv.Itoa(10_000_000+i) + ":sessions"
		args := []string{"SADD", g.key}
		for range 1 + g.r.IntN(3) {
			args = append(args, g.uuid(g.r.IntN(1<<30)))
		}
		g.cmd(args...)
		g.cmd("EXPIRE", g.key, g.ttlSecs(2*h, 24*h))
	case kProduct:
		id := strconv.Itoa(1 + i)
		g.key = "v1:cache:product:" + id
		amount := strconv.Itoa(g.r.IntN(100000))
		if g.broken() {
			amount = "-" + amount + "1" // a negative price
		}
		v := `{"id":` + id + `,"sku":"SKU-` + strconv.Itoa(100000+g.r.IntN(900000)) + `","title":"Product ` + id +
			` in colour ` + strconv.Itoa(g.r.IntN(40)) + `","price":{"amount":` + amount + `,"currency":"EUR"},"in_stock":` +
			strconv.FormatBool(g.r.IntN(5) > 0) + `,"category_ids":[` + strconv.Itoa(1+g.r.IntN(500)) + `,` +
			strconv.Itoa(1+g.r.IntN(500)) + `],"updated_at":"` + g.ts(-time.Duration(g.r.IntN(3600))*time.Second) + `"}`
		if g.r.IntN(2) == 0 {
			g.cmd("SET", g.key, v, "EX", g.ttlSecs(2*h, 24*h))
		} else {
			g.cmd("SET", g.key, v) // half of the caches lack a TTL
		}
	case kPage:
		g.key = "v1:cache:page:" + strconv.Itoa(1+i) + ":" + locales[g.r.IntN(len(locales))]
		v := "<div class=\"page\"><h1>Page " + strconv.Itoa(i) + "</h1><p>" + g.hex(64+g.r.IntN(192)) + "</p></div>"
		if g.r.IntN(2) == 0 {
			g.cmd("SET", g.key, v, "EX", g.ttlSecs(2*h, 24*h))
		} else {
			g.cmd("SET", g.key, v)
		}
	case kCart:
		g.key = "v1:cart:{" + strconv.Itoa(20_000_000+i) + "}:items"
		args := []string{"HSET", g.key}
		for range 1 + g.r.IntN(5) {
			qty := strconv.Itoa(1 + g.r.IntN(5))
			if g.broken() {
				qty = "0" // below the schema's minimum
			}
			args = append(args, strconv.Itoa(1+g.r.IntN(1_000_000)),
				`{"qty":`+qty+`,"unit_price":`+strconv.Itoa(g.r.IntN(50000))+`,"added_at":"`+g.ts(-time.Duration(g.r.IntN(86400))*time.Second)+`"}`)
		}
		g.cmd(args...)
		g.cmd("EXPIRE", g.key, g.ttlSecs(2*h, 30*d))
	case kLeaderboard:
		g.key = "v1:leaderboard:" + strconv.Itoa(1+g.r.IntN(50)) + ":" + strconv.Itoa(1+i)
		args := []string{"ZADD", g.key}
		for range 5 + g.r.IntN(16) {
			args = append(args, strconv.Itoa(g.r.IntN(100000)), strconv.Itoa(1+g.r.IntN(5_000_000)))
		}
		g.cmd(args...)
	case kStream:
		g.key = "v1:chat:room:" + g.ulid(i) + ":messages"
		for e := range 5 + g.r.IntN(20) {
			kindv := "text"
			if g.broken() {
				kindv = "video" // not in the enum
			}
			g.cmd("XADD", g.key, strconv.Itoa(1_700_000_000_000+e)+"-0", "user_id", strconv.Itoa(1+g.r.IntN(5_000_000)),
				"kind", kindv, "body", "hello "+g.hex(16+g.r.IntN(64)))
		}
		if g.r.IntN(2) == 0 {
			g.cmd("EXPIRE", g.key, g.ttlSecs(2*h, 30*d))
		}
	case kCelery:
		id := g.uuid(i)
		g.key = "celery-task-meta-" + id
		status := "SUCCESS"
		if g.broken() {
			status = "DONE" // not a Celery state
		}
		v := `{"status":"` + status + `","result":{"order_id":` + strconv.Itoa(g.r.IntN(1_000_000)) + `,"ok":true},"traceback":null,"children":[],"date_done":"` +
			g.ts(-time.Duration(g.r.IntN(86400))*time.Second) + `","task_id":"` + id + `"}`
		g.cmd("SET", g.key, v, "EX", g.ttlSecs(2*h, 24*h))
	case kLock:
		g.key = "v1:lock:job-" + strconv.Itoa(i)
		g.cmd("SET", g.key, g.hex(32), "EX", g.ttlSecs(2*h, 12*h))
	case kCounter:
		g.key = "v1:stats:views:" + strconv.Itoa(1+i) + ":" + strconv.Itoa(20260101+g.r.IntN(28))
		g.cmd("SET", g.key, strconv.Itoa(g.r.IntN(100000)), "EX", g.ttlSecs(2*h, 30*d))
	case kJunk:
		g.junk++
		if g.junk <= len(oneOffs) {
			g.key = oneOffs[g.junk-1]
			g.cmd("SET", g.key, "1")
			break
		}
		if x := g.r.IntN(3); x == 0 {
			switch g.r.IntN(3) {
			case 0:
				g.key = "sess_" + g.hex(32)
			case 1:
				g.key = "scratch:" + scratchAreas[g.r.IntN(len(scratchAreas))] + ":" + strconv.Itoa(i)
			default:
				g.key = "v1:cms:page:" + strconv.Itoa(i) + ":" + cmsLocales[g.r.IntN(len(cmsLocales))]
			}
			g.cmd("SET", g.key, g.hex(16), "EX", g.ttlSecs(2*h, 24*h))
			break
		}
		p := junkPrefixes[g.r.IntN(len(junkPrefixes))]
		g.key = p + strconv.Itoa(i)
		if p == "migration:2023:" {
			g.cmd("RPUSH", g.key, g.hex(16), g.hex(16))
		} else if g.r.IntN(2) == 0 {
			g.cmd("SET", g.key, g.hex(8+g.r.IntN(56)), "EX", g.ttlSecs(2*h, 24*h))
		} else {
			g.cmd("SET", g.key, g.hex(8+g.r.IntN(56)))
		}
	}
	g.stats.Keys++
	g.stats.Commands += int64(g.ncmd)
	g.stats.ByKind[kindNames[k]]++
}

// pipe is one pipelined connection: commands are written through a large
// buffer while a goroutine reads and counts the replies.
type pipe struct {
	conn    net.Conn
	w       *bufio.Writer
	sent    int64
	done    chan error
	target  atomic.Int64
	replies int64
	errs    int64
	lastErr string
}

func openPipe(addr string) (*pipe, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	p := &pipe{conn: c, w: bufio.NewWriterSize(c, 1<<20), done: make(chan error, 1)}
	return p, nil
}

// startReading drains replies. The total is only known when writing ends:
// finish then stores it in target and sends a last PING, whose reply wakes
// the reader even if it had caught up already.
func (p *pipe) startReading() {
	go func() {
		r := bufio.NewReaderSize(p.conn, 1<<20)
		for {
			if t := p.target.Load(); t > 0 && p.replies == t {
				p.done <- nil
				return
			}
			line, err := r.ReadSlice('\n')
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				p.done <- err
				return
			}
			switch line[0] {
			case '-':
				p.errs++
				if p.lastErr == "" {
					p.lastErr = string(line)
				}
			case '$':
				n, _ := strconv.Atoi(string(line[1 : len(line)-2]))
				if n >= 0 {
					if _, err := r.Discard(n + 2); err != nil {
						p.done <- err
						return
					}
				}
			}
			p.replies++
		}
	}()
}

func (p *pipe) finish() error {
	p.target.Store(p.sent + 1)
	if _, err := p.w.WriteString("*1\r\n$4\r\nPING\r\n"); err != nil {
		return err
	}
	if err := p.w.Flush(); err != nil {
		return err
	}
	err := <-p.done
	_ = p.conn.Close()
	if err != nil {
		return err
	}
	if p.replies != p.sent+1 {
		return fmt.Errorf("seeding: %d replies for %d commands", p.replies, p.sent)
	}
	if p.errs > 0 {
		return fmt.Errorf("seeding: %d error replies, first: %s", p.errs, p.lastErr)
	}
	return nil
}

// seed writes n keys to the servers. With one address it is a standalone
// server; with three, they are the cluster masters of slotRanges and each
// key goes to the master of its slot.
func seed(addrs []string, n int, seedVal uint64) (seedStats, error) {
	start := time.Now()
	pipes := make([]*pipe, len(addrs))
	for i, a := range addrs {
		p, err := openPipe(a)
		if err != nil {
			return seedStats{}, fmt.Errorf("seeding %s: %w", a, err)
		}
		p.startReading()
		pipes[i] = p
	}
	g := newGen(seedVal)
	for i := range n {
		g.next(i)
		p := pipes[0]
		if len(pipes) == 3 {
			p = pipes[masterOf(keySlot(g.key))]
		}
		if _, err := p.w.Write(g.buf); err != nil {
			return g.stats, fmt.Errorf("seeding: %w", err)
		}
		p.sent += int64(g.ncmd)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(pipes))
	for i, p := range pipes {
		wg.Go(func() { errs[i] = p.finish() })
	}
	wg.Wait()
	g.stats.Duration = time.Since(start)
	return g.stats, errors.Join(errs...)
}

func masterOf(slot uint16) int {
	for i, r := range redistest.SlotRanges {
		if int64(slot) <= r[1] {
			return i
		}
	}
	return 2
}

// keySlot is the Redis Cluster hash slot of key (CRC16/XMODEM of the hash
// tag, or of the whole key, mod 16384).
func keySlot(key string) uint16 {
	if s := indexByte(key, '{'); s >= 0 {
		if e := indexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}
