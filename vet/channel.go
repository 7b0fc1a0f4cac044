package vet

import (
	"fmt"
	"go/ast"

	"github.com/keyreg/keyreg/registry"
	"golang.org/x/tools/go/analysis"
)

// channels returns the registry's channels: those a channel shape can
// match. Channels are a namespace of their own: a channel name is matched
// against the channels, never the families.
func (l *loaded) channels(text string, s shape) []*registry.Channel {
	reg := l.reg
	var fams []*registry.Family
	if len(s.parts) == 1 {
		if f := reg.ChannelMatcher().Match(s.parts[0].lit); f != nil {
			fams = []*registry.Family{f}
		}
	} else {
		l.mu.Lock()
		if l.chanIndex == nil {
			cr := &registry.Registry{Separator: reg.Separator}
			for _, c := range reg.Channels {
				cr.Families = append(cr.Families, &c.Family)
			}
			l.chanIndex = cr.NewShapeIndex()
		}
		fams = l.chanIndex.Families(s.pattern(text, reg.Separator))
		l.mu.Unlock()
	}
	var out []*registry.Channel
	for _, f := range fams {
		if f.Index >= 0 && f.Index < len(reg.Channels) && &reg.Channels[f.Index].Family == f {
			out = append(out, reg.Channels[f.Index])
		}
	}
	return out
}

// channel checks a channel argument of cmd (PUBLISH, SUBSCRIBE, or their
// sharded forms) against the registry's channels, when it declares any.
func (v *visitor) channel(e ast.Expr, cmd string, sharded bool) {
	if len(v.l.reg.Channels) == 0 {
		return // a registry without channels: declares nothing to check them against
	}
	s := v.shapeOf(e, 0)
	if s.generated {
		return
	}
	literal := 0
	for _, p := range s.parts {
		literal += len(p.lit)
	}
	if s.unknown || literal == 0 || len(s.parts) == 0 || s.parts[0].hole {
		if v.c.Strict {
			v.report(analysis.Diagnostic{Pos: e.Pos(), End: e.End(), Category: RuleChannelUnregistered,
				Message: "channel shape cannot be derived statically; use a generated builder"})
		}
		return
	}
	text := render(s.parts)
	chans := v.l.channels(text, s)
	if len(chans) == 0 {
		v.report(analysis.Diagnostic{Pos: e.Pos(), End: e.End(), Category: RuleChannelUnregistered,
			Message: fmt.Sprintf("channel %s of %s matches no channel of the registry", s.quote(), cmd)})
		return
	}
	deprecated := true
	for _, c := range chans {
		deprecated = deprecated && c.Deprecated != nil
	}
	if deprecated {
		c := chans[0]
		msg := fmt.Sprintf("channel %s is of the deprecated channel %s", s.quote(), c.Name)
		if c.Deprecated.ReplacedBy != "" {
			msg += ", replaced by " + c.Deprecated.ReplacedBy
		}
		v.report(analysis.Diagnostic{Pos: e.Pos(), End: e.End(), Category: RuleChannelDeprecated, Message: msg})
	}
	if len(chans) != 1 {
		return
	}
	c := chans[0]
	switch {
	case sharded && c.Mode != registry.ModeSharded:
		v.report(analysis.Diagnostic{Pos: e.Pos(), End: e.End(), Category: RuleChannelModeMismatch,
			Message: fmt.Sprintf("%s on channel %s, declared %s: use %s", cmd, c.Name, c.Mode, cmd[1:])})
	case !sharded && c.Mode == registry.ModeSharded:
		v.report(analysis.Diagnostic{Pos: e.Pos(), End: e.End(), Category: RuleChannelModeMismatch,
			Message: fmt.Sprintf("%s on channel %s, declared sharded: use S%s", cmd, c.Name, cmd)})
	}
}
