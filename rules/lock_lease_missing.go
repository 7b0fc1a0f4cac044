package rules

import (
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// LockLeaseMissing reports a kind: lock family without a ttl max of its
// own. The TTL of a lock is its lease: how long a holder that died keeps
// everyone else out. A lock that may live forever (no ttl, persistent,
// optional) deadlocks on the first crash, and a TTL inherited from
// defaults.ttl is a lease nobody chose (24h of an invoice nobody can bill).
var LockLeaseMissing = &Rule{
	ID:       "lock-lease-missing",
	Doc:      "a kind: lock family declares no ttl max of its own, so a dead holder keeps the lock",
	Kind:     KindLint,
	Severity: diag.Error,
	Lint: func(p *Pass) {
		for _, f := range p.Reg.Families {
			if f.Kind != registry.KindLock || (f.TTL.Kind == registry.TTLMax && !f.TTLDefault) {
				continue
			}
			if f.TTLDefault {
				p.Reportf(f, f.PosOf("kind"), "lock has no lease: its ttl (%s) comes from defaults.ttl; declare the lease as ttl: <duration> on the family", f.TTL)
				continue
			}
			pos := f.PosOf("kind")
			if f.Has("ttl") {
				pos = f.PosOf("ttl")
			}
			p.Reportf(f, pos, "lock has no lease (ttl: %s): a holder that dies keeps the lock forever; declare the lease as ttl: <duration>", f.TTL)
		}
	},
}
