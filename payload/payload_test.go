package payload

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/registry"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/vmihailenco/msgpack/v5"
)

// secret marks payload content that must never reach an error or a
// violation unless ShowValues is set.
const secret = "hunter2-SECRET"

// Real pickles of {'user': secret, 'n': [1, 2.5, None, True]}, from
// CPython's pickle.dumps with protocols 0 to 5.
var pickles = [][]byte{
	[]byte("(dp0\nVuser\np1\nVhunter2-SECRET\np2\nsVn\np3\n(lp4\nI1\naF2.5\naNaI01\nas."),
	[]byte("}q\x00(X\x04\x00\x00\x00userq\x01X\x0e\x00\x00\x00hunter2-SECRETq\x02X\x01\x00\x00\x00nq\x03]q\x04(K\x01G@\x04\x00\x00\x00\x00\x00\x00NI01\neu."),
	[]byte("\x80\x02}q\x00(X\x04\x00\x00\x00userq\x01X\x0e\x00\x00\x00hunter2-SECRETq\x02X\x01\x00\x00\x00nq\x03]q\x04(K\x01G@\x04\x00\x00\x00\x00\x00\x00N\x88eu."),
	[]byte("\x80\x03}q\x00(X\x04\x00\x00\x00userq\x01X\x0e\x00\x00\x00hunter2-SECRETq\x02X\x01\x00\x00\x00nq\x03]q\x04(K\x01G@\x04\x00\x00\x00\x00\x00\x00N\x88eu."),
	[]byte("\x80\x04\x952\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x04user\x94\x8c\x0ehunter2-SECRET\x94\x8c\x01n\x94]\x94(K\x01G@\x04\x00\x00\x00\x00\x00\x00N\x88eu."),
	[]byte("\x80\x05\x952\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x04user\x94\x8c\x0ehunter2-SECRET\x94\x8c\x01n\x94]\x94(K\x01G@\x04\x00\x00\x00\x00\x00\x00N\x88eu."),
}

