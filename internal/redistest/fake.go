package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Fake is a TCP listener that speaks just enough RESP2 to pass for a Redis
// server, for the hostile replies a real server never sends: an error text
// holding the password, an array header of two billion elements. Each
// command is answered by the test's handler, or else by a default reply
// (see Default).
type Fake struct {
	// Addr is the "127.0.0.1:port" address the fake listens on.
	Addr string

	l       net.Listener
	handler func(args []string) (reply string, ok bool)
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
}

// URL returns the redis:// URL of the fake, with userinfo when given
// ("user:pass" or ":pass").
func (f *Fake) URL(userinfo string) string {
	if userinfo == "" {
		return "redis://" + f.Addr
	}
	return "redis://" + userinfo + "@" + f.Addr
}

// FakeInfo is the INFO reply of a Fake: a standalone Redis 7.0 primary.
const FakeInfo = "# Server\r\nredis_version:7.0.0\r\nrun_id:fakefakefakefakefakefakefakefakefakefake\r\n" +
	"# Cluster\r\ncluster_enabled:0\r\n# Replication\r\nrole:master\r\nconnected_slaves:0\r\n# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n"

// Default is the reply of a Fake to a command its handler left alone: HELLO
// is refused (so clients speak RESP2), INFO answers FakeInfo, SCAN answers
// an empty keyspace, and everything else +OK (PONG to PING).
func Default(args []string) string {
	switch strings.ToUpper(args[0]) {
	case "HELLO":
		return "-ERR unknown command 'HELLO'\r\n"
	case "PING":
		return "+PONG\r\n"
	case "INFO":
		return Bulk(FakeInfo)
	case "SCAN":
		return "*2\r\n$1\r\n0\r\n*0\r\n"
	}
	return "+OK\r\n"
}

// Bulk returns s as a RESP bulk string.
func Bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// StartFake listens on a free loopback port and answers every command with
// handler's reply, or with Default's when handler returns false. A reply is
// written as is, so it may be any bytes. The fake closes its listener and
// connections at the end of the test.
func StartFake(t testing.TB, handler func(args []string) (reply string, ok bool)) *Fake {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &Fake{Addr: l.Addr().String(), l: l, handler: handler, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.close)
	return f
}

func (f *Fake) accept() {
	defer f.wg.Done()
	for {
		nc, err := f.l.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns[nc] = struct{}{}
		f.mu.Unlock()
		f.wg.Add(1)
		go f.serve(nc)
	}
}

func (f *Fake) close() {
	_ = f.l.Close()
	f.mu.Lock()
	for nc := range f.conns {
		_ = nc.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// serve answers the commands of one connection until it closes.
func (f *Fake) serve(nc net.Conn) {
	defer f.wg.Done()
	defer nc.Close()
	r := bufio.NewReader(nc)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		reply, ok := f.handler(args)
		if !ok {
			reply = Default(args)
		}
		if _, err := io.WriteString(nc, reply); err != nil {
			return
		}
	}
}

// maxFakeArg bounds one argument of a command sent to a Fake.
const maxFakeArg = 1 << 20

// readCommand reads one command: an array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	n, err := header(r, '*')
	if err != nil {
		return nil, err
	}
	if n < 1 || n > 1024 {
		return nil, fmt.Errorf("fake: %d arguments", n)
	}
	args := make([]string, n)
	for i := range args {
		l, err := header(r, '$')
		if err != nil {
			return nil, err
		}
		if l < 0 || l > maxFakeArg {
			return nil, fmt.Errorf("fake: argument of %d bytes", l)
		}
		b := make([]byte, l+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:l])
	}
	return args, nil
}

func header(r *bufio.Reader, kind byte) (int, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 3 || line[0] != kind || !strings.HasSuffix(line, "\r\n") {
		return 0, errors.New("fake: not a RESP command")
	}
	return strconv.Atoi(line[1 : len(line)-2])
}
