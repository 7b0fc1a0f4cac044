package codegen

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/keyreg/keyreg/registry"
)

// RequestVersion is the version of the Request document; a change that
// a reader could trip on (a field renamed, removed or given another
// meaning) makes a new version, with a new schema in schemas/.
const RequestVersion = 1

// A Request is what every language backend generates from: the registry,
// built and validated once, in language-neutral terms, in the style of
// sqlc's GenerateRequest. keyreg gen json writes it as it is
// (docs/codegen.md, schemas/codegen-request.v1.schema.json).
//
// Families holds every family of the registry, in name order, because a
// backend chooses its names over the whole registry so that they do not
// depend on the scope; InScope marks those to generate. Channels are
// held the same way. Digest covers the families and channels in scope.
type Request struct {
	Version   int       `json:"version"`
	Digest    string    `json:"registry_digest"` // "sha256:<hex>", as Digest of the families and channels in scope
	Separator string    `json:"separator"`       // one byte
	Scope     ScopeDoc  `json:"scope"`
	Families  []*Family `json:"families"`
	// Channels are the registry's Pub/Sub channels, in name order;
	// InScope marks those to generate.
	Channels []*Channel `json:"channels,omitempty"`
	reg      *registry.Registry
}

// ScopeDoc is the scope a request was built with, as the flags gave it.
type ScopeDoc struct {
	Families       []string `json:"families"`
	Owners         []string `json:"owners"`
	IncludePresets bool     `json:"include_presets"`
	Channels       []string `json:"channels,omitempty"`
}

// Family is one family of a Request.
type Family struct {
	Name        string          `json:"name"`
	InScope     bool            `json:"in_scope"`
	Description string          `json:"description,omitempty"`
	Owner       string          `json:"owner"`
	Preset      string          `json:"preset,omitempty"` // the preset it comes from; "" for a family declared by hand
	Pattern     Pattern         `json:"pattern"`
	Type        string          `json:"type"`     // Redis type: string, hash, list, set, zset, stream, json, or ""
	Encoding    string          `json:"encoding"` // json, msgpack, text, int, float, binary, "a|b", or ""
	TTL         TTL             `json:"ttl"`
	Kind        string          `json:"kind,omitempty"`    // lock or fence
	Fencing     string          `json:"fencing,omitempty"` // a lock's fence family, when the link holds (lint reports one that does not)
	MaxLen      int64           `json:"max_len,omitempty"` // a stream's max_len
	Groups      []Group         `json:"groups,omitempty"`  // a stream's consumer groups, by name
	Schema      json.RawMessage `json:"schema,omitempty"`  // the payload JSON Schema, as compiled, canonical JSON
	Deprecated  *Deprecation    `json:"deprecated,omitempty"`

	family *registry.Family
}

// Channel is one Pub/Sub channel of a Request. A backend publishes a
// sharded channel with SPUBLISH only, never PUBLISH.
type Channel struct {
	Name          string          `json:"name"`
	InScope       bool            `json:"in_scope"`
	Preset        string          `json:"preset,omitempty"` // the preset it comes from; "" for a channel declared by hand
	Description   string          `json:"description,omitempty"`
	Owner         string          `json:"owner"`
	Pattern       Pattern         `json:"pattern"`
	Mode          string          `json:"mode"` // classic, sharded or pattern
	SubscribeGlob string          `json:"subscribe_glob,omitempty"`
	With          []string        `json:"with,omitempty"`
	Encoding      string          `json:"encoding"`
	Schema        json.RawMessage `json:"schema,omitempty"`
	Deprecated    *Deprecation    `json:"deprecated,omitempty"`
}

// Pattern is a family's key pattern, parsed.
type Pattern struct {
	Source string `json:"source"` // as in keys.yaml
	Glob   string `json:"glob"`   // the SCAN MATCH glob of its keys
	Parts  []Part `json:"parts"`  // literals and placeholders alternate; two placeholders are never adjacent
}

// Part is a literal or a placeholder of a pattern. A literal is Literal,
// and, when its bytes are not valid UTF-8 (which a JSON string cannot
// hold), LiteralBase64 holds them exactly.
type Part struct {
	Literal       string `json:"literal,omitempty"`
	LiteralBase64 string `json:"literal_base64,omitempty"`
	Placeholder   string `json:"placeholder,omitempty"` // its name
	Type          string `json:"type,omitempty"`        // word, int, uuid, hex, ulid, any
	HashTag       bool   `json:"hash_tag,omitempty"`    // written {{name}}: a Redis Cluster hash tag
}

