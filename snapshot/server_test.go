package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/payload"
	"github.com/redis/go-redis/v9"
)

// startServer starts a redis-server that keeps the dump and allows DEBUG
// (for a plain quicklist node).
func startServer(t *testing.T, policy string) (*redistest.Server, *redis.Client) {
	t.Helper()
	s := redistest.Standalone(t, "--enable-debug-command", "yes", "--maxmemory-policy", policy)
	return s, s.Client(t)
}

// save runs SAVE and returns the dump's bytes, also written to testdata/fuzz
// seeds when SNAPSHOT_WRITE_SEEDS is set.
func save(t *testing.T, s *redistest.Server, c *redis.Client) []byte {
	t.Helper()
	ctx := context.Background()
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	dir := c.ConfigGet(ctx, "dir").Val()["dir"]
	name := c.ConfigGet(ctx, "dbfilename").Val()["dbfilename"]
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// populate writes every type in every encoding 7.0 writes, in db 0 and 3,
// with and without TTL, and a function. It returns the clients by db.
func populate(t *testing.T, s *redistest.Server, c0 *redis.Client) map[int]*redis.Client {
	t.Helper()
	ctx := context.Background()
	c3 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 3, DisableIdentity: true})
	t.Cleanup(func() { _ = c3.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range map[string]string{
		"list-max-listpack-size": "4", "hash-max-listpack-entries": "8",
		"set-max-intset-entries": "16", "zset-max-listpack-entries": "8",
	} {
		must(c0.ConfigSet(ctx, k, v).Err())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 100<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	for _, c := range []*redis.Client{c0, c3} {
		must(c.Set(ctx, "str:small", "hello", 0).Err())
		must(c.Set(ctx, "str:int", "12345", 0).Err())
		must(c.Set(ctx, "str:int8", "-7", 0).Err())
		must(c.Set(ctx, "str:int32", "2000000000", 0).Err())
		must(c.Set(ctx, "str:bigint", "1234567890123", 0).Err())
		must(c.Set(ctx, "str:zero-lead", "0123", 0).Err())
		must(c.Set(ctx, "str:lzf", strings.Repeat("abcdefgh", 200), 0).Err())
		must(c.Set(ctx, "str:100k", random, 0).Err())
		must(c.Set(ctx, "str:100k-lzf", bytes.Repeat([]byte("0123456789"), 10<<10), 0).Err())
		must(c.Set(ctx, "str:ttl", "soon", time.Hour).Err())
		must(c.Set(ctx, "str:empty", "", 0).Err())
		must(c.RPush(ctx, "list:small", "a", "b", "3").Err())
		for i := range 100 {
			must(c.RPush(ctx, "list:big", fmt.Sprintf("element-%d", i), i).Err())
		}
		must(c.RPush(ctx, "list:ttl", "x", "y").Err())
		must(c.Expire(ctx, "list:ttl", 2*time.Hour).Err())
		must(c.SAdd(ctx, "set:intset", 1, 2, 3, -40000, 1<<40).Err())
		for i := range 50 {
			must(c.SAdd(ctx, "set:bigint", i*1000).Err())
		}
		must(c.SAdd(ctx, "set:str", "a", "b", "c").Err())
		must(c.ZAdd(ctx, "zset:small", redis.Z{Score: 1.5, Member: "one"}, redis.Z{Score: -2, Member: "two"}, redis.Z{Score: 3, Member: 33}).Err())
		for i := range 40 {
			must(c.ZAdd(ctx, "zset:big", redis.Z{Score: float64(i) / 3, Member: fmt.Sprintf("m%d", i)}).Err())
		}
		must(c.ZAdd(ctx, "zset:inf", redis.Z{Score: 1, Member: "a"}).Err())
		must(c.Do(ctx, "ZADD", "zset:inf", "+inf", "b").Err())
		must(c.HSet(ctx, "hash:small", "f1", "v1", "f2", "22", "n", "-1").Err())
		for i := range 40 {
			must(c.HSet(ctx, "hash:big", fmt.Sprintf("field%d", i), strings.Repeat("v", i)).Err())
		}
		must(c.HSet(ctx, "hash:ttl", "a", "b").Err())
		must(c.PExpire(ctx, "hash:ttl", 90*time.Minute).Err())
	}
	// A plain quicklist node: an element above the packed threshold.
	must(c0.Do(ctx, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1000").Err())
	must(c0.RPush(ctx, "list:plain", "small", strings.Repeat("P", 5000), "tail").Err())
	// A stream with a deleted entry, entries with other fields, a consumer
	// group, pending entries and two consumers.
	for i := range 20 {
		args := &redis.XAddArgs{Stream: "stream:s", ID: fmt.Sprintf("%d-1", 1000+i), Values: []any{"name", fmt.Sprintf("n%d", i), "count", i}}
		if i%5 == 0 {
			args.Values = []any{"other", "x", "i", i}
		}
		must(c0.XAdd(ctx, args).Err())
	}
	must(c0.XDel(ctx, "stream:s", "1003-1").Err())
	must(c0.XGroupCreate(ctx, "stream:s", "g1", "0").Err())
	must(c0.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "c1", Streams: []string{"stream:s", ">"}, Count: 3}).Err())
	must(c0.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "c2", Streams: []string{"stream:s", ">"}, Count: 2}).Err())
	must(c0.XAdd(ctx, &redis.XAddArgs{Stream: "stream:empty", ID: "1-1", Values: []any{"a", "b"}}).Err())
	must(c0.XDel(ctx, "stream:empty", "1-1").Err())
	must(c0.Do(ctx, "FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('f', function() return 1 end)").Err())
	return map[int]*redis.Client{0: c0, 3: c3}
}

