package payload

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Violation is one way a value breaks its schema.
type Violation struct {
	// Pointer is the JSON pointer of the offending value within the
	// validated value, such as "/items/3/price"; "" is the value itself.
	// Required and additionalProperties violations point at the object.
	Pointer string
	// Reason says what is wrong without quoting the value, such as
	// `got string, want integer`, `missing required property "user_id"`
	// or `additional property "x" not allowed`.
	Reason string
	// Value is the offending value as compact JSON, cut to MaxValueLen
	// bytes. It is set only when Options.ShowValues is.
	Value string
}

// String formats the violation as `/pointer: reason`, or `(root): reason`
// for the value itself, adding the value when it is set.
func (v Violation) String() string {
	p := v.Pointer
	if p == "" {
		p = "(root)"
	}
	if v.Value != "" {
		return p + ": " + v.Reason + " (value " + v.Value + ")"
	}
	return p + ": " + v.Reason
}

// Options control validation output.
type Options struct {
	// ShowValues fills Violation.Value. Leave it unset unless the user asked
	// for values: they come from production data.
	ShowValues bool
	// MaxViolations caps the violations returned; 0 means
	// DefaultMaxViolations and a negative number means no cap.
	MaxViolations int
}

// DefaultMaxViolations is the cap used when Options.MaxViolations is 0.
const DefaultMaxViolations = 5

// MaxValueLen is the longest Violation.Value, in bytes.
const MaxValueLen = 80

func (o Options) max() int {
	switch {
	case o.MaxViolations == 0:
		return DefaultMaxViolations
	case o.MaxViolations < 0:
		return int(^uint(0) >> 1)
	}
	return o.MaxViolations
}

// Validate checks v, a value in the jsonschema v6 value model such as
// Decode returns, against s. It returns nil when v is valid or s is nil.
//
// Only leaf errors are reported, one violation per missing or additional
// property. Violations are sorted by pointer (array indexes numerically),
// then reason, then value, with duplicates removed, and cut to
// Options.MaxViolations. Reasons are built from the error kinds, never
// from jsonschema's messages, which can quote the value.
func Validate(s *jsonschema.Schema, v any, o Options) []Violation {
	if s == nil {
		return nil
	}
	vs := collect(s, v, o.ShowValues, nil)
	return finish(vs, o)
}

// violation is a Violation with its pointer still in tokens, for sorting.
type violation struct {
	tokens []string
	reason string
	value  string
}

// collect validates v and appends its leaf violations to vs.
func collect(s *jsonschema.Schema, v any, show bool, vs []violation) []violation {
	err := safeValidate(s, v)
	if err == nil {
		return vs
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return append(vs, violation{reason: "validation failed"})
	}
	return leaves(ve, v, show, vs)
}

// safeValidate runs the schema, turning a panic in it into an error.
func safeValidate(s *jsonschema.Schema, v any) (err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("validator failed")
		}
	}()
	return s.Validate(v)
}

func leaves(e *jsonschema.ValidationError, root any, show bool, vs []violation) []violation {
	switch e.ErrorKind.(type) {
	case *kind.Contains, *kind.MinContains, *kind.MaxContains, *kind.PropertyNames:
		// Their causes are the items or names that did not match, which
		// is expected of some: the keyword itself is the violation.
	default:
		if len(e.Causes) == 0 {
			break
		}
		for _, c := range e.Causes {
			vs = leaves(c, root, show, vs)
		}
		return vs
	}
	loc := e.InstanceLocation
	add := func(reason string, value func() string) {
		x := violation{tokens: loc, reason: reason}
		if show && value != nil {
			x.value = value()
		}
		vs = append(vs, x)
	}
	at := func(tokens ...string) func() string {
		return func() string { return render(lookup(root, tokens)) }
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			add("missing required property "+strconv.Quote(m), nil)
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			add("additional property "+strconv.Quote(p)+" not allowed", at(append(slices.Clip(loc), p)...))
		}
	case *kind.Dependency:
		for _, m := range k.Missing {
			add("property "+strconv.Quote(m)+" required when "+strconv.Quote(k.Prop)+" is present", nil)
		}
	case *kind.DependentRequired:
		for _, m := range k.Missing {
			add("property "+strconv.Quote(m)+" required when "+strconv.Quote(k.Prop)+" is present", nil)
		}
	case *kind.PropertyNames:
		// The name is the value under test here, so it stays out of the
		// reason.
		add("property name fails propertyNames", func() string { return render(k.Property) })
	case *kind.Type:
		got := k.Got
		if got == "number" && isInteger(lookup(root, loc)) {
			got = "integer"
		}
		add("got "+got+", want "+strings.Join(k.Want, " or "), at(loc...))
	default:
		add(reason(e.ErrorKind), at(loc...))
	}
	return vs
}

// isInteger reports whether a number value is integral, as JSON Schema
// counts integers (1.0 is one).
func isInteger(v any) bool {
	switch n := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(n))
		return ok && r.IsInt()
	case float64:
		return n == math.Trunc(n) && !math.IsInf(n, 0)
	}
	return false
}

