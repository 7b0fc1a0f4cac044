package registry

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/keyreg/keyreg/diag"
)

// diagnostics loads yaml (plus files) and returns its diagnostics as text,
// failing t when the registry loads.
func diagnostics(t *testing.T, yaml string, files ...string) string {
	t.Helper()
	_, err := load(t, yaml, files...)
	var le *diag.ListError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want *diag.ListError", err)
	}
	var all []string
	for _, d := range le.List {
		if !d.Pos.IsValid() {
			t.Errorf("diagnostic without position: %v", d)
		}
		all = append(all, d.String())
	}
	return strings.Join(all, "\n")
}

func wantDiag(t *testing.T, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("diagnostics:\n%.2000s\nwant one containing:\n%s", got, want)
	}
}

// anyPattern returns "v1:" and n placeholders {aN:any}, each followed by x.
func anyPattern(n int) string {
	var b strings.Builder
	b.WriteString("v1:")
	for i := range n {
		fmt.Fprintf(&b, "{a%d:any}x", i)
	}
	return b.String()
}

// TestLoadLimits covers the inputs of issue 10 item 4: each is refused with
// a position instead of costing minutes, gigabytes or a stack overflow.
func TestLoadLimits(t *testing.T) {
	fam := func(pattern string) string {
		return fmt.Sprintf("version: 1\nfamilies:\n  - name: a\n    pattern: %q\n", pattern)
	}
	t.Run("3 MiB literal pattern", func(t *testing.T) {
		got := diagnostics(t, fam(strings.Repeat("a", 3<<20)))
		wantDiag(t, got, `keys.yaml:4:15: error: pattern "aaaa`)
		wantDiag(t, got, `... (3145728 bytes): pattern is 3145728 bytes long, more than the limit of 1024 (pattern-invalid)`)
	})
	t.Run("two 1 MB literal patterns", func(t *testing.T) {
		long := strings.Repeat("a", 1<<20)
		got := diagnostics(t, fmt.Sprintf("version: 1\nfamilies:\n  - {name: a, pattern: %q}\n  - {name: b, pattern: %q}\n", long, long+"b"))
		wantDiag(t, got, "keys.yaml:3:25: error: pattern")
		wantDiag(t, got, "keys.yaml:4:25: error: pattern")
	})
	t.Run("2 KB claimed prefix", func(t *testing.T) {
		got := diagnostics(t, fmt.Sprintf("version: 1\nowners:\n  a:\n    contact: a@example.com\n    prefixes: [%q]\nfamilies: []\n", strings.Repeat("a*", 1000)))
		wantDiag(t, got, `keys.yaml:5:16: error: owners.a.prefixes: prefix is 2000 bytes long, more than the limit of 1024 (schema-invalid)`)
	})
	t.Run("8000 any placeholders", func(t *testing.T) {
		got := diagnostics(t, fmt.Sprintf("version: 1\nfamilies:\n  - {name: a, pattern: %q}\n  - {name: b, pattern: %q}\n", anyPattern(8000), anyPattern(8000)+"y"))
		wantDiag(t, got, "more than the limit of 1024 (pattern-invalid)")
	})
	t.Run("33 placeholders", func(t *testing.T) {
		p := anyPattern(33)
		col := 15 + strings.Index(p, "{a32:")
		wantDiag(t, diagnostics(t, fam(p)), fmt.Sprintf("keys.yaml:4:%d: error: pattern %q", col, p[:100]))
		wantDiag(t, diagnostics(t, fam(p)), "(323 bytes): pattern has more than 32 placeholders (pattern-invalid)")
	})
	t.Run("alias bomb in an inline schema", func(t *testing.T) {
		// 648 bytes that expand to about 9^5 * 10 values.
		src := "version: 1\nfamilies:\n  - name: a\n    pattern: \"v1:a:{id:int}\"\n    schema:\n      $defs:\n        l0: &l0 {type: string, enum: [x, y, z]}\n"
		for i := 1; i <= 5; i++ {
			src += fmt.Sprintf("        l%d: &l%d {anyOf: [%s*l%d]}\n", i, i, strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 8), i-1)
		}
		src += "      allOf: [*l5]\n"
		wantDiag(t, diagnostics(t, src), "error: document expands to more than 200000 values (too many aliases?) (schema-invalid)")
	})
	t.Run("large inline schema", func(t *testing.T) {
		var props []string
		for i := range MaxSchemaNodes / 2 {
			props = append(props, fmt.Sprintf("p%d: {type: string}", i))
		}
		src := fam("v1:a:{id:int}") + "    schema: {type: object, properties: {" + strings.Join(props, ", ") + "}}\n"
		wantDiag(t, diagnostics(t, src), "keys.yaml:5:13: error: schema (inline): schema has more than 10000 values, counting the files it references and YAML aliases expanded (payload-schema-invalid)")
	})
	t.Run("alias bomb in a schema file", func(t *testing.T) {
		src := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
		for i, n := range []string{"b", "c", "d", "e"} {
			prev := string(rune('a' + i))
			src += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		}
		got := diagnostics(t, fam("v1:a:{id:int}")+"    schema: s.yaml\n", "s.yaml", src)
		wantDiag(t, got, `keys.yaml:5:13: error: schema file "s.yaml": document expands to more than 10000 values (too many aliases?) (payload-schema-invalid)`)
	})
	t.Run("references add up", func(t *testing.T) {
		// Each file is under the budget, the family's schema is not.
		big := "{" + strings.TrimSuffix(strings.Repeat(`"x":{"type":"string"},`, 1), ",")
		for i := range 6000 {
			big += fmt.Sprintf(`,"p%d":{}`, i)
		}
		big += "}"
		files := []string{"s.json", `{"allOf":[{"$ref":"b1.json"},{"$ref":"b2.json"}]}`,
			"b1.json", `{"properties":` + big + `}`, "b2.json", `{"properties":` + big + `}`}
		got := diagnostics(t, fam("v1:a:{id:int}")+"    schema: s.json\n", files...)
		wantDiag(t, got, "keys.yaml:5:13: error: schema \"s.json\" does not compile:")
		wantDiag(t, got, "b2.json: schema has more than 10000 values")
		if _, err := load(t, fam("v1:a:{id:int}")+"    schema: b1.json\n", files...); err != nil {
			t.Errorf("one file under the budget: %v", err)
		}
	})
}

