package scanner

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// A URL that does not parse is described in words, never quoted: the error
// texts of net/url and go-redis echo the part that failed, which is often
// a piece of a password holding '#', '/' or '?' (url.Parse reads
// "redis://u:S3cr#t@h" as host "u", port "S3cr").

// encodeHint tells how to write a password that breaks a URL.
const encodeHint = "a user or password holding # / ? @ % or a space must be percent-encoded (# is %23, / is %2F, ? is %3F, @ is %40, % is %25, a space is %20)"

// invalidURL is the usage error of a URL that does not parse.
func invalidURL(what string) error {
	return &UsageError{Err: fmt.Errorf("invalid url: %s", what), Hint: encodeHint}
}

// parseURL checks raw and parses it. Its errors never contain any part of
// raw except a well-formed scheme.
func parseURL(raw string) (*url.URL, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, usageErr(errors.New("invalid url: it must start with redis://, rediss:// or unix://"))
	}
	switch scheme {
	case "redis", "rediss", "unix":
	default:
		if validScheme(scheme) {
			return nil, usageErr(fmt.Errorf("invalid url: scheme %q is not redis, rediss or unix", scheme))
		}
		return nil, usageErr(errors.New("invalid url: it must start with redis://, rediss:// or unix://"))
	}
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	if strings.Contains(rest[authEnd:], "@") {
		return nil, invalidURL("an '@' follows a '/', '?' or '#', so the user and password end early")
	}
	auth := rest[:authEnd]
	at := strings.LastIndex(auth, "@")
	user, host := "", auth
	if at >= 0 {
		user, host = auth[:at], auth[at+1:]
	}
	if err := checkUserinfo(user); err != nil {
		return nil, err
	}
	if strings.ContainsFunc(rest, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, usageErr(errors.New("invalid url: it holds a space or control character; percent-encode it (a space is %20)"))
	}
	if scheme != "unix" {
		if err := checkHostPort(host); err != nil {
			return nil, err
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		// A case the checks above missed: still never echo the text.
		return nil, invalidURL("it does not parse as scheme://[user:password@]host:port[/db]")
	}
	return u, nil
}

func validScheme(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')
		if !ok {
			return false
		}
	}
	return true
}

// checkUserinfo checks the user and password part as url.Parse would.
func checkUserinfo(user string) error {
	for i := 0; i < len(user); i++ {
		c := user[i]
		switch {
		case c == '%':
			if i+2 >= len(user) || !isHex(user[i+1]) || !isHex(user[i+2]) {
				return invalidURL("a '%' in the user or password is not followed by two hex digits")
			}
		case c <= ' ' || c == 0x7f:
			return invalidURL("the user or password holds a space or control character")
		case strings.IndexByte(`"<>\^`+"`{|}", c) >= 0:
			return invalidURL("the user or password holds a character that must be percent-encoded")
		}
	}
	return nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// checkHostPort checks the part after the userinfo: a host, or host:port
// with a numeric port.
func checkHostPort(host string) error {
	if host == "" {
		return nil // go-redis defaults to localhost:6379
	}
	h, port := host, ""
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return invalidURL("the part after the last '@' is not host:port")
		}
		h, port = host[:end+1], strings.TrimPrefix(host[end+1:], ":")
		if port == "" && len(host) > end+1 && host[end+1] != ':' {
			return invalidURL("the part after the last '@' is not host:port")
		}
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		h, port = host[:i], host[i+1:]
		if strings.Contains(h, ":") {
			return invalidURL("the part after the last '@' is not host:port")
		}
	}
	if h == "" && port != "" {
		return invalidURL("the part after the last '@' has a port but no host")
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return invalidURL("the part after the last '@' is not host:port (the port is not a number)")
		}
	}
	if port != "" {
		if _, _, err := net.SplitHostPort(host); err != nil {
			return invalidURL("the part after the last '@' is not host:port")
		}
	}
	return nil
}

// goRedisURLError words an error of redis.ParseURL for a URL that url.Parse
// accepted, without its text: it quotes the query parameter or path that
// failed, which may be a piece of a password.
func goRedisURLError(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "unexpected option"):
		return &UsageError{Err: errors.New("invalid url: it has a query parameter keyreg does not know"), Hint: encodeHint}
	case strings.Contains(msg, "database number"), strings.Contains(msg, "URL path"):
		return usageErr(errors.New("invalid url: the path must be a database number, such as /0"))
	case strings.Contains(msg, "invalid URL scheme"):
		return usageErr(errors.New("invalid url: scheme is not redis, rediss or unix"))
	}
	return usageErr(errors.New("invalid url: go-redis does not accept it (check its query parameters and path)"))
}
