// Package compat decides whether a new JSON Schema is compatible with an old
// one, in the sense of Confluent Schema Registry's BACKWARD, FORWARD and FULL
// levels (see docs and reference/compatibility.md §2.1–2.6).
//
// The question is always asked as "is every value accepted by the writer
// schema also accepted by the reader schema?". For the Reader direction
// (BACKWARD) the old schema is the writer and the new schema the reader: new
// code must read values that old code stored. For the Writer direction
// (FORWARD) the roles swap: old code, still running during a rolling deploy,
// must read values that new code writes.
//
// The comparison is structural and keyword by keyword, with absent keywords
// meaning "unconstrained". Local $refs ("#/$defs/…", "#/definitions/…",
// "#anchor", or the document's own $id) are resolved and recursive schemas
// are handled by assuming a pair of locations compatible while it is being
// compared. Combinators (allOf, anyOf, oneOf) are compared by matching
// branches. Under the Lenient policy, the changes marked (L) in the reference
// (adding or removing optional properties around open or closed content
// models) are accepted, because keyreg's readers ignore unknown fields.
//
// Where the comparison is knowingly approximate:
//   - T -> oneOf[T', ...] is accepted when some branch accepts T, as
//     compatibility.md says, even if another branch overlaps (a value
//     matching two oneOf branches is invalid).
//   - A property required by the reader is accepted when the reader's
//     schema for it has a "default" (§2.4), though a validating reader would
//     reject values that lack it.
//   - The Lenient policy accepts (L) changes that a validating reader would
//     reject; use Strict for families whose consumers validate.
//   - unevaluatedProperties and unevaluatedItems are treated like
//     additionalProperties and items; patternProperties are matched by
//     pattern text; format is compared by name and reported as advisory.
//   - A $ref cycle that never descends into the value is an error.
//
// Change.Pointer is a JSON pointer into the new schema (for both directions):
// the location of the changed keyword after local $ref resolution, so it may
// point into "$defs". When the change removed something, the pointer names
// where it would be in the new schema, which is where it was in the old one
// unless the two schemas route through different $refs.
package compat

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Policy selects which changes around open content models are accepted.
type Policy int

const (
	// Lenient additionally accepts the changes marked (L) in
	// compatibility.md: optional properties added to or removed from open
	// and closed content models, and content models opened or closed. It is
	// keyreg's default and is safe when readers ignore unknown fields.
	Lenient Policy = iota
	// Strict is Confluent's default: it rejects the (L) changes.
	Strict
)

// String returns "lenient" or "strict".
func (p Policy) String() string {
	if p == Strict {
		return "strict"
	}
	return "lenient"
}

// Level is a compatibility level.
type Level string

const (
	// Backward means new readers can read values written by old writers.
	Backward Level = "BACKWARD"
	// Forward means old readers can read values written by new writers.
	Forward Level = "FORWARD"
	// Full means both Backward and Forward.
	Full Level = "FULL"
	// None disables the check.
	None Level = "NONE"
)

// ParseLevel parses a level name, case-insensitively.
func ParseLevel(s string) (Level, error) {
	switch l := Level(strings.ToUpper(strings.TrimSpace(s))); l {
	case Backward, Forward, Full, None:
		return l, nil
	}
	return "", fmt.Errorf("unknown compatibility level %q (want backward, forward, full or none)", s)
}

// Direction says which side of a deploy a change breaks.
type Direction string

const (
	// Reader is the BACKWARD check: new readers reading old data.
	Reader Direction = "reader"
	// Writer is the FORWARD check: old readers reading new data.
	Writer Direction = "writer"
)

// Change is one breaking change between two schemas.
type Change struct {
	// Pointer is a JSON pointer into the new schema where the change is,
	// such as "/properties/plan/enum" ("" is the root). See the package
	// documentation for removals and $refs.
	Pointer string
	// Direction is the side of the deploy that breaks.
	Direction Direction
	// Kind is a stable kebab-case change kind, such as "enum-value-added".
	// Kinds lists them all.
	Kind string
	// Message describes the change from old to new and its consequence,
	// lowercase without a trailing period.
	Message string
}

// String formats the change as `reader /pointer: message (kind)`.
func (c Change) String() string {
	p := c.Pointer
	if p == "" {
		p = "(root)"
	}
	return fmt.Sprintf("%s %s: %s (%s)", c.Direction, p, c.Message, c.Kind)
}

// Advisory reports whether the change is only advisory: format changes,
// which draft 2019-09 and later treat as annotations by default. Callers
// should report them as warnings rather than errors.
func (c Change) Advisory() bool {
	return strings.HasPrefix(c.Kind, "format-")
}

// Check returns the breaking changes between old and new, decoded JSON
// Schema documents (map[string]any, bool, []any, string, json.Number or
// float64, nil), at level under policy. Level None returns nil; Full checks
// both directions. Changes are sorted by direction, pointer and kind.
//
// Check returns an error only for documents it cannot reason about, such as
// a non-local or unresolvable $ref or a keyword of the wrong shape, never
// for merely breaking changes.
func Check(old, new any, level Level, policy Policy) (changes []Change, err error) {
	var dirs []Direction
	switch level {
	case None:
		return nil, nil
	case Backward:
		dirs = []Direction{Reader}
	case Forward:
		dirs = []Direction{Writer}
	case Full:
		dirs = []Direction{Reader, Writer}
	default:
		return nil, fmt.Errorf("unknown compatibility level %q", string(level))
	}
	od, err := newDoc(old)
	if err != nil {
		return nil, fmt.Errorf("old schema: %w", err)
	}
	nd, err := newDoc(new)
	if err != nil {
		return nil, fmt.Errorf("new schema: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			var se *schemaError
			if e, ok := r.(error); ok && errors.As(e, &se) {
				changes, err = nil, se
				return
			}
			panic(r)
		}
	}()
	for _, d := range dirs {
		c := newChecker(d, policy)
		w, r := od, nd
		if d == Writer {
			w, r = nd, od
		}
		changes = append(changes, c.cmpNodes(w.node(), r.node())...)
	}
	return sortChanges(changes), nil
}

func sortChanges(cs []Change) []Change {
	slices.SortFunc(cs, func(a, b Change) int {
		return cmp.Or(
			cmp.Compare(a.Direction, b.Direction),
			cmp.Compare(a.Pointer, b.Pointer),
			cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Message, b.Message),
		)
	})
	return slices.Compact(cs)
}

// Kinds lists every change kind Check can report, sorted.
func Kinds() []string {
	ks := slices.Clone(kinds)
	slices.Sort(ks)
	return slices.Compact(ks)
}
