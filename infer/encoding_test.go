package infer

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/payload"
	"github.com/vmihailenco/msgpack/v5"
)

func gz(t testing.TB, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func mpack(t testing.TB, v any) []byte {
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	pickle4 = []byte("\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01a\x94K\x01s.")
	pickle0 = []byte("I42\n.")
)

func TestEncoding(t *testing.T) {
	s := func(vs ...string) [][]byte {
		out := make([][]byte, len(vs))
		for i, v := range vs {
			out[i] = []byte(v)
		}
		return out
	}
	tests := []struct {
		name  string
		units [][]byte
		enc   string
		share float64
	}{
		{"none", nil, "", 0},
		{"ints", s("1", "-42", "9223372036854775807", "+7", "007"), "int", 1},
		{"int64 overflow is float", s("1", "9223372036854775808"), "float", 1},
		{"floats", s("1.5", "-2", "3e10", ".5"), "float", 1},
		{"inf is not a float", s("1.5", "inf"), "text", 1},
		{"1e400 is not finite", s("1e400"), "text", 1},
		{"json objects", s(`{"a":1}`, `[1,2]`, ` {"b":null} `), "json", 1},
		{"json with bare numbers", s(`{"a":1}`, `42`, `1.5`), "json", 1},
		{"json strings", s(`"x"`, `"y"`), "json", 1},
		{"bare json numbers are int", s("42", "7"), "int", 1},
		{"json booleans alone are text", s("true", "false", "null"), "text", 1},
		{"json and a word", s(`{"a":1}`, `hello`), "text", 1},
		{"text", s("hello world", "héllo", "", "tab\there\r\n"), "text", 1},
		{"text with a control char", s("hello", "a\x01b"), "binary", 0.5},
		{"invalid utf-8", s("\xff\xfe"), "binary", 1},
		{"msgpack", [][]byte{mpack(t, map[string]any{"a": 1}), mpack(t, []any{1, "x"})}, "msgpack", 1},
		{"msgpack|int", [][]byte{mpack(t, map[string]any{"a": 1}), []byte("12")}, "msgpack|int", 1},
		{"pickle", [][]byte{pickle4, pickle0}, "pickle", 1},
		{"pickle|int (django)", [][]byte{pickle4, []byte("12"), []byte("-3")}, "pickle|int", 1},
		{"pickle and a float", [][]byte{pickle4, []byte("1.5")}, "binary", 0},
		{"pickle and text", [][]byte{pickle4, []byte("hello")}, "binary", 0},
		{"gzip declares binary", [][]byte{gz(t, "hello"), gz(t, "{}")}, "binary", 1},
		{"gzip and json", [][]byte{gz(t, "hello"), []byte(`{"a":1}`), []byte(`{}`), []byte(`[]`)}, "binary", 0.25},
		{"msgpack with an int key is binary", [][]byte{[]byte("\x81\x01\x02"), mpack(t, map[string]any{"a": 1})}, "binary", 0.5},
		{"binary", [][]byte{{0, 1, 2, 3}, {0xc3, 0x28}}, "binary", 1},
		{"msgpack and json", [][]byte{mpack(t, map[string]any{"a": 1}), []byte(`{"a":1}`)}, "binary", 0},
		{"long zero-padded int", [][]byte{[]byte(strings.Repeat("0", 80) + "1"), []byte("2")}, "text", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tl EncodingTally
			for _, u := range tt.units {
				tl.Add(u)
			}
			enc, share := tl.Encoding()
			if enc != tt.enc || share != tt.share {
				t.Errorf("Encoding() = %q, %v; want %q, %v", enc, share, tt.enc, tt.share)
			}
			if tl.Units() != int64(len(tt.units)) {
				t.Errorf("Units() = %d", tl.Units())
			}
			// The declared encoding decodes every unit it claims to fit.
			if enc == "" || share < 1 {
				return
			}
			for _, u := range tt.units {
				if _, err := payload.Decode(enc, u); err != nil {
					t.Errorf("declared %s, but payload.Decode refuses %q: %v", enc, u, err)
				}
			}
		})
	}
}

// declarable reports whether enc is a single encoding keys.yaml accepts
// or a "|"-list of them.
func declarable(enc string) bool {
	for e := range strings.SplitSeq(enc, "|") {
		if !payload.Known(e) {
			return false
		}
	}
	return true
}

// FuzzEncoding splits the input into units on NUL bytes: the result is
// always declarable, its share in [0, 1], and when the share is 1 every
// unit decodes under it.
func FuzzEncoding(f *testing.F) {
	for _, s := range []string{
		"1\x002\x00-3", "1.5\x002", `{"a":1}` + "\x0042", "hello\x00world", "\x80\x04K\x01.\x0012",
		"\x81\xa1a\x01\x007", "\x1f\x8b\x08\x00", "\xff\x00\x01", "true\x00null", `"x"`, "", "\x00",
		"I42\n.\x00text", "1e400\x00nan", "\x8100",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var tl EncodingTally
		units := bytes.Split(b, []byte{0})
		for _, u := range units {
			tl.Add(u)
		}
		enc, share := tl.Encoding()
		if !declarable(enc) || enc == payload.Gzip {
			t.Fatalf("Encoding() = %q, not declarable", enc)
		}
		if share < 0 || share > 1 {
			t.Fatalf("share %v", share)
		}
		if share == 1 && enc != payload.Binary {
			for _, u := range units {
				if _, err := payload.Decode(enc, u); err != nil {
					t.Fatalf("declared %s, payload.Decode refuses %q: %v", enc, u, err)
				}
			}
		}
	})
}

func BenchmarkEncodingAdd(b *testing.B) {
	units := [][]byte{[]byte(`{"user":"ann","n":12,"roles":["a","b"]}`), []byte("12345"), []byte("hello world"), pickle4}
	var tl EncodingTally
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tl.Add(units[i%len(units)])
	}
}
