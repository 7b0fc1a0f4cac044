package registry

import "testing"

// TestPlaceholderTypeTable checks that every type of the table is whole:
// named (and parsed back), with a byte language (AcceptsAt has a case for
// it) and values that Valid accepts. A type added to the constants but not
// to the table, or to the table but not to AcceptsAt, fails here.
func TestPlaceholderTypeTable(t *testing.T) {
	ts := PlaceholderTypes()
	if len(ts) != numTypes || ts[len(ts)-1] != PlaceholderType(numTypes-1) {
		t.Fatalf("PlaceholderTypes() = %v, want all %d types", ts, numTypes)
	}
	if ts[0] != Word {
		t.Errorf("the default type %v is not first", ts[0])
	}
	for _, pt := range ts {
		name := pt.String()
		if back, ok := ParsePlaceholderType(name); !ok || back != pt || name == "" {
			t.Errorf("type %d: name %q parses to %v, %v", pt, name, back, ok)
		}
		// A value made of the first accepted byte at each index.
		n := max(pt.FixedLen(), 3)
		v := make([]byte, 0, n)
		for i := range n {
			for b := range 256 {
				if pt.AcceptsAt(i, byte(b), ':') {
					v = append(v, byte(b))
					break
				}
			}
		}
		if len(v) != n || !pt.Valid(string(v), ':') {
			t.Errorf("type %v: no value built from AcceptsAt is valid (%q)", pt, v)
		}
	}
	if PlaceholderType(numTypes).String() == "" {
		t.Errorf("an unknown type has no name")
	}
	if _, ok := ParsePlaceholderType("nosuch"); ok {
		t.Errorf("an unknown name parses")
	}
}
