// Package payload detects and decodes the encodings of Redis values and
// validates decoded values against a family's compiled JSON Schema.
//
// The audit samples values from production Redis, so everything here is
// written for untrusted bytes:
//
//   - Nothing panics on any input, and nesting deeper than [MaxDepth] is
//     rejected instead of recursing without bound.
//   - Memory is linear in the size of the input: a length or count read from
//     the bytes is never trusted for an allocation.
//   - Errors and violations never contain payload values. They name
//     encodings, byte offsets, JSON pointers (which include property names)
//     and schema keywords. Values appear only in [Violation.Value], and only
//     when the caller sets [Options.ShowValues].
//
// JSON and msgpack are decoded by small purpose-built parsers into the value
// model that github.com/santhosh-tekuri/jsonschema/v6 validates:
// map[string]any, []any, string, json.Number or float64, bool and nil. One
// pass over the bytes both checks and decodes them, so a value is never
// parsed twice, and [Check] runs [Detect] only on values that fail to
// decode. The JSON parser yields exactly what encoding/json with UseNumber
// yields (a fuzz test compares them), in about a third of the time with
// half the allocations. Property names do appear in pointers and in
// additionalProperties reasons; a propertyNames failure keeps the name in
// Value.
//
// Check validates through a fast path first (fast.go): a mirror of
// jsonschema v6's keywords that decides most values without allocating and
// answers "unsure" where it cannot be exact. Only values it does not pass
// (and schemas it cannot mirror) go through jsonschema, which turns every
// number it checks into a big.Rat and checks uniqueItems pairwise, so
// callers should still bound the size of what they sample. Reasons and
// pointers always come from jsonschema.
package payload

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Encoding names, as used by [Detect], [Decode] and keys.yaml.
const (
	JSON    = "json"    // a complete JSON document, scalars included
	Msgpack = "msgpack" // MessagePack
	Pickle  = "pickle"  // a Python pickle
	Gzip    = "gzip"    // gzip-compressed data
	Text    = "text"    // UTF-8 text
	Binary  = "binary"  // anything else
	Int     = "int"     // a declared encoding: decimal text of an int64
	Float   = "float"   // a declared encoding: decimal text of a finite float64
)

// MaxDepth is the deepest nesting of arrays and objects that the JSON and
// msgpack decoders accept. Deeper documents are invalid, for [Detect] too.
const MaxDepth = 512

// DecodeError is the error [Decode] returns. Its message never contains the
// value: it is either `declared json, found msgpack` (when the bytes are
// plainly something else) or `invalid json at byte 17: unexpected end of
// input`.
type DecodeError struct {
	Encoding string // the declared encoding
	Found    string // what Detect says the bytes are
	Offset   int    // byte offset of a syntax error, or -1
	Reason   string // what is wrong, without the value; empty for a mismatch
}

// Error implements error.
func (e *DecodeError) Error() string {
	if e.Reason == "" {
		return "declared " + e.Encoding + ", found " + e.Found
	}
	if e.Offset >= 0 {
		return "invalid " + e.Encoding + " at byte " + strconv.Itoa(e.Offset) + ": " + e.Reason
	}
	return "invalid " + e.Encoding + ": " + e.Reason
}

// Detect names what the bytes actually are. The checks run in this order,
// and the first that holds wins:
//
//   - gzip: the bytes start with the gzip magic 1f 8b.
//   - pickle: a protocol 2 to 5 header (0x80 followed by 2..5), or a
//     protocol 0 or 1 pickle: a well-formed run of pickle opcodes whose
//     stack ends with one value at a final STOP ('.').
//   - json: one complete JSON document: an object, array, string, number,
//     true, false or null, with only whitespace around it, within the
//     decoder's limits (see Decode).
//   - msgpack: a well-formed msgpack value that uses up every byte and
//     starts with a map, array or ext marker. Bare msgpack scalars are
//     indistinguishable from text or binary, so they do not count.
//   - text: valid UTF-8 without control characters other than tab, newline
//     and carriage return. Empty input is text.
//   - binary: everything else.
//
// Detect never returns [Int] or [Float]: those are declared encodings, and
// a value declared as one is checked by [Decode], which accepts text that
// strconv parses as an int64 or a finite float64. Such text detects as
// json, since a JSON number is a JSON document.
func Detect(b []byte) string {
	switch {
	case isGzip(b):
		return Gzip
	case isPickle(b):
		return Pickle
	case validJSON(b):
		return JSON
	case isMsgpack(b):
		return Msgpack
	case isText(b):
		return Text
	}
	return Binary
}

func isGzip(b []byte) bool {
	return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b
}

// isText reports whether b is valid UTF-8 without control characters other
// than \t, \n and \r. DEL and the C1 controls count as control characters.
func isText(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return false
		}
		if r >= 0x80 && r <= 0x9f {
			return false
		}
		i += n
	}
	return true
}