// reason describes an error kind without the instance value. Schema values
// (an enum's members, a pattern) are fine to show.
func reason(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return "got " + k.Got + ", want " + strings.Join(k.Want, " or ")
	case *kind.Enum:
		return "value not in enum " + schemaValues(k.Want)
	case *kind.Const:
		return "value must be " + schemaValues([]any{k.Want})
	case *kind.Pattern:
		return "does not match pattern " + strconv.Quote(k.Want)
	case *kind.Format:
		return "not a valid " + strconv.Quote(k.Want)
	case *kind.MinLength:
		return "shorter than minLength " + strconv.Itoa(k.Want)
	case *kind.MaxLength:
		return "longer than maxLength " + strconv.Itoa(k.Want)
	case *kind.Minimum:
		return "less than minimum " + rat(k.Want)
	case *kind.Maximum:
		return "greater than maximum " + rat(k.Want)
	case *kind.ExclusiveMinimum:
		return "not greater than exclusiveMinimum " + rat(k.Want)
	case *kind.ExclusiveMaximum:
		return "not less than exclusiveMaximum " + rat(k.Want)
	case *kind.MultipleOf:
		return "not a multiple of " + rat(k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("has %d items, want at least %d", k.Got, k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("has %d items, want at most %d", k.Got, k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("has %d properties, want at least %d", k.Got, k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("has %d properties, want at most %d", k.Got, k.Want)
	case *kind.AdditionalItems:
		return fmt.Sprintf("%d additional items not allowed", k.Count)
	case *kind.UniqueItems:
		return fmt.Sprintf("items %d and %d are equal", k.Duplicates[0], k.Duplicates[1])
	case *kind.Contains:
		return "no item matches contains"
	case *kind.MinContains:
		return fmt.Sprintf("%d items match contains, want at least %d", len(k.Got), k.Want)
	case *kind.MaxContains:
		return fmt.Sprintf("%d items match contains, want at most %d", len(k.Got), k.Want)
	case *kind.OneOf:
		if len(k.Subschemas) >= 2 {
			return fmt.Sprintf("matches oneOf subschemas %d and %d, want exactly one", k.Subschemas[0], k.Subschemas[1])
		}
		return "matches no oneOf subschema"
	case *kind.AnyOf:
		return "matches no anyOf subschema"
	case *kind.AllOf:
		return "fails allOf"
	case *kind.Not:
		return "matches the schema in not"
	case *kind.FalseSchema:
		return "not allowed by schema false"
	case *kind.ContentEncoding:
		return "not valid " + strconv.Quote(k.Want) + " content"
	case *kind.ContentMediaType:
		return "not valid " + strconv.Quote(k.Want) + " content"
	case *kind.ContentSchema:
		return "content does not match contentSchema"
	case *kind.InvalidJsonValue:
		return "not a JSON value"
	case *kind.RefCycle:
		return "schema reference cycle"
	}
	if kp := k.KeywordPath(); len(kp) > 0 {
		return "fails keyword " + strconv.Quote("/"+strings.Join(kp, "/"))
	}
	return "validation failed"
}

// schemaValues lists schema values compactly: primitives as JSON, up to
// five of them; arrays and objects by kind.
func schemaValues(vs []any) string {
	var sb strings.Builder
	for i, v := range vs {
		if i == 5 {
			fmt.Fprintf(&sb, ", … (%d more)", len(vs)-5)
			break
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		switch v.(type) {
		case map[string]any:
			sb.WriteString("{…}")
		case []any:
			sb.WriteString("[…]")
		default:
			b, err := json.Marshal(v)
			if err != nil {
				sb.WriteString("?")
			} else {
				sb.WriteString(cut(string(b), 40))
			}
		}
	}
	return sb.String()
}

func rat(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// lookup resolves JSON pointer tokens in v, or returns nil.
func lookup(v any, tokens []string) any {
	for _, t := range tokens {
		switch x := v.(type) {
		case map[string]any:
			v = x[t]
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// render formats a value as compact JSON of at most MaxValueLen bytes.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return cut(string(b), MaxValueLen)
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// prune sorts and deduplicates violations and keeps the first m.
func prune(vs []violation, m int) []violation {
	slices.SortFunc(vs, compareViolation)
	vs = slices.CompactFunc(vs, func(a, b violation) bool { return compareViolation(a, b) == 0 })
	if len(vs) > m {
		clear(vs[m:])
		vs = vs[:m]
	}
	return vs
}

// finish sorts, deduplicates and caps violations.
func finish(vs []violation, o Options) []Violation {
	if len(vs) == 0 {
		return nil
	}
	vs = prune(vs, o.max())
	out := make([]Violation, len(vs))
	for i, x := range vs {
		out[i] = Violation{Pointer: pointer(x.tokens), Reason: x.reason, Value: x.value}
	}
	return out
}

func compareViolation(a, b violation) int {
	if c := compareTokens(a.tokens, b.tokens); c != 0 {
		return c
	}
	if c := strings.Compare(a.reason, b.reason); c != 0 {
		return c
	}
	return strings.Compare(a.value, b.value)
}

// compareTokens orders pointers token by token, comparing array indexes
// (all-digit tokens) numerically; a prefix sorts first.
func compareTokens(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if allDigits(x) && allDigits(y) {
			xs, ys := strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
			if len(xs) != len(ys) {
				return len(xs) - len(ys)
			}
			if c := strings.Compare(xs, ys); c != 0 {
				return c
			}
		}
		return strings.Compare(x, y)
	}
	return len(a) - len(b)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// pointer builds a JSON pointer (RFC 6901) from tokens.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		if strings.ContainsAny(t, "~/") {
			t = strings.ReplaceAll(t, "~", "~0")
			t = strings.ReplaceAll(t, "/", "~1")
		}
		sb.WriteString(t)
	}
	return sb.String()
}
