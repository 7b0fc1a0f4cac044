package codegen

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/keyreg/keyreg/registry"
)

// Digest returns "sha256:<hex>" of the normalized registry: every family's
// name, pattern, separator, owner, type, encoding, TTL policy, schema, kind
// and fencing, and a stream's max_len and consumer groups, in name order. Comments, positions and descriptions do not change it.
// A registry's channels are in it too, by name, pattern, owner, mode,
// subscribe_glob, with:, encoding and schema; a registry without
// channels has the digest it had before channels existed.
func Digest(reg *registry.Registry) string {
	return digest(reg.Separator, reg.Families, reg.Channels)
}

// digest is the Digest of the given families of a registry.
func digest(sep byte, families []*registry.Family, channels []*registry.Channel) string {
	type group struct {
		Name    string `json:"name"`
		MaxIdle int64  `json:"max_consumer_idle"`
	}
	type fam struct {
		Name     string `json:"name"`
		Pattern  string `json:"pattern"`
		Owner    string `json:"owner"`
		Type     string `json:"type"`
		Encoding string `json:"encoding"`
		TTL      string `json:"ttl"`
		Schema   any    `json:"schema"`
		// What kinds and streams add to the generated code; empty for
		// other families, which keeps their digest.
		Kind    string  `json:"kind,omitempty"`
		Fencing string  `json:"fencing,omitempty"`
		MaxLen  int64   `json:"max_len,omitempty"`
		Groups  []group `json:"groups,omitempty"`
	}
	type channel struct {
		Name          string   `json:"name"`
		Pattern       string   `json:"pattern"`
		Owner         string   `json:"owner"`
		Mode          string   `json:"mode"`
		SubscribeGlob string   `json:"subscribe_glob,omitempty"`
		With          []string `json:"with,omitempty"`
		Encoding      string   `json:"encoding"`
		Schema        any      `json:"schema"`
	}
	doc := struct {
		Separator string    `json:"separator"`
		Families  []fam     `json:"families"`
		Channels  []channel `json:"channels,omitempty"`
	}{Separator: string(sep)}
	for _, f := range families {
		x := fam{Name: f.Name, Owner: f.Owner, Type: f.Type, Encoding: f.Encoding, TTL: f.TTL.String()}
		if f.Pattern != nil {
			x.Pattern = f.Pattern.Source
		}
		if f.Schema != nil {
			x.Schema = f.Schema.Doc
		}
		x.Kind, x.Fencing = f.Kind, f.Fencing
		if f.Type == "stream" {
			x.MaxLen = f.MaxLen
			for _, g := range f.Groups {
				x.Groups = append(x.Groups, group{Name: g.Name, MaxIdle: int64(g.MaxConsumerIdle)})
			}
		}
		doc.Families = append(doc.Families, x)
	}
	slices.SortFunc(doc.Families, func(a, b fam) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range channels {
		x := channel{Name: c.Name, Owner: c.Owner, Mode: c.Mode, SubscribeGlob: c.SubscribeGlob, Encoding: c.Encoding}
		if c.Pattern != nil {
			x.Pattern = c.Pattern.Source
		}
		if c.Schema != nil {
			x.Schema = c.Schema.Doc
		}
		for _, w := range c.With {
			x.With = append(x.With, w.Name)
		}
		doc.Channels = append(doc.Channels, x)
	}
	slices.SortFunc(doc.Channels, func(a, b channel) int { return strings.Compare(a.Name, b.Name) })
	// encoding/json writes map keys sorted, so the document is canonical.
	b, err := json.Marshal(doc)
	if err != nil {
		b = []byte(err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
