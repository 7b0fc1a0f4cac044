// Package vectors builds the test vectors that every codegen backend's
// tests run, so that the generated code of all languages builds and
// parses the same keys, byte for byte.
//
// The vectors are derived from a codegen.Request, not written by hand:
// for each family, valid argument lists drawn from per-type pools of
// values (hostile ones among them: quotes, backslashes, triple quotes,
// "*/", "${", backticks, the text \x41, non-ASCII, the separator in an
// any value) with the key they build; values each placeholder type
// refuses; and keys that parse must refuse. They are committed under
// testdata/ (Files lists them) and kept fresh by this package's tests
// (go test ./codegen/vectors -update rewrites them).
//
// What the vectors pin down, for every language:
//   - build(args) == key, and parse(key) == args, for every case;
//   - build refuses each invalid value, whatever the other arguments;
//   - parse refuses each non-key;
//   - parse of an ambiguous key (an any or word placeholder that could
//     end at more than one place) takes each placeholder, left to right,
//     as long as the rest of the key can still match: the Go backend's
//     rule, so every language agrees on which parameters a key has;
//   - an int placeholder is a 64-bit signed integer in every language:
//     a key whose int does not fit in an int64 is not a key of the family;
//   - the glob is the family's SCAN MATCH glob (*_GLOB).
//
// A family whose literal bytes are not valid UTF-8 has no vectors (JSON
// strings, Python str and JavaScript strings cannot hold them); Doc
// lists it in Skipped with the reason.
package vectors

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/keyreg/keyreg/codegen"
	"github.com/keyreg/keyreg/registry"
)

// Version is the version of the vectors document.
const Version = 1

// Doc is the vectors of one registry.
type Doc struct {
	Version   int       `json:"version"`
	Registry  string    `json:"registry"`        // the registry's path, relative to the repository
	Digest    string    `json:"registry_digest"` // the request's digest, every family in scope
	Separator string    `json:"separator"`
	Families  []Family  `json:"families"`
	Skipped   []Skipped `json:"skipped,omitempty"`
}

// Family is the vectors of one family.
type Family struct {
	Family       string        `json:"family"`
	Pattern      string        `json:"pattern"`
	Glob         string        `json:"glob"`
	Placeholders []Placeholder `json:"placeholders"` // in pattern order: the builder's argument order
	Cases        []Case        `json:"cases"`
	Ambiguous    []Case        `json:"ambiguous,omitempty"` // parse(key) == args; build(args) may give another key
	Invalid      []Invalid     `json:"invalid,omitempty"`
	NonKeys      []string      `json:"non_keys"`
}

// Placeholder is a placeholder's name and type.
type Placeholder struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Case is a list of arguments, in placeholder order, and its key. An int
// argument is its decimal text.
type Case struct {
	Args []string `json:"args"`
	Key  string   `json:"key"`
}

// Invalid is a value that the placeholder at Index refuses; Args are the
// first case's arguments with Args[Index] = Value.
type Invalid struct {
	Index int      `json:"index"`
	Value string   `json:"value"`
	Args  []string `json:"args"`
}

// Skipped is a family without vectors, and why.
type Skipped struct {
	Family string `json:"family"`
	Reason string `json:"reason"`
}

// File is a committed vectors file and the registry it is built from,
// both relative to the repository root.
type File struct {
	Registry string
	Vectors  string
}

// Files lists the committed vectors files.
func Files() []File {
	return []File{
		{"keys.yaml", "codegen/vectors/testdata/root.vectors.json"},
		{"examples/locks/keys.yaml", "codegen/vectors/testdata/examples-locks.vectors.json"},
		{"codegen/vectors/testdata/hostile.keys.yaml", "codegen/vectors/testdata/hostile.vectors.json"},
	}
}

// The pools of valid values by placeholder type. Word and any values
// hold what would break a string literal or a comment in some language;
// values a type refuses under the registry's separator are left out.
var pools = map[string][]string{
	"word": {"alice", "a-b_c.d", `quo"te's`, `back\slash`, `"""`, "*/", "${x}", "`tick`", `\x41`, `\u0041`,
		"ünïcode", "日本", "{brace}", "*?[x]", "%s%d", "<script>", "0", strings.Repeat("w", 120)},
	"any": {"a:b", "alice", "::", "p:x:q", `quo"te's:${x}`, "*/:`y`", `\x41:\u0041`, "ключ:日本", "/* */", "x"},
	"int": {"0", "42", "-7", "9007199254740993", "9223372036854775807", "-9223372036854775808"},
	"uuid": {"123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000",
		"00000000-0000-0000-0000-000000000000"},
	"hex":  {"deadBEEF", "0", "0123456789abcdef"},
	"ulid": {"01ARZ3NDEKTSV4RRFFQ69G5FAV", "7zzzzzzzzzzzzzzzzzzzzzzzzz", "00000000000000000000000000"},
}

