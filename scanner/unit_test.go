package scanner_test

import (
	"testing"

	"github.com/keyreg/keyreg/scanner"
)

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"redis://user:secret@h:1/0", "redis://user:xxxxx@h:1/0"},
		{"rediss://:secret@h:6380", "rediss://:xxxxx@h:6380"},
		{"redis://h:6379/0", "redis://h:6379/0"},
		{"redis://tokenonly@h", "redis://xxxxx@h"},
		{"unix://u:p@/tmp/redis.sock", "unix://u:xxxxx@/tmp/redis.sock"},
		{"redis://u:p@ss/w?rd@h:1/0", "redis://u:xxxxx@h:1/0"},
		{`connecting to "redis://a:b@h:1": refused`, `connecting to "redis://a:xxxxx@h:1": refused`},
		{"two redis://a:1@x and rediss://b:2@y end", "two redis://a:xxxxx@x and rediss://b:xxxxx@y end"},
		{"redis://h:1/0?password=top&db=1", "redis://h:1/0?password=xxxxx&db=1"},
		{"redis://h/?sentinel_password=top", "redis://h/?sentinel_password=xxxxx"},
		{"no url here: password=visible", "no url here: password=visible"},
		{"", ""},
	} {
		if got := scanner.RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPrefixGlob(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"v2:user:", "v2:user:*"},
		{"a*b?c", `a\*b\?c*`},
		{"[x]", `\[x\]*`},
		{`back\slash`, `back\\slash*`},
		{"{tag}:\x00", "{tag}:\x00*"},
	} {
		if got := scanner.PrefixGlob(tc.in); got != tc.want {
			t.Errorf("PrefixGlob(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
