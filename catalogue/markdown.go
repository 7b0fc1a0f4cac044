package catalogue

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/keyreg/keyreg/internal/render"
)

// markdownCatalogue writes the catalogue as index.md and one file per
// owner, for teams that publish docs in a repository or a wiki. Every
// value from keys.yaml goes through render.MD (MDData) or MDCode.
func markdownCatalogue(c *htmlCatalogue) []File {
	var idx bytes.Buffer
	idx.WriteString("# keyreg catalogue\n\n")
	if c.Partial != "" {
		fmt.Fprintf(&idx, "> [!WARNING]\n> %s\n\n", render.MD(c.Partial, render.MDBlock))
	}
	// The summary: one row under its labels.
	var labels, values strings.Builder
	for _, kv := range c.Summary {
		fmt.Fprintf(&labels, " %s |", render.MD(kv[0], render.MDData))
		fmt.Fprintf(&values, " %s |", render.MD(render.OrDash(kv[1]), render.MDData))
	}
	fmt.Fprintf(&idx, "|%s\n|%s\n|%s\n\n", labels.String(), strings.Repeat(" --- |", len(c.Summary)), values.String())

	idx.WriteString("## Owners\n\n")
	idx.WriteString("| owner | contact | families |\n| --- | --- | ---: |\n")
	for _, o := range c.Owners {
		fmt.Fprintf(&idx, "| [%s](%s) | %s | %d |\n", render.MD(o.Name, render.MDData), o.File, render.MD(render.OrDash(o.Contact), render.MDData), len(o.Families))
	}
	idx.WriteString("\n## Deprecations\n\n")
	if len(c.Deprecations) == 0 {
		if len(c.Channels) > 0 {
			idx.WriteString("No family or channel is deprecated.\n\n")
		} else {
			idx.WriteString("No family is deprecated.\n\n")
		}
	} else {
		idx.WriteString("| family | since | sunset | replaced by | reason |\n| --- | --- | --- | --- | --- |\n")
		for _, d := range c.Deprecations {
			sunset := render.OrDash(d.Sunset)
			if d.Past {
				sunset += " (passed)"
			}
			name := famLink(c, d.Family, "")
			if d.Channel {
				name = chanLink(chanByName(c, d.Family), "") + " (channel)"
			}
			fmt.Fprintf(&idx, "| %s | %s | %s | %s | %s |\n", name, render.OrDash(d.Since), sunset,
				render.MD(render.OrDash(d.ReplacedBy), render.MDData), render.MD(render.OrDash(d.Reason), render.MDData))
		}
		idx.WriteString("\n")
	}
	idx.WriteString("## Families\n\n")
	idx.WriteString("| family | owner | pattern | type | ttl |")
	if c.Live {
		idx.WriteString(" keys | % ttl | keys with findings |")
	}
	idx.WriteString("\n| --- | --- | --- | --- | --- |")
	if c.Live {
		idx.WriteString(" ---: | ---: | ---: |")
	}
	idx.WriteString("\n")
	for _, f := range c.Families {
		fmt.Fprintf(&idx, "| %s | %s | %s | %s | %s |", famLink(c, f.Name, ""), render.MD(f.Owner, render.MDData), render.MDCode(f.Pattern), render.MD(f.Type, render.MDData), render.MD(f.TTL, render.MDData))
		if c.Live {
			if l := f.Live; l != nil {
				fmt.Fprintf(&idx, " %d | %s | %d |", l.Keys, l.TTLText, l.Findings)
			} else {
				idx.WriteString(" 0 | - | 0 |")
			}
		}
		idx.WriteString("\n")
	}
	if len(c.Channels) > 0 {
		idx.WriteString("\n## Channels\n\n")
		idx.WriteString("| channel | owner | pattern | mode | encoding |")
		if c.Live {
			idx.WriteString(" live channels | subscribers | findings |")
		}
		idx.WriteString("\n| --- | --- | --- | --- | --- |")
		if c.Live {
			idx.WriteString(" ---: | ---: | ---: |")
		}
		idx.WriteString("\n")
		for _, ch := range c.Channels {
			fmt.Fprintf(&idx, "| %s | %s | %s | %s | %s |", chanLink(ch, ""), render.MD(ch.Owner, render.MDData), render.MDCode(ch.Pattern), render.MD(ch.Mode, render.MDData), render.MD(ch.Encoding, render.MDData))
			if c.Live {
				if l := ch.Live; l != nil {
					fmt.Fprintf(&idx, " %d | %d | %d |", l.Live, l.Subscribers, len(ch.Findings))
				} else {
					fmt.Fprintf(&idx, " - | - | %d |", len(ch.Findings))
				}
			}
			idx.WriteString("\n")
		}
	}
	files := []File{{Name: "index.md", Data: idx.Bytes()}}

	for _, o := range c.Owners {
		var b bytes.Buffer
		fmt.Fprintf(&b, "# %s\n\n[All owners](index.md)\n\n", render.MD(o.Name, render.MDData))
		if o.Contact != "" {
			fmt.Fprintf(&b, "Contact: %s\n\n", render.MD(o.Contact, render.MDData))
		}
		if o.Description != "" {
			fmt.Fprintf(&b, "%s\n\n", render.MD(o.Description, render.MDBlock))
		}
		if len(o.Prefixes) > 0 {
			var ps []string
			for _, p := range o.Prefixes {
				ps = append(ps, render.MDCode(p))
			}
			fmt.Fprintf(&b, "Claimed prefixes: %s\n\n", strings.Join(ps, ", "))
		}
		for _, f := range o.Families {
			writeMDFamily(&b, c, f)
		}
		for _, ch := range o.Channels {
			writeMDChannel(&b, c, ch)
		}
		files = append(files, File{Name: o.File, Data: b.Bytes()})
	}
	return files
}