// refused are the values each type refuses (checked against the
// registry's Valid when built). Int has none: a typed int argument
// cannot hold a refused value in any of the languages.
var refused = map[string][]string{
	"word": {"", "a:b"},
	"any":  {""},
	"hex":  {"", "xyz", "12g", "a:b"},
	"uuid": {"", "123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g",
		"123e4567-e89b-12d3-a456-4266141740000", "123e4567:e89b-12d3-a456-426614174000"},
	"ulid": {"", "81ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FA", "01ARZ3NDEKTSV4RRFFQ69G5FAI",
		"01ARZ3NDEKTSV4RRFFQ69G5FAVV"},
}

// maxCases bounds the cases of one family.
const maxCases = 24

// Build derives the vectors of req, whose registry is at path. req
// should have every family in scope (codegen.Scope{IncludePresets: true}).
func Build(req *codegen.Request, path string) (*Doc, error) {
	if len(req.Separator) != 1 {
		return nil, fmt.Errorf("separator %q is not one byte", req.Separator)
	}
	sep := req.Separator[0]
	d := &Doc{Version: Version, Registry: path, Digest: req.Digest, Separator: req.Separator, Families: []Family{}}
	for _, f := range req.Families {
		if reason := unsupported(f); reason != "" {
			d.Skipped = append(d.Skipped, Skipped{Family: f.Name, Reason: reason})
			continue
		}
		vf, err := build(f, sep)
		if err != nil {
			return nil, fmt.Errorf("family %q: %w", f.Name, err)
		}
		d.Families = append(d.Families, vf)
	}
	return d, nil
}

func unsupported(f *codegen.Family) string {
	for _, p := range f.Pattern.Parts {
		if p.LiteralBase64 != "" {
			return "a literal of its pattern is not valid UTF-8"
		}
	}
	return ""
}

// part is a pattern part with its placeholder type resolved.
type part struct {
	lit   string
	param bool
	typ   registry.PlaceholderType
}

func parts(f *codegen.Family) ([]part, []Placeholder, error) {
	var ps []part
	var phs []Placeholder
	for _, p := range f.Pattern.Parts {
		if !p.IsPlaceholder() {
			ps = append(ps, part{lit: p.Literal})
			continue
		}
		t, ok := registry.ParsePlaceholderType(p.Type)
		if !ok {
			return nil, nil, fmt.Errorf("placeholder %q has unknown type %q", p.Placeholder, p.Type)
		}
		ps = append(ps, part{param: true, typ: t})
		phs = append(phs, Placeholder{Name: p.Placeholder, Type: p.Type})
	}
	return ps, phs, nil
}

func build(f *codegen.Family, sep byte) (Family, error) {
	ps, phs, err := parts(f)
	if err != nil {
		return Family{}, err
	}
	vf := Family{Family: f.Name, Pattern: f.Pattern.Source, Glob: f.Pattern.Glob, Placeholders: phs,
		Cases: []Case{}, NonKeys: []string{}}
	valid := make([][]string, len(phs))
	rounds := 1
	for i, ph := range phs {
		t, _ := registry.ParsePlaceholderType(ph.Type)
		for _, v := range pools[ph.Type] {
			if t.Valid(v, sep) {
				valid[i] = append(valid[i], v)
			}
		}
		if len(valid[i]) == 0 {
			return Family{}, fmt.Errorf("no valid value of type %s", ph.Type)
		}
		rounds = max(rounds, len(valid[i]))
	}
	seen := map[string]bool{}
	for r := 0; r < rounds && len(vf.Cases)+len(vf.Ambiguous) < maxCases; r++ {
		args := make([]string, len(phs))
		for i := range phs {
			args[i] = valid[i][(r+i)%len(valid[i])]
		}
		key := render(ps, args)
		if seen[key] {
			continue
		}
		seen[key] = true
		got, n := match(ps, key, sep)
		switch {
		case n == 0:
			return Family{}, fmt.Errorf("built key %q does not match its own pattern", key)
		case n == 1:
			vf.Cases = append(vf.Cases, Case{Args: args, Key: key})
		default:
			vf.Ambiguous = append(vf.Ambiguous, Case{Args: got, Key: key})
		}
	}
	if len(vf.Cases) == 0 {
		return Family{}, fmt.Errorf("no unambiguous case")
	}
	base := vf.Cases[0].Args
	for i, ph := range phs {
		t, _ := registry.ParsePlaceholderType(ph.Type)
		for _, v := range refused[ph.Type] {
			if t.Valid(v, sep) {
				continue
			}
			args := append([]string(nil), base...)
			args[i] = v
			vf.Invalid = append(vf.Invalid, Invalid{Index: i, Value: v, Args: args})
		}
	}
	vf.NonKeys = nonKeys(ps, vf.Cases[0], sep)
	return vf, nil
}

