package audit_test

import (
	"context"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/scanner"
)

// BenchmarkAuditScan audits 5,000 keys of three families whose limits use
// every probe command (max_idle, max_bytes, max_len) and one prefix of
// unregistered keys, through the real scanner, without sampling: the
// per-key path of the scan, the probe and the key rules.
func BenchmarkAuditScan(b *testing.B) {
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(`version: 1
owners:
  platform: {contact: platform@example.com}
families:
  - {name: session, description: s, pattern: "v1:session:{id:int}", owner: platform, type: string, ttl: optional, max_idle: 30d}
  - {name: blob, description: b, pattern: "v1:blob:{id:int}", owner: platform, type: string, ttl: optional, max_bytes: 4096}
  - {name: cart, description: c, pattern: "v1:cart:{id:int}", owner: platform, type: hash, ttl: optional, max_len: 100}
`)}}, "keys.yaml")
	if err != nil {
		b.Fatal(err)
	}
	s := redistest.Standalone(b)
	admin := s.Client(b)
	ctx := context.Background()
	pipe := admin.Pipeline()
	for i := range 5000 {
		switch i % 4 {
		case 0:
			pipe.Set(ctx, fmt.Sprint("v1:session:", i), "x", 0)
		case 1:
			pipe.Set(ctx, fmt.Sprint("v1:blob:", i), "x", 0)
		case 2:
			pipe.HSet(ctx, fmt.Sprint("v1:cart:", i), "f", "v")
		default:
			pipe.Set(ctx, fmt.Sprint("junk:", i), "x", 0)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	conn := dial(b, reg, scanner.Options{URL: s.URL(), Count: 1000})
	o := audit.Defaults()
	o.Sample = 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rep, err := audit.Run(ctx, conn, reg, o)
		if err != nil || rep.Totals.Keys != 5000 {
			b.Fatalf("%v keys, %v", rep.Totals.Keys, err)
		}
	}
}
