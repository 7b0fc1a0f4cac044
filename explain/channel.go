package explain

import (
	"github.com/keyreg/keyreg/registry"
)

// OfChannel is Explanation.Of for a Pub/Sub channel.
const OfChannel = "channel"

// ChannelFacts describes the channel declaration a channel name belongs to.
type ChannelFacts struct {
	Name          string         `json:"name"`
	Description   string         `json:"description,omitempty"`
	Position      string         `json:"position"`         // keys.yaml:line:col; for a preset's channel, the preset's entry
	Preset        string         `json:"preset,omitempty"` // the preset the channel was expanded from
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

// Channel looks a channel name up among the registry's channels.
// Params are the placeholders it binds; when none matches, Matched is false.
func Channel(reg *registry.Registry, name string) *Explanation {
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
		Preset:        c.Preset,
		Pattern:       c.Pattern.Source,
		Mode:          c.Mode,
		SubscribeGlob: c.SubscribeGlob,
		Owner:         c.Owner,
		Encoding:      c.Encoding,
		ClusterFanOut: reg.Cluster && c.Mode != registry.ModeSharded,
	}
	cf.Publish, cf.Subscribe = registry.ModeCommands(c.Mode)
	if c.Mode == registry.ModePattern {
		cf.Subscribe += " " + c.SubscribeGlob
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
