package typescript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
)

// maxRegexSource bounds the JavaScript source of one translated pattern:
// a Unicode class (\pL) becomes its ranges, a few KiB each.
const maxRegexSource = 1 << 18

// maxRegexSources bounds the translations of one module together (a
// schema may hold thousands of patterns); the patterns past it are left
// unchecked, to keyreg audit.
const maxRegexSources = 1 << 22

// jsRegex translates a JSON Schema pattern, an RE2 expression as keyreg
// (Go's regexp, through jsonschema) compiles it, to the source of a
// JavaScript RegExp with the "u" flag that matches the same strings: the
// parse tree is written back with every character class as its explicit
// code-point ranges (so \s, \w, \d, [[:alpha:]], \pL, case folding and .
// mean in JavaScript what they mean in Go), ^ and $ as Go's text anchors,
// (?m)'s line anchors as lookarounds on \n, (?s). as any character, \z as
// $, and groups as non-capturing groups. ok is false for a pattern Go does
// not compile (keyreg refuses the schema) or one whose translation is
// longer than maxRegexSource; the check then skips it.
func jsRegex(pattern string) (src string, ok bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !writeRegex(&b, re, 0) || b.Len() > maxRegexSource {
		return "", false
	}
	return b.String(), true
}

func writeRegex(b *strings.Builder, re *syntax.Regexp, depth int) bool {
	if depth > 1000 || b.Len() > maxRegexSource {
		return false
	}
	sub := func(i int) bool {
		b.WriteString("(?:")
		ok := writeRegex(b, re.Sub[i], depth+1)
		b.WriteString(")")
		return ok
	}
	switch re.Op {
	case syntax.OpNoMatch:
		b.WriteString(`[^\s\S]`)
	case syntax.OpEmptyMatch:
		b.WriteString(`(?:)`)
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				writeClass(b, foldRanges(r))
			} else {
				writeRune(b, r)
			}
		}
	case syntax.OpCharClass:
		writeClass(b, re.Rune)
	case syntax.OpAnyCharNotNL:
		b.WriteString(`[^\n]`)
	case syntax.OpAnyChar:
		b.WriteString(`[\s\S]`)
	case syntax.OpBeginLine:
		b.WriteString(`(?<![^\n])`)
	case syntax.OpEndLine:
		b.WriteString(`(?![^\n])`)
	case syntax.OpBeginText:
		b.WriteString(`^`)
	case syntax.OpEndText:
		b.WriteString(`$`)
	case syntax.OpWordBoundary:
		b.WriteString(`\b`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`\B`)
	case syntax.OpCapture:
		return sub(0)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		if !sub(0) {
			return false
		}
		switch re.Op {
		case syntax.OpStar:
			b.WriteString("*")
		case syntax.OpPlus:
			b.WriteString("+")
		case syntax.OpQuest:
			b.WriteString("?")
		default:
			if re.Max < 0 {
				fmt.Fprintf(b, "{%d,}", re.Min)
			} else {
				fmt.Fprintf(b, "{%d,%d}", re.Min, re.Max)
			}
		}
		if re.Flags&syntax.NonGreedy != 0 {
			b.WriteString("?")
		}
	case syntax.OpConcat:
		for i := range re.Sub {
			if !sub(i) {
				return false
			}
		}
	case syntax.OpAlternate:
		b.WriteString("(?:")
		for i := range re.Sub {
			if i > 0 {
				b.WriteString("|")
			}
			if !writeRegex(b, re.Sub[i], depth+1) {
				return false
			}
		}
		b.WriteString(")")
	default:
		return false
	}
	return true
}

// foldRanges are the ranges of r and every rune that case-folds to it, as
// Go's (?i) matches them.
func foldRanges(r rune) []rune {
	orbit := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		orbit = append(orbit, f)
	}
	slices.Sort(orbit)
	var out []rune
	for _, x := range orbit {
		out = append(out, x, x)
	}
	return out
}

// writeClass writes ranges (lo, hi pairs) as a JavaScript class; no range
// at all is a class that matches nothing.
func writeClass(b *strings.Builder, ranges []rune) {
	if len(ranges) == 0 {
		b.WriteString(`[^\s\S]`)
		return
	}
	b.WriteString("[")
	for i := 0; i+1 < len(ranges); i += 2 {
		writeRune(b, ranges[i])
		if ranges[i+1] != ranges[i] {
			b.WriteString("-")
			writeRune(b, ranges[i+1])
		}
	}
	b.WriteString("]")
}

// writeRune writes r as itself when it is an ASCII letter or digit, else
// as \u{…}, which means r alike in and out of a class under the u flag.
func writeRune(b *strings.Builder, r rune) {
	if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
		b.WriteRune(r)
		return
	}
	fmt.Fprintf(b, `\u{%X}`, r)
}

// schemaPatterns are the regular expressions of a JSON Schema document:
// every string under a "pattern" key and every key of a
// "patternProperties" object, wherever they are (a $ref may point
// anywhere), in document order with repeats.
func schemaPatterns(doc any, out []string, depth int) []string {
	if depth > 256 {
		return out
	}
	switch x := doc.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			switch v := x[k].(type) {
			case string:
				if k == "pattern" {
					out = append(out, v)
				}
			case map[string]any:
				if k == "patternProperties" {
					pk := make([]string, 0, len(v))
					for p := range v {
						pk = append(pk, p)
					}
					slices.Sort(pk)
					out = append(out, pk...)
				}
			}
			out = schemaPatterns(x[k], out, depth+1)
		}
	case []any:
		for _, v := range x {
			out = schemaPatterns(v, out, depth+1)
		}
	}
	return out
}

// writePatterns writes keyregPatternSources, the JavaScript translation of
// every pattern of the schemas in scope, which the schema check's
// keyregRegExp looks up.
func (v *view) writePatterns(b *bytes.Buffer) {
	var docs []json.RawMessage
	for _, f := range v.fams {
		docs = append(docs, f.Schema)
	}
	for _, c := range v.chans {
		docs = append(docs, c.Schema)
	}
	var pats []string
	for _, d := range docs {
		var doc any
		if len(d) > 0 && json.Unmarshal(d, &doc) == nil {
			pats = schemaPatterns(doc, pats, 0)
		}
	}
	b.WriteString("\n/** The schemas' patterns (RE2, as keyreg compiles them) and the JavaScript expressions that match the same strings. */\n")
	b.WriteString("const keyregPatternSources: ReadonlyArray<readonly [string, string]> = [\n")
	seen := map[string]bool{}
	total := 0
	for _, p := range pats {
		if seen[p] {
			continue
		}
		seen[p] = true
		if js, ok := jsRegex(p); ok && total+len(p)+len(js) <= maxRegexSources {
			total += len(p) + len(js)
			fmt.Fprintf(b, "  [%s, %s],\n", str(p), str(js))
		}
	}
	b.WriteString("];\n")
}