func mustMsgpack(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(t testing.TB, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write([]byte(s))
	w.Close()
	return buf.Bytes()
}

func compile(t testing.TB, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "https://keyreg.test/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDetect(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, Text},
		{"json object", []byte(`{"user":"` + secret + `","n":[1,2.5,null,true]}`), JSON},
		{"json array with space", []byte(" [1, 2]\n"), JSON},
		{"json string", []byte(`"hello"`), JSON},
		{"json number", []byte("123"), JSON},
		{"json negative float", []byte("-1.5e3"), JSON},
		{"json true", []byte("true"), JSON},
		{"json null", []byte("null"), JSON},
		{"truncated json is text", []byte(`{"user":`), Text},
		{"json with trailing garbage", []byte(`{} x`), Text},
		{"nesting at the limit", []byte(deep[1 : len(deep)-1]), JSON},
		{"nesting over the limit", []byte(deep), Text},
		{"msgpack map", mustMsgpack(t, map[string]any{"user": secret, "n": 1}), Msgpack},
		{"msgpack array", mustMsgpack(t, []any{1, "a", nil}), Msgpack},
		{"msgpack empty map", []byte{0x80}, Msgpack},
		{"msgpack timestamp ext", mustMsgpack(t, time.Unix(1700000000, 5)), Msgpack},
		{"msgpack map with int keys", mustMsgpack(t, map[int]string{1: "a"}), Msgpack},
		{"msgpack bare int is ambiguous", mustMsgpack(t, 300), Binary},
		{"msgpack bare small int is text", mustMsgpack(t, 65), Text},
		{"msgpack truncated map", mustMsgpack(t, map[string]any{"user": secret})[:5], Binary},
		{"msgpack with trailing bytes", append(mustMsgpack(t, []any{1}), 0x01), Binary},
		{"pickle protocol 0", pickles[0], Pickle},
		{"pickle protocol 1", pickles[1], Pickle},
		{"pickle protocol 2", pickles[2], Pickle},
		{"pickle protocol 3", pickles[3], Pickle},
		{"pickle protocol 4", pickles[4], Pickle},
		{"pickle protocol 5", pickles[5], Pickle},
		{"pickle protocol 4 header only", []byte("\x80\x04\x95"), Pickle},
		{"pickle protocol 0 string", []byte("Vhi\np0\n."), Pickle},
		{"pickle protocol 0 int", []byte("I42\n."), Pickle},
		{"pickle protocol 0 set", []byte("c__builtin__\nset\np0\n((lp1\nI1\naI2\natp2\nRp3\n."), Pickle},
		{"pickle protocol 1 tuple", []byte("(K\x01K\x02tq\x00."), Pickle},
		{"0x80 0x06 is not a pickle", []byte("\x80\x06"), Binary},
		{"sentence ending in a period", []byte("Sure.\nSee the line above."), Text},
		{"stack underflow is text", []byte("(a)."), Text},
		{"gzip", gzipped(t, secret), Gzip},
		{"gzip magic only", []byte{0x1f, 0x8b}, Gzip},
		{"text", []byte("hello " + secret), Text},
		{"text utf8 with newline and tab", []byte("grüße\n\tdone\r\n"), Text},
		{"text with NUL", []byte("a\x00b"), Binary},
		{"text with escape sequence", []byte("\x1b[31mred"), Binary},
		{"text with DEL", []byte("a\x7f"), Binary},
		{"text with C1 control", []byte("a\u0085b"), Binary},
		{"invalid utf8", []byte{'a', 0xff, 'b'}, Binary},
		{"binary", []byte{0x00, 0x01, 0x02, 0xfe}, Binary},
		{"uuid bytes", []byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}, Binary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Detect(tt.in); got != tt.want {
				t.Errorf("Detect(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecodeJSONMatchesEncodingJSON(t *testing.T) {
	inputs := []string{
		`{"a":1,"b":[true,false,null,"x"],"c":{"d":-0.5e10}}`,
		`"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00"`,
		`"lone surrogate \ud800 and \udc00x and \ud800\u0041"`,
		"\"invalid utf8 \xff\xfe here\"",
		"\"mixed é \xc3 \\n\"",
		`[]`, `{}`, `[[],[{}]]`, ` 0 `, `-0`, `1E+2`, `1e-2`,
		`{"dup":1,"dup":2}`,
		`"` + secret + `"`,
	}
	for _, in := range inputs {
		got, err := Decode(JSON, []byte(in))
		if err != nil {
			t.Errorf("Decode(%q): %v", in, err)
			continue
		}
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Decode(%q) = %#v, want %#v", in, got, want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		enc  string
		in   []byte
		want string
	}{
		{JSON, []byte(`{"password":"` + secret), "invalid json at byte 27: unexpected end of input"},
		{JSON, []byte(`{"password":` + secret + `}`), "invalid json at byte 12: invalid character looking for beginning of value"},
		{JSON, []byte(secret), "invalid json at byte 0: invalid character looking for beginning of value"},
		{JSON, []byte(`["` + secret + "\x01" + `"]`), "invalid json at byte 16: invalid control character in string literal"},
		{JSON, []byte(`{"a":1} ` + secret), "invalid json at byte 8: invalid character after top-level value"},
		{JSON, []byte(""), "invalid json at byte 0: unexpected end of input"},
		{JSON, []byte("[1e99999]"), "invalid json at byte 3: number exponent out of range"},
		{JSON, []byte("[" + strings.Repeat("7", 101) + "]"), "invalid json at byte 1: number longer than 100 bytes"},
		{JSON, mustMsgpack(t, map[string]any{"p": secret}), "declared json, found msgpack"},
		{JSON, pickles[4], "declared json, found pickle"},
		{JSON, pickles[0], "declared json, found pickle"},
		{JSON, gzipped(t, secret), "declared json, found gzip"},
		{JSON, []byte{0, 1, 2}, "declared json, found binary"},
		{Msgpack, []byte(`{"p":"` + secret + `"}`), "declared msgpack, found json"},
		{Msgpack, []byte(secret), "declared msgpack, found text"},
		{Msgpack, mustMsgpack(t, map[string]any{"p": secret})[:6], "invalid msgpack at byte 6: unexpected end of input"},
		{Msgpack, mustMsgpack(t, map[any]any{int64(1): secret}), "invalid msgpack at byte 1: map key is not a string"},
		{Msgpack, mustMsgpack(t, []any{math.NaN()}), "invalid msgpack at byte 1: non-finite float has no JSON equivalent"},
		{Msgpack, []byte{0x91, 0xd4, 0x05, 0x00}, "invalid msgpack at byte 1: msgpack ext type 5 has no JSON equivalent"},
		{Msgpack, []byte{0xc1}, "invalid msgpack at byte 0: invalid type marker"},
		{Msgpack, []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}, "invalid msgpack at byte 6: unexpected end of input"},
		{Text, []byte{'a', 0xff, 's'}, "declared text, found binary"},
		{Text, gzipped(t, secret), "declared text, found gzip"},
		{Int, []byte(secret), "declared int, found text"},
		{Int, []byte("3.5"), "declared int, found float"},
		{Int, []byte("99999999999999999999"), "invalid int: out of int64 range"},
		{Int, []byte(" 42"), "declared int, found json"},
		{Float, []byte("1e400"), "invalid float: not a finite decimal float64"},
		{Float, []byte("NaN"), "invalid float: not a finite decimal float64"},
		{Float, []byte("0x1p-2"), "invalid float: not a finite decimal float64"},
		{Float, []byte(`{"x":1}`), "declared float, found json"},
		{"yaml", []byte(secret), `unknown encoding "yaml"`},
	}
	for _, tt := range tests {
		v, err := Decode(tt.enc, tt.in)
		if err == nil {
			t.Errorf("Decode(%s, %q) = %#v, want error %q", tt.enc, tt.in, v, tt.want)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("Decode(%s, %q) error = %q, want %q", tt.enc, tt.in, err, tt.want)
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "hunter") {
			t.Errorf("Decode(%s) error leaks the value: %q", tt.enc, err)
		}
	}
}

func TestDecodeScalars(t *testing.T) {
	tests := []struct {
		enc  string
		in   string
		want any
	}{
		{Text, "héllo\x00", "héllo\x00"},
		{Text, "", ""},
		{Int, "42", json.Number("42")},
		{Int, "-9223372036854775808", json.Number("-9223372036854775808")},
		{Int, "+7", json.Number("7")},
		{Float, "2.5", 2.5},
		{Float, "-1e-3", -0.001},
		{Float, "10", 10.0},
		{Binary, "\x00\xff" + secret, nil},
		{Binary, "", nil},
	}
	for _, tt := range tests {
		got, err := Decode(tt.enc, []byte(tt.in))
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Decode(%s, %q) = %#v, %v; want %#v", tt.enc, tt.in, got, err, tt.want)
		}
	}
}

func TestDecodeMsgpack(t *testing.T) {
	ts := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	in := map[string]any{
		"int":   int64(-5),
		"int8":  int8(-100),
		"int64": int64(math.MinInt64),
		"uint":  uint64(math.MaxUint64),
		"u16":   uint16(65535),
		"f64":   1.5,
		"f32":   float32(0.25),
		"bin":   []byte("raw"),
		"str":   secret,
		"nil":   nil,
		"bool":  true,
		"arr":   []any{1, "two", []any{}},
		"obj":   map[string]any{"k": map[string]any{}},
		"time":  ts,
		"long":  strings.Repeat("x", 70000),
	}
	got, err := Decode(Msgpack, mustMsgpack(t, in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"int":   json.Number("-5"),
		"int8":  json.Number("-100"),
		"int64": json.Number("-9223372036854775808"),
		"uint":  json.Number("18446744073709551615"),
		"u16":   json.Number("65535"),
		"f64":   1.5,
		"f32":   0.25,
		"bin":   "raw",
		"str":   secret,
		"nil":   nil,
		"bool":  true,
		"arr":   []any{json.Number("1"), "two", []any{}},
		"obj":   map[string]any{"k": map[string]any{}},
		"time":  "2026-03-04T05:06:07.000000008Z",
		"long":  strings.Repeat("x", 70000),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Decode(msgpack) =\n%#v\nwant\n%#v", got, want)
	}

	// map[any]any with string and bin keys decodes; keys become strings.
	anyKeys := mustMsgpack(t, map[any]any{"a": 1, "b": map[any]any{"c": 2}})
	got, err = Decode(Msgpack, anyKeys)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"a": json.Number("1"), "b": map[string]any{"c": json.Number("2")}}; !reflect.DeepEqual(got, want) {
		t.Errorf("map[any]any: got %#v, want %#v", got, want)
	}
	binKey := []byte{0x81, 0xc4, 0x01, 'k', 0x01}
	got, err = Decode(Msgpack, binKey)
	if err != nil || !reflect.DeepEqual(got, map[string]any{"k": json.Number("1")}) {
		t.Errorf("bin key: got %#v, %v", got, err)
	}

	// Bare scalars decode, although Detect does not call them msgpack.
	got, err = Decode(Msgpack, mustMsgpack(t, uint32(300)))
	if err != nil || got != json.Number("300") {
		t.Errorf("bare uint: got %#v, %v", got, err)
	}
	// A timestamp in every width.
	for _, tm := range []time.Time{time.Unix(5, 0), time.Unix(5, 7), time.Unix(1<<35, 7), time.Unix(-5, 0)} {
		got, err := Decode(Msgpack, mustMsgpack(t, tm))
		if want := tm.UTC().Format(time.RFC3339Nano); err != nil || got != want {
			t.Errorf("timestamp %v: got %#v, %v; want %s", tm, got, err, want)
		}
	}
}

// TestBoundedInput checks that declared lengths and counts are not trusted
// and that nesting is bounded.
func TestBoundedInput(t *testing.T) {
	huge := [][]byte{
		{0xdd, 0xff, 0xff, 0xff, 0xff},                           // array32 of 4G elements
		{0xdf, 0xff, 0xff, 0xff, 0xff, 0xa0},                     // map32
		{0xdb, 0xff, 0xff, 0xff, 0xff, 'a'},                      // str32
		{0xc9, 0xff, 0xff, 0xff, 0xff, 0x01},                     // ext32
		[]byte("T\xff\xff\xff\x7fabc."),                          // pickle BINSTRING
		bytes.Repeat([]byte{0xdd, 0x00, 0x01, 0x00, 0x00}, 1000), // nested arrays of 64k
	}
	for _, b := range huge {
		allocs := testing.AllocsPerRun(10, func() {
			Detect(b)
			Decode(Msgpack, b)
		})
		if allocs > 1000 {
			t.Errorf("%x: %v allocations", b[:6], allocs)
		}
	}
	deep := bytes.Repeat([]byte{0x91}, 100000)
	if _, err := Decode(Msgpack, deep); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("deep msgpack: %v", err)
	}
	deepJSON := []byte(strings.Repeat(`{"a":`, 100000))
	if _, err := Decode(JSON, deepJSON); err == nil || !strings.Contains(err.Error(), "nesting too deep") {
		t.Errorf("deep json: %v", err)
	}
}

