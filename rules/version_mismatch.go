package rules

import (
	"strconv"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// VersionMismatch reports families whose version: disagrees with the
// version segment of their pattern. A version segment is a whole segment
// of literal text of the form v<N>, such as "v2" in "v2:user:{id}";
// segments that contain a placeholder never count.
//
// A family with version: N is reported when its pattern has no "vN"
// segment, or when it has a v<M> segment with M != N. A family without
// version: is not checked, and families with managed_by are exempt, since
// a framework names their keys.
var VersionMismatch = &Rule{
	ID:       "version-mismatch",
	Doc:      "a family's version does not match the v<N> segment of its pattern",
	Kind:     KindLint,
	Severity: diag.Error,
	Lint: func(p *Pass) {
		for _, f := range p.Reg.Families {
			if f.Pattern == nil || f.ManagedBy != "" || !f.Has("version") {
				continue
			}
			want := "v" + strconv.Itoa(f.Version)
			found := false
			var other []string
			for _, seg := range versionSegments(f.Pattern) {
				if seg == want {
					found = true
				} else {
					other = append(other, seg)
				}
			}
			switch {
			case !found && len(other) == 0:
				p.Reportf(f, f.PosOf("version"), "version is %d but pattern %q has no %q segment", f.Version, f.Pattern.Source, want)
			case !found:
				p.Reportf(f, f.PosOf("version"), "version is %d but pattern %q has version segment %q", f.Version, f.Pattern.Source, other[0])
			case len(other) > 0:
				p.Reportf(f, f.PosOf("version"), "version is %d but pattern %q also has version segment %q", f.Version, f.Pattern.Source, other[0])
			}
		}
	},
}

// versionSegments returns the whole literal segments of pat that have the
// form v<N>: "v" and a decimal number without leading zeros.
func versionSegments(pat *registry.Pattern) []string {
	var (
		out   []string
		seg   []byte
		holds bool // the current segment contains a placeholder
	)
	end := func() {
		if !holds && isVersionSegment(seg) {
			out = append(out, string(seg))
		}
		seg, holds = seg[:0], false
	}
	for _, pt := range pat.Parts {
		if pt.IsPlaceholder() {
			holds = true
			continue
		}
		for i := 0; i < len(pt.Lit); i++ {
			if pt.Lit[i] == pat.Sep {
				end()
				continue
			}
			seg = append(seg, pt.Lit[i])
		}
	}
	end()
	return out
}

func isVersionSegment(s []byte) bool {
	if len(s) < 2 || s[0] != 'v' || (s[1] == '0' && len(s) > 2) {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
