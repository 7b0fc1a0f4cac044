package rules

import (
	"strings"

	"github.com/keyreg/keyreg/registry"
)

// This file holds what several breaking rules share: how a pattern's key
// layout and hash tag are compared.

// layout renders the key language of p: its literal bytes, escaped, and
// each placeholder as {type}, with the separator first since it bounds
// word placeholders. Placeholder names do not count (placeholder-renamed
// reports them). With hashTags false, the literal braces around a {{name}}
// hash tag are left out, so that a hash tag added or removed is left to
// hash-tag-changed.
func layout(p *registry.Pattern, hashTags bool) string {
	var b strings.Builder
	b.WriteByte(p.Sep)
	b.WriteByte('|')
	for i, pt := range p.Parts {
		if pt.IsPlaceholder() {
			b.WriteString("{" + pt.Type.String() + "}")
			continue
		}
		lit := pt.Lit
		if !hashTags {
			if i+1 < len(p.Parts) && p.Parts[i+1].HashTag {
				lit = strings.TrimSuffix(lit, "{")
			}
			if i > 0 && p.Parts[i-1].HashTag {
				lit = strings.TrimPrefix(lit, "}")
			}
		}
		b.WriteString(escapeLit(lit))
	}
	return b.String()
}

var litEscaper = strings.NewReplacer(`\`, `\\`, `{`, `\{`, `}`, `\}`)

func escapeLit(s string) string { return litEscaper.Replace(s) }

// newKeySpace reports whether the change from of to nf starts a new key
// space: the version was bumped and the keys' layout changed, so no key of
// the old family is a key of the new one. Type, encoding and payload rules
// then have nothing to compare: old keys keep their old readers until they
// expire.
func newKeySpace(of, nf *registry.Family) bool {
	if of.Version == nf.Version || of.Pattern == nil || nf.Pattern == nil {
		return false
	}
	return layout(of.Pattern, true) != layout(nf.Pattern, true)
}

// hashTag returns the Redis Cluster hash tag of p's keys: the bytes
// between the first "{" and the next "}", when they are not empty. Only
// those bytes decide a key's slot. display renders the tag in pattern
// syntax, such as {{user_id}}; key compares tags with placeholder names
// left out. Both are empty when the whole key is hashed. Braces inside
// placeholder values are not considered.
func hashTag(p *registry.Pattern) (display, key string) {
	type tok struct {
		lit byte
		ph  *registry.Part
	}
	var toks []tok
	for i := range p.Parts {
		pt := &p.Parts[i]
		if pt.IsPlaceholder() {
			toks = append(toks, tok{ph: pt})
			continue
		}
		for j := 0; j < len(pt.Lit); j++ {
			toks = append(toks, tok{lit: pt.Lit[j]})
		}
	}
	open := -1
	for i, t := range toks {
		if t.ph == nil && t.lit == '{' {
			open = i
			break
		}
	}
	if open < 0 {
		return "", ""
	}
	end := -1
	for i := open + 1; i < len(toks); i++ {
		if toks[i].ph == nil && toks[i].lit == '}' {
			end = i
			break
		}
	}
	if end < 0 || end == open+1 {
		return "", ""
	}
	var d, k strings.Builder
	d.WriteByte('{')
	for _, t := range toks[open+1 : end] {
		if t.ph == nil {
			d.WriteString(escapeLit(string(t.lit)))
			k.WriteString(escapeLit(string(t.lit)))
			continue
		}
		d.WriteString("{" + t.ph.Name)
		if t.ph.Typed {
			d.WriteString(":" + t.ph.Type.String())
		}
		d.WriteString("}")
		k.WriteString("{" + t.ph.Type.String() + "}")
	}
	d.WriteByte('}')
	return d.String(), k.String()
}