const orderSchema = `{
	"type": "object",
	"required": ["user_id", "items"],
	"additionalProperties": false,
	"properties": {
		"user_id": {"type": "integer"},
		"status": {"enum": ["open", "paid"]},
		"kind": {"const": "order"},
		"code": {"type": "string", "pattern": "^[A-Z]{3}$", "maxLength": 8},
		"total": {"type": "number", "maximum": 1000},
		"items": {
			"type": "array",
			"items": {
				"type": "object",
				"required": ["sku"],
				"properties": {
					"sku": {"type": "string"},
					"price": {"type": "number", "minimum": 0},
					"tags": {"type": "array", "items": {"type": "string"}}
				}
			}
		}
	}
}`

func TestValidate(t *testing.T) {
	sch := compile(t, orderSchema)
	valid := []byte(`{"user_id":1,"status":"open","kind":"order","code":"ABC","total":5,"items":[{"sku":"a","price":1,"tags":["x"]}]}`)
	v, err := Decode(JSON, valid)
	if err != nil {
		t.Fatal(err)
	}
	if got := Validate(sch, v, Options{}); got != nil {
		t.Errorf("valid value: %v", got)
	}
	if got := Validate(nil, v, Options{}); got != nil {
		t.Errorf("nil schema: %v", got)
	}

	bad := []byte(`{"status":"` + secret + `","kind":"` + secret + `","code":"` + secret + `","total":1234567,` +
		`"` + "x" + `":1,"items":[{"sku":"a"},{"sku":"b"},{"sku":"c"},{"price":-1},{"sku":"e"},{"sku":"f"},{"sku":"g"},{"sku":"h"},{"sku":"i"},{"sku":"j"},{"sku":1,"tags":["ok",7]}]}`)
	v, err = Decode(JSON, bad)
	if err != nil {
		t.Fatal(err)
	}
	want := []Violation{
		{Pointer: "", Reason: `additional property "x" not allowed`},
		{Pointer: "", Reason: `missing required property "user_id"`},
		{Pointer: "/code", Reason: `does not match pattern "^[A-Z]{3}$"`},
		{Pointer: "/code", Reason: `longer than maxLength 8`},
		{Pointer: "/items/3", Reason: `missing required property "sku"`},
		{Pointer: "/items/3/price", Reason: `less than minimum 0`},
		{Pointer: "/items/10/sku", Reason: `got integer, want string`},
		{Pointer: "/items/10/tags/1", Reason: `got integer, want string`},
		{Pointer: "/kind", Reason: `value must be "order"`},
		{Pointer: "/status", Reason: `value not in enum "open", "paid"`},
		{Pointer: "/total", Reason: `greater than maximum 1000`},
	}
	got := Validate(sch, v, Options{MaxViolations: -1})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Validate:\n%s\nwant:\n%s", fmtViolations(got), fmtViolations(want))
	}
	for _, x := range got {
		if strings.Contains(x.String(), "hunter") || strings.Contains(x.String(), "1234567") {
			t.Errorf("violation leaks a value: %s", x)
		}
	}
	// Determinism: jsonschema's own order varies between runs.
	for range 50 {
		if again := Validate(sch, v, Options{MaxViolations: -1}); !reflect.DeepEqual(again, got) {
			t.Fatalf("order changed:\n%s", fmtViolations(again))
		}
	}
	// The default cap keeps the first five in order.
	if capped := Validate(sch, v, Options{}); !reflect.DeepEqual(capped, want[:DefaultMaxViolations]) {
		t.Errorf("capped:\n%s", fmtViolations(capped))
	}
	if one := Validate(sch, v, Options{MaxViolations: 1}); len(one) != 1 {
		t.Errorf("MaxViolations 1: %d", len(one))
	}

	// ShowValues fills values, cut to MaxValueLen.
	shown := Validate(sch, v, Options{ShowValues: true, MaxViolations: -1})
	values := map[string]string{}
	for _, x := range shown {
		values[x.Pointer+" "+x.Reason] = x.Value
	}
	for key, want := range map[string]string{
		`/status value not in enum "open", "paid"`:  `"` + secret + `"`,
		`/total greater than maximum 1000`:          `1234567`,
		` additional property "x" not allowed`:      `1`,
		` missing required property "user_id"`:      ``,
		`/items/10/tags/1 got integer, want string`: `7`,
	} {
		if got := values[key]; got != want {
			t.Errorf("value for %s = %q, want %q", key, got, want)
		}
	}
	long, _ := Decode(JSON, []byte(`{"user_id":1,"items":"`+strings.Repeat("é", 100)+`"}`))
	for _, x := range Validate(sch, long, Options{ShowValues: true}) {
		if len(x.Value) > MaxValueLen || !strings.HasSuffix(x.Value, "…") {
			t.Errorf("long value not cut: %d bytes %q", len(x.Value), x.Value)
		}
	}
}

