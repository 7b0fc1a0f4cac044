package keys

import (
	"encoding/json"
	"testing"
)

// BenchmarkEncodeCheck measures what a list write adds per item before it
// reaches Redis: JSON encoding, decoding that back and the schema check.
func BenchmarkEncodeCheck(b *testing.B) {
	k := MailOutboxKey{}
	key := k.String()
	item := MailOutboxItem{ID: roomID, Template: "welcome", To: "ada@example.com", EnqueuedAt: when}
	b.ReportAllocs()
	for b.Loop() {
		_, val, err := k.encode(key, item)
		if err != nil {
			b.Fatal(err)
		}
		if err := keyregCheck(keyregSchemaMailOutbox, "mail-outbox", key, val); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode is BenchmarkEncodeCheck without the check, for the
// difference.
func BenchmarkEncode(b *testing.B) {
	item := MailOutboxItem{ID: roomID, Template: "welcome", To: "ada@example.com", EnqueuedAt: when}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(item); err != nil {
			b.Fatal(err)
		}
	}
}