// Decode decodes b per the declared encoding into the value model of
// jsonschema v6 (map[string]any, []any, string, json.Number, float64, bool
// and nil):
//
//   - json: the document, as encoding/json with UseNumber decodes it:
//     numbers become json.Number, invalid UTF-8 inside strings becomes
//     U+FFFD and a repeated key keeps its last value. For safety, nesting
//     deeper than MaxDepth, number literals over 100 bytes and exponents
//     over 4 digits are errors (the validator's big.Rat arithmetic is
//     quadratic in the digits).
//   - msgpack: the same model. Map keys must be str or bin; bin becomes a
//     string; integers become json.Number; floats must be finite; the
//     timestamp extension becomes an RFC 3339 string; other extensions are
//     errors. Bare scalars are accepted here, unlike in Detect.
//   - text: the string; it must be valid UTF-8.
//   - int: a json.Number holding the int64 that strconv.ParseInt reads.
//   - float: a float64 that strconv.ParseFloat reads; NaN and infinities
//     are rejected.
//   - binary: nil and no error, since there is nothing to validate.
//   - pickle: nil and no error when Detect would call the bytes a pickle;
//     the pickle is never run or unpickled.
//   - several encodings joined by "|", as keys.yaml's encoding: [pickle,
//     int] is held: the first of them that decodes the bytes.
//
// Any other encoding is an error. The returned error is a *[DecodeError]
// (except for an unknown encoding) and never contains the value.
func Decode(encoding string, b []byte) (any, error) {
	v, _, err := decode(encoding, b)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// decode is Decode that also returns what was found: encoding itself on
// success, otherwise Detect's answer. It runs Detect only when decoding
// fails, so the common path parses the bytes once.
func decode(encoding string, b []byte) (any, string, error) {
	switch encoding {
	case JSON:
		v, off, reason := parseJSON(b, true)
		if reason == "" {
			return v, JSON, nil
		}
		found, err := mismatch(JSON, b, off, reason)
		return nil, found, err
	case Msgpack:
		v, off, reason := parseMsgpack(b, true)
		if reason == "" {
			return v, Msgpack, nil
		}
		found, err := mismatch(Msgpack, b, off, reason)
		return nil, found, err
	case Text:
		if utf8.Valid(b) {
			return string(b), Text, nil
		}
		found := Detect(b)
		return nil, found, &DecodeError{Encoding: Text, Found: found, Offset: -1}
	case Int:
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err == nil {
			return json.Number(strconv.FormatInt(n, 10)), Int, nil
		}
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return nil, Int, &DecodeError{Encoding: Int, Found: Int, Offset: -1, Reason: "out of int64 range"}
		}
		found := numberKind(b)
		return nil, found, &DecodeError{Encoding: Int, Found: found, Offset: -1}
	case Float:
		f, ok := parseFloat(b)
		if ok {
			return f, Float, nil
		}
		found := numberKind(b)
		if found == Float {
			return nil, found, &DecodeError{Encoding: Float, Found: Float, Offset: -1, Reason: "not a finite decimal float64"}
		}
		return nil, found, &DecodeError{Encoding: Float, Found: found, Offset: -1}
	case Binary:
		return nil, Binary, nil
	case Pickle:
		if isPickle(b) {
			return nil, Pickle, nil
		}
		found := Detect(b)
		return nil, found, &DecodeError{Encoding: Pickle, Found: found, Offset: -1}
	}
	if alts, ok := alternatives(encoding); ok {
		for _, alt := range alts {
			if v, found, err := decode(alt, b); err == nil {
				return v, found, nil
			}
		}
		found := Detect(b)
		return nil, found, &DecodeError{Encoding: encoding, Found: found, Offset: -1}
	}
	return nil, "", &unknownEncodingError{encoding}
}

// alternatives splits a list of encodings ("pickle|int": a value may be in
// any of them) into known single encodings.
func alternatives(encoding string) ([]string, bool) {
	if !strings.Contains(encoding, "|") {
		return nil, false
	}
	alts := strings.Split(encoding, "|")
	for _, a := range alts {
		if !Known(a) {
			return nil, false
		}
	}
	return alts, true
}

// Known reports whether encoding is a single encoding keys.yaml may
// declare.
func Known(encoding string) bool {
	switch encoding {
	case JSON, Msgpack, Text, Int, Float, Binary, Pickle:
		return true
	}
	return false
}

// Opaque reports whether values of the encoding decode to nothing that a
// schema could check: binary, and pickle, which is never unpickled.
func Opaque(encoding string) bool { return encoding == Binary || encoding == Pickle }

// mismatch builds the error for bytes that failed to parse as encoding:
// a plain mismatch when they are recognisably something else, else the
// syntax error.
func mismatch(encoding string, b []byte, off int, reason string) (string, error) {
	found := Detect(b)
	switch {
	case found == encoding:
		// Only possible for msgpack: structurally valid but without a JSON
		// equivalent (an ext type, a non-string key, a NaN).
	case encoding == JSON && found == Text:
	case encoding == JSON && found == Binary && off > 0:
		// Started as JSON; a control character or bad byte later on.
	case encoding == Msgpack && found == Binary:
	default:
		return found, &DecodeError{Encoding: encoding, Found: found, Offset: -1}
	}
	return found, &DecodeError{Encoding: encoding, Found: found, Offset: off, Reason: reason}
}

// numberKind classifies bytes that failed as a declared int or float: int
// or float when strconv reads them as such (out of range, say), else
// Detect's answer.
func numberKind(b []byte) string {
	if len(b) > 0 && len(b) <= 64 {
		s := string(b)
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return Int
		}
		if _, err := strconv.ParseFloat(s, 64); err == nil || isRangeErr(err) {
			return Float
		}
	}
	return Detect(b)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// parseFloat reads a finite float64 in decimal notation. strconv's hex
// floats, "inf" and "nan" are rejected; so is anything over 64 bytes.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 64 {
		return 0, false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	return f, err == nil
}

type unknownEncodingError struct{ enc string }

func (e *unknownEncodingError) Error() string {
	return "unknown encoding " + strconv.Quote(e.enc)
}