// famLink links a family's section in its owner's file; from is the file
// the link is written in ("" for the index).
func famLink(c *htmlCatalogue, name, from string) string {
	for _, f := range c.Families {
		if f.Name == name {
			file := f.OwnerFile
			if file == from {
				file = ""
			}
			return fmt.Sprintf("[%s](%s#%s)", render.MD(name, render.MDData), file, mdAnchor(name))
		}
	}
	return render.MD(name, render.MDData)
}

// chanByName finds a channel of the catalogue by its (printable) name.
func chanByName(c *htmlCatalogue, name string) *catChannel {
	for _, ch := range c.Channels {
		if ch.Name == name {
			return ch
		}
	}
	return nil
}

// chanLink links a channel's section in its owner's file; from is the
// file the link is written in ("" for the index).
func chanLink(ch *catChannel, from string) string {
	if ch == nil {
		return ""
	}
	file := ch.OwnerFile
	if file == from {
		file = ""
	}
	return fmt.Sprintf("[%s](%s#%s)", render.MD(ch.Name, render.MDData), file, mdAnchor("channel "+ch.Name))
}

// writeMDHead writes the heading of a family's or a channel's section,
// its description, and the first rows of its facts table: pattern,
// placeholders and example. It returns the function that writes a row.
func writeMDHead(b *bytes.Buffer, heading, example string, f *catFamily) func(k, v string) {
	fmt.Fprintf(b, "## %s\n\n", render.MD(heading, render.MDData))
	if f.Deprecation != nil {
		b.WriteString("**Deprecated.** ")
	}
	if f.Description != "" {
		fmt.Fprintf(b, "%s\n\n", render.MD(f.Description, render.MDBlock))
	} else if f.Deprecation != nil {
		b.WriteString("\n\n")
	}
	b.WriteString("| | |\n| --- | --- |\n")
	fact := func(k, v string) { fmt.Fprintf(b, "| %s | %s |\n", k, v) }
	fact("pattern", render.MDCode(f.Pattern))
	if len(f.Placeholders) > 0 {
		var ps []string
		for _, p := range f.Placeholders {
			s := render.MDCode(p.Name) + " " + p.Type
			if p.HashTag {
				s += " (hash tag)"
			}
			ps = append(ps, s)
		}
		fact("placeholders", strings.Join(ps, ", "))
	}
	if f.Example != "" {
		fact(example, render.MDCode(f.Example))
	}
	return fact
}

// writeMDChannel writes a channel's section of its owner's file.
func writeMDChannel(b *bytes.Buffer, c *htmlCatalogue, ch *catChannel) {
	fact := writeMDHead(b, "channel "+ch.Name, "example channel", ch.catFamily)
	sub := ch.Subscribe
	if ch.SubscribeGlob != "" {
		sub += " " + ch.SubscribeGlob
	}
	fact("mode", render.MD(ch.Mode, render.MDData)+": publish with "+render.MDCode(ch.Publish)+", subscribe with "+render.MDCode(sub))
	if len(ch.With) > 0 {
		fact("subscribed with", render.MD(strings.Join(ch.With, ", "), render.MDData))
	}
	fact("encoding", render.MD(ch.Encoding, render.MDData))
	if ch.Preset != "" {
		fact("preset", render.MD(ch.Preset, render.MDData))
	}
	if d := ch.Deprecation; d != nil {
		r := render.MD(d.ReplacedBy, render.MDData)
		if rc := chanByName(c, d.ReplacedBy); rc != nil {
			r = chanLink(rc, ch.OwnerFile)
		} else if strings.HasPrefix(d.ReplacedAnchor, "family-") {
			r = famLink(c, d.ReplacedBy, ch.OwnerFile)
		}
		fact("deprecated", mdDeprecation(d, r))
	}
	if ch.Position != "" {
		fact("keys.yaml", render.MD(ch.Position, render.MDData))
	}
	for _, fs := range ch.Funcs {
		fact(render.MD(fs.Lang+" builder", render.MDData), render.MDCode(fs.Build))
		fact(render.MD(fs.Lang+" publisher", render.MDData), render.MDCode(fs.Publish))
		fact(render.MD(fs.Lang+" subscriber", render.MDData), render.MDCode(fs.Subscribe))
	}
	if l := ch.Live; l != nil {
		fact("live", fmt.Sprintf("%d live channels, %d subscribers, on up to %d nodes", l.Live, l.Subscribers, l.Nodes))
	}
	b.WriteString("\n")
	if len(ch.Findings) > 0 {
		b.WriteString("| severity | rule | channels | message |\n| --- | --- | ---: | --- |\n")
		for _, fr := range ch.Findings {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", fr.Severity, render.MD(fr.Rule, render.MDData), fr.CountTxt, render.MD(fr.Message, render.MDData))
		}
		b.WriteString("\n")
	}
	writeMDSchema(b, "Message schema", ch.Schema)
}

