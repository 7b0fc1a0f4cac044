package demo

import (
	"testing"

	"github.com/keyreg/keyreg/registry"
)

// TestEveryPlaceholderType checks the generator against the registry's one
// table of placeholder types: every type gets valid values, and every type
// but the permissive word and any has a wrong value that its language
// rejects. A type added to the registry but not here fails.
func TestEveryPlaceholderType(t *testing.T) {
	s := newSeeder(nil, &registry.Registry{Separator: ':'}, Options{Seed: 3})
	for _, pt := range registry.PlaceholderTypes() {
		for _, attempt := range []int{0, 45, 70} {
			if v := s.placeholder(registry.Part{Name: "v", Type: pt, Typed: true}, attempt); !pt.Valid(v, ':') {
				t.Errorf("type %v: placeholder value %q is not valid", pt, v)
			}
		}
		wrong := wrongValues[pt]
		if pt == registry.Word || pt == registry.Any {
			if wrong != nil {
				t.Errorf("type %v accepts nearly anything, but has a wrong value", pt)
			}
			continue
		}
		if wrong == nil {
			t.Errorf("type %v has no wrong value in wrongValues", pt)
			continue
		}
		for range 20 {
			if v := wrong(s.g); pt.Valid(v, ':') {
				t.Errorf("type %v: wrong value %q is valid", pt, v)
			}
		}
	}
}
