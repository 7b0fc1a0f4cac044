package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/keyreg/keyreg/explain"
	"github.com/keyreg/keyreg/internal/render"
)

// WriteExplanation writes e in format f: [Text] or [JSON]. The options are
// those of every renderer; an explanation reads none of them today.
func WriteExplanation(w io.Writer, f Format, e *explain.Explanation, _ Options) error {
	r, err := lookup(f, DocExplain)
	if err != nil {
		return err
	}
	return r.explain(w, e)
}

// writeExplanationJSON prints e as one JSON object.
func writeExplanationJSON(w io.Writer, e *explain.Explanation) error {
	if l := e.Live; l != nil && (l.Verdicts == nil || l.NotChecked == nil) {
		// The lists are always present, empty when nothing fired or
		// everything was checked.
		c := *l
		c.Verdicts = append([]string{}, l.Verdicts...)
		c.NotChecked = append([]explain.NotChecked{}, l.NotChecked...)
		ce := *e
		ce.Live = &c
		e = &ce
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(e)
}

// writeExplanationText prints e as aligned "label  value" lines.
func writeExplanationText(w io.Writer, e *explain.Explanation) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// Every value is made printable: the registry's descriptions and
	// contacts, key names and Redis's replies may hold control bytes (an
	// ESC would drive the terminal).
	row := func(k, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t%s\n", k, render.Printable(fmt.Sprintf(format, args...)))
	}
	if e.Of == OfChannel {
		writeChannelText(row, e)
		return tw.Flush()
	}
	row("key", "%q", e.Key)
	if !e.Matched {
		row("family", "none: no family in the registry matches this key")
		if c := e.Closest; c != nil {
			row("closest", "%s (%s) at %s", c.Name, c.Pattern, c.Position)
			row("why not", "%s", c.Reason)
		}
		writeLive(row, e.Live)
		return tw.Flush()
	}
	f := e.Family
	if f.Preset != "" {
		row("family", "%s", f.Name)
		row("preset", "%s (%s)", f.Preset, f.Position)
	} else {
		row("family", "%s at %s", f.Name, f.Position)
	}
	if f.Description != "" {
		row("description", "%s", f.Description)
	}
	owner := f.Owner
	if owner == "" {
		owner = "(none declared)"
	}
	if f.Contact != "" {
		owner += " (" + f.Contact + ")"
	}
	row("owner", "%s", owner)
	row("pattern", "%s", f.Pattern)
	for _, p := range e.Params {
		row("  "+p.Name, "%q (%s)", p.Value, p.Type)
	}
	row("type", "%s", orNone(f.Type))
	if f.Kind != "" {
		kind := f.Kind
		if f.Fencing != "" {
			kind += " (fencing: " + f.Fencing + ")"
		}
		row("kind", "%s", kind)
	}
	row("encoding", "%s", orNone(f.Encoding))
	ttl := f.TTL
	if f.TTLSource == "defaults" {
		ttl += " (from defaults)"
	}
	row("ttl", "%s", ttl)
	if s := f.Schema; s != nil {
		where := s.Path
		if where == "" {
			where = "(inline)"
		}
		row("schema", "%s%s", where, schemaLine(s))
	}
	var limits []string
	if f.MaxBytes > 0 {
		limits = append(limits, fmt.Sprintf("max_bytes %d", f.MaxBytes))
	}
	if f.MaxLen > 0 {
		limits = append(limits, fmt.Sprintf("max_len %d", f.MaxLen))
	}
	if f.MaxIdle != "" {
		limits = append(limits, "max_idle "+f.MaxIdle)
	}
	if len(limits) > 0 {
		row("limits", "%s", strings.Join(limits, ", "))
	}
	if f.ManagedBy != "" {
		row("managed by", "%s", f.ManagedBy)
	}
	if d := f.Deprecated; d != nil {
		row("deprecated", "%s", deprecationLine(d))
	}
	writeLive(row, e.Live)
	return tw.Flush()
}

// deprecationLine renders a family's or a channel's deprecation:
// "since D; sunset D; replaced by X; reason", each part when set.
func deprecationLine(d *explain.Deprecation) string {
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
	return strings.Join(parts, "; ")
}

