package compat

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

type corpusCase struct {
	Row      string          `json:"row"`
	Name     string          `json:"name"`
	Old      json.RawMessage `json:"old"`
	New      json.RawMessage `json:"new"`
	Backward bool            `json:"backward"`
	Forward  bool            `json:"forward"`
	Policy   string          `json:"policy"`
	Expect   *[]string       `json:"expect"`
	Error    bool            `json:"error"`
}

func decode(t *testing.T, raw []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Cases []corpusCase }
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c.Cases
}

func policies(t *testing.T, s string) []Policy {
	switch s {
	case "", "both":
		return []Policy{Lenient, Strict}
	case "strict":
		return []Policy{Strict}
	case "lenient":
		return []Policy{Lenient}
	}
	t.Fatalf("bad policy %q", s)
	return nil
}

func short(cs []Change) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, string(c.Direction)+" #"+c.Pointer+" "+c.Kind)
	}
	return out
}

func TestCorpus(t *testing.T) {
	cases := loadCorpus(t)
	if len(cases) < 80 {
		t.Errorf("corpus has %d cases, want at least 80", len(cases))
	}
	known := Kinds()
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.Name] {
			t.Errorf("duplicate case name %q", tc.Name)
		}
		seen[tc.Name] = true
		t.Run(tc.Name, func(t *testing.T) {
			old, nw := decode(t, tc.Old), decode(t, tc.New)
			for _, p := range policies(t, tc.Policy) {
				if tc.Error {
					if _, err := Check(old, nw, Full, p); err == nil {
						t.Errorf("%s: Check succeeded, want an error", p)
					}
					continue
				}
				b, err := Check(old, nw, Backward, p)
				if err != nil {
					t.Fatalf("%s backward: %v", p, err)
				}
				f, err := Check(old, nw, Forward, p)
				if err != nil {
					t.Fatalf("%s forward: %v", p, err)
				}
				if got := len(b) == 0; got != tc.Backward {
					t.Errorf("[%s] %s: backward compatible = %v, want %v; changes: %v", tc.Row, p, got, tc.Backward, b)
				}
				if got := len(f) == 0; got != tc.Forward {
					t.Errorf("[%s] %s: forward compatible = %v, want %v; changes: %v", tc.Row, p, got, tc.Forward, f)
				}
				// Forward(old, new) ≡ Backward(new, old).
				rb, err := Check(nw, old, Backward, p)
				if err != nil {
					t.Fatal(err)
				}
				if (len(rb) == 0) != (len(f) == 0) {
					t.Errorf("%s: forward(old,new)=%v but backward(new,old)=%v", p, f, rb)
				}
				full, err := Check(old, nw, Full, p)
				if err != nil {
					t.Fatal(err)
				}
				if want := sortChanges(append(slices.Clone(b), f...)); !slices.Equal(full, want) {
					t.Errorf("%s: full = %v, want backward+forward %v", p, full, want)
				}
				for _, c := range full {
					if !slices.Contains(known, c.Kind) {
						t.Errorf("kind %q missing from Kinds()", c.Kind)
					}
					if c.Message == "" || strings.HasSuffix(c.Message, ".") || c.Message != strings.ToLower(c.Message[:1])+c.Message[1:] {
						t.Errorf("bad message %q", c.Message)
					}
					t.Logf("%s: %s", p, c)
				}
				if tc.Expect != nil {
					if got := short(full); !slices.Equal(got, *tc.Expect) {
						t.Errorf("%s: changes = %q, want %q", p, got, *tc.Expect)
					}
				}
			}
		})
	}
}

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]Level{"backward": Backward, "FORWARD": Forward, "Full": Full, "none": None} {
		got, err := ParseLevel(in)
		if err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseLevel("transitive"); err == nil {
		t.Error("ParseLevel(transitive) succeeded")
	}
}

func TestNone(t *testing.T) {
	cs, err := Check(map[string]any{"type": "string"}, map[string]any{"type": "integer"}, None, Strict)
	if err != nil || cs != nil {
		t.Errorf("Check(None) = %v, %v", cs, err)
	}
}

func TestMessages(t *testing.T) {
	old := decode(t, []byte(`{"type":"object","properties":{"plan":{"enum":["free","team","pro"]}}}`))
	nw := decode(t, []byte(`{"type":"object","properties":{"plan":{"enum":["free","team"]}}}`))
	cs, err := Check(old, nw, Full, Lenient)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{
		Pointer: "/properties/plan/enum", Direction: Reader, Kind: "enum-value-removed",
		Message: `enum value "pro" removed: values written by old writers would be rejected`,
	}}
	if !slices.Equal(cs, want) {
		t.Errorf("got %#v, want %#v", cs, want)
	}
	cs, _ = Check(nw, old, Full, Lenient)
	if len(cs) != 1 || cs[0].Message != `enum value "pro" added: old readers would reject values written by new writers` {
		t.Errorf("got %v", cs)
	}
}
