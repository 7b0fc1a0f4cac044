package main

import "testing"

func TestWithoutDB(t *testing.T) {
	for in, want := range map[string]string{
		"redis://u:p%23w@h:6379/7":           "redis://u:p%23w@h:6379",
		"rediss://h:6380/3?skip_verify=true": "rediss://h:6380?skip_verify=true",
		"redis://h:6379":                     "redis://h:6379",
		"unix:///run/redis.sock?db=5":        "unix:///run/redis.sock",
		"unix:///run/redis.sock":             "unix:///run/redis.sock",
		"redis://h:6379/%zz":                 "redis://h:6379/%zz",
	} {
		if got := withoutDB(in); got != want {
			t.Errorf("withoutDB(%q) = %q, want %q", in, got, want)
		}
	}
}
