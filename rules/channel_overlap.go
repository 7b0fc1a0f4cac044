package rules

import (
	"fmt"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// ChannelOverlap reports pairs of channels whose patterns can name the same
// channel, by the same exact proof as pattern-overlap. Keys and channels are
// separate namespaces: a channel may overlap a family, never another
// channel, or nobody can tell whose a message is.
var ChannelOverlap = &Rule{
	ID:       "channel-overlap",
	Doc:      "two channel patterns can name the same channel, so the channel's owner is ambiguous",
	Kind:     KindLint,
	Severity: diag.Error,
	Channel:  true,
	Lint: func(p *Pass) {
		if len(p.Reg.Channels) < 2 {
			return
		}
		fams := make([]*registry.Family, len(p.Reg.Channels))
		for i, c := range p.Reg.Channels {
			fams[i] = &c.Family
		}
		overlaps, complete := registry.OverlapsWithin(fams, p.Reg.Separator, registry.OverlapBudget, registry.MaxOverlaps)
		shown := map[int]int{}
		for _, o := range overlaps {
			if shown[o.B.Index] == maxOverlapsShown {
				continue
			}
			shown[o.B.Index]++
			c := p.Reg.Channels[o.B.Index]
			p.ReportChannel(c, c.PosOf("pattern"), "%s", fmt.Sprintf("pattern %q overlaps channel %q (pattern %q): both name %q",
				o.B.Pattern.Source, o.A.Name, o.A.Pattern.Source, o.Example))
		}
		if !complete {
			p.ReportChannel(nil, p.Reg.KeyPos("channels"),
				"the channel overlap proof stopped at its bound (%d overlaps, or %d product states searched): some pairs of channels were not checked",
				registry.MaxOverlaps, registry.OverlapBudget)
		}
	},
}
