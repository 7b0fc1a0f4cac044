package rules

import (
	"github.com/keyreg/keyreg/diag"
	"strconv"
)

// OwnerPrefixClaim reports families that put keys under a key prefix
// another owner claims (owners.<name>.prefixes). A claim keeps, say, a
// "v2:user:prefs:" family of another team from landing next to the
// sessions of the team that owns "v2:user:".
//
// A claimed prefix is a glob in which "*" matches any run of bytes, empty
// included, within one segment (never the separator). The rule looks only
// at the pattern's literal prefix, the bytes before its first placeholder:
// the family is reported when that literal prefix starts with a string the
// glob matches, so that every key of the family lies inside the claim.
// A pattern whose keys reach into a claim only through a placeholder, such
// as "v{n:int}:user:{id}" against "v1:user:", is not reported.
//
// Families owned by the claiming owner are fine; families without an owner
// or with another owner are reported once per claiming owner, on the
// pattern, naming the first matching prefix.
var OwnerPrefixClaim = &Rule{
	ID:       "owner-prefix-claim",
	Doc:      "a family's pattern starts with a key prefix that another owner claims (judged on the literal text before the first placeholder)",
	Kind:     KindLint,
	Severity: diag.Error,
	Lint: func(p *Pass) {
		sep := p.Reg.Separator
		for _, f := range p.Reg.Families {
			if f.Pattern == nil {
				continue
			}
			lit := f.Pattern.LiteralPrefix()
			for _, o := range p.Reg.Owners {
				if o.Name == f.Owner {
					continue
				}
				for _, pre := range o.Prefixes {
					if !globMatchesPrefix(pre.Glob, lit, sep) {
						continue
					}
					owned := "the family has no owner"
					if f.Owner != "" {
						owned = "the family is owned by " + strconv.Quote(f.Owner)
					}
					p.Reportf(f, f.PosOf("pattern"), "pattern %q is inside prefix %q claimed by owner %q, but %s",
						f.Pattern.Source, pre.Glob, o.Name, owned)
					break
				}
			}
		}
	},
}

// globMatchesPrefix reports whether glob matches some prefix of s. In glob,
// "*" matches any run of bytes other than sep, the empty run included;
// every other byte matches itself.
func globMatchesPrefix(glob, s string, sep byte) bool {
	// states[j] is true when glob[:i] can match s[:j].
	states := make([]bool, len(s)+1)
	states[0] = true
	for i := 0; i < len(glob); i++ {
		next := make([]bool, len(s)+1)
		alive := false
		if glob[i] == '*' {
			for j := 0; j <= len(s); j++ {
				if states[j] || (j > 0 && next[j-1] && s[j-1] != sep) {
					next[j] = true
					alive = true
				}
			}
		} else {
			for j := 0; j < len(s); j++ {
				if states[j] && s[j] == glob[i] {
					next[j+1] = true
					alive = true
				}
			}
		}
		if !alive {
			return false
		}
		states = next
	}
	return true // some states[j] is set: glob matches s[:j]
}
