package infer

import (
	"github.com/keyreg/keyreg/payload"
)

// EncodingTally counts the units of a family's sampled values (a string
// value, a hash field value, a list, set or zset member, a stream field
// value) by what they are, to choose the encoding keys.yaml declares. It
// holds counters only. The zero value is ready to use.
type EncodingTally struct {
	units   int64
	ints    int64 // decimal int64, as payload.Decode(int) reads it
	floats  int64 // finite decimal float, as payload.Decode(float) reads it (ints included)
	json    int64 // one JSON document (Detect says json)
	rich    int64 // a JSON object, array or string
	msgpack int64 // msgpack that payload.Decode accepts
	pickle  int64
	text    int64 // printable UTF-8 text: Detect says text or json
	opaque  int64 // Detect says binary or gzip, or undecodable msgpack
	pickInt int64 // pickle or int
	mpInt   int64 // msgpack or int
}

// Add counts one unit.
func (t *EncodingTally) Add(b []byte) {
	t.units++
	det := payload.Detect(b)
	if det == payload.Msgpack {
		// Detect checks msgpack's structure only; a non-string map key or
		// an extension does not decode, so no msgpack declaration fits it.
		if _, err := payload.Decode(payload.Msgpack, b); err != nil {
			det = payload.Binary
		}
	}
	isInt, isFloat := number(b)
	if isInt {
		t.ints++
	}
	if isFloat {
		t.floats++
	}
	switch det {
	case payload.JSON:
		t.json++
		t.text++
		if c := firstNonSpace(b); c == '{' || c == '[' || c == '"' {
			t.rich++
		}
	case payload.Text:
		t.text++
	case payload.Msgpack:
		t.msgpack++
	case payload.Pickle:
		t.pickle++
	case payload.Gzip, payload.Binary:
		t.opaque++
	}
	if det == payload.Pickle || isInt {
		t.pickInt++
	}
	if det == payload.Msgpack || isInt {
		t.mpInt++
	}
}

// number reports whether b decodes as a declared int and as a declared
// float. Only short decimal-looking units are tried: a longer one (an int
// padded past 64 bytes with zeros) is left to the other encodings, which
// only makes the declaration wider.
func number(b []byte) (isInt, isFloat bool) {
	if len(b) == 0 || len(b) > 64 {
		return false, false
	}
	if c := b[0]; !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.') {
		return false, false
	}
	_, err := payload.Decode(payload.Int, b)
	isInt = err == nil
	_, err = payload.Decode(payload.Float, b)
	return isInt, err == nil
}

func firstNonSpace(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}

// Encoding returns the encoding to declare for the units counted, and the
// share of units that fit it. The first rule that holds wins:
//
//   - int: every unit is the decimal text of an int64.
//   - float: every unit is the decimal text of a finite float (ints count).
//   - json: every unit is a JSON document and at least one is an object,
//     an array or a string; bare JSON numbers alone are int or float,
//     and bare true, false and null alone are text.
//   - msgpack, pickle: every unit is one.
//   - pickle|int, msgpack|int: every unit is one of the two, and both
//     occur (Django's cache stores integers raw, everything else
//     serialised).
//   - text: every unit is printable UTF-8 (JSON documents included).
//   - binary: anything else; gzip is detected but not declarable.
//
// Every unit fits the encodings above, so their share is 1. For binary,
// which accepts anything, the share is that of the units that nothing more
// specific fits (Detect says binary or gzip, or msgpack that does not
// decode): a low share says the family mixes encodings. With no units the result is "" and 0.
func (t *EncodingTally) Encoding() (enc string, share float64) {
	n := t.units
	switch {
	case n == 0:
		return "", 0
	case t.ints == n:
		return payload.Int, 1
	case t.floats == n:
		return payload.Float, 1
	case t.json == n && t.rich > 0:
		return payload.JSON, 1
	case t.msgpack == n:
		return payload.Msgpack, 1
	case t.pickle == n:
		return payload.Pickle, 1
	case t.pickInt == n:
		return payload.Pickle + "|" + payload.Int, 1
	case t.mpInt == n:
		return payload.Msgpack + "|" + payload.Int, 1
	case t.text == n:
		return payload.Text, 1
	}
	return payload.Binary, float64(t.opaque) / float64(n)
}

// Units returns the number of units counted.
func (t *EncodingTally) Units() int64 { return t.units }
