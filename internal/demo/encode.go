package demo

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/keyreg/keyreg/payload"
	"github.com/vmihailenco/msgpack/v5"
)

// encode writes v in one of the encodings of keys.yaml.
func encode(enc string, v any) ([]byte, error) {
	switch enc {
	case payload.JSON, "":
		return json.Marshal(v)
	case payload.Msgpack:
		var b bytes.Buffer
		e := msgpack.NewEncoder(&b)
		e.SetSortMapKeys(true)
		if err := e.Encode(v); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	case payload.Text:
		switch x := v.(type) {
		case string:
			return []byte(x), nil
		case int64, float64, bool:
			return fmt.Append(nil, x), nil
		}
		return json.Marshal(v)
	case payload.Int:
		switch x := v.(type) {
		case int64:
			return strconv.AppendInt(nil, x, 10), nil
		case float64:
			return strconv.AppendInt(nil, int64(x), 10), nil
		}
		return nil, fmt.Errorf("cannot write a %T as int", v)
	case payload.Float:
		switch x := v.(type) {
		case int64:
			return strconv.AppendInt(nil, x, 10), nil
		case float64:
			return strconv.AppendFloat(nil, x, 'f', -1, 64), nil
		}
		return nil, fmt.Errorf("cannot write a %T as float", v)
	case payload.Binary:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return append([]byte{0x00, 0xff}, b...), nil
	case payload.Pickle:
		return pickle(v), nil
	}
	if alts := strings.Split(enc, "|"); len(alts) > 1 {
		// A value may be in any of them: integers go in int when it is
		// one (Django stores them raw), anything else in the first.
		if _, isInt := v.(int64); isInt && slices.Contains(alts, payload.Int) {
			return encode(payload.Int, v)
		}
		return encode(alts[0], v)
	}
	return nil, fmt.Errorf("unknown encoding %q", enc)
}

// pickle writes v as a Python pickle (protocol 5, one frame), the way
// django-redis and Celery store values with their default serializers.
// It covers the JSON value model: dicts, lists, str, int, float, bool and
// None.
func pickle(v any) []byte {
	var body bytes.Buffer
	pickleValue(&body, v)
	body.WriteByte('.')          // STOP
	out := []byte{0x80, 5, 0x95} // PROTO 5, FRAME
	out = binary.LittleEndian.AppendUint64(out, uint64(body.Len()))
	return append(out, body.Bytes()...)
}

func pickleValue(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteByte('N')
	case bool:
		if x {
			b.WriteByte(0x88) // NEWTRUE
		} else {
			b.WriteByte(0x89) // NEWFALSE
		}
	case int64:
		switch {
		case x >= 0 && x < 256:
			b.Write([]byte{'K', byte(x)}) // BININT1
		case x >= math.MinInt32 && x <= math.MaxInt32:
			b.WriteByte('J') // BININT
			b.Write(binary.LittleEndian.AppendUint32(nil, uint32(int32(x))))
		default:
			b.Write([]byte{0x8a, 8}) // LONG1, 8 bytes
			b.Write(binary.LittleEndian.AppendUint64(nil, uint64(x)))
		}
	case float64:
		b.WriteByte('G') // BINFLOAT
		b.Write(binary.BigEndian.AppendUint64(nil, math.Float64bits(x)))
	case string:
		if len(x) < 256 {
			b.Write([]byte{0x8c, byte(len(x))}) // SHORT_BINUNICODE
		} else {
			b.WriteByte('X') // BINUNICODE
			b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(x))))
		}
		b.WriteString(x)
		b.WriteByte(0x94) // MEMOIZE
	case []any:
		b.WriteString("]\x94(") // EMPTY_LIST, MEMOIZE, MARK
		for _, e := range x {
			pickleValue(b, e)
		}
		b.WriteByte('e') // APPENDS
	case map[string]any:
		b.WriteString("}\x94(") // EMPTY_DICT, MEMOIZE, MARK
		for _, k := range sortedKeys(x) {
			pickleValue(b, k)
			pickleValue(b, x[k])
		}
		b.WriteByte('u') // SETITEMS
	default:
		pickleValue(b, fmt.Sprint(x))
	}
}
