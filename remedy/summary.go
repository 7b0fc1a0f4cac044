package remedy

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Summary counts a plan's keys and bytes by reason, group and owner.
type Summary struct {
	Kind     string  `json:"kind"`
	Server   Server  `json:"server"`
	Digest   string  `json:"digest"`
	Partial  bool    `json:"partial,omitempty"`
	Keys     int64   `json:"keys"`
	Bytes    int64   `json:"bytes"`
	ByReason []Count `json:"by_reason"`
	ByGroup  []Count `json:"by_group"`
	ByOwner  []Count `json:"by_owner"`
}

// Count is the keys and bytes of one reason, group or owner.
type Count struct {
	Name  string `json:"name"`
	Keys  int64  `json:"keys"`
	Bytes int64  `json:"bytes"`
}

// maxGroups bounds the groups a summary lists; the rest are one "(other)".
const maxGroups = 50

// Summarize counts p's keys.
func Summarize(p *Plan) Summary {
	s := Summary{Kind: p.Kind, Server: p.Server, Digest: p.Digest, Partial: p.Partial}
	r, g, o := map[string]*Count{}, map[string]*Count{}, map[string]*Count{}
	add := func(m map[string]*Count, name string, size int64) {
		c := m[name]
		if c == nil {
			c = &Count{Name: name}
			m[name] = c
		}
		c.Keys++
		c.Bytes += size
	}
	for i := range p.Keys {
		k := &p.Keys[i]
		size := max(k.Size, 0)
		s.Keys++
		s.Bytes += size
		add(r, k.Reason, size)
		add(g, k.Group, size)
		owner := k.Owner
		if owner == "" {
			owner = "(none)"
		}
		add(o, owner, size)
	}
	s.ByReason, s.ByGroup, s.ByOwner = sorted(r, 0), sorted(g, maxGroups), sorted(o, maxGroups)
	return s
}

// sorted lists the counts by keys, most first, then by name; over limit
// (when not 0) the rest fold into "(other)".
func sorted(m map[string]*Count, limit int) []Count {
	out := make([]Count, 0, len(m))
	for _, c := range m {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Count) int {
		if a.Keys != b.Keys {
			if a.Keys > b.Keys {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	if limit > 0 && len(out) > limit {
		other := Count{Name: "(other)"}
		for _, c := range out[limit:] {
			other.Keys += c.Keys
			other.Bytes += c.Bytes
		}
		out = append(out[:limit], other)
	}
	return out
}

// Summary formats.
const (
	FormatText     = "text"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

// Formats lists the summary formats.
var Formats = []string{FormatText, FormatJSON, FormatMarkdown}

// WriteSummary renders s in format. Names are quoted (text) or escaped
// (markdown): groups and families come from key names.
func WriteSummary(w io.Writer, format string, s Summary) error {
	var b strings.Builder
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	case FormatText:
		partial := ""
		if s.Partial {
			partial = " (partial: the scan did not cover the keyspace)"
		}
		fmt.Fprintf(&b, "%s plan of %s: %s, %d bytes%s\n", s.Kind, strconv.Quote(s.Server.Target), keys(s.Keys), s.Bytes, partial)
		for _, sec := range []struct {
			title string
			cs    []Count
		}{{"reason", s.ByReason}, {"group", s.ByGroup}, {"owner", s.ByOwner}} {
			fmt.Fprintf(&b, "by %s:\n", sec.title)
			for _, c := range sec.cs {
				fmt.Fprintf(&b, "  %-40s %13s %12d bytes\n", strconv.Quote(c.Name), keys(c.Keys), c.Bytes)
			}
		}
		fmt.Fprintf(&b, "digest %s\n", s.Digest)
	case FormatMarkdown:
		partial := ""
		if s.Partial {
			partial = " **Partial**: the scan did not cover the keyspace."
		}
		fmt.Fprintf(&b, "## keyreg %s plan\n\n%s, %d bytes, of `%s`.%s\n", s.Kind, keys(s.Keys), s.Bytes, mdCode(s.Server.Target), partial)
		for _, sec := range []struct {
			title string
			cs    []Count
		}{{"reason", s.ByReason}, {"group", s.ByGroup}, {"owner", s.ByOwner}} {
			fmt.Fprintf(&b, "\n| %s | keys | bytes |\n| --- | ---: | ---: |\n", sec.title)
			for _, c := range sec.cs {
				fmt.Fprintf(&b, "| `%s` | %d | %d |\n", mdCode(c.Name), c.Keys, c.Bytes)
			}
		}
		fmt.Fprintf(&b, "\nDigest `%s`.\n", s.Digest)
	default:
		return fmt.Errorf("unknown summary format %q", format)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCode makes s safe inside a one-backtick code span in a table cell:
// Go-quoted (no control bytes or line breaks), backticks and pipes
// replaced.
func mdCode(s string) string {
	q := strconv.Quote(s)
	q = q[1 : len(q)-1]
	return strings.NewReplacer("`", "'", "|", "\\|").Replace(q)
}

// keys is "1 key" or "N keys".
func keys(n int64) string {
	if n == 1 {
		return "1 key"
	}
	return strconv.FormatInt(n, 10) + " keys"
}
