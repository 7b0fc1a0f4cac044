package scanner_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

// TestHostileReplyHeaders: replies that go-redis parses (the sentinel's
// get-master-addr-by-name, SCAN, INFO) announcing two billion elements or
// bytes fail the connection or the scan with a clear error, without the
// allocation they ask for. Not parallel: it measures the heap.
func TestHostileReplyHeaders(t *testing.T) {
	const huge = "2000000000"
	scanReply := func(reply string) func([]string) (string, bool) {
		return func(args []string) (string, bool) {
			if strings.EqualFold(args[0], "SCAN") {
				return reply, true
			}
			return "", false
		}
	}
	cases := []struct {
		name     string
		handler  func([]string) (string, bool)
		sentinel bool
		connect  bool // the error comes from Connect, not Scan
	}{
		{name: "sentinel array", sentinel: true, connect: true, handler: func(args []string) (string, bool) {
			if strings.EqualFold(args[0], "SENTINEL") {
				return "*" + huge + "\r\n", true
			}
			return "", false
		}},
		{name: "sentinel bulk", sentinel: true, connect: true, handler: func(args []string) (string, bool) {
			if strings.EqualFold(args[0], "SENTINEL") {
				return "*2\r\n$" + huge + "\r\n", true
			}
			return "", false
		}},
		{name: "scan array", handler: scanReply("*" + huge + "\r\n")},
		{name: "scan keys array", handler: scanReply("*2\r\n$1\r\n0\r\n*" + huge + "\r\n")},
		{name: "scan key bulk", handler: scanReply("*2\r\n$1\r\n0\r\n*1\r\n$" + huge + "\r\n")},
		{name: "info bulk", connect: true, handler: func(args []string) (string, bool) {
			if strings.EqualFold(args[0], "INFO") {
				return "$" + huge + "\r\n", true
			}
			return "", false
		}},
		{name: "info map", connect: true, handler: func(args []string) (string, bool) {
			if strings.EqualFold(args[0], "INFO") {
				return "%" + huge + "\r\n", true
			}
			return "", false
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := redistest.StartFake(t, tc.handler)
			o := scanner.Options{URL: f.URL(""), Timeout: 2 * time.Second}
			if tc.sentinel {
				o.SentinelMaster = "mymaster"
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			ctx := context.Background()
			c, err := scanner.Connect(ctx, o)
			if err == nil {
				if tc.connect {
					c.Close()
					t.Fatal("connected, want an error")
				}
				_, err = c.Scan(ctx, func([]scanner.KeyInfo) error { return nil })
				c.Close()
			} else if !tc.connect {
				t.Fatalf("connect: %v", err)
			}
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), scanner.ErrReplyTooLarge.Error()) {
				t.Errorf("error %v, want one saying %q", err, scanner.ErrReplyTooLarge)
			}
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 32<<20 {
				t.Errorf("allocated %d MiB for a hostile header", grown>>20)
			}
			t.Logf("%v", err)
		})
	}
}

// TestBoundedRepliesPassThrough: a real server's replies to everything the
// scanner asks through go-redis (INFO, SCAN with long keys) pass the bounds.
func TestBoundedRepliesPassThrough(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	cl := s.Client(t)
	long := strings.Repeat("k", 1<<20)
	for i := range 3 {
		if err := cl.Set(context.Background(), long+string(rune('a'+i)), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c := connect(t, scanner.Options{URL: s.URL(), DB: scanner.AllDBs})
	got, st, err := collect(t, c)
	if err != nil || len(got) != 3 || st.Partial {
		t.Fatalf("scan: %d keys, %+v, %v", len(got), st, err)
	}
}
