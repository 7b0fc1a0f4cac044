package rules

import "github.com/keyreg/keyreg/diag"

// FencingInvalid reports a lock whose fencing: cannot work: it names no
// family, or a family that is not kind: fence, or the fence pattern has a
// placeholder the lock pattern does not bind (or binds to values the
// fence's placeholder type refuses), so that no fence key can be derived
// from a lock key. Fence keys are derived by placeholder name: the fence
// of v1:lock:invoice:{42} under v1:fence:invoice:{{invoice_id:int}} is
// v1:fence:invoice:{42}.
var FencingInvalid = &Rule{
	ID:       "fencing-invalid",
	Doc:      "a lock's fencing names no kind: fence family, or its fence key cannot be built from the lock key",
	Kind:     KindLint,
	Severity: diag.Error,
	Lint: func(p *Pass) {
		for _, f := range p.Reg.Families {
			if why := f.FencingProblem(); why != "" {
				p.Reportf(f, f.PosOf("fencing"), "%s", why)
			}
		}
	},
}
