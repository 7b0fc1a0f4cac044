package rules

import (
	"github.com/keyreg/keyreg/diag"
)

// ChannelGlobMismatch reports a pattern channel whose subscribe_glob does
// not cover every channel its pattern names (subscribers would miss those
// messages), or covers a channel another declaration names (subscribers
// would receive another team's messages). Both are exact proofs over the
// glob's automaton and the patterns', with a shortest example.
var ChannelGlobMismatch = &Rule{
	ID:       "channel-glob-mismatch",
	Doc:      "a pattern channel's subscribe_glob misses channels of its pattern, or catches another channel's",
	Kind:     KindLint,
	Severity: diag.Error,
	Channel:  true,
	Lint: func(p *Pass) {
		sep := p.Reg.Separator
		for _, c := range p.Reg.Channels {
			if c.Glob == nil || c.Pattern == nil {
				continue
			}
			if ex, ok := c.Glob.Missing(c.Pattern, sep); ok {
				p.ReportChannel(c, c.PosOf("subscribe_glob"), "subscribe_glob %q misses %q, a channel of its pattern %q: its subscribers never receive it", c.SubscribeGlob, ex, c.Pattern.Source)
			}
			for _, o := range p.Reg.Channels {
				if o == c || o.Pattern == nil {
					continue
				}
				if o.Glob != nil && o.SubscribeGlob == c.SubscribeGlob {
					// One PSUBSCRIBE reaches both channels (socket.io's
					// broadcasts and room broadcasts): declared together.
					continue
				}
				if ex, ok := c.Glob.Catches(o.Pattern, sep); ok {
					p.ReportChannel(c, c.PosOf("subscribe_glob"), "subscribe_glob %q also matches %q, a channel of %q (pattern %q): its subscribers receive another channel's messages", c.SubscribeGlob, ex, o.Name, o.Pattern.Source)
				}
			}
		}
	},
}
