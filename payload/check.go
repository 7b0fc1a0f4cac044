package payload

import (
	"github.com/keyreg/keyreg/registry"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Sample is the sampled content of one Redis key. Only the field that
// matches Type is read.
type Sample struct {
	// Type is the Redis type of the key: string, hash, list, set, zset,
	// stream, or json (ReJSON-RL is accepted too). Empty means the
	// family's declared type.
	Type    string
	String  []byte              // string and json: the value (JSON.GET output for json)
	Fields  map[string][]byte   // hash: field to value
	Members [][]byte            // list, set, zset: the sampled members (zset scores are not checked)
	Entries []map[string][]byte // stream: each sampled entry's field map
}

// Result is what Check found in one sample.
type Result struct {
	// Detected counts the decoded units by encoding: a string value, each
	// hash field value, each member, each stream field value. A unit that
	// decodes under the declared encoding counts as that encoding; one that
	// does not counts as what Detect says it is. When nothing is decoded
	// (no encoding and no schema), every unit counts as Detect says.
	Detected map[string]int
	// DecodeErrors counts the units that failed to decode.
	DecodeErrors int
	// DecodeError is the first decode error's message; it never holds the
	// value.
	DecodeError string
	// Violations are the schema violations over all checked values, sorted
	// and deduplicated like Validate's and capped by Options.MaxViolations.
	// For list, set and zset members and stream entries the pointer is
	// relative to the member or entry.
	Violations []Violation
	// Checked counts the values validated against the schema: the string,
	// the hash as one object, each member, each stream entry. A hash or
	// entry with a field that failed to decode is not validated.
	Checked int
}

// Check decodes a sample per the family's encoding and validates it
// against the family's compiled schema, if any. The value the schema sees
// depends on the type (docs/registry.md, "Encodings and payload schemas"):
//
//   - string and json: the decoded value.
//   - hash: an object of field to decoded value.
//   - list, set and zset: each sampled member on its own.
//   - stream: each sampled entry's field map, values decoded.
//
// An empty encoding means json when the family has a schema; without a
// schema the values are only detected. A binary encoding decodes to
// nothing, so binary values are never validated. An unknown type yields an
// empty Result.
func Check(f *registry.Family, s Sample, o Options) Result {
	r := Result{Detected: make(map[string]int, 1)}
	if f == nil {
		return r
	}
	var sch *jsonschema.Schema
	if f.Schema != nil {
		sch = f.Schema.Compiled
	}
	c := checker{enc: f.Encoding, sch: sch, fast: fastFor(sch), o: o, r: &r}
	if c.enc == "" && f.Schema != nil {
		c.enc = JSON
	}
	typ := s.Type
	if typ == "" {
		typ = f.Type
	}
	switch typ {
	case "string", "json", "ReJSON-RL", "":
		if v, ok := c.decode(s.String); ok {
			c.validate(v)
		}
	case "hash":
		obj, ok := c.fields(s.Fields)
		if ok {
			c.validate(obj)
		}
	case "list", "set", "zset":
		for _, m := range s.Members {
			if v, ok := c.decode(m); ok {
				c.validate(v)
			}
		}
	case "stream":
		for _, e := range s.Entries {
			obj, ok := c.fields(e)
			if ok {
				c.validate(obj)
			}
		}
	}
	r.Violations = finish(c.vs, o)
	return r
}

type checker struct {
	enc  string
	sch  *jsonschema.Schema
	fast *fastNode // sch's fast path, or nil
	o    Options
	r    *Result
	vs   []violation
}

// decode decodes one unit and counts it. ok is false when the unit failed
// to decode or there is nothing to validate.
func (c *checker) decode(b []byte) (v any, ok bool) {
	if c.enc == "" {
		c.r.Detected[Detect(b)]++
		return nil, false
	}
	v, found, err := decode(c.enc, b)
	if found == "" { // unknown encoding: registry validation should stop this
		found = Detect(b)
	}
	c.r.Detected[found]++
	if err != nil {
		c.r.DecodeErrors++
		if c.r.DecodeError == "" {
			c.r.DecodeError = err.Error()
		}
		return nil, false
	}
	return v, !Opaque(found)
}

// fields decodes a field map into an object. ok is false when any field
// failed to decode or there is nothing to validate.
func (c *checker) fields(m map[string][]byte) (map[string]any, bool) {
	obj := make(map[string]any, len(m))
	ok := true
	for k, b := range m {
		v, vok := c.decode(b)
		ok = ok && vok
		obj[k] = v
	}
	return obj, ok
}

func (c *checker) validate(v any) {
	if c.sch == nil {
		return
	}
	c.r.Checked++
	if c.fast.check(v) == pass {
		return
	}
	c.vs = collect(c.sch, v, c.o.ShowValues, c.vs)
	if m := c.o.max(); len(c.vs) > 64 && len(c.vs) > 4*m {
		// Keep memory flat over many members: only the first m survive
		// finish anyway.
		c.vs = prune(c.vs, m)
	}
}