// endless is a file system whose one file never ends and has no size, like
// /dev/zero or a pipe. It counts the bytes read.
type endless struct{ read *int64 }

func (e endless) Open(name string) (fs.File, error) { return &endlessFile{e.read}, nil }

type endlessFile struct{ read *int64 }

func (f *endlessFile) Stat() (fs.FileInfo, error) { return endlessInfo{}, nil }
func (f *endlessFile) Close() error               { return nil }
func (f *endlessFile) Read(p []byte) (int, error) {
	clear(p)
	*f.read += int64(len(p))
	return len(p), nil
}

type endlessInfo struct{}

func (endlessInfo) Name() string       { return "keys.yaml" }
func (endlessInfo) Size() int64        { return 0 }
func (endlessInfo) Mode() fs.FileMode  { return fs.ModeCharDevice | fs.ModeDevice | 0o666 }
func (endlessInfo) ModTime() time.Time { return time.Time{} }
func (endlessInfo) IsDir() bool        { return false }
func (endlessInfo) Sys() any           { return nil }

// hugeBlob is a file system like a git tree: Stat knows the size without
// reading, and opening the file reads all of it, which the test forbids.
type hugeBlob struct{ t *testing.T }

func (h hugeBlob) Open(name string) (fs.File, error) {
	h.t.Errorf("Open(%q): a file whose size is over the limit was read", name)
	return nil, io.ErrUnexpectedEOF
}

func (h hugeBlob) Stat(name string) (fs.FileInfo, error) { return hugeInfo{}, nil }

// hugeInfo is a 5 GiB regular file.
type hugeInfo struct{ endlessInfo }

func (hugeInfo) Size() int64       { return 5 << 30 }
func (hugeInfo) Mode() fs.FileMode { return 0o444 }

