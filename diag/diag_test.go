package diag

import (
	"errors"
	"strings"
	"testing"
)

func TestSeverity(t *testing.T) {
	for _, s := range []Severity{Off, Info, Warn, Error} {
		got, err := ParseSeverity(s.String())
		if err != nil || got != s {
			t.Errorf("ParseSeverity(%q) = %v, %v", s.String(), got, err)
		}
	}
	if got, _ := ParseSeverity("warning"); got != Warn {
		t.Errorf("ParseSeverity(warning) = %v", got)
	}
	if _, err := ParseSeverity("fatal"); err == nil || !strings.Contains(err.Error(), `"fatal"`) {
		t.Errorf("ParseSeverity(fatal) error = %v", err)
	}
	if Warn.Label() != "warning" || Error.Label() != "error" || Info.Label() != "info" {
		t.Errorf("labels: %s %s %s", Warn.Label(), Error.Label(), Info.Label())
	}
}

func TestPos(t *testing.T) {
	if got := (Pos{File: "keys.yaml"}).String(); got != "keys.yaml:1:1" {
		t.Errorf("unknown position prints %q, want keys.yaml:1:1", got)
	}
	p := Pos{File: "k", Line: 3, Col: 5, EndLine: 3, EndCol: 9}
	if l, c := p.End(); l != 3 || c != 9 {
		t.Errorf("End = %d:%d", l, c)
	}
	if l, c := (Pos{Line: 4, Col: 2}).End(); l != 4 || c != 2 {
		t.Errorf("End without end = %d:%d, want the start", l, c)
	}
}

func TestList(t *testing.T) {
	l := List{
		{Pos: Pos{File: "k", Line: 9}, Severity: Warn, Rule: "b", Message: "w"},
		{Pos: Pos{File: "k", Line: 2}, Severity: Error, Rule: "a", Message: "e"},
		{Pos: Pos{File: "k", Line: 5}, Severity: Error, Rule: "c", Message: "s", Suppressed: true},
		{Pos: Pos{File: "k", Line: 1}, Severity: Info, Rule: "d", Message: "i"},
	}
	if l.Max() != Error {
		t.Errorf("Max = %v", l.Max())
	}
	if got := l.Count().String(); got != "1 error, 1 warning, 1 info, 1 suppressed" {
		t.Errorf("Count = %q", got)
	}
	if got := (List{}).Count().String(); got != "0 errors, 0 warnings, 0 info" {
		t.Errorf("empty Count = %q", got)
	}
	l.Sort()
	for i, want := range []int{1, 2, 5, 9} {
		if l[i].Pos.Line != want {
			t.Fatalf("after Sort, line %d at %d", l[i].Pos.Line, i)
		}
	}
	if n := len(l.Active()); n != 3 {
		t.Errorf("Active has %d, want 3", n)
	}
	if got := l[1].String(); got != "k:2:1: error: e (a)" {
		t.Errorf("String = %q", got)
	}
	var le error = &ListError{List: l}
	var target *ListError
	if !errors.As(le, &target) || !strings.HasSuffix(le.Error(), "(and 3 more)") {
		t.Errorf("ListError = %q", le.Error())
	}
}
