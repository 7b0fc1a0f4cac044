package rules

import "github.com/keyreg/keyreg/diag"

// VersionMissing reports families whose keys carry no layout version: the
// pattern has no v<N> segment (see version-mismatch for what counts as
// one), the family declares no version:, and no framework names its keys
// (managed_by). Without a version, the next incompatible layout or payload
// can only be an in-place change that breaks the readers of live keys,
// instead of a new family (v2:…) that lives next to the old one during the
// migration.
//
// Families with managed_by, which every preset family has, are exempt:
// Celery or Sidekiq choose those names. A family with version: but no
// matching segment is version-mismatch's. To keep a family unversioned on
// purpose, ignore the rule on it with a reason.
var VersionMissing = &Rule{
	ID:       "version-missing",
	Doc:      "a family's pattern has no v<N> layout version segment, and the family has neither version nor managed_by",
	Kind:     KindLint,
	Severity: diag.Warn,
	Lint: func(p *Pass) {
		for _, f := range p.Reg.Families {
			if f.Pattern == nil || f.ManagedBy != "" || f.Has("version") || len(versionSegments(f.Pattern)) > 0 {
				continue
			}
			p.Reportf(f, f.PosOf("pattern"), "pattern %q has no v<N> layout version segment: start the keys with v1%s and declare version: 1, so that an incompatible change can be a new family beside this one; or set managed_by when a framework names the keys",
				f.Pattern.Source, string(f.Pattern.Sep))
		}
	},
}
