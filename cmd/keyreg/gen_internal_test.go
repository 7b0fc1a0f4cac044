package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/keyreg/keyreg/codegen"
	"github.com/spf13/pflag"
)

// twoFiles is a backend that writes more than --out can name.
type twoFiles struct{}

func (twoFiles) Generate(*codegen.Request) ([]codegen.File, error) {
	return []codegen.File{{Name: "a", Data: []byte("a")}, {Name: "b", Data: []byte("b")}}, nil
}

// TestGenOneFileOnly: --out names one file, so a backend returning
// several is a runtime error, and nothing is written.
func TestGenOneFileOnly(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte("version: 1\nfamilies:\n  - {name: a, pattern: \"v1:a:{id}\", owner: o, type: string, encoding: text, ttl: persistent}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr}
	err := a.runGen(language{name: "two", display: "Two"}, twoFiles{}, "", genOptions{registry: reg, out: out})
	var e *exitError
	if !errors.As(err, &e) || e.code != exitRuntime {
		t.Fatalf("runGen = %v, want a runtime error", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--out was written: %v", err)
	}
}

// TestGenLanguages: every entry of the table is a subcommand of gen.
func TestGenLanguages(t *testing.T) {
	c := (&app{}).genCmd()
	for _, l := range languages {
		sub, _, err := c.Find([]string{l.name})
		if err != nil || sub.Name() != l.name {
			t.Errorf("keyreg gen %s is not a command", l.name)
		}
	}
}

// dirFiles is a backend whose --out is a directory, with the given names.
type dirFiles []string

func (d dirFiles) Generate(*codegen.Request) ([]codegen.File, error) {
	var fs []codegen.File
	for _, n := range d {
		fs = append(fs, codegen.File{Name: n, Data: []byte(n + "\n")})
	}
	return fs, nil
}

func (dirFiles) OutputDir() bool { return true }

// TestGenDir: a backend writing a directory gets each file under --out;
// a name that would escape it (absolute, "..", a backslash, a duplicate)
// is a runtime error and nothing is written; --check reports one diff for
// every stale file.
func TestGenDir(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "keys.yaml")
	if err := os.WriteFile(reg, []byte("version: 1\nfamilies:\n  - {name: a, pattern: \"v1:a:{id}\", owner: o, type: string, encoding: text, ttl: persistent}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{"../x"}, {"/etc/x"}, {"a", "sub/../../x"}, {`a\..\x`}, {""}, {"a", "a"}} {
		out := filepath.Join(dir, "bad")
		a := &app{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
		err := a.runGen(language{name: "d", display: "D"}, dirFiles(bad), "", genOptions{registry: reg, out: out})
		var e *exitError
		if !errors.As(err, &e) || e.code != exitRuntime {
			t.Errorf("%q: runGen = %v, want a runtime error", bad, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%q: --out was written", bad)
		}
		if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
			t.Errorf("%q: a file escaped --out", bad)
		}
	}
	out := filepath.Join(dir, "pkg")
	files := dirFiles{"__init__.py", "sub/py.typed"}
	var stdout bytes.Buffer
	a := &app{stdout: &stdout, stderr: &bytes.Buffer{}}
	if err := a.runGen(language{name: "d", display: "D"}, files, "", genOptions{registry: reg, out: out}); err != nil {
		t.Fatal(err)
	}
	for _, n := range files {
		if b, err := os.ReadFile(filepath.Join(out, n)); err != nil || string(b) != n+"\n" {
			t.Errorf("%s: %q, %v", n, b, err)
		}
	}
	if err := a.runGen(language{name: "d", display: "D"}, files, "", genOptions{registry: reg, out: out, check: true}); err != nil || stdout.Len() != 0 {
		t.Errorf("fresh --check: %v, %q", err, stdout.String())
	}
	for _, n := range files {
		if err := os.WriteFile(filepath.Join(out, n), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := a.runGen(language{name: "d", display: "D"}, files, "", genOptions{registry: reg, out: out, check: true})
	if !errors.Is(err, errFindings) {
		t.Errorf("stale --check: %v, want findings", err)
	}
	for _, n := range files {
		if !bytes.Contains(stdout.Bytes(), []byte("--- a/"+diffName(filepath.Join(out, n))+"\n")) {
			t.Errorf("the diff does not cover %s:\n%s", n, stdout.String())
		}
	}
}

// TestDocsLanguages: a language of gen's table whose generator names its
// builders (codegen.Documenter) has a docs hook, so keyreg docs can show
// them, and a hook's generator, when its flags ask for it, is one.
func TestDocsLanguages(t *testing.T) {
	for _, l := range languages {
		fs := pflag.NewFlagSet(l.name, pflag.ContinueOnError)
		g, _, err := l.flags(fs)(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatalf("%s: %v", l.name, err)
		}
		_, documents := g.(codegen.Documenter)
		if documents != (l.docs != nil) {
			t.Errorf("%s: the generator is a Documenter: %v, but has a docs hook: %v", l.name, documents, l.docs != nil)
		}
		if l.docs == nil {
			continue
		}
		dfs := pflag.NewFlagSet("docs", pflag.ContinueOnError)
		build := l.docs(dfs)
		if build() != nil {
			t.Errorf("%s: docs shows its builders without a flag asking for them", l.name)
		}
		var set []string
		dfs.VisitAll(func(f *pflag.Flag) { set = append(set, "--"+f.Name+"=x") })
		if err := dfs.Parse(set); err != nil {
			t.Fatal(err)
		}
		if _, ok := build().(codegen.Documenter); !ok {
			t.Errorf("%s: with %v, docs gets no Documenter", l.name, set)
		}
	}
}
