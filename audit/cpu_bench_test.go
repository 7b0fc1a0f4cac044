package audit_test

import (
	"context"
	"fmt"
	"testing"
	"testing/fstest"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/scanner"
)

// BenchmarkAuditCPU audits 100,000 in-memory keys (no Redis: listSource)
// of three families and one unregistered prefix, each with the facts an
// audit --memory probe yields (memory, a TTL, a length for the hashes), so
// that it measures the audit's own CPU per key: matching, the key rules and
// the aggregation, statistics included. Run it on two commits to see what
// a change costs.
func BenchmarkAuditCPU(b *testing.B) {
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
	keys := make([]scanner.KeyInfo, 100_000)
	for i := range keys {
		k := &keys[i]
		k.Type, k.PTTL, k.HasMemory, k.Memory = "string", time.Duration(i%5000)*time.Minute, true, int64(60+i*7919%3000)
		switch i % 4 {
		case 0:
			k.Key = fmt.Sprint("v1:session:", i)
		case 1:
			k.Key = fmt.Sprint("v1:blob:", i)
		case 2:
			k.Key, k.Type, k.HasLen, k.Len = fmt.Sprint("v1:cart:", i), "hash", true, int64(i%120)
		default:
			k.Key, k.PTTL = fmt.Sprint("junk:", i), -1
		}
	}
	src := listSource{keys: keys, batch: 1000}
	o := audit.Defaults()
	o.Sample = 0
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rep, err := audit.Run(ctx, src, reg, o)
		if err != nil || rep.Totals.Keys != int64(len(keys)) {
			b.Fatalf("%v keys, %v", rep.Totals.Keys, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(keys)), "ns/key")
}
