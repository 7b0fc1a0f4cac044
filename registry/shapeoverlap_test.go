package registry

import "testing"

// TestShapeIndex matches shapes with typed holes against families as
// patterns: an int hole never fits a uuid, a word hole may be one, and a
// word hole cannot stand for two segments.
func TestShapeIndex(t *testing.T) {
	reg, err := Parse(nil, "keys.yaml", []byte(`version: 1
separator: ":"
owners: {t: {contact: t@example.com}}
families:
  - {name: session, description: d, owner: t, ttl: optional, pattern: "v1:session:{id:uuid}"}
  - {name: profile, description: d, owner: t, ttl: optional, pattern: "v1:user:{id:int}:profile"}
`))
	if err != nil {
		t.Fatal(err)
	}
	x := reg.NewShapeIndex()
	shape := func(parts ...Part) *Pattern { return &Pattern{Sep: ':', Parts: parts} }
	hole := func(ty PlaceholderType) Part { return Part{Name: "h", Type: ty, Typed: true} }
	lit := func(s string) Part { return Part{Lit: s} }
	for _, c := range []struct {
		name string
		p    *Pattern
		want string
	}{
		{"int in uuid", shape(lit("v1:session:"), hole(Int)), ""},
		{"word in uuid", shape(lit("v1:session:"), hole(Word)), "session"},
		{"int profile", shape(lit("v1:user:"), hole(Int), lit(":profile")), "profile"},
		{"missing segment", shape(lit("v1:user:"), hole(Word)), ""},
		{"any covers it", shape(lit("v1:user:"), hole(Any)), "profile"},
		{"adjacent holes", shape(lit("v1:user:"), hole(Int), hole(Int), lit(":profile")), "profile"},
	} {
		got := ""
		for _, f := range x.Families(c.p) {
			got += f.Name
		}
		if got != c.want {
			t.Errorf("%s: families %q, want %q", c.name, got, c.want)
		}
	}
}