func TestValidateReasons(t *testing.T) {
	tests := []struct {
		schema, value, want string
	}{
		{`{"type":"array","minItems":2}`, `[1]`, "has 1 items, want at least 2"},
		{`{"type":"array","uniqueItems":true}`, `["a","a"]`, "items 0 and 1 are equal"},
		{`{"minProperties":2}`, `{"a":1}`, "has 1 properties, want at least 2"},
		{`{"oneOf":[{"type":"string"},{"type":"string"}]}`, `"x"`, "matches oneOf subschemas 0 and 1, want exactly one"},
		{`{"not":{"type":"string"}}`, `"` + secret + `"`, "matches the schema in not"},
		{`{"multipleOf":0.5}`, `0.3`, "not a multiple of 0.5"},
		{`{"exclusiveMaximum":3}`, `3`, "not less than exclusiveMaximum 3"},
		{`{"minLength":40}`, `"` + secret + `"`, "shorter than minLength 40"},
		{`{"const":{"a":1}}`, `{"a":"` + secret + `"}`, "value must be {…}"},
		{`{"enum":[1,2,3,4,5,6,7]}`, `8`, "value not in enum 1, 2, 3, 4, 5, … (2 more)"},
		{`{"dependentRequired":{"a":["b"]}}`, `{"a":1}`, `property "b" required when "a" is present`},
		{`{"contains":{"type":"string"}}`, `[1]`, "no item matches contains"},
		{`{"items":false}`, `[1]`, "not allowed by schema false"},
		{`{"propertyNames":{"maxLength":1}}`, `{"` + secret + `":1}`, `property name fails propertyNames`},
	}
	for _, tt := range tests {
		v, err := Decode(JSON, []byte(tt.value))
		if err != nil {
			t.Fatal(err)
		}
		got := Validate(compile(t, tt.schema), v, Options{MaxViolations: -1})
		var reasons []string
		for _, x := range got {
			reasons = append(reasons, x.Reason)
			if x.Value != "" || strings.Contains(x.Reason, "hunter") {
				t.Errorf("%s: leaks value: %+v", tt.schema, x)
			}
		}
		if !slices.Contains(reasons, tt.want) {
			t.Errorf("%s on %s: reasons %q, want %q", tt.schema, tt.value, reasons, tt.want)
		}
	}
}

