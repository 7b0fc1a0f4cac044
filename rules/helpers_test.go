package rules

import (
	"slices"
	"testing"

	"github.com/keyreg/keyreg/registry"
)

func TestGlobMatchesPrefix(t *testing.T) {
	for _, tc := range []struct {
		glob, s string
		want    bool
	}{
		{"v1:user:", "v1:user:", true},
		{"v1:user:", "v1:user:session:", true},
		{"v1:user:", "v1:users:", false},
		{"v1:user:", "v1:user", false},
		{"v*:user:", "v2:user:", true},
		{"v*:user:", "v12:user:x", true},
		{"v*:user:", "v:user:", true}, // * matches the empty run
		{"v*:user:", "v1:x:user:", false},
		{"*", "", true},
		{"a*", "abc", true},
		{"*:b", "x:y:b", false},
		{"", "anything", true},
	} {
		if got := globMatchesPrefix(tc.glob, tc.s, ':'); got != tc.want {
			t.Errorf("globMatchesPrefix(%q, %q) = %v, want %v", tc.glob, tc.s, got, tc.want)
		}
	}
}

func TestVersionSegments(t *testing.T) {
	for src, want := range map[string][]string{
		"v2:user:{id}":         {"v2"},
		"v1:api:v2:{id}":       {"v1", "v2"},
		"v{n:int}:x":           nil,
		"v1{n:int}:x":          nil,
		"v01:v0:v:vx:{id}":     {"v0"},
		"x:{a:any}:v3":         {"v3"},
		"celery-meta-{id:int}": nil,
	} {
		p, err := registry.ParsePattern(src, ':')
		if err != nil {
			t.Fatal(err)
		}
		if got := versionSegments(p); !slices.Equal(got, want) {
			t.Errorf("versionSegments(%q) = %q, want %q", src, got, want)
		}
	}
}
