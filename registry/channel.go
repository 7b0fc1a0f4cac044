package registry

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// channels decodes the channels: list. A channel is decoded as a family is
// (the fields they share), then its own fields; what a family would take
// from defaults: (a TTL, limits) does not apply to a channel.
func (l *loader) channels(r *Registry, n *yaml.Node) {
	if n == nil || (l.lenient && n.Kind != yaml.SequenceNode) {
		return
	}
	for i, cn := range n.Content {
		if l.lenient && cn.Kind != yaml.MappingNode {
			continue
		}
		c, prev := l.channel(r, cn, "/channels/"+strconv.Itoa(i))
		f := &c.Family
		if f.Name == "" && l.lenient {
			// The schema reported the missing name.
		} else if prev != nil {
			l.errorf(f.PosOf("name"), RuleDuplicateName, f.Name, "channel name %q is already used at line %d", f.Name, prev.Pos.Line)
		} else {
			r.channelByName[f.Name] = c
		}
		r.Channels = append(r.Channels, c)
	}
}

// channel decodes one channel mapping (written by hand under channels:,
// or expanded from a preset), and returns the channel already declared
// with its name, if any; the caller records it.
func (l *loader) channel(r *Registry, cn *yaml.Node, ptr string) (*Channel, *Channel) {
	c := &Channel{Family: *l.family(r, cn, ptr), Mode: ModeClassic}
	f := &c.Family
	f.Index = len(r.Channels)
	f.TTL, f.TTLDefault, f.MaxIdle, f.MaxBytes, f.MaxLen = TTLPolicy{}, false, 0, 0, 0
	var globNode *yaml.Node
	for k, v := range pairs(cn) {
		switch k.Value {
		case "mode":
			c.Mode = v.Value
		case "subscribe_glob":
			c.SubscribeGlob, globNode = v.Value, v
		case "with":
			for _, item := range v.Content {
				c.With = append(c.With, ChannelRef{Name: item.Value, Pos: l.nodePos(item)})
			}
		}
	}
	switch {
	case c.Mode == ModePattern && globNode == nil:
		l.errorf(f.PosOf("mode"), RuleSchemaInvalid, f.Name, "channels: channel %q has mode: pattern but no subscribe_glob (the glob its subscribers pass to PSUBSCRIBE)", f.Name)
	case c.Mode != ModePattern && globNode != nil:
		l.errorf(f.PosOf("subscribe_glob"), RuleSchemaInvalid, f.Name, "channels: subscribe_glob applies to mode: pattern only (channel %q is %s)", f.Name, c.Mode)
	case globNode != nil:
		g, err := ParseGlob(c.SubscribeGlob)
		if err != nil {
			l.errorf(l.nodePos(globNode), RuleSchemaInvalid, f.Name, "channels: subscribe_glob %s: %v", quoteShort(c.SubscribeGlob), err)
		}
		c.Glob = g
	}
	if len(c.With) > 0 && c.Mode != ModeSharded {
		l.errorf(f.PosOf("with"), RuleSchemaInvalid, f.Name, "channels: with: applies to mode: sharded only (one SSUBSCRIBE of several channels; channel %q is %s)", f.Name, c.Mode)
	}
	return c, r.channelByName[f.Name]
}