func fmtViolations(vs []Violation) string {
	var sb strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&sb, "  %s\n", v)
	}
	return sb.String()
}

func family(t testing.TB, typ, enc, schema string) *registry.Family {
	f := &registry.Family{Name: "test", Type: typ, Encoding: enc}
	if schema != "" {
		f.Schema = &registry.Schema{Compiled: compile(t, schema)}
	}
	return f
}

func TestCheck(t *testing.T) {
	userSchema := `{"type":"object","required":["id"],"properties":{"id":{"type":"integer"},"name":{"type":"string"}}}`
	tests := []struct {
		name   string
		fam    *registry.Family
		sample Sample
		want   Result
	}{
		{
			name:   "string json valid",
			fam:    family(t, "string", "json", userSchema),
			sample: Sample{Type: "string", String: []byte(`{"id":1,"name":"` + secret + `"}`)},
			want:   Result{Detected: map[string]int{"json": 1}, Checked: 1},
		},
		{
			name:   "string json invalid",
			fam:    family(t, "string", "json", userSchema),
			sample: Sample{String: []byte(`{"id":"` + secret + `"}`)},
			want: Result{Detected: map[string]int{"json": 1}, Checked: 1,
				Violations: []Violation{{Pointer: "/id", Reason: "got string, want integer"}}},
		},
		{
			name:   "declared json found pickle",
			fam:    family(t, "string", "json", userSchema),
			sample: Sample{Type: "string", String: pickles[2]},
			want:   Result{Detected: map[string]int{"pickle": 1}, DecodeErrors: 1, DecodeError: "declared json, found pickle"},
		},
		{
			name:   "empty encoding with schema means json",
			fam:    family(t, "string", "", userSchema),
			sample: Sample{Type: "string", String: []byte(`{"id":2}`)},
			want:   Result{Detected: map[string]int{"json": 1}, Checked: 1},
		},
		{
			name:   "no encoding and no schema only detects",
			fam:    family(t, "string", "", ""),
			sample: Sample{Type: "string", String: mustMsgpack(t, map[string]any{"a": secret})},
			want:   Result{Detected: map[string]int{"msgpack": 1}},
		},
		{
			name:   "binary is never validated",
			fam:    family(t, "string", "binary", userSchema),
			sample: Sample{Type: "string", String: []byte{0, 1, 2}},
			want:   Result{Detected: map[string]int{"binary": 1}},
		},
		{
			name:   "redisjson",
			fam:    family(t, "json", "", userSchema),
			sample: Sample{Type: "ReJSON-RL", String: []byte(`{"id":"x"}`)},
			want: Result{Detected: map[string]int{"json": 1}, Checked: 1,
				Violations: []Violation{{Pointer: "/id", Reason: "got string, want integer"}}},
		},
		{
			name: "hash of text fields",
			fam:  family(t, "hash", "text", `{"type":"object","required":["name","email"],"properties":{"name":{"type":"string"}}}`),
			sample: Sample{Type: "hash", Fields: map[string][]byte{
				"name": []byte(secret), "age": []byte("42"),
			}},
			want: Result{Detected: map[string]int{"text": 2}, Checked: 1,
				Violations: []Violation{{Pointer: "", Reason: `missing required property "email"`}}},
		},
		{
			name: "hash of int fields with a bad field is not validated",
			fam:  family(t, "hash", "int", `{"type":"object","additionalProperties":{"type":"integer","maximum":10}}`),
			sample: Sample{Type: "hash", Fields: map[string][]byte{
				"a": []byte("5"), "b": []byte(secret),
			}},
			want: Result{Detected: map[string]int{"int": 1, "text": 1}, DecodeErrors: 1, DecodeError: "declared int, found text"},
		},
		{
			name: "hash of int fields",
			fam:  family(t, "hash", "int", `{"type":"object","additionalProperties":{"type":"integer","maximum":10}}`),
			sample: Sample{Type: "hash", Fields: map[string][]byte{
				"a": []byte("5"), "b": []byte("11"),
			}},
			want: Result{Detected: map[string]int{"int": 2}, Checked: 1,
				Violations: []Violation{{Pointer: "/b", Reason: "greater than maximum 10"}}},
		},
		{
			name: "list of msgpack members",
			fam:  family(t, "list", "msgpack", userSchema),
			sample: Sample{Type: "list", Members: [][]byte{
				mustMsgpack(t, map[string]any{"id": 1}),
				mustMsgpack(t, map[string]any{"id": "x"}),
				mustMsgpack(t, map[string]any{"id": "y", "name": 3}),
				[]byte(`{"id":1}`),
			}},
			want: Result{Detected: map[string]int{"msgpack": 3, "json": 1}, Checked: 3, DecodeErrors: 1,
				DecodeError: "declared msgpack, found json",
				Violations: []Violation{
					{Pointer: "/id", Reason: "got string, want integer"},
					{Pointer: "/name", Reason: "got integer, want string"},
				}},
		},
		{
			name:   "set of text members",
			fam:    family(t, "set", "text", `{"type":"string","pattern":"^[a-z]+$"}`),
			sample: Sample{Type: "set", Members: [][]byte{[]byte("abc"), []byte(secret), []byte("x\xffy")}},
			want: Result{Detected: map[string]int{"text": 2, "binary": 1}, Checked: 2, DecodeErrors: 1,
				DecodeError: "declared text, found binary",
				Violations:  []Violation{{Pointer: "", Reason: `does not match pattern "^[a-z]+$"`}}},
		},
		{
			name:   "zset of float members",
			fam:    family(t, "zset", "float", `{"type":"number","minimum":0}`),
			sample: Sample{Type: "zset", Members: [][]byte{[]byte("1.5"), []byte("-2")}},
			want: Result{Detected: map[string]int{"float": 2}, Checked: 2,
				Violations: []Violation{{Pointer: "", Reason: "less than minimum 0"}}},
		},
		{
			name: "stream entries",
			fam:  family(t, "stream", "json", `{"type":"object","required":["event"],"properties":{"n":{"type":"integer"}}}`),
			sample: Sample{Type: "stream", Entries: []map[string][]byte{
				{"event": []byte(`"login"`), "n": []byte("1")},
				{"n": []byte(`"` + secret + `"`)},
				{"event": []byte(secret)},
			}},
			want: Result{Detected: map[string]int{"json": 3, "text": 1}, Checked: 2, DecodeErrors: 1,
				DecodeError: "invalid json at byte 0: invalid character looking for beginning of value",
				Violations: []Violation{
					{Pointer: "", Reason: `missing required property "event"`},
					{Pointer: "/n", Reason: "got string, want integer"},
				}},
		},
		{
			name:   "sample type defaults to the family's",
			fam:    family(t, "set", "text", `{"type":"string","maxLength":2}`),
			sample: Sample{Members: [][]byte{[]byte("abc")}},
			want: Result{Detected: map[string]int{"text": 1}, Checked: 1,
				Violations: []Violation{{Pointer: "", Reason: "longer than maxLength 2"}}},
		},
		{
			name:   "unknown type",
			fam:    family(t, "string", "json", userSchema),
			sample: Sample{Type: "vectorset", String: []byte(`{}`)},
			want:   Result{Detected: map[string]int{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check(tt.fam, tt.sample, Options{})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Check:\n got %+v\nwant %+v", got, tt.want)
			}
			if s := fmt.Sprintf("%+v", got); strings.Contains(s, "hunter") {
				t.Errorf("result leaks the value: %s", s)
			}
		})
	}
}

