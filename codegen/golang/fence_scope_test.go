package golang

import "testing"

// TestBrokenFenceWithoutClient: a lock whose fencing link is broken has no
// typed lock without a client, so --client none generates it, as before
// the request: building the request does not reject what the Go backend
// never reads; with the client the backend does.
func TestBrokenFenceWithoutClient(t *testing.T) {
	reg := parseRegistry(t, `version: 1
families:
  - {name: job-lock, pattern: "v1:lock:{id}", owner: o, kind: lock, ttl: {max: 30s}, fencing: nothing}
`)
	if _, err := Generate(reg, Options{Package: "keys", Client: ClientNone}); err != nil {
		t.Errorf("--client none: %v", err)
	}
	if _, err := Generate(reg, Options{Package: "keys"}); err == nil {
		t.Error("--client go-redis generated a lock whose fence names no family")
	}
}