// IsPlaceholder reports whether p is a placeholder.
func (p Part) IsPlaceholder() bool { return p.Placeholder != "" }

// TTL is a family's TTL policy: "max" with MaxMS milliseconds (MaxNS
// nanoseconds when not whole milliseconds), "persistent", "optional" or
// "unset".
type TTL struct {
	Policy string `json:"policy"`
	MaxMS  int64  `json:"max_ms,omitempty"`
	MaxNS  int64  `json:"max_ns,omitempty"`
	Text   string `json:"text"` // as in keys.yaml: "max 24h"
}

// Group is a consumer group of a stream family. MaxConsumerIdleMS is -1
// when max_consumer_idle is not set.
type Group struct {
	Name              string `json:"name"`
	MaxConsumerIdleMS int64  `json:"max_consumer_idle_ms"`
}

// Deprecation marks a family as on its way out; dates are YYYY-MM-DD.
type Deprecation struct {
	Since      string `json:"since,omitempty"`
	Sunset     string `json:"sunset,omitempty"`
	ReplacedBy string `json:"replaced_by,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// File is one generated file: its name, relative to where the backend's
// output goes, and its bytes.
type File struct {
	Name string
	Data []byte
}

// A Generator is a language backend: it turns a request into files. It
// is deterministic: the same request gives the same bytes.
type Generator interface {
	Generate(req *Request) ([]File, error)
}

// A Documenter is a backend that can name the key builder it writes for
// each family, for documentation such as the catalogue (keyreg docs).
type Documenter interface {
	// Builders returns, by family name, for every family of req (in scope
	// or not), the builder's signature as the language writes it, such as
	// "build_cart_items(user_id: int) -> str". The names are those
	// Generate writes.
	Builders(req *Request) (map[string]string, error)
}

// A ChannelDocumenter is a backend that can name what it writes for each
// Pub/Sub channel, for documentation such as the catalogue.
type ChannelDocumenter interface {
	// ChannelFuncs returns, by channel name, for every channel of req (in
	// scope or not), the signatures of its builder, publisher and
	// subscriber as the language writes them. The names are those
	// Generate writes.
	ChannelFuncs(req *Request) (map[string]ChannelFuncs, error)
}

// ChannelFuncs are the signatures a backend writes for one channel.
type ChannelFuncs struct {
	Build, Publish, Subscribe string
}

// NewRequest builds and validates the request for reg and scope. It fails
// when a family has no valid pattern or a placeholder of an unknown type,
// and on the errors of Scope.
func NewRequest(reg *registry.Registry, scope Scope) (*Request, error) {
	if reg == nil {
		return nil, errors.New("no registry")
	}
	in, err := scope.selected(reg)
	if err != nil {
		return nil, err
	}
	inChan, err := scope.channelsSelected(reg)
	if err != nil {
		return nil, err
	}
	sep := reg.Separator
	if sep == 0 {
		sep = ':'
	}
	req := &Request{
		Version:   RequestVersion,
		Separator: string([]byte{sep}),
		Scope: ScopeDoc{
			Families:       nonNil(scope.Families),
			Owners:         nonNil(scope.Owners),
			IncludePresets: scope.IncludePresets,
			Channels:       scope.Channels,
		},
		Families: make([]*Family, 0, len(reg.Families)),
		reg:      reg,
	}
	fams := slices.Clone(reg.Families)
	slices.SortFunc(fams, func(a, b *registry.Family) int { return strings.Compare(a.Name, b.Name) })
	var defs []*registry.Family
	for _, f := range fams {
		rf, err := newFamily(f)
		if err != nil {
			return nil, err
		}
		rf.InScope = in[f.Name]
		if rf.InScope {
			defs = append(defs, f)
		}
		req.Families = append(req.Families, rf)
	}
	var chanDefs []*registry.Channel
	chans := slices.Clone(reg.Channels)
	slices.SortFunc(chans, func(a, b *registry.Channel) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range chans {
		// A channel has a family's fields where they apply: convert them
		// as a family's.
		rf, err := newFamily(&c.Family)
		if err != nil {
			return nil, fmt.Errorf("channel %q: %w", c.Name, err)
		}
		rc := &Channel{Name: c.Name, InScope: inChan[c.Name], Preset: c.Preset, Description: c.Description, Owner: c.Owner, Pattern: rf.Pattern, Mode: c.Mode,
			SubscribeGlob: c.SubscribeGlob, Encoding: c.Encoding, Schema: rf.Schema, Deprecated: rf.Deprecated}
		if rc.InScope {
			chanDefs = append(chanDefs, c)
		}
		for _, w := range c.With {
			rc.With = append(rc.With, w.Name)
		}
		req.Channels = append(req.Channels, rc)
	}
	req.Digest = digest(reg.Separator, defs, chanDefs)
	return req, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

func newFamily(f *registry.Family) (*Family, error) {
	if f.Pattern == nil || len(f.Pattern.Parts) == 0 {
		return nil, fmt.Errorf("family %q has no valid pattern", f.Name)
	}
	rf := &Family{
		family:      f,
		Name:        f.Name,
		Description: f.Description,
		Owner:       f.Owner,
		Preset:      f.Preset,
		Type:        f.Type,
		Encoding:    f.Encoding,
		Kind:        f.Kind,
		Pattern:     Pattern{Source: f.Pattern.Source, Glob: f.Pattern.Glob()},
		TTL:         TTL{Text: f.TTL.String()},
	}
	for _, pt := range f.Pattern.Parts {
		if !pt.IsPlaceholder() {
			p := Part{Literal: pt.Lit}
			if !utf8.ValidString(pt.Lit) {
				p.Literal = strings.ToValidUTF8(pt.Lit, "\uFFFD")
				p.LiteralBase64 = base64.StdEncoding.EncodeToString([]byte(pt.Lit))
			}
			rf.Pattern.Parts = append(rf.Pattern.Parts, p)
			continue
		}
		if _, ok := registry.ParsePlaceholderType(pt.Type.String()); !ok {
			return nil, fmt.Errorf("family %q: placeholder %q has an unknown type", f.Name, pt.Name)
		}
		rf.Pattern.Parts = append(rf.Pattern.Parts, Part{Placeholder: pt.Name, Type: pt.Type.String(), HashTag: pt.HashTag})
	}
	switch f.TTL.Kind {
	case registry.TTLMax:
		rf.TTL.Policy = "max"
		if f.TTL.Max%time.Millisecond == 0 {
			rf.TTL.MaxMS = f.TTL.Max.Milliseconds()
		} else {
			rf.TTL.MaxNS = int64(f.TTL.Max)
		}
	case registry.TTLPersistent:
		rf.TTL.Policy = "persistent"
	case registry.TTLOptional:
		rf.TTL.Policy = "optional"
	default:
		rf.TTL.Policy = "unset"
	}
	// A broken link (lint's to report) is left out rather than refused:
	// a backend that needs it, such as Go's typed lock, says so.
	if f.Kind == registry.KindLock && f.Fencing != "" && f.FencingProblem() == "" {
		rf.Fencing = f.Fencing
	}
	if f.Type == "stream" {
		rf.MaxLen = f.MaxLen
		for _, g := range f.Groups {
			idle := int64(-1)
			if g.MaxConsumerIdle >= 0 {
				idle = g.MaxConsumerIdle.Milliseconds()
			}
			rf.Groups = append(rf.Groups, Group{Name: g.Name, MaxConsumerIdleMS: idle})
		}
	}
	if f.Schema != nil && f.Schema.Doc != nil {
		// encoding/json writes map keys sorted: the schema is canonical.
		// A document JSON cannot hold (NaN) is left out: audit reports it.
		if b, err := json.Marshal(f.Schema.Doc); err == nil {
			rf.Schema = b
		}
	}
	if d := f.Deprecated; d != nil {
		rd := &Deprecation{ReplacedBy: d.ReplacedBy, Reason: d.Reason}
		if !d.Since.IsZero() {
			rd.Since = d.Since.Format(time.DateOnly)
		}
		if !d.Sunset.IsZero() {
			rd.Sunset = d.Sunset.Format(time.DateOnly)
		}
		rf.Deprecated = rd
	}
	return rf, nil
}

// Registry returns the registry the request was built from, for a
// backend that needs more than the request says (today the Go backend's
// payload types).
func (r *Request) Registry() *registry.Registry { return r.reg }

// InScope returns the names of the families in scope, as a set.
func (r *Request) InScope() map[string]bool {
	in := map[string]bool{}
	for _, f := range r.Families {
		if f.InScope {
			in[f.Name] = true
		}
	}
	return in
}

// RegistryFamily returns the registry's family behind f.
func (f *Family) RegistryFamily() *registry.Family { return f.family }

// MarshalIndented writes the request as keyreg gen json does: indented
// by two spaces, fields in a fixed order, with a final newline.
func (r *Request) MarshalIndented() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