func TestCheckManyMembersKeepsFirstViolations(t *testing.T) {
	fam := family(t, "list", "json", `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`)
	var members [][]byte
	for i := range 1000 {
		members = append(members, fmt.Appendf(nil, `{"a":"s","b%04d":1}`, 999-i))
		members = append(members, []byte(`{}`))
	}
	got := Check(fam, Sample{Type: "list", Members: members}, Options{MaxViolations: 3})
	want := []Violation{
		{Pointer: "", Reason: `missing required property "a"`},
		{Pointer: "/a", Reason: "got string, want integer"},
	}
	if got.Checked != 2000 || !reflect.DeepEqual(got.Violations, want) {
		t.Errorf("got %d checked, %v", got.Checked, got.Violations)
	}
}

func FuzzDetectDecode(f *testing.F) {
	seeds := [][]byte{
		nil, []byte("{}"), []byte(`{"a":[1,2.5,"` + secret + `",null,true]}`), []byte(`"\ud83d\ude00 \u00e9"`),
		[]byte(secret), []byte("42"), []byte("-1.5e3"), []byte("\x1f\x8b\x08"),
		mustMsgpack(f, map[string]any{"k": secret, "n": []any{1, 2.5, nil, true, []byte("b")}}),
		mustMsgpack(f, time.Unix(1e9, 1)), {0xdd, 0xff, 0xff, 0xff, 0xff}, {0x91, 0xc7, 0x01, 0x05, 0x00},
		gzipped(f, secret), []byte("(a)."), []byte("I1\n."),
	}
	seeds = append(seeds, pickles...)
	for _, s := range seeds {
		f.Add(s)
	}
	sch := compile(f, `{"type":"object","properties":{"a":{"enum":["x","y"]},"k":{"const":"z"},"s":{"pattern":"^q"}},
		"additionalProperties":{"type":"string","pattern":"^[0-9]+$","maxLength":3},"items":{"const":1}}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		d := Detect(b)
		if d == "" {
			t.Fatal("empty detection")
		}
		for _, enc := range []string{JSON, Msgpack, Text, Int, Float, Binary} {
			v, err := Decode(enc, b)
			if err != nil {
				if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "hunter") {
					t.Fatalf("%s error leaks: %q", enc, err)
				}
				continue
			}
			for _, x := range Validate(sch, v, Options{MaxViolations: -1}) {
				if x.Value != "" || strings.Contains(x.Reason, secret) {
					t.Fatalf("violation leaks: %+v", x)
				}
			}
		}
		// The JSON parser agrees with encoding/json.
		v, err := Decode(JSON, b)
		var want any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		stdErr := dec.Decode(&want)
		if stdErr == nil && len(bytes.Trim(b[dec.InputOffset():], " \t\r\n")) > 0 {
			stdErr = fmt.Errorf("trailing data")
		}
		limit := false
		for _, r := range []string{"nesting too deep", "number exponent out of range", "number longer than"} {
			limit = limit || strings.Contains(fmt.Sprint(err), r)
		}
		if (err == nil) != (stdErr == nil) && !limit {
			t.Fatalf("Decode(json) err %v, encoding/json err %v", err, stdErr)
		}
		if err == nil && !reflect.DeepEqual(v, want) {
			t.Fatalf("Decode(json) = %#v, encoding/json %#v", v, want)
		}
		if (d == JSON) != (err == nil) {
			t.Fatalf("Detect = %s, Decode(json) err %v", d, err)
		}
	})
}

// sessionJSON is a realistic ~300-byte session object.
var sessionJSON = []byte(`{"session_id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","user_id":48213,"email":"ada@example.com",` +
	`"roles":["admin","billing"],"created_at":"2026-03-04T05:06:07Z","expires_at":"2026-03-05T05:06:07Z",` +
	`"ip":"203.0.113.7","user_agent":"Mozilla/5.0 (X11; Linux x86_64)","mfa":true,"csrf":"c3f1e2d4a5b6","flags":{"beta":false,"theme":"dark"}}`)

const sessionSchema = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"required": ["session_id", "user_id", "created_at", "expires_at"],
	"additionalProperties": false,
	"properties": {
		"session_id": {"type": "string", "pattern": "^[0-9a-f-]{36}$"},
		"user_id": {"type": "integer", "minimum": 1},
		"email": {"type": "string", "maxLength": 254},
		"roles": {"type": "array", "items": {"enum": ["admin", "billing", "support", "user"]}, "uniqueItems": true},
		"created_at": {"type": "string"},
		"expires_at": {"type": "string"},
		"ip": {"type": "string"},
		"user_agent": {"type": "string", "maxLength": 512},
		"mfa": {"type": "boolean"},
		"csrf": {"type": "string", "minLength": 8},
		"flags": {"type": "object", "additionalProperties": {"type": ["boolean", "string"]}}
	}
}`

func BenchmarkCheckJSON(b *testing.B) {
	fam := family(b, "string", "json", sessionSchema)
	s := Sample{Type: "string", String: sessionJSON}
	if r := Check(fam, s, Options{}); r.Checked != 1 || r.Violations != nil || r.DecodeErrors != 0 {
		b.Fatalf("unexpected result %+v", r)
	}
	b.SetBytes(int64(len(sessionJSON)))
	b.ReportAllocs()
	for b.Loop() {
		Check(fam, s, Options{})
	}
}

func BenchmarkDecodeJSON(b *testing.B) {
	b.Run("payload", func(b *testing.B) {
		b.SetBytes(int64(len(sessionJSON)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(JSON, sessionJSON); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(sessionJSON)))
		b.ReportAllocs()
		for b.Loop() {
			dec := json.NewDecoder(bytes.NewReader(sessionJSON))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDetect(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Detect(sessionJSON)
	}
}
