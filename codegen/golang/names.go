package golang

import (
	"go/token"
	"strconv"
	"strings"
	"unicode"
)

// initialisms are words written in upper case in Go identifiers, after
// the list golint and staticcheck use, plus ULID.
var initialisms = map[string]bool{
	"acl": true, "api": true, "ascii": true, "cpu": true, "css": true, "dns": true, "eof": true,
	"guid": true, "html": true, "http": true, "https": true, "id": true, "ip": true, "json": true,
	"lhs": true, "qps": true, "ram": true, "rhs": true, "rpc": true, "sla": true, "smtp": true,
	"sql": true, "ssh": true, "tcp": true, "tls": true, "ttl": true, "udp": true, "ui": true,
	"uid": true, "ulid": true, "uuid": true, "uri": true, "url": true, "utf8": true, "vm": true,
	"xml": true, "xmpp": true, "xsrf": true, "xss": true,
}

// words splits s into runs of ASCII letters and digits; everything else
// separates words.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	})
}

// exported turns a kebab-case or snake_case name into an exported Go
// identifier: "user-session" → "UserSession", "session_id" → "SessionID".
// Words written all in upper case ("PENDING") are capitalised ("Pending").
// It returns "" when s has no letters or digits.
func exported(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		lw := strings.ToLower(w)
		switch {
		case initialisms[lw]:
			b.WriteString(strings.ToUpper(lw))
		case len(lw) > 2 && lw[len(lw)-1] == 's' && initialisms[lw[:len(lw)-1]]:
			b.WriteString(strings.ToUpper(lw[:len(lw)-1]) + "s") // "ids" → "IDs"
		case w == strings.ToUpper(w):
			b.WriteString(strings.ToUpper(lw[:1]) + lw[1:])
		default:
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	id := b.String()
	if id != "" && !unicode.IsLetter(rune(id[0])) {
		id = "X" + id
	}
	return id
}

// unexported turns a name into an unexported Go identifier:
// "session_id" → "sessionID", "api_key" → "apiKey", "id" → "id".
func unexported(s string) string {
	ws := words(s)
	if len(ws) == 0 {
		return ""
	}
	first := strings.ToLower(ws[0])
	rest := exported(strings.Join(ws[1:], "_"))
	if rest != "" && rest[0] == 'X' && len(ws) > 1 && !unicode.IsLetter(rune(ws[1][0])) {
		rest = rest[1:] // a digit may follow the first word directly
	}
	id := first + rest
	if !unicode.IsLetter(rune(id[0])) {
		id = "x" + id
	}
	return id
}

// predeclared are Go's predeclared identifiers; a parameter must not
// shadow them.
var predeclared = map[string]bool{
	"any": true, "append": true, "bool": true, "byte": true, "cap": true, "clear": true, "close": true,
	"comparable": true, "complex": true, "complex128": true, "complex64": true, "copy": true,
	"delete": true, "error": true, "false": true, "float32": true, "float64": true, "imag": true,
	"int": true, "int16": true, "int32": true, "int64": true, "int8": true, "iota": true, "len": true,
	"make": true, "max": true, "min": true, "new": true, "nil": true, "panic": true, "print": true,
	"println": true, "real": true, "recover": true, "rune": true, "string": true, "true": true,
	"uint": true, "uint16": true, "uint32": true, "uint64": true, "uint8": true, "uintptr": true,
}

// scopeNames are the identifiers, besides the placeholder arguments, that
// the generated functions taking placeholder values as arguments declare
// or refer to: Build<F>, MustBuild<F> and Parse<F>, and a lock's
// TryAcquire and Acquire functions. An argument named like one of them
// would be declared twice, or would hide it. TestScopeNames derives them
// from the generated code and fails when one is missing here. ("p" and
// "ttl" were reserved before and stay reserved, so that no generated name
// changes.)
var scopeNames = []string{"c", "ctx", "err", "fence", "k", "key", "l", "opts", "p", "ttl", "v"}

// runtimePrefix starts every unexported package-level name of the
// generated runtime (keyregMatch, keyregParts<F>, …), which the functions
// above call.
const runtimePrefix = "keyreg"

// argScope returns the names a placeholder argument may not take: the
// scope's own names and the name of every package generated code may
// import, whether or not this file imports it, so that an argument's name
// never depends on what else the registry holds.
func argScope() map[string]bool {
	taken := map[string]bool{}
	for _, n := range scopeNames {
		taken[n] = true
	}
	for _, p := range goPackages {
		taken[p.name] = true
	}
	return taken
}

// localName returns a parameter name for s that is not a keyword, a
// predeclared identifier, a runtime name (runtimePrefix), or in taken, and
// marks it taken. This is the one place placeholder arguments are named.
func localName(s string, taken map[string]bool) string {
	id := unexported(s)
	if id == "" {
		id = "p"
	}
	if token.IsKeyword(id) || predeclared[id] || strings.HasPrefix(id, runtimePrefix) || taken[id] {
		id += "_"
	}
	for base, i := id, 2; taken[id]; i++ {
		id = base + strconv.Itoa(i)
	}
	taken[id] = true
	return id
}

// namer hands out unique identifiers within one scope.
type namer struct {
	used map[string]bool
}

func newNamer(reserved ...string) *namer {
	n := &namer{used: map[string]bool{}}
	for _, r := range reserved {
		n.used[r] = true
	}
	return n
}

// free reports whether every name is unused.
func (n *namer) free(names ...string) bool {
	for _, s := range names {
		if n.used[s] {
			return false
		}
	}
	return true
}

// take marks names as used.
func (n *namer) take(names ...string) {
	for _, s := range names {
		n.used[s] = true
	}
}

// unique returns want, or want with the smallest numeric suffix from 2 up
// that is still free, and marks it used.
func (n *namer) unique(want string) string {
	id := want
	for i := 2; n.used[id]; i++ {
		id = want + strconv.Itoa(i)
	}
	n.used[id] = true
	return id
}
