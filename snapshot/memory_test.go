package snapshot

import (
	"bytes"
	"io"
	"runtime"
	"testing"
)

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestFlatMemory streams two 256 MiB strings and two lists of a million elements
// through Next, Skip and a bounded Value: what is allocated stays far below
// the values' sizes. The checksum is zero (not computed).
func TestFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 512 MiB")
	}
	const big = 256 << 20
	const elems = 1 << 20
	head := &fb{}
	head.raw([]byte("REDIS0011")...)
	head.kv(tString, "big").len(big)
	mid := &fb{}
	mid.kv(tList, "list").len(elems)
	mid2 := &fb{}
	mid2.kv(tString, "big2").len(big)
	mid3 := &fb{}
	mid3.kv(tList, "list2").len(elems)
	src := io.MultiReader(
		bytes.NewReader(head.Bytes()), io.LimitReader(repeatReader('x'), big),
		bytes.NewReader(mid.Bytes()), io.LimitReader(repeatReader(1), elems*2), // "\x01" strings of one byte
		bytes.NewReader(mid2.Bytes()), io.LimitReader(repeatReader('y'), big),
		bytes.NewReader(mid3.Bytes()), io.LimitReader(repeatReader(1), elems*2),
		bytes.NewReader(append([]byte{opEOF}, make([]byte, 8)...)),
	)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := NewReader(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch i {
		case 0:
			if err := e.Skip(); err != nil || e.Size != big+5 || e.Len != big {
				t.Fatalf("big: %v size %d len %d", err, e.Size, e.Len)
			}
		case 1:
			s, err := e.Value(10, 1<<20)
			if err != nil || len(s.Members) != 10 || e.Len != elems {
				t.Fatalf("list: %v, %d members, len %d", err, len(s.Members), e.Len)
			}
		case 2:
			if _, err := e.Value(10, 1<<20); !isTooLarge(err) {
				t.Fatalf("big2: %v; want ErrTooLarge", err)
			}
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Fatalf("allocated %d bytes reading 512 MiB of values; want under 4 MiB", got)
	}
	t.Logf("allocated %d bytes in all", after.TotalAlloc-before.TotalAlloc)
}
