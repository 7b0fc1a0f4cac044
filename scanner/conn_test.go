package scanner_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

// hostileChars break a URL when a password holds them raw.
var hostileChars = []string{"#", "/", "?", "@", ":", "%", " ", `"`, "'"}

// hostilePassword is a password holding c.
func hostilePassword(c string) string { return "S3cr" + c + "tPa55" }

// leak returns the first fragment of 3 or more bytes of secret found in
// text, or "".
func leak(text, secret string) string {
	for i := 0; i+3 <= len(secret); i++ {
		if f := secret[i : i+3]; strings.Contains(text, f) {
			return f
		}
	}
	return ""
}

// TestBadURLNeverEchoes gives Connect URLs whose password holds each
// hostile character raw: a URL that does not parse is described in words
// (a usage error), one that parses fails to connect; neither error holds a
// fragment of the password, whatever the mode.
func TestBadURLNeverEchoes(t *testing.T) {
	t.Parallel()
	dead := redistest.Standalone(t)
	dead.Stop()
	for _, c := range hostileChars {
		pw := hostilePassword(c)
		for _, o := range []scanner.Options{
			{URL: "redis://u:" + pw + "@" + dead.Addr + "/0"},
			{URL: "rediss://u:" + pw + "@" + dead.Addr},
			{URL: "redis://:" + pw + "@" + dead.Addr, SentinelMaster: "m"},
			{URL: "redis://" + pw + "@" + dead.Addr},
			{URL: "redis://u:" + pw + "@" + dead.Addr + "/0?dial_timeout=1s"},
		} {
			if c == ":" && strings.HasPrefix(o.URL, "redis://"+pw) {
				continue // "S3cr:tPa55@" is user S3cr, password tPa55
			}
			o.Timeout = time.Second
			_, err := scanner.Connect(context.Background(), o)
			if err == nil {
				t.Fatalf("%q: connected to a stopped server", o.URL)
			}
			if f := leak(err.Error(), pw); f != "" {
				t.Errorf("password with %q: error %q holds %q", c, err, f)
			}
			var ue *scanner.UsageError
			if _, perr := url.Parse(o.URL); perr != nil && !errors.As(err, &ue) {
				t.Errorf("%q does not parse, but the error is not a usage error: %v", c, err)
			}
			if errors.As(err, &ue) && !strings.Contains(err.Error(), "invalid url") {
				t.Errorf("usage error %q does not say the url is invalid", err)
			}
		}
	}
	// The hint names the part that is wrong, in words.
	_, err := scanner.Connect(context.Background(), scanner.Options{URL: "redis://u:S3cr#tPa55@h:6379"})
	var ue *scanner.UsageError
	if !errors.As(err, &ue) || !strings.Contains(ue.Hint, "percent-encoded") || !strings.Contains(ue.Hint, "%23") {
		t.Errorf("raw '#': %v, hint %q", err, ue.Hint)
	}
	_, err = scanner.Connect(context.Background(), scanner.Options{URL: "redis://u:p@h:notaport"})
	if err == nil || !strings.Contains(err.Error(), "not host:port") {
		t.Errorf("bad port: %v", err)
	}
}

// TestAuthFailureNeverEchoes authenticates as an ACL user whose password
// holds each hostile character, percent-encoded in the URL: the right
// password scans, a wrong one fails as a runtime error that holds no
// fragment of either.
func TestAuthFailureNeverEchoes(t *testing.T) {
	t.Parallel()
	s := redistest.Standalone(t)
	if err := s.Client(t).Set(context.Background(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for i, c := range hostileChars {
		pw := hostilePassword(c)
		user := fmt.Sprintf("user%d", i)
		redistest.ACLUser(t, s, user, pw, strings.Fields(scanner.MinimalACL)...)
		good := "redis://" + url.UserPassword(user, pw).String() + "@" + s.Addr + "/0"
		conn := connect(t, scanner.Options{URL: good})
		if ki, err := conn.Probe(context.Background(), "k"); err != nil || ki.Type != "string" {
			t.Errorf("password with %q: probe %+v, %v", c, ki, err)
		}
		wrong := pw + "X"
		bad := "redis://" + url.UserPassword(user, wrong).String() + "@" + s.Addr + "/0"
		_, err := scanner.Connect(context.Background(), scanner.Options{URL: bad, Timeout: time.Second})
		var ue *scanner.UsageError
		if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Errorf("password with %q: wrong password: %v", c, err)
			continue
		}
		if f := leak(err.Error(), wrong); f != "" {
			t.Errorf("password with %q: error %q holds %q", c, err, f)
		}
		if !strings.Contains(err.Error(), user+":xxxxx@") {
			t.Errorf("error %q does not name the redacted url", err)
		}
	}
}