// encodingOf maps the reader's encoding names to OBJECT ENCODING's (7.0).
func encodingOf(enc string) string {
	switch enc {
	case "quicklist2", "quicklist", "linkedlist", "ziplist_list":
		return "quicklist"
	}
	return enc
}

type facts struct {
	typ, enc string
	pttl     time.Duration
	length   int64
	sample   payload.Sample
}

// live reads a key's facts from the server.
func live(t *testing.T, c *redis.Client, key string) facts {
	t.Helper()
	ctx := context.Background()
	f := facts{typ: c.Type(ctx, key).Val(), enc: c.ObjectEncoding(ctx, key).Val(), pttl: c.PTTL(ctx, key).Val()}
	f.sample.Type = f.typ
	switch f.typ {
	case "string":
		f.sample.String = []byte(c.Get(ctx, key).Val())
		f.length = c.StrLen(ctx, key).Val()
	case "list":
		for _, m := range c.LRange(ctx, key, 0, -1).Val() {
			f.sample.Members = append(f.sample.Members, []byte(m))
		}
		f.length = c.LLen(ctx, key).Val()
	case "set":
		for _, m := range c.SMembers(ctx, key).Val() {
			f.sample.Members = append(f.sample.Members, []byte(m))
		}
		f.length = c.SCard(ctx, key).Val()
	case "zset":
		for _, m := range c.ZRange(ctx, key, 0, -1).Val() {
			f.sample.Members = append(f.sample.Members, []byte(m))
		}
		f.length = c.ZCard(ctx, key).Val()
	case "hash":
		f.sample.Fields = map[string][]byte{}
		for k, v := range c.HGetAll(ctx, key).Val() {
			f.sample.Fields[k] = []byte(v)
		}
		f.length = c.HLen(ctx, key).Val()
	case "stream":
		for _, m := range c.XRange(ctx, key, "-", "+").Val() {
			e := map[string][]byte{}
			for k, v := range m.Values {
				e[k] = []byte(fmt.Sprint(v))
			}
			f.sample.Entries = append(f.sample.Entries, e)
		}
		f.length = c.XLen(ctx, key).Val()
	}
	return f
}

func sortedMembers(ms [][]byte) []string {
	var s []string
	for _, m := range ms {
		s = append(s, string(m))
	}
	slices.Sort(s)
	return s
}

func sameSample(a, b payload.Sample) bool {
	if a.Type != b.Type || !bytes.Equal(a.String, b.String) || len(a.Fields) != len(b.Fields) || len(a.Entries) != len(b.Entries) {
		return false
	}
	if a.Type == "list" {
		if len(a.Members) != len(b.Members) {
			return false
		}
		for i := range a.Members {
			if !bytes.Equal(a.Members[i], b.Members[i]) {
				return false
			}
		}
	} else if !slices.Equal(sortedMembers(a.Members), sortedMembers(b.Members)) {
		return false
	}
	for k, v := range a.Fields {
		if w, ok := b.Fields[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	for i := range a.Entries {
		if fmt.Sprint(a.Entries[i]) != fmt.Sprint(b.Entries[i]) {
			return false
		}
	}
	return true
}

type readKey struct {
	db   int
	key  string
	e    Entry
	smp  payload.Sample
	verr error
}

// readAll reads every key of a dump, sampling every value whole when
// sample is set.
func readAll(t *testing.T, b []byte, sample bool) ([]readKey, *Reader) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []readKey
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		k := readKey{db: e.DB, key: string(e.Key)}
		if sample {
			k.smp, k.verr = e.Value(1<<20, 1<<30)
		} else if err := e.Skip(); err != nil {
			t.Fatalf("Skip %q: %v", e.Key, err)
		}
		k.e = *e
		out = append(out, k)
	}
	return out, r
}