func writeLive(row func(k, format string, args ...any), l *explain.LiveFacts) {
	if l == nil {
		return
	}
	label := "live"
	if l.Source != "" {
		label = "snapshot"
	}
	if !l.Exists {
		if l.Source != "" {
			row(label, "the key is not in %s", strings.TrimPrefix(l.Source, "rdb:"))
		} else {
			row(label, "the key does not exist in db %d", l.DB)
		}
		row("verdict", "%s: nothing to check", explain.VerdictAbsent)
		return
	}
	if l.Source != "" {
		row(label, "%s", strings.TrimPrefix(l.Source, "rdb:"))
	}
	row(label+" db", "%d", l.DB)
	row(label+" type", "%s", l.Type)
	row(label+" ttl", "%s", l.TTL)
	if l.Memory > 0 && l.Source != "" {
		row(label+" memory", "%d bytes (an estimate of MEMORY USAGE from the snapshot)", l.Memory)
	} else if l.Memory > 0 {
		row(label+" memory", "%d bytes", l.Memory)
	}
	if l.Idle != "" {
		row(label+" idle", "%s", l.Idle)
	}
	if l.Len != nil {
		row(label+" length", "%d", *l.Len)
	}
	if l.Encoding != "" {
		row(label+" encoding", "%s", l.Encoding)
	}
	if l.Lease != "" {
		row(label+" lease", "%s", l.Lease)
	}
	if l.Token != "" {
		row(label+" token", "%s", l.Token)
	}
	if fc := l.Fence; fc != nil {
		switch {
		case fc.Exists == nil:
			row(label+" fence", "%q (not read)", fc.Key)
		case !*fc.Exists:
			row(label+" fence", "%q does not exist", fc.Key)
		case fc.Value != "":
			row(label+" fence", "%q = %s", fc.Key, fc.Value)
		default:
			row(label+" fence", "%q", fc.Key)
		}
	}
	if l.GroupsNote != "" {
		row(label+" groups", "%s", l.GroupsNote)
	}
	for _, g := range l.Groups {
		row(label+" group", "%s", groupLine(g))
	}
	switch l.Verdict {
	case explain.VerdictIncomplete:
		row("verdict", "%s: no rule fired, but %s not run (below)", explain.VerdictIncomplete, countOf(len(l.NotChecked), "check was", "checks were"))
	case explain.VerdictOK:
		row("verdict", "%s", explain.VerdictOK)
	}
	for _, v := range l.Verdicts {
		row("verdict", "%s", v)
	}
	for _, n := range l.NotChecked {
		row("not checked", "%s: %s", strings.Join(n.Rules, ", "), n.Detail)
	}
	if l.Touched > 0 {
		row("touched", "%s: LRU/LFU state reset by reading this primary (--no-touch to avoid)", countOf(int(l.Touched), "key", "keys"))
	}
}

// countOf renders n with the singular or plural words: "1 key", "2 keys".
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// groupLine renders a consumer group, such as
// `"delivery": lag 12, 3 pending, 2 consumers; "w1" idle 3m holds pending entries`.
func groupLine(g explain.LiveGroup) string {
	if !g.Exists {
		return fmt.Sprintf("%q: missing", g.Name)
	}
	lag := "lag not measurable"
	if g.Lag != nil {
		lag = fmt.Sprintf("lag %d", *g.Lag)
	}
	s := fmt.Sprintf("%q: %s, %d pending, %d consumers", g.Name, lag, g.Pending, g.Consumers)
	if g.IdleConsumer != "" {
		s += fmt.Sprintf("; %q idle %s holds pending entries", g.IdleConsumer, g.Idle)
	}
	return s
}

func schemaLine(s *explain.SchemaSummary) string {
	var b strings.Builder
	if s.Type != "" {
		b.WriteString(": " + s.Type)
	}
	if len(s.Properties) > 0 {
		var ps []string
		for _, p := range s.Properties {
			q := p.Name
			if p.Type != "" {
				q += " " + p.Type
			}
			if p.Required {
				q += " (required)"
			}
			ps = append(ps, q)
		}
		b.WriteString(" with " + strings.Join(ps, ", "))
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(not declared)"
	}
	return s
}
