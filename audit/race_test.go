//go:build race

package audit_test

// raceEnabled scales memory allowances: the race detector's shadow memory
// grows with the heap.
const raceEnabled = true
