package report

import (
	"strings"

	"github.com/keyreg/keyreg/registry"
)

// OfChannel is Explanation.Of for a Pub/Sub channel.
const OfChannel = "channel"

// ChannelFacts describes the channel declaration a channel name belongs to.
type ChannelFacts struct {
	Name          string         `json:"name"`
	Description   string         `json:"description,omitempty"`
	Position      string         `json:"position"` // keys.yaml:line:col
	Pattern       string         `json:"pattern"`
	Mode          string         `json:"mode"` // classic, sharded or pattern
	Publish       string         `json:"publish"`
	Subscribe     string         `json:"subscribe"` // the command subscribers use, with the glob for a pattern channel
	SubscribeGlob string         `json:"subscribe_glob,omitempty"`
	With          []string       `json:"with,omitempty"`
	Owner         string         `json:"owner,omitempty"`
	Contact       string         `json:"contact,omitempty"`
	Encoding      string         `json:"encoding,omitempty"`
	Schema        *SchemaSummary `json:"schema,omitempty"`
	Deprecated    *Deprecation   `json:"deprecated,omitempty"`
	// ClusterFanOut is set when the registry says cluster: true and the channel
	// is published with PUBLISH: every message goes to every node.
	ClusterFanOut bool `json:"cluster_fan_out,omitempty"`
}

// ExplainChannel looks a channel name up among the registry's channels.
// Params are the placeholders it binds; when none matches, Matched is false.
func ExplainChannel(reg *registry.Registry, name string) *Explanation {
	e := &Explanation{Key: name, Of: OfChannel}
	f, params := reg.ChannelMatcher().MatchParams(name, nil)
	if f == nil {
		return e
	}
	c := reg.Channels[f.Index]
	e.Matched = true
	cf := &ChannelFacts{
		Name:          c.Name,
		Description:   c.Description,
		Position:      c.Pos.String(),
		Pattern:       c.Pattern.Source,
		Mode:          c.Mode,
		Publish:       "PUBLISH",
		Subscribe:     "SUBSCRIBE",
		SubscribeGlob: c.SubscribeGlob,
		Owner:         c.Owner,
		Encoding:      c.Encoding,
		ClusterFanOut: reg.Cluster && c.Mode != registry.ModeSharded,
	}
	switch c.Mode {
	case registry.ModeSharded:
		cf.Publish, cf.Subscribe = "SPUBLISH", "SSUBSCRIBE"
	case registry.ModePattern:
		cf.Subscribe = "PSUBSCRIBE " + c.SubscribeGlob
	}
	for _, w := range c.With {
		cf.With = append(cf.With, w.Name)
	}
	if o, ok := reg.Owner(c.Owner); ok {
		cf.Contact = o.Contact
	}
	if d := c.Deprecated; d != nil {
		cf.Deprecated = &Deprecation{Since: date(d.Since), Sunset: date(d.Sunset), ReplacedBy: d.ReplacedBy, Reason: d.Reason}
	}
	if c.Schema != nil {
		cf.Schema = summarizeSchema(c.Schema)
	}
	e.Channel = cf
	types := map[string]string{}
	for _, ph := range c.Pattern.Placeholders() {
		types[ph.Name] = ph.Type.String()
	}
	for _, p := range params {
		e.Params = append(e.Params, ParamValue{Name: p.Name, Type: types[p.Name], Value: p.Value})
	}
	return e
}

func writeChannelText(row func(k, format string, args ...any), e *Explanation) {
	row("channel", "%q", e.Key)
	c := e.Channel
	if !e.Matched || c == nil {
		row("declared", "none: no channel in the registry matches this name")
		return
	}
	row("declared", "%s at %s", c.Name, c.Position)
	if c.Description != "" {
		row("description", "%s", c.Description)
	}
	owner := c.Owner
	if owner == "" {
		owner = "(none declared)"
	}
	if c.Contact != "" {
		owner += " (" + c.Contact + ")"
	}
	row("owner", "%s", owner)
	row("pattern", "%s", c.Pattern)
	for _, p := range e.Params {
		row("  "+p.Name, "%q (%s)", p.Value, p.Type)
	}
	mode := c.Mode + " (" + c.Publish + ", " + c.Subscribe + ")"
	if c.ClusterFanOut {
		mode += "; on this cluster every message is sent to every node"
	}
	row("mode", "%s", mode)
	if len(c.With) > 0 {
		row("with", "%s", strings.Join(c.With, ", "))
	}
	row("encoding", "%s", orNone(c.Encoding))
	if s := c.Schema; s != nil {
		where := s.Path
		if where == "" {
			where = "(inline)"
		}
		row("schema", "%s%s", where, schemaLine(s))
	}
	if d := c.Deprecated; d != nil {
		var parts []string
		if d.Since != "" {
			parts = append(parts, "since "+d.Since)
		}
		if d.Sunset != "" {
			parts = append(parts, "sunset "+d.Sunset)
		}
		if d.ReplacedBy != "" {
			parts = append(parts, "replaced by "+d.ReplacedBy)
		}
		if d.Reason != "" {
			parts = append(parts, d.Reason)
		}
		row("deprecated", "%s", strings.Join(parts, "; "))
	}
}
