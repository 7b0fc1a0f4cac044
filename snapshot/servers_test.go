package snapshot

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/payload"
	"github.com/redis/go-redis/v9"
)

// The files in testdata/servers were SAVEd by real redis-server builds of
// versions that Debian does not ship, and by Valkey 8.0: <server>.rdb, and
// beside it <server>.json, what that live server said of every key just
// before the SAVE (TYPE, OBJECT ENCODING, PTTL, length and contents). They were
// made by TestWriteServerFixtures below, from servers built from the
// upstream source at the release tags (make MALLOC=libc):
//
//	KEYREG_OLD_REDIS=/path/to/2.8.24/redis-server,/path/to/valkey-8.0.1/valkey-server \
//	  go test ./snapshot -run TestWriteServerFixtures -count=1
//
// TestServerFixtures reads each file and checks it against its JSON.

// fixtureKey is one key as the live server described it.
type fixtureKey struct {
	DB       int                 `json:"db"`
	Key      string              `json:"key"`
	Type     string              `json:"type"`
	Encoding string              `json:"encoding"` // OBJECT ENCODING
	PTTL     int64               `json:"pttl_ms"`  // -1 without a TTL
	Len      int64               `json:"len"`
	String   []byte              `json:"string,omitempty"`
	Members  [][]byte            `json:"members,omitempty"`
	Fields   map[string][]byte   `json:"fields,omitempty"`
	Entries  []map[string][]byte `json:"entries,omitempty"`
}

type fixture struct {
	Server    string       `json:"server"` // INFO server's valkey_version or redis_version
	Policy    string       `json:"maxmemory_policy"`
	Functions int          `json:"functions"`
	SavedAt   int64        `json:"saved_unix_ms"` // when SAVE ran: RDB before 7 has no ctime
	Keys      []fixtureKey `json:"keys"`
}

// sameEncoding says whether the reader's encoding name (the RDB type's)
// fits OBJECT ENCODING's, across versions. Redis 7.2 keeps a small list as
// one listpack in memory and saves it as a quicklist of one node; Redis
// before 3.0 has no embstr.
func sameEncoding(rdb, server string) bool {
	switch rdb {
	case "embstr":
		return server == "embstr" || server == "raw"
	case "quicklist2":
		return server == "quicklist" || server == "listpack"
	case "hash_listpack_ex":
		return server == "listpackex"
	case "hash_metadata":
		return server == "hashtable"
	}
	return rdb == server
}

func TestServerFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/servers/*.rdb")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/servers: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			js, err := os.ReadFile(strings.TrimSuffix(path, ".rdb") + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var fx fixture
			if err := json.Unmarshal(js, &fx); err != nil {
				t.Fatal(err)
			}
			if err := drain(b); err != nil {
				t.Fatalf("reading it whole: %v", err)
			}
			keys, r := readAll(t, b, true)
			if got := firstOf(r.Aux(), "redis-ver", "valkey-ver"); got != fx.Server && r.Version() >= 7 {
				t.Errorf("AUX redis-ver or valkey-ver %q, server said %q", got, fx.Server)
			}
			if r.Functions() != fx.Functions {
				t.Errorf("%d functions, want %d", r.Functions(), fx.Functions)
			}
			want := map[string]fixtureKey{}
			for _, k := range fx.Keys {
				want[fmt.Sprint(k.DB, " ", k.Key)] = k
			}
			if len(keys) != len(want) {
				t.Errorf("read %d keys, the server had %d", len(keys), len(want))
			}
			types := map[string]bool{}
			for _, k := range keys {
				w, ok := want[fmt.Sprint(k.db, " ", k.key)]
				if !ok {
					t.Errorf("db %d key %q is not in the fixture", k.db, k.key)
					continue
				}
				e := k.e
				types[fmt.Sprintf("%s(%d)", e.Encoding, e.RDBType)] = true
				if e.Type != w.Type || !sameEncoding(e.Encoding, w.Encoding) {
					t.Errorf("%q: %s %s (RDB type %d); the server said %s %s", k.key, e.Type, e.Encoding, e.RDBType, w.Type, w.Encoding)
				}
				if (w.PTTL > 0) != !e.ExpireAt.IsZero() {
					t.Errorf("%q: ExpireAt %v; the server said PTTL %d ms", k.key, e.ExpireAt, w.PTTL)
				}
				if e.Len != w.Len {
					t.Errorf("%q: Len %d; the server said %d", k.key, e.Len, w.Len)
				}
				smp := payload.Sample{Type: w.Type, String: w.String, Members: w.Members, Fields: w.Fields, Entries: w.Entries}
				if w.Type == "string" && smp.String == nil {
					smp.String = []byte{}
				}
				if k.verr != nil || !sameSample(k.smp, smp) {
					t.Errorf("%q: Value = %+v, %v;\nthe server had %+v", k.key, k.smp, k.verr, smp)
				}
				if e.Size <= 0 {
					t.Errorf("%q: size %d", k.key, e.Size)
				}
				switch fx.Policy {
				case "allkeys-lfu":
					if !e.HasFreq {
						t.Errorf("%q: no LFU frequency in a file saved under %s", k.key, fx.Policy)
					}
				case "allkeys-lru":
					if !e.HasIdle {
						t.Errorf("%q: no idle time in a file saved under %s", k.key, fx.Policy)
					}
				}
			}
			t.Logf("%s: RDB %d, encodings (RDB types) %v", fx.Server, r.Version(), slices.Sorted(func(yield func(string) bool) {
				for k := range types {
					if !yield(k) {
						return
					}
				}
			}))
		})
	}
}

// TestWriteServerFixtures writes testdata/servers from the redis-server
// binaries listed in KEYREG_OLD_REDIS; without it, it does nothing.
func TestWriteServerFixtures(t *testing.T) {
	bins := os.Getenv("KEYREG_OLD_REDIS")
	if bins == "" {
		t.Skip("KEYREG_OLD_REDIS is not set: the committed fixtures are used as they are")
	}
	for _, bin := range strings.Split(bins, ",") {
		writeServerFixture(t, bin)
	}
}

func writeServerFixture(t *testing.T, bin string) {
	dir := t.TempDir()
	port, err := redistest.FreePort(false)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for !redistest.Ping(addr) {
		if cmd.ProcessState != nil {
			t.Fatalf("%s exited", bin)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx := context.Background()
	opts := func(db int) *redis.Options {
		return &redis.Options{Addr: addr, DB: db, Protocol: 2, DisableIdentity: true}
	}
	c0 := redis.NewClient(opts(0))
	defer c0.Close()
	c2 := redis.NewClient(opts(2))
	defer c2.Close()
	info := c0.Info(ctx, "server").Val()
	ver, valkey := "", ""
	for _, l := range strings.Split(info, "\n") {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "redis_version:"); ok {
			ver = v // Valkey gives the Redis version it is compatible with
		}
		if v, ok := strings.CutPrefix(l, "valkey_version:"); ok {
			valkey = v
		}
	}
	major, _ := strconv.Atoi(strings.Split(ver, ".")[0])
	minor, _ := strconv.Atoi(strings.Split(ver, ".")[1])
	at := func(maj, min int) bool { return major > maj || (major == maj && minor >= min) }
	fx := fixture{Server: cmp.Or(valkey, ver), Policy: "noeviction"}
	// Idle times (RDB 9, Redis 5) and LFU frequencies are saved only under
	// an LRU or LFU policy.
	switch {
	case at(7, 0):
		fx.Policy = "allkeys-lfu"
	case at(5, 0):
		fx.Policy = "allkeys-lru"
	}
	do := func(c *redis.Client, args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%s: %v: %v", ver, args, err)
		}
	}
	do(c0, "CONFIG", "SET", "maxmemory-policy", fx.Policy)
	// Small thresholds, so that small and large values of each type take
	// both encodings; the names differ by version, and a server refuses
	// the ones it does not know.
	for _, kv := range [][2]string{
		{"list-max-ziplist-entries", "4"}, {"list-max-ziplist-size", "4"}, {"list-max-listpack-size", "4"},
		{"hash-max-ziplist-entries", "8"}, {"hash-max-listpack-entries", "8"},
		{"zset-max-ziplist-entries", "8"}, {"zset-max-listpack-entries", "8"},
		{"set-max-intset-entries", "16"}, {"set-max-listpack-entries", "8"},
	} {
		_ = c0.Do(ctx, "CONFIG", "SET", kv[0], kv[1]).Err()
	}
	for _, c := range []*redis.Client{c0, c2} {
		do(c, "SET", "str:small", "hello")
		do(c, "SET", "str:int", "12345")
		do(c, "SET", "str:int8", "-7")
		do(c, "SET", "str:bigint", "1234567890123")
		do(c, "SET", "str:lzf", strings.Repeat("abcdefgh", 200))
		do(c, "SET", "str:ttl", "soon", "EX", "3600")
		do(c, "SET", "str:empty", "")
		do(c, "RPUSH", "list:small", "a", "b", "3")
		for i := range 30 {
			do(c, "RPUSH", "list:big", fmt.Sprintf("element-%d", i), i)
		}
		do(c, "RPUSH", "list:ttl", "x", "y")
		do(c, "PEXPIRE", "list:ttl", 7200000)
		do(c, "SADD", "set:intset", 1, 2, 3, -40000, 1<<40)
		do(c, "SADD", "set:small", "a", "b", "c")
		for i := range 20 {
			do(c, "SADD", "set:big", fmt.Sprintf("member-%d", i))
		}
		do(c, "ZADD", "zset:small", 1.5, "one", -2, "two", 3, 33)
		for i := range 20 {
			do(c, "ZADD", "zset:big", float64(i)/3, fmt.Sprintf("m%d", i))
		}
		do(c, "ZADD", "zset:big", "+inf", "top")
		do(c, "HMSET", "hash:small", "f1", "v1", "f2", "22", "n", "-1")
		for i := range 20 {
			do(c, "HMSET", "hash:big", fmt.Sprintf("field%d", i), strings.Repeat("v", i+1))
		}
		do(c, "HMSET", "hash:ttl", "a", "b")
		do(c, "PEXPIRE", "hash:ttl", 5400000)
	}
	if at(5, 0) {
		for i := range 12 {
			do(c0, "XADD", "stream:s", fmt.Sprintf("%d-1", 1000+i), "name", fmt.Sprintf("n%d", i), "count", i)
		}
		do(c0, "XDEL", "stream:s", "1003-1")
		do(c0, "XGROUP", "CREATE", "stream:s", "g1", "0")
		do(c0, "XREADGROUP", "GROUP", "g1", "c1", "COUNT", 3, "STREAMS", "stream:s", ">")
		do(c0, "XREADGROUP", "GROUP", "g1", "c2", "COUNT", 2, "STREAMS", "stream:s", ">")
	}
	if at(7, 0) {
		do(c0, "FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('f', function() return 1 end)")
		fx.Functions = 1
	}
	if at(7, 4) {
		// Hash fields with TTLs: listpack-ex when small, a hashtable with
		// metadata when large.
		do(c0, "HSET", "hash:fttl-small", "a", "1", "b", "2")
		do(c0, "HEXPIRE", "hash:fttl-small", 3600, "FIELDS", 1, "a")
		for i := range 20 {
			do(c0, "HSET", "hash:fttl-big", fmt.Sprintf("f%d", i), i)
		}
		do(c0, "HPEXPIRE", "hash:fttl-big", 3600000, "FIELDS", 2, "f1", "f2")
	}
	for db, c := range []*redis.Client{0: c0, 2: c2} {
		if c == nil {
			continue
		}
		keys := c.Keys(ctx, "*").Val()
		slices.Sort(keys)
		for _, k := range keys {
			lf := live(t, c, k)
			f := fixtureKey{DB: db, Key: k, Type: lf.typ, Encoding: lf.enc, PTTL: lf.pttl.Milliseconds(), Len: lf.length,
				String: lf.sample.String, Members: lf.sample.Members, Fields: lf.sample.Fields, Entries: lf.sample.Entries}
			if lf.pttl < 0 {
				f.PTTL = -1
			}
			fx.Keys = append(fx.Keys, f)
		}
	}
	fx.SavedAt = time.Now().UnixMilli()
	do(c0, "SAVE")
	b, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(fx, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join("testdata", "servers", "redis-"+ver)
	if valkey != "" {
		name = filepath.Join("testdata", "servers", "valkey-"+valkey)
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name+".rdb", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name+".json", append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s.rdb (%d bytes) and %s.json (%d keys)", name, len(b), name, len(fx.Keys))
}
