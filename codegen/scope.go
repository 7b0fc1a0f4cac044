package codegen

import (
	"fmt"
	"maps"
	"slices"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// Scope selects the families Generate writes code for. The zero Scope is
// every family declared by hand: a preset's families (celery, bullmq, …)
// are the framework's internals, written by the library, not by the
// application.
type Scope struct {
	// Families are families by name; a preset family named here is
	// generated without IncludePresets.
	Families []string
	// Owners select every family of these owners (preset families only
	// with IncludePresets).
	Owners []string
	// IncludePresets adds preset families: those of Owners, or all of
	// them when no Owners are given.
	IncludePresets bool
	// Channels are Pub/Sub channels by name. Channels follow the rules of
	// families otherwise: the zero Scope takes every channel declared by
	// hand, Owners their channels, IncludePresets preset channels; naming
	// families or channels takes only those named (and Owners').
	Channels []string
}

// selected returns the names of the families of reg in scope, with the
// fence of every lock in scope (its FenceKey needs the fence's key type).
// It fails on a name or owner the registry does not have, on an owner
// whose families are all left out, and when families exist but none is
// in scope.
func (s Scope) selected(reg *registry.Registry) (map[string]bool, error) {
	in := map[string]bool{}
	byName := map[string]*registry.Family{}
	for _, f := range reg.Families {
		byName[f.Name] = f
	}
	for _, name := range s.Families {
		if byName[name] == nil {
			return nil, fmt.Errorf("family %q is not in the registry%s", name, nearest(name, slices.Collect(maps.Keys(byName))))
		}
		in[name] = true
	}
	owners := map[string]bool{}
	for _, f := range reg.Families {
		owners[f.Owner] = true
	}
	for _, o := range reg.Owners {
		owners[o.Name] = true
	}
	for _, c := range reg.Channels {
		owners[c.Owner] = true
	}
	for _, o := range s.Owners {
		if o == "" || !owners[o] {
			return nil, fmt.Errorf("owner %q is not in the registry%s", o, nearest(o, slices.Collect(maps.Keys(owners))))
		}
		n, presets := 0, 0
		for _, c := range reg.Channels {
			switch {
			case c.Owner != o:
			case c.Preset != "" && !s.IncludePresets:
				presets++
			default:
				n++ // channelsSelected takes it
			}
		}
		for _, f := range reg.Families {
			if f.Owner != o {
				continue
			}
			if f.Preset != "" && !s.IncludePresets {
				presets++
				continue
			}
			in[f.Name] = true
			n++
		}
		if n == 0 {
			if presets > 0 {
				return nil, fmt.Errorf("owner %q: its %s from presets, which are generated only when included", o, pluralVerb(presets, "family comes", "families come"))
			}
			return nil, fmt.Errorf("owner %q owns no family or channel", o)
		}
	}
	if len(s.Owners) == 0 {
		// Without owners: the families declared by hand unless families
		// or channels are named, and every preset family when presets are
		// included.
		named := len(s.Families) > 0 || len(s.Channels) > 0
		for _, f := range reg.Families {
			if f.Preset == "" && !named || f.Preset != "" && s.IncludePresets {
				in[f.Name] = true
			}
		}
		if len(in) == 0 && len(reg.Families) > 0 && !named && !hasHandChannel(reg) {
			return nil, fmt.Errorf("every family of the registry comes from a preset, and preset families are generated only when included or named")
		}
	}
	for _, f := range reg.Families {
		if in[f.Name] && f.Kind == registry.KindLock && f.FencingFamily != nil {
			in[f.FencingFamily.Name] = true
		}
	}
	return in, nil
}

// hasHandChannel reports whether reg declares a channel by hand: a
// registry of channels and preset families has something to generate.
func hasHandChannel(reg *registry.Registry) bool {
	return slices.ContainsFunc(reg.Channels, func(c *registry.Channel) bool { return c.Preset == "" })
}

// channelsSelected returns the names of the channels of reg in scope,
// by the rules of Scope. It fails on a channel name the registry does not
// have; selected has checked the owners.
func (s Scope) channelsSelected(reg *registry.Registry) (map[string]bool, error) {
	in := map[string]bool{}
	for _, name := range s.Channels {
		if _, ok := reg.Channel(name); !ok {
			names := make([]string, 0, len(reg.Channels))
			for _, c := range reg.Channels {
				names = append(names, c.Name)
			}
			return nil, fmt.Errorf("channel %q is not in the registry%s", name, nearest(name, names))
		}
		in[name] = true
	}
	owners := map[string]bool{}
	for _, o := range s.Owners {
		owners[o] = true
	}
	named := len(s.Families) > 0 || len(s.Channels) > 0
	for _, c := range reg.Channels {
		preset := c.Preset != ""
		switch {
		case len(s.Owners) > 0:
			if owners[c.Owner] && (!preset || s.IncludePresets) {
				in[c.Name] = true
			}
		case !preset && !named, preset && s.IncludePresets:
			in[c.Name] = true
		}
	}
	return in, nil
}

// pluralVerb writes n with the singular or plural phrase.
func pluralVerb(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// nearest returns ` (did you mean "x"?)` for the candidate closest to s
// (diag.Closest: a likely typo), or "".
func nearest(s string, candidates []string) string {
	slices.Sort(candidates) // ties go to the first name, deterministically
	if c, ok := diag.Closest(s, candidates); ok {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}
