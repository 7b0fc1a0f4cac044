package remedy

import "testing"

func TestSlot(t *testing.T) {
	// Values from the Redis Cluster specification and CLUSTER KEYSLOT.
	for key, want := range map[string]uint16{"123456789": 12739, "foo": 12182, "{user1000}.following": 3443} {
		if got := slot(key); got != want {
			t.Errorf("slot(%q) = %d, want %d", key, got, want)
		}
	}
	for _, key := range []string{"a", "tmp:junk:1", "{x}y", "\xff\x00"} {
		if p := probeKey(key); slot(p) != slot(key) {
			t.Errorf("probeKey(%q) = %q in slot %d, want %d", key, p, slot(p), slot(key))
		}
	}
}
