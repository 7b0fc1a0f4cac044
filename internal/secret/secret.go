// Package secret hides passwords in text that keyreg prints: URLs, error
// messages and report fields. It is the one redaction every package uses
// (scanner for its errors, report for its free-text fields), so a gap is
// closed once for all of them.
//
// Redaction of free text is a second line of defence. The first is never to
// echo a secret at all: the scanner describes a URL that does not parse in
// words instead of quoting it, and masks the passwords it knows (Mask).
package secret

import (
	"net/url"
	"strings"
)

// Placeholder replaces every redacted secret.
const Placeholder = "xxxxx"

// Redact returns s with the password of every URL userinfo replaced by
// Placeholder ("redis://user:secret@h:1/0" becomes "redis://user:xxxxx@h:1/0";
// a userinfo without a colon is replaced whole), and the value of every
// password-like parameter (password=, sentinel_password=, pass=, pwd=, in
// any case) masked too. A value that already is a placeholder (such as
// "***") is kept.
//
// It works on free text, so a userinfo is taken to end at the last '@'
// before whitespace or a quote: raw '@', '/' or '?' in passwords are common
// in hand-written URLs, and masking too much is better than leaking.
func Redact(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(s, "=") {
		return s
	}
	return redactParams(redactUserinfo(s))
}

func redactUserinfo(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		rest := s[i+3:]
		end := strings.IndexAny(rest, " \t\r\n\"'`<>")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
			user := rest[:at]
			if c := strings.IndexByte(user, ':'); c >= 0 {
				b.WriteString(user[:c+1] + keep(user[c+1:]))
			} else {
				b.WriteString(keep(user))
			}
			rest = rest[at:]
		}
		s = rest
	}
}

func redactParams(s string) string {
	lower := asciiLower(s)
	var b strings.Builder
	last := 0
	for i := 0; i < len(lower); {
		j := strings.IndexByte(lower[i:], '=')
		if j < 0 {
			break
		}
		eq := i + j
		i = eq + 1
		if !secretParam(lower[:eq]) {
			continue
		}
		end := len(s)
		if k := strings.IndexAny(s[eq+1:], "& \t\r\n\"'`#;,"); k >= 0 {
			end = eq + 1 + k
		}
		b.WriteString(s[last : eq+1])
		b.WriteString(keep(s[eq+1 : end]))
		last, i = end, end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// secretParam reports whether before (lowercase text up to an '=') ends in
// a password-like parameter name: one ending in "password", or "pass" or
// "pwd" alone or after '_' ("db_pass", not "bypass").
func secretParam(before string) bool {
	start := len(before)
	for start > 0 && isNameByte(before[start-1]) {
		start--
	}
	name := before[start:]
	if strings.HasSuffix(name, "password") {
		return true
	}
	for _, p := range []string{"pass", "pwd"} {
		if name == p || strings.HasSuffix(name, "_"+p) {
			return true
		}
	}
	return false
}

// asciiLower lowercases the ASCII letters of s and keeps every other byte,
// so that an index into the result is an index into s. strings.ToLower
// would not: it turns a byte of invalid UTF-8 into a 3-byte U+FFFD and
// changes the length of some letters (İ), and the indices would drift.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isNameByte(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// keep returns Placeholder for a secret, or the secret itself when it is
// empty or already a placeholder (only '*' and 'x').
func keep(secret string) string {
	if strings.Trim(secret, "*xX") == "" {
		return secret
	}
	return Placeholder
}

// minMask is the length below which Mask leaves a secret alone: replacing
// every "p" of a message would garble it, and URLs hide short passwords
// through Redact anyway.
const minMask = 4

// Mask returns Redact(s) with every occurrence of each known secret, raw
// or percent-encoded as a URL would carry it, replaced by Placeholder.
// Secrets shorter than 4 bytes are not searched for.
func Mask(s string, secrets ...string) string {
	s = Redact(s)
	for _, sec := range secrets {
		if len(sec) < minMask {
			continue
		}
		for _, form := range []string{sec, url.PathEscape(sec), url.QueryEscape(sec), url.UserPassword("", sec).String()[1:]} {
			if form != "" {
				s = strings.ReplaceAll(s, form, Placeholder)
			}
		}
	}
	return s
}

// URLString returns the URL raw with its password hidden: whole, through
// URL, when raw parses as a URL with a scheme, else through Redact.
func URLString(raw string) string {
	u, err := url.Parse(raw)
	if err == nil && u.Scheme != "" && !strings.ContainsAny(raw, " \t\r\n") {
		return URL(u)
	}
	// A lone URL that does not parse: everything up to its last '@' may be
	// a password.
	if scheme, rest, ok := strings.Cut(raw, "://"); ok && !strings.ContainsAny(scheme, " \t\r\n") && !strings.Contains(rest, "://") {
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			return Redact(scheme + "://" + Placeholder + rest[at:])
		}
	}
	return Redact(raw)
}

// URL returns u as text with its password replaced by Placeholder and its
// password-like query parameters masked. Unlike Redact it works on a parsed
// URL, so a password holding any character is hidden whole.
func URL(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, ok := c.User.Password(); ok {
			c.User = url.UserPassword(c.User.Username(), Placeholder)
		} else {
			c.User = url.User(Placeholder)
		}
	}
	return Redact(c.String())
}
