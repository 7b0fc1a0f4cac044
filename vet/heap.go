package vet

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
)

// toolStartHeap is the heap a go vet tool process grows to before its
// first garbage collection.
const toolStartHeap = 64 << 20

// StartHeap is for a go vet tool process (keyreg-vet, keyreg under
// ToolEnv), which go vet starts once per package and which lives for one
// type-check and one analysis: it lets the heap grow to 64 MiB before the
// first garbage collection, then returns to the default GOGC. With the
// default 4 MiB start, a package of a few thousand lines costs about four
// collections, most of them during the binary's own initialisation, and
// their marking is a quarter of the process's CPU (docs/benchmarks.md).
// This is what cmd/compile does for the same reason (its starting heap).
// A GOGC or GOMEMLIMIT in the environment is left alone.
func StartHeap() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(toolStartHeap)
	// The first collection, when the heap reaches the limit, finds the
	// sentinel unreachable and runs its cleanup, which restores the
	// defaults: a large package is then collected as usual, never held
	// at the limit.
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(struct{}) {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	}, struct{}{})
}
