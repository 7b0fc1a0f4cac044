package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/scanner"
	"github.com/keyreg/keyreg/source"
)

func itoa(n int) string { return strconv.Itoa(n) }

// longSource delivers n keys of about size bytes each, in batches of 100,
// made fresh for every batch so that only what the audit keeps stays live.
// Every other key is unregistered under a prefix of its own (one long
// segment, then ":x"); the rest are keys of family "blob" without the TTL
// its policy wants.
type longSource struct{ n, size int }

func (s longSource) ScanKeys(ctx context.Context, _ source.Planner, fn func([]scanner.KeyInfo) error) (scanner.Stats, error) {
	var st scanner.Stats
	for start := 0; start < s.n; start += 100 {
		var batch []scanner.KeyInfo
		for i := start; i < min(start+100, s.n); i++ {
			// Letters only: no digit or hex run makes the segment look like an ID.
			tag := string(rune('q'+i%7)) + string(rune('q'+i/7%7)) + string(rune('q'+i/49%7)) + string(rune('q'+i/343%7)) + string(rune('q'+i/2401%7))
			body := tag + strings.Repeat("z", s.size)
			key := body + ":x"
			if i%2 == 1 {
				key = "v1:blob:" + body
			}
			batch = append(batch, scanner.KeyInfo{Key: key, Type: "string", PTTL: -1})
		}
		if err := fn(batch); err != nil {
			return st, err
		}
		st.Keys += int64(len(batch))
	}
	return st, nil
}

func (longSource) SampleEach(_ context.Context, keys []scanner.KeyInfo, _ int, _ int64, fn func([]int, []payload.Sample, []error)) {
	vanishAll(keys, fn)
}

func (longSource) Touch() source.TouchState { return source.TouchState{} }

// TestLongKeyNames audits 3,000 keys of 100 KB names and checks that the
// report keeps no more than audit.MaxKeyBytes of any key name or prefix,
// marks what it cut, and that neither the heap the report retains nor its
// json grows with the names.
func TestLongKeyNames(t *testing.T) {
	reg := testRegistry(t, `version: 1
families:
  - name: blob
    pattern: "v1:blob:{id:any}"
    ttl: 1h
`)
	const n, size = 3000, 100 << 10
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rep, err := audit.Run(context.Background(), longSource{n: n, size: size}, reg, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("retained heap %d bytes for %d keys of %d bytes", retained, n, size)
	if retained > 8<<20 {
		t.Errorf("the report retains %d MB of heap for %d keys of %d KB names", retained>>20, n, size>>10)
	}

	if rep.Totals.Keys != n || rep.Totals.Unregistered != n/2 || len(rep.Unregistered.Groups) != 1000 || rep.Unregistered.Other != n/2-1000 {
		t.Errorf("totals %+v, %d groups, other %d", rep.Totals, len(rep.Unregistered.Groups), rep.Unregistered.Other)
	}
	// Every cut name keeps MaxKeyBytes bytes and says how much it dropped.
	const most = audit.MaxKeyBytes + len("…(+102400 bytes)")
	short := func(what, s string, marker string) {
		if len(s) > most || !strings.Contains(s, marker) {
			t.Errorf("%s: %d bytes, ends %q", what, len(s), s[max(0, len(s)-40):])
		}
	}
	for _, g := range rep.Unregistered.Groups {
		short("prefix", g.Prefix, "…")
		for _, k := range g.Examples {
			short("group example", k, "…(+")
		}
	}
	var examples int
	for _, f := range rep.Findings {
		for _, e := range f.Examples {
			short(f.Rule+" example", e.Key, "…(+")
			examples++
		}
	}
	if examples == 0 {
		t.Errorf("no finding examples: %+v", rep.Findings)
	}
	if k := rep.Unregistered.Groups[0].Examples[0]; !strings.HasSuffix(k, "…(+"+itoa(len("qqqqq")+size+len(":x")-audit.MaxKeyBytes)+" bytes)") {
		t.Errorf("group example %q does not count the bytes cut", k[len(k)-30:])
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(rep); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 2<<20 {
		t.Errorf("the json report is %d KB", b.Len()>>10)
	}
	data, err := audit.NewBaseline(rep).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 1<<20 {
		t.Errorf("the baseline is %d KB", len(data)>>10)
	}
	runtime.KeepAlive(rep)
}