func TestLoadUnboundedFile(t *testing.T) {
	var read int64
	_, err := Load(endless{&read}, "keys.yaml")
	var le *diag.ListError
	if !errors.As(err, &le) || !strings.Contains(le.Error(), "keys.yaml:1:1: error: file is larger than the 4194304-byte limit for a registry (schema-invalid)") {
		t.Fatalf("err = %v, want a size diagnostic", err)
	}
	if read > 2*MaxFileSize {
		t.Errorf("read %d bytes of an endless file, want at most about %d", read, MaxFileSize)
	}
	// The real device, as `keyreg lint --registry /dev/zero` reads it.
	_, err = LoadFile("/dev/zero")
	if !errors.As(err, &le) || !strings.Contains(le.Error(), "/dev/zero:1:1: error: file is larger than the 4194304-byte limit for a registry") {
		t.Fatalf("LoadFile(/dev/zero) = %v, want a size diagnostic", err)
	}
	// A git tree knows a blob's size: a huge one is refused unread.
	_, err = Load(hugeBlob{t}, "keys.yaml")
	if !errors.As(err, &le) || !strings.Contains(le.Error(), "keys.yaml:1:1: error: file is 5368709120 bytes, larger than the 4194304-byte limit for a registry") {
		t.Fatalf("err = %v, want a size diagnostic", err)
	}
	// So is a schema file.
	fsys := fstest.MapFS{
		"keys.yaml": {Data: []byte("version: 1\nfamilies:\n  - {name: a, pattern: \"a:{x}\", schema: s.json}\n")},
		"s.json":    {Data: []byte(`{"description":"` + strings.Repeat("x", MaxFileSize) + `"}`)},
	}
	_, err = Load(fsys, "keys.yaml")
	if !errors.As(err, &le) || !strings.Contains(le.Error(), `keys.yaml:3:41: error: schema file "s.json": file is 4194322 bytes, larger than the 4194304-byte limit (payload-schema-invalid)`) {
		t.Fatalf("err = %v, want a size diagnostic on the schema", err)
	}
}

// TestMatcherDeepTrie builds the matcher of a pattern far longer than the
// loader allows, with a small stack: the automaton's construction must not
// recurse once per byte.
func TestMatcherDeepTrie(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(2 << 20))
	lit := strings.Repeat("ab", 30_000)
	p := &Pattern{Source: lit, Sep: ':', Parts: []Part{{Lit: lit}, {Name: "x", Offset: len(lit)}}}
	m := NewMatcher([]*Family{{Name: "long", Pattern: p}}, ':')
	if f := m.Match(lit + "z"); f == nil || f.Name != "long" {
		t.Fatalf("Match = %v, want the long family", f)
	}
	if f := m.Match(lit); f != nil {
		t.Fatalf("Match without a placeholder value = %v, want nil", f.Name)
	}
}

// TestLoadMultiDocument: a second YAML document used to be dropped without
// a word; it is an error at the "---" that starts it.
func TestLoadMultiDocument(t *testing.T) {
	one := "version: 1\nfamilies: []\n"
	second := "version: 1\nfamilies:\n  - {name: a, pattern: \"a:{x}\"}\n"
	wantDiag(t, diagnostics(t, one+"---\n"+second), `keys.yaml:3:1: error: a second YAML document starts here, but a registry is one document (remove the "---" line and what follows, or merge it into the first) (schema-invalid)`)
	wantDiag(t, diagnostics(t, one+"--- # more\n---\n"+second), "keys.yaml:4:1: error: a second YAML document starts here")
	wantDiag(t, diagnostics(t, one+"---\n- {a: [}\n"), "error: invalid YAML: ")
	for _, ok := range []string{"---\n" + one, one + "...\n", one + "---\n", "--- # registry\n" + one + "...\n---\n# nothing\n"} {
		if _, err := load(t, ok); err != nil {
			t.Errorf("load(%q): %v", ok, err)
		}
	}
	// A schema file is one document too.
	got := diagnostics(t, "version: 1\nfamilies:\n  - {name: a, pattern: \"a:{x}\", schema: s.yaml}\n", "s.yaml", "type: string\n---\ntype: integer\n")
	wantDiag(t, got, `keys.yaml:3:41: error: schema file "s.yaml": invalid YAML: line 2, column 1: a second YAML document starts here, but the file must hold exactly one`)
}

