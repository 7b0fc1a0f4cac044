package audit

import (
	"fmt"
	"strings"

	"github.com/keyreg/keyreg/rules"
)

// touchBlocked reports whether src refuses the reads that would touch a
// primary's keys (Redis before 7.2 without --allow-touch or a replica):
// the audit then samples nothing.
func touchBlocked(src Source) bool { return src.Touch().Blocked() }

// touchNotes adds to rep what the eviction-state rule cost: the checks
// left out because their reads would have touched a primary's keys, or
// the keys touched under --allow-touch. sampled says payloads were asked
// for (--sample above 0).
func touchNotes(src Source, rep *Report, sampled bool) {
	st := src.Touch()
	if !st.Touches {
		return
	}
	if st.Allowed {
		rep.Scan.Notes = append(rep.Scan.Notes, fmt.Sprintf(
			"%d keys had their LRU/LFU state touched (--allow-touch: the audit read a primary, and %s)",
			st.Touched, st.Why))
		return
	}
	var what []string
	var unread rules.Fact
	if sampled {
		what = append(what, fmt.Sprintf("no payload was sampled (%s not checked)", andList(rules.Reading(rules.FactPayload))))
		unread |= rules.FactPayload
	}
	if st.LenSkipped > 0 {
		what = append(what, fmt.Sprintf("the length of %d keys of families with max_len was not read (%s not checked)", st.LenSkipped, andList(rules.Reading(rules.FactLen))))
		unread |= rules.FactLen
	}
	if st.GroupsSkipped > 0 {
		what = append(what, fmt.Sprintf("the consumer groups of %d streams were not read (%s not checked)", st.GroupsSkipped, andList(rules.Reading(rules.FactGroups))))
		unread |= rules.FactGroups
	}
	if len(what) == 0 {
		return
	}
	rep.Scan.NotChecked = rules.Reading(unread)
	msg := andList(what)
	rep.Scan.Notes = append(rep.Scan.Notes, fmt.Sprintf(
		"%s: %s, so reading values or lengths on the primary would reset their LRU/LFU state; use --replica to read a replica, or --allow-touch to read the primary anyway",
		msg, st.Why))
}

// andList joins words as "a", "a and b" or "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
