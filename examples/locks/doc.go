// Package locks shows the code keyreg generates for locks, fences and
// stream consumer groups: locks_gen.go is generated from keys.yaml in this
// directory by
//
//	keyreg gen go --registry keys.yaml --out locks_gen.go --package locks
//
// and a test fails when it is stale. The tests run the generated lock
// against a real redis-server, standalone and as a three-master cluster:
// 16 goroutines acquiring one lock 200 times each never overlap, and the
// fence values they draw increase by one per acquisition.
package locks

//go:generate go run ../../cmd/keyreg gen go --registry keys.yaml --out locks_gen.go --package locks
