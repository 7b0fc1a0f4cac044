package rules

import (
	"slices"

	"github.com/keyreg/keyreg/diag"
)

// ChannelShardedSlot reports sharded channels declared to be subscribed
// together (with:) that do not share a hash tag. One SSUBSCRIBE of several
// channels must stay in one slot, or Redis refuses it with CROSSSLOT. The
// hash tag test is fencing-slot's (slotTag): the same parts between the
// first literal "{" and the next "}". A with: entry that names no channel,
// or a channel that is not sharded, is reported too.
var ChannelShardedSlot = &Rule{
	ID:       "channel-sharded-slot",
	Doc:      "sharded channels subscribed together (with:) do not share a hash tag, so one SSUBSCRIBE would cross slots",
	Kind:     KindLint,
	Severity: diag.Error,
	Channel:  true,
	Lint: func(p *Pass) {
		for _, c := range p.Reg.Channels {
			if c.Pattern == nil {
				continue
			}
			for _, w := range c.With {
				o, ok := p.Reg.Channel(w.Name)
				switch {
				case !ok:
					p.ReportChannel(c, w.Pos, "with: names %q, which is no channel", w.Name)
					continue
				case o.Mode != "sharded":
					p.ReportChannel(c, w.Pos, "with: names %q, which is %s, not sharded: one SSUBSCRIBE takes sharded channels only", w.Name, o.Mode)
					continue
				case o.Pattern == nil:
					continue
				}
				ct, cwhy := slotTag(c.Pattern)
				ot, owhy := slotTag(o.Pattern)
				switch {
				case cwhy != "":
					p.ReportChannel(c, w.Pos, "subscribed with %q, but its pattern %s; give both the same hash tag, such as {{room_id:int}}", w.Name, cwhy)
				case owhy != "":
					p.ReportChannel(c, w.Pos, "subscribed with %q, whose pattern %s; give both the same hash tag, such as {{room_id:int}}", w.Name, owhy)
				case !slices.Equal(ct, ot):
					p.ReportChannel(c, w.Pos, "subscribed with %q, but their hash tags differ (%s and %s), so one SSUBSCRIBE would cross slots (CROSSSLOT)", w.Name, tagString(ct), tagString(ot))
				}
			}
		}
	},
}
