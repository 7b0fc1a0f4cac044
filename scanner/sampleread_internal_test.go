package scanner

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCapReader feeds the sample reader hand-written replies, each followed
// by a marker reply: whatever it keeps or drops, it must consume exactly
// one reply, so the connection stays in step.
func TestCapReader(t *testing.T) {
	bulk := func(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }
	big := strings.Repeat("B", 5000)
	cases := []struct {
		name, typ, reply string
		key, wave        int64
		want             string // fmt of the sample, or over, full, reply
	}{
		{"string", "string", bulk("abc"), 100, 100, "abc"},
		{"missing string", "string", "$-1\r\n", 100, 100, "reply redis: nil"},
		{"string over the key limit", "string", bulk(big), 1000, 1 << 20, "over"},
		{"string over the wave", "string", bulk(big), 1 << 20, 1000, "full"},
		{"list keeps n", "list", "*4\r\n" + bulk("a") + bulk("b") + bulk("c") + bulk("d"), 1000, 1000, "[a b c]"},
		{"list with a big element", "list", "*3\r\n" + bulk("a") + bulk(big) + bulk("c"), 1000, 1 << 20, "over"},
		{"list with an odd element", "list", "*3\r\n" + bulk("a") + "*2\r\n:1\r\n*1\r\n+x\r\n" + bulk("c"), 1000, 1000, "[a c]"},
		{"wrong type", "list", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", 1000, 1000, "reply WRONGTYPE"},
		{"hash", "hash", "*2\r\n" + bulk("0") + "*6\r\n" + bulk("f") + bulk("1") + bulk("g") + bulk("2") + bulk("h") + bulk("3"), 1000, 1000, "map[f:1 g:2 h:3]"},
		{"zset members", "zset", "*2\r\n" + bulk("0") + "*4\r\n" + bulk("m") + bulk("1.5") + bulk("n") + bulk("2"), 1000, 1000, "[m n]"},
		{"stream", "stream", "*2\r\n*2\r\n" + bulk("1-0") + "*2\r\n" + bulk("f") + bulk("v") + "*2\r\n" + bulk("2-0") + "*-1\r\n", 1000, 1000, "[map[f:v] map[]]"},
		{"empty elements cost too", "set", "*2\r\n" + bulk("0") + "*100\r\n" + strings.Repeat(bulk(""), 100), 40, 1 << 20, "over"},
		{"elements past n cost nothing", "set", "*2\r\n" + bulk("0") + "*100\r\n" + strings.Repeat(bulk(""), 100), 48, 1 << 20, "[  ]"},
	}
	for _, c := range cases {
		r := bufio.NewReaderSize(strings.NewReader(c.reply+"+MARK\r\n"), 256)
		left := c.wave
		cr := capReader{r: r, key: c.key, wave: &left}
		s, err := cr.read(c.typ, 3)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got string
		switch {
		case cr.over:
			got = "over"
		case cr.full:
			got = "full"
		case cr.reply != nil:
			got = "reply " + cr.reply.Error()
		case c.typ == "string":
			got = string(s.String)
		case c.typ == "hash":
			got = fmt.Sprintf("%s", s.Fields)
		case c.typ == "stream":
			got = fmt.Sprintf("%s", s.Entries)
		default:
			got = fmt.Sprintf("%s", s.Members)
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
		if (cr.over || cr.full) && left != c.wave {
			t.Errorf("%s: dropped, but the wave kept %d of %d bytes charged", c.name, c.wave-left, c.wave)
		}
		if rest, _ := r.ReadString('\n'); rest != "+MARK\r\n" {
			t.Errorf("%s: out of step, next %q", c.name, rest)
		}
	}
	// Truncated and hostile headers fail instead of hanging or allocating.
	for _, in := range []string{"$10\r\nabc", "*3\r\n$1\r\na\r\n", "*2\r\n$1\r\n0\r\n*99999999999999\r\n", "%3\r\n", "$abc\r\n"} {
		left := int64(1 << 20)
		cr := capReader{r: bufio.NewReader(strings.NewReader(in)), key: 1 << 20, wave: &left}
		if _, err := cr.read("set", 3); err == nil {
			t.Errorf("%q: no error", in)
		} else if !errors.Is(err, errProtocol) && err.Error() != "EOF" && err.Error() != "unexpected EOF" {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// TestCapReaderHugeHeaders: a header announcing the largest int64 (which
// the RESP reader now takes, for PTTLs) is a protocol error, not an
// overflow of its length plus its cost that would pass the limits.
func TestCapReaderHugeHeaders(t *testing.T) {
	for _, reply := range []string{"$9223372036854775807\r\n", "*2\r\n$1\r\n0\r\n*9223372036854775807\r\n", "*9223372036854775807\r\n"} {
		for _, typ := range []string{"string", "set", "list"} {
			left := int64(1 << 20)
			cr := capReader{r: bufio.NewReader(strings.NewReader(reply)), key: 1 << 20, wave: &left}
			if _, err := cr.read(typ, 3); !errors.Is(err, errProtocol) && !cr.over {
				t.Errorf("%s %q: %v, want a protocol error", typ, reply, err)
			}
		}
	}
	rc := &rawConn{r: bufio.NewReader(strings.NewReader("$9223372036854775807\r\n"))}
	if _, err := rc.read(); !errors.Is(err, errProtocol) {
		t.Errorf("probe read of a huge bulk: %v", err)
	}
}

// FuzzCapReader: whatever a server answers to a sample read, the reader
// never panics and never keeps more than the key's limit.
func FuzzCapReader(f *testing.F) {
	f.Add("*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n", "set")
	f.Add("$9223372036854775807\r\n", "string")
	f.Add("*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n", "stream")
	f.Fuzz(func(t *testing.T, reply, typ string) {
		const limit = 1 << 10
		left := int64(limit)
		cr := capReader{r: bufio.NewReaderSize(strings.NewReader(reply), 64), key: limit, wave: &left}
		_, _ = cr.read(typ, 3)
		if cr.charged > limit || left < 0 {
			t.Fatalf("charged %d, left %d", cr.charged, left)
		}
	})
}
