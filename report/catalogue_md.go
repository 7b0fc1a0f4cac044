package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// markdownCatalogue writes the catalogue as index.md and one file per
// owner, for teams that publish docs in a repository or a wiki. Every
// value from keys.yaml goes through md (mdData) or mdCode.
func markdownCatalogue(c *htmlCatalogue) []File {
	var idx bytes.Buffer
	idx.WriteString("# keyreg catalogue\n\n")
	if c.Partial != "" {
		fmt.Fprintf(&idx, "> [!WARNING]\n> %s\n\n", md(c.Partial, mdBlock))
	}
	head := grid{}
	var row []cell
	for _, s := range c.Summary {
		head.head = append(head.head, s[0])
		head.right = append(head.right, false)
		row = append(row, cell{text: s[1]})
	}
	head.rows = [][]cell{row}
	writeMDTable(&idx, head)

	idx.WriteString("## Owners\n\n")
	idx.WriteString("| owner | contact | families |\n| --- | --- | ---: |\n")
	for _, o := range c.Owners {
		fmt.Fprintf(&idx, "| [%s](%s) | %s | %d |\n", md(o.Name, mdData), o.File, md(orDash(o.Contact), mdData), len(o.Families))
	}
	idx.WriteString("\n## Deprecations\n\n")
	if len(c.Deprecations) == 0 {
		idx.WriteString("No family is deprecated.\n\n")
	} else {
		idx.WriteString("| family | since | sunset | replaced by | reason |\n| --- | --- | --- | --- | --- |\n")
		for _, d := range c.Deprecations {
			sunset := orDash(d.Sunset)
			if d.Past {
				sunset += " (passed)"
			}
			fmt.Fprintf(&idx, "| %s | %s | %s | %s | %s |\n", famLink(c, d.Family, ""), orDash(d.Since), sunset,
				md(orDash(d.ReplacedBy), mdData), md(orDash(d.Reason), mdData))
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
		fmt.Fprintf(&idx, "| %s | %s | %s | %s | %s |", famLink(c, f.Name, ""), md(f.Owner, mdData), mdCode(f.Pattern), md(f.Type, mdData), md(f.TTL, mdData))
		if c.Live {
			if l := f.Live; l != nil {
				fmt.Fprintf(&idx, " %d | %s | %d |", l.Keys, l.TTLText, l.Findings)
			} else {
				idx.WriteString(" 0 | - | 0 |")
			}
		}
		idx.WriteString("\n")
	}
	files := []File{{Name: "index.md", Data: idx.Bytes()}}

	for _, o := range c.Owners {
		var b bytes.Buffer
		fmt.Fprintf(&b, "# %s\n\n[All owners](index.md)\n\n", md(o.Name, mdData))
		if o.Contact != "" {
			fmt.Fprintf(&b, "Contact: %s\n\n", md(o.Contact, mdData))
		}
		if o.Description != "" {
			fmt.Fprintf(&b, "%s\n\n", md(o.Description, mdBlock))
		}
		if len(o.Prefixes) > 0 {
			var ps []string
			for _, p := range o.Prefixes {
				ps = append(ps, mdCode(p))
			}
			fmt.Fprintf(&b, "Claimed prefixes: %s\n\n", strings.Join(ps, ", "))
		}
		for _, f := range o.Families {
			writeMDFamily(&b, c, f)
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
			return fmt.Sprintf("[%s](%s#%s)", md(name, mdData), file, mdAnchor(name))
		}
	}
	return md(name, mdData)
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
	fmt.Fprintf(b, "## %s\n\n", md(f.Name, mdData))
	if f.Deprecation != nil {
		b.WriteString("**Deprecated.** ")
	}
	if f.Description != "" {
		fmt.Fprintf(b, "%s\n\n", md(f.Description, mdBlock))
	} else if f.Deprecation != nil {
		b.WriteString("\n\n")
	}
	b.WriteString("| | |\n| --- | --- |\n")
	fact := func(k, v string) { fmt.Fprintf(b, "| %s | %s |\n", k, v) }
	fact("pattern", mdCode(f.Pattern))
	if len(f.Placeholders) > 0 {
		var ps []string
		for _, p := range f.Placeholders {
			s := mdCode(p.Name) + " " + p.Type
			if p.HashTag {
				s += " (hash tag)"
			}
			ps = append(ps, s)
		}
		fact("placeholders", strings.Join(ps, ", "))
	}
	if f.Example != "" {
		fact("example key", mdCode(f.Example))
	}
	fact("type", md(f.Type, mdData))
	fact("encoding", md(f.Encoding, mdData))
	fact("ttl policy", md(f.TTL, mdData))
	if len(f.Limits) > 0 {
		fact("limits", md(strings.Join(f.Limits, ", "), mdData))
	}
	if f.Preset != "" {
		fact("preset", md(f.Preset, mdData))
	}
	if f.ManagedBy != "" {
		fact("managed by", md(f.ManagedBy, mdData))
	}
	if d := f.Deprecation; d != nil {
		var parts []string
		if d.Since != "" {
			parts = append(parts, "since "+d.Since)
		}
		if d.Sunset != "" {
			parts = append(parts, "sunset "+d.Sunset)
		}
		s := md(strings.Join(parts, ", "), mdData)
		if d.ReplacedBy != "" {
			s += "; replaced by " + famLink(c, d.ReplacedBy, f.OwnerFile)
		}
		if d.Reason != "" {
			s += "; " + md(d.Reason, mdData)
		}
		fact("deprecated", s)
	}
	if f.Position != "" {
		pos := md(f.Position, mdData)
		if f.PositionURL != "" {
			pos = "[" + pos + "](" + strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(f.PositionURL) + ")"
		}
		fact("keys.yaml", pos)
	}
	if f.Builder != "" {
		fact("go builder", mdCode(f.Builder))
	}
	if l := f.Live; l != nil {
		live := strconv.FormatInt(l.Keys, 10) + " keys"
		if l.HasMemory {
			live += ", " + l.MemoryText()
		}
		live += ", " + l.TTLText + " with TTL, " + strconv.FormatInt(l.Findings, 10) + " with findings"
		fact("live", md(live, mdData))
	}
	b.WriteString("\n")
	if len(f.Findings) > 0 {
		b.WriteString("| severity | rule | keys | message |\n| --- | --- | ---: | --- |\n")
		for _, fr := range f.Findings {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", fr.Severity, md(fr.Rule, mdData), fr.CountTxt, md(fr.Message, mdData))
		}
		b.WriteString("\n")
	}
	if s := f.Schema; s != nil {
		fmt.Fprintf(b, "Payload schema (%s):\n\n", md(s.Source, mdData))
		if len(s.Props) > 0 {
			b.WriteString("| property | type | required | description | constraints |\n| --- | --- | --- | --- | --- |\n")
			for _, p := range s.Props {
				req := "no"
				if p.Required {
					req = "yes"
				}
				cons := "-"
				if p.Constraints != "" {
					cons = mdCode(p.Constraints)
				}
				fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", mdCode(p.Path), md(orDash(p.Type), mdData), req, md(orDash(p.Description), mdData), cons)
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
