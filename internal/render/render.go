// Package render holds what the documents keyreg renders share, below
// both report (the audit page and every other format) and catalogue (the
// registry's catalogue): making untrusted text printable and bounded
// (Printable, QuoteKey, ClipText, Redact), the one markdown escaper (MD,
// MDCode), an audit's live rows and charts (FamRows, FindingRows,
// AuditCharts), anchors and search texts, and the HTML template parts both
// pages use (Parse). It prints nothing.
package render

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/internal/secret"
)

// maxText bounds a free text ClipText keeps, in bytes.
const maxText = 2048

// MemText formats memory summed over the measured of keys keys: "-" when
// none was measured (never a 0 that was not measured), the sum when all
// were, and "≥ sum (of measured/keys keys)" otherwise, since a partial sum
// is not a total.
func MemText(sum, measured, keys int64) string {
	switch {
	case measured <= 0:
		return "-"
	case measured >= keys:
		return HumanBytes(sum)
	}
	return fmt.Sprintf("≥ %s (of %d/%d keys)", HumanBytes(sum), measured, keys)
}

// PartialBanner says that r does not cover the whole keyspace, and why.
func PartialBanner(r *audit.Report) string {
	reason := Printable(Redact(r.PartialReason))
	if reason == "" {
		reason = "the audit did not cover the whole keyspace"
	}
	return "PARTIAL AUDIT: " + reason + "; counts cover only the keys scanned"
}

// SortedFindings returns the findings that are not off, most severe first,
// then by family and rule.
func SortedFindings(fs []*audit.Finding) []*audit.Finding {
	out := make([]*audit.Finding, 0, len(fs))
	for _, f := range fs {
		if f != nil && f.Severity > diag.Off {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b *audit.Finding) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), cmp.Compare(a.Family, b.Family), cmp.Compare(a.Rule, b.Rule))
	})
	return out
}

// QuoteKey prints a key name as a Go string literal, so that control
// characters and invalid UTF-8 bytes show as escapes.
func QuoteKey(k string) string { return strconv.Quote(k) }

// Printable replaces control characters, other non-printable runes and
// invalid UTF-8 bytes in s with Go escapes such as \n, \x00 or \u202e. Text
// that is already printable is returned unchanged.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// Redact hides passwords in URLs and password parameters (see
// internal/secret). The audit already redacts its target; this is a second
// line of defence for free text such as notes.
func Redact(s string) string { return secret.Redact(s) }

// HumanBytes formats n with binary units: "512 B", "1.5 KiB", "12.0 MiB".
func HumanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// TTLPercent formats the share of keys with a TTL, or "-" when there are no
// keys.
func TTLPercent(withTTL, keys int64) string {
	if keys <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(withTTL)/float64(keys))
}

// OrDash is s, or "-" when s is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// KeyCounts splits the keys into registered and unregistered: the same
// numbers as the json totals, the unregistered section and the
// unregistered-key finding. Keys with a family's shape but a bad
// placeholder value are keys of that family (placeholder-invalid).
func KeyCounts(r *audit.Report) string {
	return fmt.Sprintf("%d (%d registered, %d unregistered)", r.Totals.Keys, r.Totals.Registered, r.Totals.Unregistered)
}

// Date is t as YYYY-MM-DD, or "" for the zero time.
func Date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.DateOnly)
}

// SlashPath returns a path with forward slashes, as CI systems expect.
func SlashPath(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return p
}

// ClipText bounds a free text, on a UTF-8 boundary.
func ClipText(s string) string {
	if len(s) <= maxText {
		return s
	}
	return strings.ToValidUTF8(s[:maxText], "") + "…"
}
