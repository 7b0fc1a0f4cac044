package python

import (
	"strconv"
	"strings"
	"unicode"
)

// words splits s into runs of ASCII letters and digits; everything else
// separates words. camelCase boundaries split too ("userId" → user, Id).
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	}) {
		start := 0
		for i := 1; i < len(w); i++ {
			if unicode.IsUpper(rune(w[i])) && unicode.IsLower(rune(w[i-1])) {
				out = append(out, w[start:i])
				start = i
			}
		}
		out = append(out, w[start:])
	}
	return out
}

// snake turns a name into lower_snake_case: "cart-items" → "cart_items".
// A name that would start with a digit gets "k" in front; one with no
// letter or digit is "key".
func snake(s string) string {
	ws := words(s)
	for i := range ws {
		ws[i] = strings.ToLower(ws[i])
	}
	id := strings.Join(ws, "_")
	if id == "" {
		return "key"
	}
	if id[0] >= '0' && id[0] <= '9' {
		id = "k" + id
	}
	return id
}

// camel turns a snake name into CamelCase: "cart_items" → "CartItems".
func camel(snakeName string) string {
	var b strings.Builder
	for _, w := range strings.Split(snakeName, "_") {
		if w == "" {
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// pyKeywords are Python 3's keywords and soft keywords.
var pyKeywords = words2set(`False None True and as assert async await break class continue def del elif else
except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield
match case type _`)

// pyBuiltins are the names of Python's builtins module (3.8 to 3.13): an
// argument never shadows one, so generated function bodies may use them.
var pyBuiltins = words2set(`abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr
classmethod compile complex copyright credits delattr dict dir divmod enumerate eval exec exit filter float
format frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter len license list
locals map max memoryview min next object oct open ord pow print property quit range repr reversed round set
setattr slice sorted staticmethod str sum super tuple type vars zip BaseException BaseExceptionGroup Exception
ExceptionGroup ArithmeticError AssertionError AttributeError BlockingIOError BrokenPipeError BufferError
BytesWarning ChildProcessError ConnectionAbortedError ConnectionError ConnectionRefusedError
ConnectionResetError DeprecationWarning EOFError Ellipsis EncodingWarning EnvironmentError FileExistsError
FileNotFoundError FloatingPointError FutureWarning GeneratorExit IOError ImportError ImportWarning
IndentationError IndexError InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError
MemoryError ModuleNotFoundError NameError NotADirectoryError NotImplemented NotImplementedError OSError
OverflowError PendingDeprecationWarning PermissionError ProcessLookupError PythonFinalizationError
RecursionError ReferenceError ResourceWarning RuntimeError RuntimeWarning StopAsyncIteration StopIteration
SyntaxError SyntaxWarning SystemError SystemExit TabError TimeoutError TypeError UnboundLocalError
UnicodeDecodeError UnicodeEncodeError UnicodeError UnicodeTranslateError UnicodeWarning UserWarning
ValueError Warning ZeroDivisionError __build_class__ __debug__ __doc__ __import__ __loader__ __name__
__package__ __spec__`)

// argReserved are the other names of the functions that take placeholder
// arguments (the lock function's parameters, the dataclass's method).
var argReserved = words2set(`client timeout blocking blocking_timeout sleep key self cls build ttl value`)

func words2set(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// argName is the Python name of a placeholder: snake case, with a
// trailing "_" when it is a keyword, a builtin or another name of the
// functions it is an argument of, unique among taken.
func argName(placeholder string, taken map[string]bool) string {
	n := snake(placeholder)
	if pyKeywords[n] || pyBuiltins[n] || argReserved[n] {
		n += "_"
	}
	base := n
	for i := 2; taken[n]; i++ {
		n = base + strconv.Itoa(i)
	}
	taken[n] = true
	return n
}

// moduleReserved are the public names of the runtime, which no family's
// name may take.
var moduleReserved = words2set(`REGISTRY_DIGEST SEPARATOR TTLPolicy TTLError SchemaError LockLostError
InvalidKeyError Client AsyncClient StreamEntry annotations ClusterClient InvalidMessageError`)
