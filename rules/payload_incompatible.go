package rules

import (
	"fmt"

	"github.com/keyreg/keyreg/compat"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/registry"
)

// PayloadIncompatible compares the payload schemas of a family in the old
// and the new registry under the new family's compat level (BACKWARD,
// FORWARD, FULL by default, or NONE) and compat_policy (lenient by
// default), and reports each breaking change that compat.Check finds: one
// finding per change, on the new family's schema: line, with the JSON
// pointer into the new schema and the direction that breaks.
//
// Reader-safe (BACKWARD) means new code can read values that old code
// stored, which stay live until they expire. Writer-safe (FORWARD) means
// old code, still running during a rolling deploy, can read values that new
// code writes. FULL asks for both, because a shared Redis has old and new
// readers and writers at once. Changes to "format" are advisory (draft
// 2019-09 treats format as an annotation) and are reported as warnings.
//
// Families without a schema on either side are not compared, nor is a
// version bump that also changes the pattern: it starts a new key space.
// A schema that compat cannot reason about, such as one with a $ref to
// another file, is reported as a warning.
var PayloadIncompatible = &Rule{
	ID:       "payload-incompatible",
	Doc:      "a payload schema change is not reader-safe or writer-safe, as the family's compat level requires",
	Kind:     KindBreaking,
	Category: CategoryPayload,
	Severity: diag.Error,
	Breaking: func(p *BreakingPass) {
		p.Pairs(func(of, nf *registry.Family) {
			if of.Schema == nil || nf.Schema == nil || of.Schema.Doc == nil || nf.Schema.Doc == nil || newKeySpace(of, nf) {
				return
			}
			level, err := compat.ParseLevel(nf.Compat)
			if err != nil || level == compat.None {
				return
			}
			policy := compat.Lenient
			if nf.CompatPolicy == registry.PolicyStrict {
				policy = compat.Strict
			}
			pos := nf.PosOf("schema")
			changes, err := compat.Check(of.Schema.Doc, nf.Schema.Doc, level, policy)
			if err != nil {
				p.Report(diag.Diagnostic{Pos: pos, Severity: diag.Warn, Family: nf.Name,
					Message: fmt.Sprintf("payload schemas not compared: %v", err)})
				return
			}
			for _, c := range changes {
				d := diag.Diagnostic{Pos: pos, Family: nf.Name, Pointer: c.Pointer,
					Message: fmt.Sprintf("payload schema change %s is not %s: %s (%s; compat %s, %s policy)",
						where(c.Pointer), safety(c.Direction), c.Message, c.Kind, level, policy)}
				if c.Advisory() {
					d.Severity = diag.Warn
				}
				p.Report(d)
			}
		})
	},
}

func where(ptr string) string {
	if ptr == "" {
		return "at the schema root"
	}
	return fmt.Sprintf("at %q", ptr)
}

// safety names what a change in direction d is not.
func safety(d compat.Direction) string {
	if d == compat.Writer {
		return "writer-safe"
	}
	return "reader-safe"
}
