package snapshot_test

import (
	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/snapshot"
)

// The snapshot source is an audit.Source, as *scanner.Conn is (audit/source.go).
// The check sits in a test file: snapshot may not import audit.
var _ audit.Source = (*snapshot.Source)(nil)
