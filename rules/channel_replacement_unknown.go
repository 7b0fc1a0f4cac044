package rules

import "github.com/keyreg/keyreg/diag"

// ChannelReplacementUnknown reports deprecated channels whose replaced_by
// names neither a channel nor a family, or a family that is not a stream
// with consumer groups: docs/channels.md migrates a channel to a sharded
// channel or to a stream family with groups:, and the audit's
// channel-deprecated-live tells subscribers to move to replaced_by. The
// message suggests the closest channel or family name.
var ChannelReplacementUnknown = &Rule{
	ID:       "channel-replacement-unknown",
	Doc:      "a deprecated channel's replaced_by names no channel, nor a stream family with groups",
	Kind:     KindLint,
	Severity: diag.Error,
	Channel:  true,
	Lint: func(p *Pass) {
		var names []string
		for _, c := range p.Reg.Channels {
			names = append(names, c.Name)
		}
		for _, f := range p.Reg.Families {
			names = append(names, f.Name)
		}
		for _, c := range p.Reg.Channels {
			d := c.Deprecated
			if d == nil || d.ReplacedBy == "" {
				continue
			}
			pos := c.PosOf("deprecated")
			if o, ok := p.Reg.Channel(d.ReplacedBy); ok {
				if o == c {
					p.ReportChannel(c, pos, "replaced_by %q names the channel itself", d.ReplacedBy)
				}
				continue
			}
			if f, ok := p.Reg.Family(d.ReplacedBy); ok {
				if f.Type != "stream" || len(f.Groups) == 0 {
					p.ReportChannel(c, pos, "replaced_by %q names a family that is not a stream with consumer groups (groups:): a channel's subscribers move to a channel, or to a stream's groups", d.ReplacedBy)
				}
				continue
			}
			others := make([]string, 0, len(names))
			for _, n := range names {
				if n != c.Name {
					others = append(others, n)
				}
			}
			p.ReportChannel(c, pos, "replaced_by %q names no channel or family%s", d.ReplacedBy, diag.DidYouMean(d.ReplacedBy, others))
		}
	},
}
