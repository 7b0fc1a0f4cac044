package source_test

import (
	"testing"

	"github.com/keyreg/keyreg/source"
)

// TestFamily checks that a Family tag gives back the index it was made
// from, and that neither the zero Family nor NoFamily names one.
func TestFamily(t *testing.T) {
	for _, i := range []int{0, 1, 41} {
		if got, ok := source.FamilyAt(i).Index(); !ok || got != i {
			t.Errorf("FamilyAt(%d).Index() = %d, %v", i, got, ok)
		}
	}
	for _, f := range []source.Family{0, source.NoFamily} {
		if _, ok := f.Index(); ok {
			t.Errorf("Family(%d) names a family", f)
		}
	}
}
