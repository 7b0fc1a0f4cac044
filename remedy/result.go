package remedy

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Outcome is what one --apply run did, as WriteOutcome renders it in every
// summary format: the result, and whether the run stopped early.
type Outcome struct {
	Kind string `json:"kind"`
	// State is "done", or "partial" for a run that stopped (Error says
	// why); a partial run exits 3, and the next run resumes.
	State   string `json:"state"`
	Error   string `json:"error,omitempty"`
	Resumed bool   `json:"resumed"`
	// Planned is the plan's keys; Deleted (prune) or Expired (expire) how
	// many the runs on this plan changed, Gone those found gone.
	Planned int `json:"planned"`
	Deleted int `json:"deleted"`
	Expired int `json:"expired"`
	Gone    int `json:"gone"`
	// Skipped counts the keys left alone; SkippedBy per reason, and
	// SkippedKeys lists at most MaxListed of them (key Go-quoted).
	Skipped     int            `json:"skipped"`
	SkippedBy   map[string]int `json:"skipped_by_reason"`
	SkippedKeys []Skip         `json:"skipped_keys"`
	Pauses      int            `json:"pauses"`
	WorstRTTUs  int64          `json:"worst_rtt_us"`
}

// NewOutcome is the outcome of applying p: res and the error the run ended
// with (nil when done).
func NewOutcome(p *Plan, res *Result, err error) Outcome {
	o := Outcome{Kind: p.Kind, State: "done", Planned: len(p.Keys), SkippedBy: map[string]int{}, SkippedKeys: []Skip{}}
	if err != nil {
		o.State, o.Error = "partial", firstLine(err.Error())
	}
	if res == nil {
		return o
	}
	o.Resumed, o.Deleted, o.Expired, o.Gone = res.Resumed, res.Deleted, res.Expired, res.Gone
	for why, n := range res.SkipCount {
		o.Skipped += n
		o.SkippedBy[why] = n
	}
	o.SkippedKeys = append(o.SkippedKeys, res.Skipped...)
	o.Pauses, o.WorstRTTUs = res.Paused, res.WorstRTT.Microseconds()
	return o
}

// WriteOutcome renders o in format (Formats). Key names are Go-quoted;
// reasons, which come from error replies and from a journal anyone may
// have edited, are quoted (text) or escaped (markdown) unless plain.
func WriteOutcome(w io.Writer, format string, o Outcome) error {
	verb, n := "deleted", o.Deleted
	if o.Kind == KindExpire {
		verb, n = "given a TTL", o.Expired
	}
	resumed := ""
	if o.Resumed {
		resumed = " (resumed)"
	}
	rtt := (time.Duration(o.WorstRTTUs) * time.Microsecond).String()
	var b strings.Builder
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(o)
	case FormatText:
		fmt.Fprintf(&b, "%s %s%s: %d of %d keys %s, %d gone, %d skipped; %d pauses, worst round trip %s\n",
			o.Kind, o.State, resumed, n, o.Planned, verb, o.Gone, o.Skipped, o.Pauses, rtt)
		for _, s := range o.SkippedKeys {
			fmt.Fprintf(&b, "  skipped db %d %s: %s\n", s.DB, s.Key, PlainText(s.Reason))
		}
		if len(o.SkippedKeys) < o.Skipped {
			fmt.Fprintf(&b, "  … and %d more\n", o.Skipped-len(o.SkippedKeys))
		}
	case FormatMarkdown:
		fmt.Fprintf(&b, "## keyreg %s: %s%s\n\n%d of %d keys %s, %d gone, %d skipped; %d pauses, worst round trip %s.\n",
			o.Kind, o.State, resumed, n, o.Planned, verb, o.Gone, o.Skipped, o.Pauses, rtt)
		if o.State == "partial" {
			fmt.Fprintf(&b, "\n**Partial**: the run stopped (`%s`); run it again to resume.\n", mdCode(o.Error))
		}
		if o.Skipped > 0 {
			b.WriteString("\n| skipped, by reason | keys |\n| --- | ---: |\n")
			whys := make([]string, 0, len(o.SkippedBy))
			for why := range o.SkippedBy {
				whys = append(whys, why)
			}
			slices.Sort(whys)
			for _, why := range whys {
				fmt.Fprintf(&b, "| `%s` | %d |\n", mdCode(why), o.SkippedBy[why])
			}
		}
		if len(o.SkippedKeys) > 0 {
			b.WriteString("\n| skipped key | db | reason |\n| --- | ---: | --- |\n")
			for _, s := range o.SkippedKeys {
				fmt.Fprintf(&b, "| `%s` | %d | `%s` |\n", mdQuoted(s.Key), s.DB, mdCode(s.Reason))
			}
			if len(o.SkippedKeys) < o.Skipped {
				fmt.Fprintf(&b, "\n… and %d more.\n", o.Skipped-len(o.SkippedKeys))
			}
		}
	default:
		return fmt.Errorf("unknown format %q", format)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdQuoted makes an already Go-quoted string safe in a code span of a
// table cell.
func mdQuoted(q string) string {
	return strings.NewReplacer("`", "'", "|", "\\|").Replace(q)
}

// PlainText returns s as it is when it is printable text, and Go-quoted
// otherwise: skip reasons come from the server's error replies and from a
// journal on disk, which anyone may have edited.
func PlainText(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == unicode.ReplacementChar || r == '"' || r == '\\' {
			return strconv.Quote(s)
		}
	}
	return s
}

