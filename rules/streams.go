package rules

import (
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// This file holds what the stream group rules share: the groups of a live
// stream (KeyFacts.Groups, those of its family's groups: that exist) next
// to their declarations.

// streamGroups calls fn with each group of a live stream and its
// declaration until fn returns true, and reports whether it did. It does
// not allocate.
func streamGroups(k *KeyFacts, fn func(g *source.GroupInfo, d *registry.StreamGroup) bool) bool {
	if k.Family == nil || !k.HasGroups || k.Type != "stream" {
		return false
	}
	for i := range k.Groups {
		for j := range k.Family.Groups {
			if d := &k.Family.Groups[j]; d.Name == k.Groups[i].Name && fn(&k.Groups[i], d) {
				return true
			}
		}
	}
	return false
}

// groupsDetail joins what each group that fn describes says, such as
// `group "delivery": lag 5000 (max 1000)`.
func groupsDetail(k *KeyFacts, fn func(g *source.GroupInfo, d *registry.StreamGroup) string) string {
	var out string
	streamGroups(k, func(g *source.GroupInfo, d *registry.StreamGroup) bool {
		if s := fn(g, d); s != "" {
			if out != "" {
				out += "; "
			}
			out += s
		}
		return false
	})
	return out
}