func render(ps []part, args []string) string {
	var b strings.Builder
	n := 0
	for _, p := range ps {
		if p.param {
			b.WriteString(args[n])
			n++
			continue
		}
		b.WriteString(p.lit)
	}
	return b.String()
}

// nonKeys derives strings near a valid key that are not keys of the
// family: cut, extended, emptied, with an int that overflows an int64.
func nonKeys(ps []part, c Case, sep byte) []string {
	cands := []string{"", c.Key[:len(c.Key)-1], "x" + c.Key, c.Key + "\x00", " " + c.Key, strings.ToUpper(c.Key)}
	if !ps[0].param {
		cands = append(cands, ps[0].lit)
	}
	if last := ps[len(ps)-1]; !last.param {
		cands = append(cands, strings.TrimSuffix(c.Key, last.lit))
	}
	n := 0
	for _, p := range ps {
		if !p.param {
			continue
		}
		if p.typ == registry.Int {
			args := append([]string(nil), c.Args...)
			args[n] = "9223372036854775808"
			cands = append(cands, render(ps, args))
			args[n] = "-9223372036854775809"
			cands = append(cands, render(ps, args))
		} else {
			// An empty value: no type takes it.
			args := append([]string(nil), c.Args...)
			args[n] = ""
			cands = append(cands, render(ps, args))
		}
		n++
	}
	out := []string{}
	seen := map[string]bool{}
	for _, k := range cands {
		if seen[k] {
			continue
		}
		seen[k] = true
		if _, m := match(ps, k, sep); m == 0 {
			out = append(out, k)
		}
	}
	return out
}

var minInt64, maxInt64 = big.NewInt(-1 << 63), big.NewInt(1<<63 - 1)

// fits reports whether v is a value of t that every backend takes: an
// int must fit in an int64.
func fits(t registry.PlaceholderType, v string, sep byte) bool {
	if !t.Valid(v, sep) {
		return false
	}
	if t == registry.Int {
		n, ok := new(big.Int).SetString(v, 10)
		return ok && n.Cmp(minInt64) >= 0 && n.Cmp(maxInt64) <= 0
	}
	return true
}

// match parses key by the Go backend's rule (each placeholder as long as
// the rest can still match) and counts the ways key matches, up to 2.
// Keys are short (a pattern is at most 1,024 bytes and values here are
// bounded), and the count is memoised on (part, offset), so it is
// polynomial.
func match(ps []part, key string, sep byte) ([]string, int) {
	memo := map[[2]int]int{}
	var count func(i, pos int) int
	count = func(i, pos int) int {
		if i == len(ps) {
			if pos == len(key) {
				return 1
			}
			return 0
		}
		if v, ok := memo[[2]int{i, pos}]; ok {
			return v
		}
		n := 0
		p := ps[i]
		if !p.param {
			if strings.HasPrefix(key[pos:], p.lit) {
				n = count(i+1, pos+len(p.lit))
			}
		} else {
			for e := len(key); e > pos && n < 2; e-- {
				if fits(p.typ, key[pos:e], sep) {
					n += count(i+1, e)
				}
			}
		}
		n = min(n, 2)
		memo[[2]int{i, pos}] = n
		return n
	}
	total := count(0, 0)
	if total == 0 {
		return nil, 0
	}
	var args []string
	pos := 0
	for i, p := range ps {
		if !p.param {
			pos += len(p.lit)
			continue
		}
		for e := len(key); e > pos; e-- {
			if fits(p.typ, key[pos:e], sep) && count(i+1, e) > 0 {
				args = append(args, key[pos:e])
				pos = e
				break
			}
		}
	}
	return args, total
}

// Marshal writes d as the committed files hold it: indented JSON with a
// final newline, non-ASCII as itself, and <, > and & unescaped.
func Marshal(d *Doc) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
