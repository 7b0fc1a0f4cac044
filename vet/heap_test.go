package vet

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestStartHeap: no collection until the limit, then after the first
// collection the defaults again.
func TestStartHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	StartHeap()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GC percent %d after StartHeap, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l != toolStartHeap {
		t.Errorf("memory limit %d after StartHeap, want %d", l, toolStartHeap)
	}
	runtime.GC()
	for deadline := time.Now().Add(10 * time.Second); debug.SetMemoryLimit(-1) != math.MaxInt64; {
		if time.Now().After(deadline) {
			t.Fatal("the first collection did not restore the default memory limit")
		}
		runtime.GC()
		runtime.Gosched()
	}
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GC percent %d after the first collection, want 100", p)
	}
}
