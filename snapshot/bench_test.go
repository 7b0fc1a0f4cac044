package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// benchKeys is the size of the generated keyspace.
const benchKeys = 200_000

// benchDump writes benchKeys keys of mixed types to a real server, saves,
// and returns the dump's path and bytes.
func benchDump(b *testing.B) (string, []byte) {
	b.Helper()
	s := redistest.Standalone(b)
	c := s.Client(b)
	ctx := context.Background()
	for i := 0; i < benchKeys; i += 1000 {
		p := c.Pipeline()
		for j := i; j < i+1000; j++ {
			switch j % 10 {
			case 0, 1, 2, 3, 4:
				p.Set(ctx, fmt.Sprintf("user:%d:session", j), fmt.Sprintf(`{"id":%d,"name":"user %d","active":true}`, j, j), 0)
			case 5:
				p.Set(ctx, fmt.Sprintf("counter:%d", j), j, time.Hour)
			case 6:
				p.HSet(ctx, fmt.Sprintf("user:%d", j), "name", "n", "email", fmt.Sprintf("u%d@example.com", j), "age", j%90)
			case 7:
				p.RPush(ctx, fmt.Sprintf("queue:%d", j), "a", "b", "c", j)
			case 8:
				p.SAdd(ctx, fmt.Sprintf("tags:%d", j), "x", "y", j)
			case 9:
				p.ZAdd(ctx, fmt.Sprintf("rank:%d", j), redisZ(j)...)
			}
		}
		if _, err := p.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.Save(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(s.Dir(), "dump.rdb")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, data
}

// BenchmarkReader reads a 200k-key dump of a real server, skipping every
// value, and compares with redis-check-rdb on the same file.
func BenchmarkReader(b *testing.B) {
	path, data := benchDump(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var keys int
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := NewReader(f, Options{})
		if err != nil {
			b.Fatal(err)
		}
		keys = 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			keys++
		}
		f.Close()
	}
	if keys != benchKeys {
		b.Fatalf("read %d keys; want %d", keys, benchKeys)
	}
	perOp := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(keys)/perOp, "keys/s")
	b.ReportMetric(float64(b.N), "runs")
	if check, err := exec.LookPath("redis-check-rdb"); err == nil {
		start := time.Now()
		out, err := exec.Command(check, path).CombinedOutput()
		d := time.Since(start)
		if err != nil || !bytes.Contains(out, []byte("RDB looks OK")) {
			b.Fatalf("redis-check-rdb: %v\n%s", err, out)
		}
		b.Logf("file %d bytes, %d keys: this reader %.0f keys/s (%.1f ms), redis-check-rdb %.0f keys/s (%.1f ms): %.1fx",
			len(data), keys, float64(keys)/perOp, perOp*1e3, float64(keys)/d.Seconds(), d.Seconds()*1e3, d.Seconds()/perOp)
	}
}

// BenchmarkReaderSample reads the same dump and samples every value.
func BenchmarkReaderSample(b *testing.B) {
	_, data := benchDump(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data), Options{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, err := e.Value(16, 4096); err != nil && !isTooLarge(err) {
				b.Fatal(err)
			}
		}
	}
}

func redisZ(j int) []redis.Z {
	return []redis.Z{{Score: 1, Member: "a"}, {Score: float64(j), Member: "b"}}
}