// RestoreOutcome is what one restore did (or would do, under DryRun), as
// WriteRestoreOutcome renders it.
type RestoreOutcome struct {
	Kind string `json:"kind"` // "restore"
	// State is "done", or "partial" for a run stopped by an error (Error),
	// whose keys after it were not tried; it exits 3.
	State  string `json:"state"`
	Error  string `json:"error,omitempty"`
	DryRun bool   `json:"dry_run"`
	// Restored counts the keys restored (would be, under DryRun); Expired
	// those whose expiry had passed and Exists those that exist, both
	// skipped and listed in SkippedKeys (at most MaxListed, key Go-quoted).
	Restored    int    `json:"restored"`
	Expired     int    `json:"expired"`
	Exists      int    `json:"exists"`
	SkippedKeys []Skip `json:"skipped_keys"`
}

// NewRestoreOutcome is the outcome of a restore: res and the error it
// ended with (nil when done).
func NewRestoreOutcome(res *RestoreResult, dryRun bool, err error) RestoreOutcome {
	o := RestoreOutcome{Kind: "restore", State: "done", DryRun: dryRun, SkippedKeys: []Skip{}}
	if err != nil {
		o.State, o.Error = "partial", firstLine(err.Error())
	}
	if res != nil {
		o.Restored, o.Expired, o.Exists = res.Restored, res.Expired, res.Exists
		o.SkippedKeys = append(o.SkippedKeys, res.Skipped...)
	}
	return o
}

// WriteRestoreOutcome renders o in format (Formats).
func WriteRestoreOutcome(w io.Writer, format string, o RestoreOutcome) error {
	verb := "restored"
	if o.DryRun {
		verb = "would restore"
	}
	var b strings.Builder
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(o)
	case FormatText:
		state := ""
		if o.State == "partial" {
			state = " partial (stopped by an error; the keys after it were not tried)"
		}
		fmt.Fprintf(&b, "restore%s: %s %d keys; %d expired since, %d exist (skipped)\n", state, verb, o.Restored, o.Expired, o.Exists)
		for _, s := range o.SkippedKeys {
			fmt.Fprintf(&b, "  skipped db %d %s: %s\n", s.DB, s.Key, PlainText(s.Reason))
		}
	case FormatMarkdown:
		dry := ""
		if o.DryRun {
			dry = " (dry run)"
		}
		fmt.Fprintf(&b, "## keyreg restore: %s%s\n\n%s %d keys; %d expired since, %d exist (skipped).\n", o.State, dry, verb, o.Restored, o.Expired, o.Exists)
		if o.State == "partial" {
			fmt.Fprintf(&b, "\n**Partial**: stopped by an error (`%s`); the keys after it were not tried.\n", mdCode(o.Error))
		}
		if len(o.SkippedKeys) > 0 {
			b.WriteString("\n| skipped key | db | reason |\n| --- | ---: | --- |\n")
			for _, s := range o.SkippedKeys {
				fmt.Fprintf(&b, "| `%s` | %d | `%s` |\n", mdQuoted(s.Key), s.DB, mdCode(s.Reason))
			}
		}
	default:
		return fmt.Errorf("unknown format %q", format)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
