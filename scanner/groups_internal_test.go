package scanner

import (
	"bufio"
	"fmt"
	"strings"
	"testing"

	"github.com/keyreg/keyreg/source"
)

func bulk(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

// TestGroupReaderHostile parses XINFO replies shaped to hurt: thousands of
// groups, names longer than any planned one, unknown and nested fields, a
// non-array element, an odd field count and a consumer name of 10 kB. Only
// the planned groups are kept, the longest idle consumer holding entries
// wins, its name is clipped, and the connection is left at the next reply.
func TestGroupReaderHostile(t *testing.T) {
	var b strings.Builder
	b.WriteString("*2003\r\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "*4\r\n%s%s%s:%d\r\n", bulk("name"), bulk(fmt.Sprintf("g%d", i)), bulk("pending"), i)
	}
	b.WriteString(":7\r\n") // not a group
	fmt.Fprintf(&b, "*3\r\n%s%s%s", bulk("name"), bulk(strings.Repeat("n", 5000)), bulk("dangling"))
	fmt.Fprintf(&b, "*14\r\n%s%s%s:3\r\n%s:12\r\n%s*2\r\n:1\r\n:2\r\n%s$-1\r\n%s:40\r\n%s%s",
		bulk("name"), bulk("delivery"), bulk("consumers"), bulk("pending"), bulk("nested"), bulk("entries-read"), bulk("lag"),
		bulk(strings.Repeat("f", 100)), bulk("ignored"))
	// XINFO CONSUMERS of delivery: an idle consumer without entries, a
	// long-named one with entries, a busier one less idle.
	long := strings.Repeat("w", 10_000)
	b.WriteString("*3\r\n")
	fmt.Fprintf(&b, "*6\r\n%s%s%s:0\r\n%s:999999\r\n", bulk("name"), bulk("idle-empty"), bulk("pending"), bulk("idle"))
	fmt.Fprintf(&b, "*8\r\n%s%s%s:2\r\n%s:60000\r\n%s:1\r\n", bulk("name"), bulk(long), bulk("pending"), bulk("idle"), bulk("inactive"))
	fmt.Fprintf(&b, "*6\r\n%s%s%s:9\r\n%s:5\r\n", bulk("name"), bulk("busy"), bulk("pending"), bulk("idle"))
	b.WriteString("+NEXT\r\n")

	gr := newGroupReader(bufio.NewReaderSize(strings.NewReader(b.String()), 32<<10))
	plan := []source.GroupQuery{{Name: "delivery", Consumers: true}, {Name: "g1999"}, {Name: "absent"}}
	got, err := gr.groups(plan)
	if err != nil || gr.cr.reply != nil {
		t.Fatalf("groups: %v, reply %v", err, gr.cr.reply)
	}
	if len(got) != 2 || got[0].Name != "g1999" || got[0].Pending != 1999 || got[1].Name != "delivery" {
		t.Fatalf("groups %+v, want g1999 and delivery", got)
	}
	d := &got[1]
	if d.Consumers != 3 || d.Pending != 12 || !d.HasLag || d.Lag != 40 {
		t.Errorf("delivery %+v", d)
	}
	if err := gr.consumers(d); err != nil || gr.cr.reply != nil {
		t.Fatalf("consumers: %v, reply %v", err, gr.cr.reply)
	}
	if !d.HasIdle || d.IdlePending.Milliseconds() != 60000 || d.IdleConsumer != long[:source.MaxConsumerName] {
		t.Errorf("idlest consumer with entries %q idle %v (read %v)", d.IdleConsumer, d.IdlePending, d.HasIdle)
	}
	kind, _, _, err := gr.cr.header()
	if err != nil || kind != '+' {
		t.Errorf("the reader is not at the next reply: %c %v", kind, err)
	}

	// An error reply (the key changed type) is a reply, not a failure.
	gr = newGroupReader(bufio.NewReader(strings.NewReader("-WRONGTYPE Operation against a key\r\n-NOGROUP no such group\r\n")))
	if got, err := gr.groups(plan); err != nil || got != nil || gr.cr.reply == nil {
		t.Errorf("groups of an error reply: %+v, %v, reply %v", got, err, gr.cr.reply)
	}
	gr.cr.reply = nil
	if err := gr.consumers(nil); err != nil || gr.cr.reply == nil {
		t.Errorf("consumers of an error reply: %v, reply %v", err, gr.cr.reply)
	}
}