// mdAnchor is the anchor GitHub gives a heading: lower case, spaces to
// hyphens, punctuation other than - and _ dropped.
func mdAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
		if b.Len() > 256 {
			break
		}
	}
	return b.String()
}

func writeMDFamily(b *bytes.Buffer, c *htmlCatalogue, f *catFamily) {
	fact := writeMDHead(b, f.Name, "example key", f)
	fact("type", render.MD(f.Type, render.MDData))
	fact("encoding", render.MD(f.Encoding, render.MDData))
	fact("ttl policy", render.MD(f.TTL, render.MDData))
	if len(f.Limits) > 0 {
		fact("limits", render.MD(strings.Join(f.Limits, ", "), render.MDData))
	}
	if f.Preset != "" {
		fact("preset", render.MD(f.Preset, render.MDData))
	}
	if f.ManagedBy != "" {
		fact("managed by", render.MD(f.ManagedBy, render.MDData))
	}
	if d := f.Deprecation; d != nil {
		fact("deprecated", mdDeprecation(d, famLink(c, d.ReplacedBy, f.OwnerFile)))
	}
	if f.Position != "" {
		pos := render.MD(f.Position, render.MDData)
		if f.PositionURL != "" {
			pos = "[" + pos + "](" + strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(f.PositionURL) + ")"
		}
		fact("keys.yaml", pos)
	}
	for _, bl := range f.Builders {
		fact(render.MD(bl.Lang+" builder", render.MDData), render.MDCode(bl.Signature))
	}
	if l := f.Live; l != nil {
		live := strconv.FormatInt(l.Keys, 10) + " keys"
		if l.HasMemory {
			live += ", " + l.MemoryText()
		}
		live += ", " + l.TTLText + " with TTL, " + strconv.FormatInt(l.Findings, 10) + " with findings"
		fact("live", render.MD(live, render.MDData))
	}
	b.WriteString("\n")
	if len(f.Findings) > 0 {
		b.WriteString("| severity | rule | keys | message |\n| --- | --- | ---: | --- |\n")
		for _, fr := range f.Findings {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", fr.Severity, render.MD(fr.Rule, render.MDData), fr.CountTxt, render.MD(fr.Message, render.MDData))
		}
		b.WriteString("\n")
	}
	writeMDSchema(b, "Payload schema", f.Schema)
}

// mdDeprecation is a deprecation's fact: since, sunset, the replacement
// (replaced, a link or text) and the reason.
func mdDeprecation(d *catDeprecation, replaced string) string {
	var parts []string
	if d.Since != "" {
		parts = append(parts, "since "+d.Since)
	}
	if d.Sunset != "" {
		parts = append(parts, "sunset "+d.Sunset)
	}
	s := render.MD(strings.Join(parts, ", "), render.MDData)
	if d.ReplacedBy != "" {
		s += "; replaced by " + replaced
	}
	if d.Reason != "" {
		s += "; " + render.MD(d.Reason, render.MDData)
	}
	return s
}

// writeMDSchema writes a schema's property table and raw text.
func writeMDSchema(b *bytes.Buffer, title string, s *catSchema) {
	if s != nil {
		fmt.Fprintf(b, "%s (%s):\n\n", title, render.MD(s.Source, render.MDData))
		if len(s.Props) > 0 {
			b.WriteString("| property | type | required | description | constraints |\n| --- | --- | --- | --- | --- |\n")
			for _, p := range s.Props {
				req := "no"
				if p.Required {
					req = "yes"
				}
				cons := "-"
				if p.Constraints != "" {
					cons = render.MDCode(p.Constraints)
				}
				fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", render.MDCode(p.Path), render.MD(render.OrDash(p.Type), render.MDData), req, render.MD(render.OrDash(p.Description), render.MDData), cons)
			}
			b.WriteString("\n")
		}
		fence := "```"
		for strings.Contains(s.Raw, fence) {
			fence += "`"
		}
		fmt.Fprintf(b, "<details><summary>Raw schema</summary>\n\n%sjson\n%s\n%s\n\n</details>\n\n", fence, s.Raw, fence)
	}
}
