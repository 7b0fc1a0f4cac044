package secret

import (
	"net/url"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"redis://user:secret@h:1/0", "redis://user:xxxxx@h:1/0"},
		{"rediss://:secret@h:6380", "rediss://:xxxxx@h:6380"},
		{"redis://h:6379/0", "redis://h:6379/0"},
		{"redis://localhost:6379", "redis://localhost:6379"},
		{"redis://tokenonly@h", "redis://xxxxx@h"},
		{"unix://u:p@/tmp/redis.sock", "unix://u:xxxxx@/tmp/redis.sock"},
		{"redis://u:p@ss/w?rd@h:1/0", "redis://u:xxxxx@h:1/0"},
		{"rediss://user:p%40ss@host", "rediss://user:xxxxx@host"},
		{"redis://:***@host", "redis://:***@host"},
		{"redis://:xxxxx@host", "redis://:xxxxx@host"},
		{`connecting to "redis://a:b@h:1": refused`, `connecting to "redis://a:xxxxx@h:1": refused`},
		{"two redis://a:1@x and rediss://b:2@y end", "two redis://a:xxxxx@x and rediss://b:xxxxx@y end"},
		{"redis://h:1/0?password=top&db=1", "redis://h:1/0?password=xxxxx&db=1"},
		{"redis://h/?sentinel_password=top", "redis://h/?sentinel_password=xxxxx"},
		{"unix:///tmp/redis.sock?password=abc&db=1", "unix:///tmp/redis.sock?password=xxxxx&db=1"},
		{"no url here: password=visible, ok", "no url here: password=xxxxx, ok"},
		{"sentinel_password=hunter2 rejected", "sentinel_password=xxxxx rejected"},
		{"PASSWORD=a DB_PASS=b pwd=c", "PASSWORD=xxxxx DB_PASS=xxxxx pwd=xxxxx"},
		{"bypass=1 compass=2 ratio=3", "bypass=1 compass=2 ratio=3"},
		// Bytes that strings.ToLower would widen must not shift the mask.
		{"\xff\xff\xff\xffpassword=abcdef and more", "\xff\xff\xff\xffpassword=xxxxx and more"},
		{"İİİİpassword=abc&x=1", "İİİİpassword=xxxxx&x=1"},
		{"", ""},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// hostile are passwords holding every character that breaks a URL.
var hostile = []string{"S3cr#tPa55", "S3cr/tPa55", "S3cr?tPa55", "S3cr@tPa55", "S3cr:tPa55", "S3cr%tPa55", "S3cr tPa55", `S3cr"tPa55`, "S3cr'tPa55"}

func TestMask(t *testing.T) {
	for _, pw := range hostile {
		enc := url.UserPassword("u", pw).String()
		for _, text := range []string{
			"auth failed for " + pw + " twice: " + pw,
			"redis://" + enc + "@h:1/0: refused",
			"?password=" + url.QueryEscape(pw),
		} {
			got := Mask(text, "", pw)
			if strings.Contains(got, pw) || strings.Contains(got, "tPa55") {
				t.Errorf("Mask(%q) = %q leaks the password", text, got)
			}
			if !strings.Contains(got, Placeholder) {
				t.Errorf("Mask(%q) = %q has no placeholder", text, got)
			}
		}
	}
	if got := Mask("dial tcp: nothing secret", "", "p"); got != "dial tcp: nothing secret" {
		t.Errorf("Mask with an empty or short secret: %q", got)
	}
}

func TestURL(t *testing.T) {
	for _, pw := range hostile {
		u := &url.URL{Scheme: "redis", User: url.UserPassword("u", pw), Host: "h:6379", Path: "/0"}
		if got, want := URL(u), "redis://u:xxxxx@h:6379/0"; got != want {
			t.Errorf("URL(password %q) = %q, want %q", pw, got, want)
		}
	}
	u, _ := url.Parse("redis://token@h:1?password=top&db=2")
	if got, want := URL(u), "redis://xxxxx@h:1?password=xxxxx&db=2"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	if got, want := URL(&url.URL{Scheme: "redis", Host: "h:1"}), "redis://h:1"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
}

func TestURLString(t *testing.T) {
	for _, pw := range hostile {
		raw := "redis://u:" + pw + "@h:6379/0"
		if got := URLString(raw); strings.Contains(got, "tPa55") || strings.Contains(got, "S3cr") {
			t.Errorf("URLString(%q) = %q leaks", raw, got)
		}
	}
	if got, want := URLString("redis://u:it's@h:1"), "redis://u:xxxxx@h:1"; got != want {
		t.Errorf("URLString = %q, want %q", got, want)
	}
	if got, want := URLString("see redis://a:b@h:1 there"), "see redis://a:xxxxx@h:1 there"; got != want {
		t.Errorf("URLString of text = %q, want %q", got, want)
	}
}

// FuzzRedact checks, for any text around a password parameter, that the
// password never survives and Redact never panics.
func FuzzRedact(f *testing.F) {
	f.Add("\xff\xff", " tail")
	f.Add("İ", "&x=1")
	f.Add("redis://u:", "@h")
	f.Fuzz(func(t *testing.T, before, after string) {
		const pw = "Zq7Wv9Kp"
		out := Redact(before + " password=" + pw + " " + after)
		if strings.Contains(out, pw) && !strings.Contains(before+after, pw) {
			t.Fatalf("password survived: %q", out)
		}
	})
}
