package snapshot

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/source"
)

// lzfRun returns LZF data that decodes to n bytes c: one literal, then
// back references of 264 bytes (3 bytes each), an amplification of 88.
func lzfRun(c byte, n int) []byte {
	out := []byte{0, c}
	for left := n - 1; left > 0; {
		switch l := min(left, 264); {
		case l < 3:
			out = append(out, byte(l-1))
			out = append(out, bytes.Repeat([]byte{c}, l)...)
			left -= l
		case l-2 < 7:
			out = append(out, byte((l-2)<<5), 0)
			left -= l
		default:
			out = append(out, 7<<5, byte(l-9), 0)
			left -= l
		}
	}
	return out
}

// lzfStr is a string of n bytes c, LZF-compressed, as the file holds it.
func (b *fb) lzfStr(c byte, n int) *fb {
	d := lzfRun(c, n)
	b.raw(0xC3).len(uint64(len(d))).len(uint64(n)).raw(d...)
	return b
}

func TestLZFRun(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8, 9, 264, 265, 266, 267, 1000, 1 << 20} {
		b := &fb{}
		b.lzfStr('a', n)
		r := &Reader{in: newInput(bytes.NewReader(b.Bytes()))}
		h, err := r.readStrHdr("s")
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.readStr(h, int64(n), nil, "s")
		if err != nil || string(got) != strings.Repeat("a", n) {
			t.Fatalf("n %d: %d bytes, %v", n, len(got), err)
		}
	}
}

// allocated returns the bytes allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func scanFile(t *testing.T, file []byte, fn func([]source.KeyInfo) error) (source.Stats, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dump.rdb")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	return NewSource([]string{path}, SourceOptions{}).ScanKeys(context.Background(), func(string) source.Plan { return source.Plan{} }, fn)
}

// TestLZFAmplification reads the crafted files of the adversarial pass,
// small files that LZF makes claim far more memory: a key name claiming
// 512 MiB is a FormatError before anything is decoded; 400 AUX fields of
// 1 MiB are skipped undecoded; keys of 1 MiB names are handed over in
// batches bounded in bytes, not 1,000 at a time.
func TestLZFAmplification(t *testing.T) {
	t.Run("key of 512 MiB", func(t *testing.T) {
		b := &fb{}
		b.raw([]byte("REDIS0009")...)
		b.raw(tString).lzfStr('k', 512<<20).str("v")
		file := b.eof(9)
		var err error
		got := allocated(func() { _, err = scanFile(t, file, func([]source.KeyInfo) error { return nil }) })
		var fe *FormatError
		if !errors.As(err, &fe) || !strings.Contains(fe.Expected, "a key of at most 1048576 bytes") {
			t.Fatalf("%v; want a FormatError for the key's length", err)
		}
		if got > 4<<20 {
			t.Fatalf("allocated %d bytes for a file of %d; want under 4 MiB", got, len(file))
		}
	})
	t.Run("400 AUX fields of 1 MiB", func(t *testing.T) {
		b := &fb{}
		b.raw([]byte("REDIS0009")...)
		b.raw(opAux).str("redis-ver").str("7.0.15")
		for range 400 {
			b.raw(opAux).str("lua").lzfStr('x', 1<<20)
		}
		for range 400 {
			b.raw(opAux).lzfStr('n', 1<<20).str("v")
		}
		b.kv(tString, "k").str("v")
		file := b.eof(9)
		var r *Reader
		got := allocated(func() {
			var err error
			if r, err = NewReader(bytes.NewReader(file), Options{}); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		})
		if got > 2<<20 {
			t.Fatalf("allocated %d bytes for %d bytes of AUX fields; want under 2 MiB", got, len(file))
		}
		if aux := r.Aux(); aux["redis-ver"] != "7.0.15" || len(aux) != 1 {
			t.Fatalf("aux %d fields, redis-ver %q; want redis-ver alone", len(aux), aux["redis-ver"])
		}
	})
	t.Run("1,500 keys of 1 MiB names", func(t *testing.T) {
		b := &fb{}
		b.raw([]byte("REDIS0009")...)
		for i := range 1500 {
			b.raw(tString).lzfStr(byte('a'+i%26), 1<<20).str("v")
		}
		file := b.eof(9)
		// The live heap, measured at every batch after a collection: the
		// keys the reader holds, read ahead and handed over.
		var peak uint64
		var ms runtime.MemStats
		st, err := scanFile(t, file, func(batch []source.KeyInfo) error {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			runtime.KeepAlive(batch) // as the audit holds it
			return nil
		})
		if err != nil || st.Keys != 1500 {
			t.Fatalf("%v, %d keys; want 1500", err, st.Keys)
		}
		if peak > 48<<20 {
			t.Fatalf("a live heap of %d MiB reading 1,500 names of 1 MiB (a file of %d KiB); want under 48 MiB", peak>>20, len(file)>>10)
		}
		t.Logf("peak live heap %d MiB, file %d KiB", peak>>20, len(file)>>10)
	})
}

// TestImplausibleCounts reads encoded values whose header claims more
// elements than their bytes hold, as redis-check-rdb rejects them: each is
// a FormatError whether the value is sampled or skipped, never a key
// reported with the count its header claims.
func TestImplausibleCounts(t *testing.T) {
	setCount := func(s string, at int, n uint32, width int) string {
		b := []byte(s)
		if width == 2 {
			binary.LittleEndian.PutUint16(b[at:], uint16(n))
		} else {
			binary.LittleEndian.PutUint32(b[at:], n)
		}
		return string(b)
	}
	is := intset(2, 1, 2, 3, 4, 5, 6, 7, 8) // 24 bytes
	is = setCount(is+"\x00", 4, math.MaxUint32, 4)
	zm := []byte(zipmap("a", "b"))
	zm[0] = 200
	for name, v := range map[string]struct {
		t   byte
		val string
	}{
		"intset of 25 bytes claiming 4294967295": {tSetIntset, is},
		"listpack claiming 1000":                 {tSetListpack, setCount(listpack("a", "b"), 4, 1000, 2)},
		"ziplist claiming 1000":                  {tListZiplist, setCount(ziplist("a", "b"), 8, 1000, 2)},
		"zipmap claiming 200 pairs":              {tHashZipmap, string(zm)},
		"listpack of another length":             {tHashListpack, setCount(listpack("a", "b"), 0, 100, 4)},
	} {
		b := &fb{}
		b.raw([]byte("REDIS0009")...)
		b.kv(v.t, "k").str(v.val)
		file := b.eof(9)
		for _, sample := range []bool{false, true} {
			r, err := NewReader(bytes.NewReader(file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			e, err := r.Next()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if sample {
				_, err = e.Value(10, 1<<20)
			} else {
				err = e.Skip()
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("%s (sampled %v): %v, len %d; want a FormatError", name, sample, err, e.Len)
			}
		}
	}
	// A quicklist node, skipped.
	b := &fb{}
	b.raw([]byte("REDIS0010")...)
	b.kv(tListQuicklist2, "q").len(1).len(2).str(setCount(listpack("a", "b"), 4, 1000, 2))
	if err := drain(b.eof(10)); err == nil {
		t.Error("a quicklist node of 2 elements claiming 1000: no error")
	}
}
