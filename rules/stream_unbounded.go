package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// StreamUnbounded warns about a stream family with neither max_len (its
// own or defaults.max_len) nor a ttl max: nothing in the registry says
// that its streams are trimmed (XADD MAXLEN, XTRIM) or expire, and a
// stream nobody trims keeps every entry ever added.
var StreamUnbounded = &Rule{
	ID:       "stream-unbounded",
	Doc:      "a stream family has neither max_len nor a ttl max, so nothing bounds its length",
	Kind:     KindLint,
	Severity: diag.Warn,
	Lint: func(p *Pass) {
		for _, f := range p.Reg.Families {
			if f.Type != "stream" || f.MaxLen > 0 || f.TTL.Kind == registry.TTLMax {
				continue
			}
			p.Reportf(f, f.PosOf("type"), "stream has neither max_len nor a ttl max (ttl: %s): declare the length it is trimmed to (max_len: N) or a ttl", f.TTL)
		}
	},
}
