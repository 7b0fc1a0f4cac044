// Package keys is keyreg dogfooding itself: keys_gen.go is generated from
// the repository's keys.yaml by
//
//	keyreg gen go --registry ../../keys.yaml --out keys_gen.go --package keys --include-presets
//
// and a test fails when it is stale. It includes the preset families
// (--include-presets), because the order API reads Celery's results and
// the tests write a key of every family. The tests also write every family
// through the generated accessors into a real Redis and audit the result
// with keyreg's own audit, and fuzz that every family's Parse function
// inverts its Build function.
package keys

//go:generate go run ../../cmd/keyreg gen go --registry ../../keys.yaml --out keys_gen.go --package keys --include-presets