// TestLoadRefCycle: a schema whose references apply to the same value in a
// loop used to load, and then every sampled key failed with "schema
// reference cycle". Recursion into properties or items is a tree, not a
// cycle.
func TestLoadRefCycle(t *testing.T) {
	fam := "version: 1\nfamilies:\n  - name: a\n    pattern: \"v1:a:{id:int}\"\n"
	for _, tc := range []struct {
		name   string
		schema string // the schema: value
		files  []string
		want   string
	}{
		{"self", `{$ref: "#"}`, nil, `keys.yaml:5:13: error: schema (inline) has a reference cycle: # -> # applies to the same value again, so validating it never ends (payload-schema-invalid)`},
		{"through allOf", `{allOf: [{$ref: "#"}]}`, nil, `cycle: # -> #/allOf/0 -> #`},
		{"through anyOf and not", `{anyOf: [{type: string}, {not: {$ref: "#/$defs/x"}}], $defs: {x: {$ref: "#"}}}`, nil, `cycle: # -> #/anyOf/1 -> #/anyOf/1/not -> #/$defs/x -> #`},
		{"through if/then", `{if: {type: string}, then: {$ref: "#"}}`, nil, `cycle: # -> #/then -> #`},
		{"two files", `a.json`, []string{"a.json", `{"$ref":"b.json"}`, "b.json", `{"allOf":[{"$ref":"a.json"}]}`}, `keys.yaml:5:13: error: schema "a.json" has a reference cycle: a.json# -> b.json# -> b.json#/allOf/0 -> a.json#`},
		{"dynamic ref", `{$dynamicAnchor: n, $dynamicRef: "#n"}`, nil, `has a reference cycle: # -> #`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantDiag(t, diagnostics(t, fam+"    schema: "+tc.schema+"\n", tc.files...), tc.want)
		})
	}
	// Trees and lists recurse through properties and items.
	tree := map[string]any{"children": []any{map[string]any{"children": []any{}}}}
	list := map[string]any{"next": map[string]any{"next": map[string]any{}}}
	for _, tc := range []struct {
		schema string
		value  any
	}{
		{`{type: object, properties: {children: {type: array, items: {$ref: "#"}}}}`, tree},
		{`{$defs: {node: {type: object, properties: {next: {$ref: "#/$defs/node"}}}}, $ref: "#/$defs/node"}`, list},
		{`{$dynamicAnchor: n, type: object, additionalProperties: {$dynamicRef: "#n"}}`, list},
		{`{allOf: [{$ref: "#/$defs/a"}, {$ref: "#/$defs/a"}], $defs: {a: {type: object}}}`, list},
	} {
		r, err := load(t, fam+"    schema: "+tc.schema+"\n")
		if err != nil {
			t.Errorf("schema %s: %v", tc.schema, err)
			continue
		}
		if err := r.Families[0].Schema.Compiled.Validate(tc.value); err != nil {
			t.Errorf("schema %s: validating %v: %v", tc.schema, tc.value, err)
		}
	}
}

// TestLoadBranchBomb refuses a small schema whose in-place applicators
// double at every step: 20 levels of anyOf over two $refs to the next
// level apply 2^20 subschemas to one value, and validating a value that
// fails them took seconds and gigabytes. Nested under properties it is
// found too; a chain under the bound still loads.
func TestLoadBranchBomb(t *testing.T) {
	fam := "version: 1\nfamilies:\n  - name: a\n    pattern: \"v1:a:{id:int}\"\n"
	chain := func(n int) string {
		var b strings.Builder
		b.WriteString(`{$ref: "#/$defs/d0", $defs: {`)
		for i := range n {
			fmt.Fprintf(&b, `d%d: {anyOf: [{$ref: "#/$defs/d%d"}, {$ref: "#/$defs/d%d"}]}, `, i, i+1, i+1)
		}
		fmt.Fprintf(&b, "d%d: {type: string}}}", n)
		return b.String()
	}
	wantDiag(t, diagnostics(t, fam+"    schema: "+chain(20)+"\n"), `applies more than 10000 subschemas to one value`)
	nested := `{type: object, properties: {p: ` + strings.Replace(chain(20), "#/$defs/", "#/properties/p/$defs/", -1) + `}}`
	wantDiag(t, diagnostics(t, fam+"    schema: "+nested+"\n"), `#/properties/p`)
	if _, err := load(t, fam+"    schema: "+chain(8)+"\n"); err != nil {
		t.Errorf("a chain of 8 (256 subschemas) does not load: %v", err)
	}
}