// TestRealServer writes every type in every encoding redis-server 7.0
// writes, saves under allkeys-lfu and then allkeys-lru, and checks every key
// of each file against what the live server says.
func TestRealServer(t *testing.T) {
	s, c0 := startServer(t, "allkeys-lfu")
	clients := populate(t, s, c0)
	ctx := context.Background()
	dumpLFU := save(t, s, c0)
	// OBJECT FREQ first: other reads bump the counter.
	freq := map[string]int64{}
	for db, c := range clients {
		for _, k := range c.Keys(ctx, "*").Val() {
			freq[fmt.Sprint(db, k)] = c.ObjectFreq(ctx, k).Val()
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c0.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
	time.Sleep(1100 * time.Millisecond)
	dumpLRU := save(t, s, c0)
	idle := map[string]time.Duration{}
	for db, c := range clients {
		for _, k := range c.Keys(ctx, "*").Val() {
			idle[fmt.Sprint(db, k)] = c.ObjectIdleTime(ctx, k).Val()
		}
	}
	saveTime := time.Now()
	for _, tc := range []struct {
		name string
		dump []byte
		lfu  bool
	}{{"lfu", dumpLFU, true}, {"lru", dumpLRU, false}} {
		t.Run(tc.name, func(t *testing.T) {
			keys, r := readAll(t, tc.dump, true)
			skipped, _ := readAll(t, tc.dump, false)
			if r.Version() != 10 || r.Aux()["redis-ver"] == "" || r.Aux()["ctime"] == "" || r.Functions() != 1 {
				t.Errorf("version %d, aux %v, functions %d; want 10, redis-ver and ctime, 1", r.Version(), r.Aux(), r.Functions())
			}
			total := 0
			for db, c := range clients {
				total += int(c.DBSize(ctx).Val())
				_ = db
			}
			if len(keys) != total || len(skipped) != total {
				t.Fatalf("read %d keys (%d skipping), the server has %d", len(keys), len(skipped), total)
			}
			encodings := map[string]bool{}
			for i, k := range keys {
				c := clients[k.db]
				if c == nil {
					t.Fatalf("key %q in db %d", k.key, k.db)
				}
				f := live(t, c, k.key)
				e := k.e
				encodings[e.Encoding] = true
				if e.Type != f.typ || encodingOf(e.Encoding) != f.enc {
					t.Errorf("%d %q: type %s encoding %s; server says %s %s", k.db, k.key, e.Type, e.Encoding, f.typ, f.enc)
				}
				if f.pttl > 0 {
					got := e.ExpireAt.Sub(saveTime)
					if e.ExpireAt.IsZero() || got < f.pttl-5*time.Second || got > f.pttl+5*time.Second {
						t.Errorf("%q: expires in %v; server PTTL %v", k.key, got, f.pttl)
					}
				} else if !e.ExpireAt.IsZero() {
					t.Errorf("%q: ExpireAt %v; server has no TTL", k.key, e.ExpireAt)
				}
				if e.Len != f.length {
					t.Errorf("%q: Len %d; server says %d", k.key, e.Len, f.length)
				}
				if k.verr != nil || !sameSample(k.smp, f.sample) {
					t.Errorf("%q: Value = %+v, %v;\nserver has %+v", k.key, k.smp, k.verr, f.sample)
				}
				sk := skipped[i]
				if sk.key != k.key || sk.e.Size != e.Size || e.Size <= 0 || (sk.e.Len != e.Len && sk.e.Len != -1) {
					t.Errorf("%q: skipping gives key %q size %d len %d; sampling gives size %d len %d", k.key, sk.key, sk.e.Size, sk.e.Len, e.Size, e.Len)
				}
				id := fmt.Sprint(k.db, k.key)
				if tc.lfu {
					if !e.HasFreq || e.HasIdle || abs(int64(e.Freq)-freq[id]) > 1 {
						t.Errorf("%q: freq %d (%v), idle %v; server OBJECT FREQ %d", k.key, e.Freq, e.HasFreq, e.HasIdle, freq[id])
					}
				} else {
					if !e.HasIdle || e.HasFreq || (e.Idle-idle[id]).Abs() > 2*time.Second {
						t.Errorf("%q: idle %v (%v), freq %v; server OBJECT IDLETIME %v", k.key, e.Idle, e.HasIdle, e.HasFreq, idle[id])
					}
				}
			}
			for _, want := range []string{"int", "embstr", "raw", "quicklist2", "intset", "hashtable", "listpack", "skiplist", "stream"} {
				if !encodings[want] {
					t.Errorf("no key with encoding %s in %v", want, encodings)
				}
			}
		})
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
