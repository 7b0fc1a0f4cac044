package rules

import (
	"fmt"
	"slices"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// FencingSlot reports a lock and its fence whose keys can hash to
// different Redis Cluster slots. Taking a lock and incrementing its fence
// in one MULTI or Lua script then fails with CROSSSLOT on a cluster.
//
// A lock key and its fence key share a slot when they share a hash tag.
// The rule accepts exactly this: both patterns have a literal "{" with no
// placeholder before it that may contain "{" (int, hex, uuid and ulid
// cannot; word and any can), followed by the same parts (the same
// literals, and placeholders of the same names, which the fence key takes
// from the lock key) up to and including the first literal "}", and the
// tag cannot be empty (its first part is a literal, or a placeholder whose
// values cannot start with "}"). {{invoice_id:int}} in both patterns is
// the usual way. A lock and a fence without any hash tag hash their whole
// keys, which differ, so they are reported too.
var FencingSlot = &Rule{
	ID:       "fencing-slot",
	Doc:      "a lock and its fence do not share a hash tag, so they can hash to different cluster slots",
	Kind:     KindLint,
	Severity: diag.Error,
	Lint: func(p *Pass) {
		for _, f := range p.Reg.Families {
			fence := f.FencingFamily
			if fence == nil || f.FencingProblem() != "" || f.Pattern == nil || fence.Pattern == nil {
				continue
			}
			lt, lwhy := slotTag(f.Pattern)
			ft, fwhy := slotTag(fence.Pattern)
			switch {
			case lwhy != "":
				p.Reportf(f, f.PosOf("fencing"), "lock and fence %q may hash to different cluster slots: the lock pattern %s; give both the same hash tag, such as {{id:int}}", fence.Name, lwhy)
			case fwhy != "":
				p.Reportf(f, f.PosOf("fencing"), "lock and fence %q may hash to different cluster slots: the fence pattern %s; give both the same hash tag, such as {{id:int}}", fence.Name, fwhy)
			case !slices.Equal(lt, ft):
				p.Reportf(f, f.PosOf("fencing"), "lock and fence %q hash to different cluster slots: their hash tags differ (%s and %s); give both the same hash tag, such as {{id:int}}", fence.Name, tagString(lt), tagString(ft))
			}
		}
	},
}

// tagPart is one part of a hash tag: a literal byte, or a placeholder by
// name.
type tagPart struct {
	lit  byte
	name string
}

// slotTag returns the parts of p's hash tag, between the first literal "{"
// and the first literal "}" after it, or says why p's keys have no hash
// tag that is the same for every key.
func slotTag(p *registry.Pattern) ([]tagPart, string) {
	var parts []tagPart
	open := -1
	for _, pt := range p.Parts {
		if pt.IsPlaceholder() {
			if open < 0 && accepts(pt.Type, '{', p.Sep) {
				return nil, fmt.Sprintf("has {%s:%s} before its hash tag, whose values may contain \"{\"", pt.Name, pt.Type)
			}
			if open >= 0 {
				if len(parts) == 0 && pt.Type.AcceptsAt(0, '}', p.Sep) {
					return nil, fmt.Sprintf("starts its hash tag with {%s:%s}, whose values may start with \"}\" and empty the tag", pt.Name, pt.Type)
				}
				parts = append(parts, tagPart{name: pt.Name})
			}
			continue
		}
		for i := 0; i < len(pt.Lit); i++ {
			c := pt.Lit[i]
			switch {
			case open < 0 && c == '{':
				open = 0
			case open >= 0 && c == '}':
				if len(parts) == 0 {
					return nil, "has an empty hash tag \"{}\", so Redis hashes the whole key"
				}
				return parts, ""
			case open >= 0:
				parts = append(parts, tagPart{lit: c})
			}
		}
	}
	return nil, "has no hash tag, so Redis hashes the whole key"
}

// accepts reports whether some value of type t contains b.
func accepts(t registry.PlaceholderType, b, sep byte) bool {
	for i := range max(t.FixedLen(), 2) {
		if t.AcceptsAt(i, b, sep) {
			return true
		}
	}
	return false
}

func tagString(parts []tagPart) string {
	b := []byte{'{'}
	for _, p := range parts {
		if p.name != "" {
			b = append(b, "{"+p.name+"}"...)
			continue
		}
		b = append(b, escapeLit(string(p.lit))...)
	}
	return fmt.Sprintf("%q", append(b, '}'))
}
