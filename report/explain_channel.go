package report

import (
	"strings"

	"github.com/keyreg/keyreg/explain"
)

// OfChannel is explain.Explanation.Of for a Pub/Sub channel.
const OfChannel = explain.OfChannel

func writeChannelText(row func(k, format string, args ...any), e *explain.Explanation) {
	row("channel", "%q", e.Key)
	c := e.Channel
	if !e.Matched || c == nil {
		row("declared", "none: no channel in the registry matches this name")
		return
	}
	if c.Preset != "" {
		row("declared", "%s", c.Name)
		row("preset", "%s (%s)", c.Preset, c.Position)
	} else {
		row("declared", "%s at %s", c.Name, c.Position)
	}
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
		row("deprecated", "%s", deprecationLine(d))
	}
}
