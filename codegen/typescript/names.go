package typescript

import (
	"strconv"
	"strings"
	"unicode"
)

// words splits s into runs of ASCII letters and digits; everything else
// separates words.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	})
}

// capital writes w with a capital first letter; a word in capitals only
// ("PENDING") becomes "Pending".
func capital(w string) string {
	if w == strings.ToUpper(w) {
		w = strings.ToLower(w)
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

// pascal turns a kebab-case or snake_case name into a PascalCase
// identifier ("cart-items" → "CartItems"), "" when s has no letters or
// digits. An identifier starts with a letter: "X" is put before a digit.
func pascal(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		b.WriteString(capital(w))
	}
	id := b.String()
	if id != "" && !unicode.IsLetter(rune(id[0])) {
		id = "X" + id
	}
	return id
}

// camel turns a name into a camelCase identifier ("user_id" → "userId").
func camel(s string) string {
	ws := words(s)
	if len(ws) == 0 {
		return ""
	}
	first := strings.ToLower(ws[0])
	var b strings.Builder
	b.WriteString(first)
	for _, w := range ws[1:] {
		b.WriteString(capital(w))
	}
	id := b.String()
	if !unicode.IsLetter(rune(id[0])) {
		id = "x" + id
	}
	return id
}

// snake turns a name into an UPPER_SNAKE constant prefix ("cart-items" →
// "CART_ITEMS").
func snake(s string) string {
	ws := words(s)
	for i, w := range ws {
		ws[i] = strings.ToUpper(w)
	}
	id := strings.Join(ws, "_")
	if id != "" && !unicode.IsLetter(rune(id[0])) {
		id = "X" + id
	}
	return id
}

// reserved are JavaScript's and TypeScript's reserved words, strict-mode
// and contextual words, and the globals the generated code refers to: a
// parameter must not take one.
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`break case catch class const continue debugger default delete do
	else enum export extends false finally for function if import in instanceof new null return super
	switch this throw true try typeof var void while with as implements interface let package private
	protected public static yield any boolean constructor declare get module require number set string
	symbol type from of async await abstract bigint infer is keyof never readonly unique unknown object
	namespace override satisfies accessor out arguments eval undefined NaN Infinity globalThis
	Number String BigInt Boolean Object Array Map Set JSON Math Promise Error RangeError TypeError
	RegExp Symbol Date Buffer console process setTimeout clearTimeout AbortSignal`) {
		reserved[w] = true
	}
}

// scopeNames are the locals and parameters of the generated functions that
// take placeholder values, besides those values: a placeholder argument
// never takes one (TestHostileNames generates placeholders with every one
// of these names and compiles the result).
var scopeNames = []string{"client", "key", "value", "ttlMs", "opts", "fields", "items", "members",
	"group", "consumer", "count", "blockMs", "ids", "exp", "data", "m", "v", "i", "n", "k", "l", "res",
	"fence", "fenceKey", "signal", "lease", "entry", "out", "field"}

// chanScopeNames are the locals and parameters of a channel's publisher
// and subscriber besides scopeNames.
var chanScopeNames = []string{"message", "onMessage", "onError", "channel", "name", "raw", "parsed",
	"d", "e", "subscriber", "data"}

// runtimePrefix starts every module-level name of the generated runtime
// that is not exported (keyregMatch, keyregInt, …).
const runtimePrefix = "keyreg"

// namer hands out unique identifiers within one scope.
type namer struct{ used map[string]bool }

func newNamer(reserved ...string) *namer {
	n := &namer{used: map[string]bool{}}
	for _, r := range reserved {
		n.used[r] = true
	}
	return n
}

func (n *namer) free(names ...string) bool {
	for _, s := range names {
		if n.used[s] {
			return false
		}
	}
	return true
}

func (n *namer) take(names ...string) {
	for _, s := range names {
		n.used[s] = true
	}
}

// unique returns want, or want with the smallest numeric suffix from 2 up
// that is free, and marks it used.
func (n *namer) unique(want string) string {
	id := want
	for i := 2; n.used[id]; i++ {
		id = want + strconv.Itoa(i)
	}
	n.used[id] = true
	return id
}
