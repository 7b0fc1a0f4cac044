package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/source"
	"github.com/redis/go-redis/v9"
)

// smallDump returns a small dump written by a real server: one key of each
// encoding 7.0 writes, a TTL, db 3, a stream with a group, a function.
func smallDump(t testing.TB) []byte {
	t.Helper()
	tt, ok := t.(*testing.T)
	if !ok {
		t.Fatal("smallDump needs a *testing.T")
	}
	s, c := startServer(tt, "allkeys-lfu")
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.ConfigSet(ctx, "hash-max-listpack-entries", "2").Err())
	must(c.ConfigSet(ctx, "zset-max-listpack-entries", "2").Err())
	must(c.ConfigSet(ctx, "set-max-intset-entries", "2").Err())
	must(c.ConfigSet(ctx, "list-max-listpack-size", "2").Err())
	must(c.Set(ctx, "s", "v", 0).Err())
	must(c.Set(ctx, "i", 7, 0).Err())
	must(c.Set(ctx, "z", strings.Repeat("ab", 20), 0).Err())
	must(c.Set(ctx, "t", "x", 3600e9).Err())
	must(c.RPush(ctx, "l", "a", "b", 3).Err())
	must(c.SAdd(ctx, "si", 1, 2).Err())
	must(c.SAdd(ctx, "sh", "a", "b", "c").Err())
	must(c.ZAdd(ctx, "zl", redis.Z{Score: 1, Member: "a"}).Err())
	must(c.ZAdd(ctx, "zs", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"}).Err())
	must(c.HSet(ctx, "hl", "f", "v").Err())
	must(c.HSet(ctx, "hh", "f", "v", "g", "w", "h", "x").Err())
	must(c.XAdd(ctx, &redis.XAddArgs{Stream: "x", ID: "1-1", Values: []any{"a", "b"}}).Err())
	must(c.XAdd(ctx, &redis.XAddArgs{Stream: "x", ID: "2-1", Values: []any{"a", "c"}}).Err())
	must(c.XGroupCreate(ctx, "x", "g", "0").Err())
	must(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"x", ">"}, Count: 1}).Err())
	must(c.Do(ctx, "FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)").Err())
	c3 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 3, DisableIdentity: true})
	defer c3.Close()
	must(c3.Set(ctx, "d3", "v", 0).Err())
	b := save(tt, s, c)
	if os.Getenv("SNAPSHOT_WRITE_SEEDS") != "" {
		seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		must(os.MkdirAll("testdata/fuzz/FuzzReader", 0o755))
		must(os.WriteFile(filepath.Join("testdata/fuzz/FuzzReader", "redis-7.0-small"), []byte(seed), 0o644))
	}
	return b
}

// drain reads a whole file, sampling every other value, and returns the
// first error (nil at a clean io.EOF). It reads the file twice, summing the
// checksum inline and on the CRC goroutine (ParallelCRC), and panics when
// the two disagree, so that every test and fuzz input checks both.
func drain(b []byte) error {
	err := drainWith(b, Options{MaxKeyBytes: 1 << 20})
	perr := drainWith(b, Options{MaxKeyBytes: 1 << 20, ParallelCRC: true})
	if fmt.Sprint(err) != fmt.Sprint(perr) {
		panic(fmt.Sprintf("ParallelCRC disagrees: %v, inline: %v", perr, err))
	}
	return err
}

func drainWith(b []byte, o Options) error {
	r, err := NewReader(bytes.NewReader(b), o)
	if err != nil {
		return err
	}
	defer r.Close()
	for i := 0; ; i++ {
		e, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		// The groups of the test dumps, so that their reading is fuzzed too.
		e.WantGroups([]source.GroupQuery{{Name: "g", Consumers: true}, {Name: "g1", Consumers: true}})
		if i%2 == 0 {
			if _, err := e.Value(10, 1<<16); err != nil && !isTooLarge(err) {
				return err
			}
		}
	}
}

// TestTruncation cuts a real dump at every byte offset: each cut is a
// FormatError at or before the cut, never a panic or a clean end.
func TestTruncation(t *testing.T) {
	b := smallDump(t)
	if err := drain(b); err != nil {
		t.Fatalf("whole file: %v", err)
	}
	for n := range len(b) {
		err := drain(b[:n])
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("cut at %d of %d: %v; want a *FormatError", n, len(b), err)
		}
		if fe.Offset > int64(n) {
			t.Fatalf("cut at %d: error at offset %d, past the end: %v", n, fe.Offset, err)
		}
	}
}

// TestDamage flips every byte of a real dump: the reader never panics, and
// the CRC64 turns each flip into an error.
func TestDamage(t *testing.T) {
	b := smallDump(t)
	for i := range len(b) - 8 { // the last 8 bytes are the checksum itself
		d := bytes.Clone(b)
		d[i] ^= 0x5a
		if err := drain(d); err == nil {
			t.Fatalf("flipping byte %d went unnoticed", i)
		}
	}
	// A zero checksum means none was computed.
	d := bytes.Clone(b)
	copy(d[len(d)-8:], make([]byte, 8))
	if err := drain(d); err != nil {
		t.Fatalf("zero checksum: %v", err)
	}
	d[len(d)-1] = 1
	var fe *FormatError
	if err := drain(d); !errors.As(err, &fe) || !strings.Contains(fe.Expected, "checksum") {
		t.Fatalf("bad checksum: %v; want a FormatError about the checksum", err)
	}
}

// TestParallelCRC checks the checksum goroutine on a real dump of many
// buffers: the whole file reads clean, and a flipped byte anywhere, in
// the first, a middle or the last buffer, is a checksum error.
func TestParallelCRC(t *testing.T) {
	s, c := startServer(t, "noeviction")
	ctx := context.Background()
	// Uncompressed, so that a flipped byte in a value stays a valid value.
	if err := c.ConfigSet(ctx, "rdbcompression", "no").Err(); err != nil {
		t.Fatal(err)
	}
	p := c.Pipeline()
	for i := range 20000 {
		p.Set(ctx, fmt.Sprintf("k:%d", i), strings.Repeat(fmt.Sprint(i), 20), 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	b := save(t, s, c)
	if len(b) < 8*bufSize {
		t.Fatalf("dump of %d bytes: want several buffers", len(b))
	}
	if err := drainWith(b, Options{ParallelCRC: true}); err != nil {
		t.Fatalf("whole file: %v", err)
	}
	// Offsets inside a value, so that only the checksum can notice.
	for _, at := range []int{len(b) / 7, len(b) / 2, len(b) - 200} {
		i := bytes.Index(b[at:], []byte("k:")) + at + 30
		d := bytes.Clone(b)
		d[i] ^= 1
		var fe *FormatError
		if err := drainWith(d, Options{ParallelCRC: true}); !errors.As(err, &fe) || !strings.Contains(fe.Expected, "checksum") {
			t.Fatalf("byte %d of %d flipped: %v; want a checksum error", i, len(b), err)
		}
	}
}

// FuzzReader reads arbitrary input: it must end in an error or io.EOF,
// never panic or hang. Seeds: a real dump (testdata/fuzz), the files of
// the old servers (testdata/servers) and the constructed files of the unit
// tests.
func FuzzReader(f *testing.F) {
	for _, c := range constructed() {
		f.Add(c.file)
	}
	servers, _ := filepath.Glob("testdata/servers/*.rdb")
	for _, p := range servers {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = drain(b)
	})
}
