package render

import "strings"

// MDMode says how much markdown syntax [MD] lets through.
type MDMode int

const (
	// MDData is text that keyreg did not write, or that holds values it did
	// not write (key names, family names, messages quoting them, Redis
	// errors), inline: in a table cell, a heading or after other text.
	// Every character markdown reads as syntax is escaped, so the text
	// shows as typed and can neither format, link nor inject HTML.
	MDData MDMode = iota
	// MDBlock is MDData that starts a paragraph or a quote line, where a
	// leading #, -, + or "1." would also open a heading, a list or a rule;
	// that marker is escaped as well.
	MDBlock
	// MDDoc is text keyreg wrote itself, such as a rule's doc: its code
	// spans and emphasis are kept, and only what would break a table row
	// (|, line breaks) or inject HTML is escaped.
	MDDoc
)

var (
	// mdSyntax escapes markdown syntax, HTML and line breaks.
	mdSyntax = strings.NewReplacer(
		`\`, `\\`,
		"`", "\\`",
		"*", `\*`,
		"_", `\_`,
		"~", `\~`,
		"[", `\[`,
		"]", `\]`,
		"|", `\|`,
		"&", "&amp;",
		"<", "&lt;",
		">", "&gt;",
		"\r\n", "<br>",
		"\n", "<br>",
		"\r", "<br>",
	)
	// mdTable escapes only what breaks a table row or injects HTML.
	mdTable = strings.NewReplacer(
		"|", `\|`,
		"&", "&amp;",
		"<", "&lt;",
		">", "&gt;",
		"\r\n", "<br>",
		"\n", "<br>",
		"\r", "<br>",
	)
)

// MD escapes s for GitHub-flavoured markdown in mode m. It is the one
// markdown escaper of keyreg; code spans of key names are [MDCode].
func MD(s string, m MDMode) string {
	switch m {
	case MDDoc:
		return mdTable.Replace(s)
	case MDBlock:
		return mdLeading(mdSyntax.Replace(s))
	}
	return mdSyntax.Replace(s)
}

// mdLeading escapes a block marker at the start of s (after up to three
// spaces, as CommonMark allows): #, -, + and the "1." or "1)" of an
// ordered list. The other markers (>, *, `, ~) are escaped everywhere.
func mdLeading(s string) string {
	lead := len(s) - len(strings.TrimLeft(s, " "))
	if lead > 3 || lead == len(s) {
		return s
	}
	rest := s[lead:]
	switch rest[0] {
	case '#', '-', '+':
		return s[:lead] + `\` + rest
	}
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	if digits > 0 && digits < len(rest) && (rest[digits] == '.' || rest[digits] == ')') {
		return s[:lead+digits] + `\` + rest[digits:]
	}
	return s
}

// MDCode renders s, already free of line breaks, as a code span in a table
// cell: the fence is one backtick longer than the longest run inside, and
// | is escaped, which GitHub honours inside code spans in tables.
func MDCode(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + strings.ReplaceAll(s, "|", `\|`) + fence
}
