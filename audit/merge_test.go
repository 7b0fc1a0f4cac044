package audit_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"testing/fstest"
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/scanner"
)

// TestMergeEqualsWhole audits three disjoint parts of a keyspace and the
// whole, and requires the merge of the parts to equal the whole in every
// count: families, TTL histograms, per-database splits, prefix groups,
// findings (family-unused only where no part has the family's keys), types
// and their sketches, and the largest keys.
func TestMergeEqualsWhole(t *testing.T) {
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(`version: 1
owners:
  platform: {contact: platform@example.com}
families:
  - {name: session, description: s, pattern: "v1:session:{id:int}", owner: platform, type: string, ttl: {max: 1h}}
  - {name: cart, description: c, pattern: "v1:cart:{id:int}", owner: platform, type: hash, ttl: optional, max_len: 5}
  - {name: rare, description: r, pattern: "v1:rare:{id:int}", owner: platform, type: string, ttl: optional}
  - {name: unused, description: u, pattern: "v1:unused:{id:int}", owner: platform, type: string, ttl: optional}
`)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var all []scanner.KeyInfo
	for i := range 900 {
		k := scanner.KeyInfo{DB: i % 3 / 2, Type: "string", PTTL: time.Duration(i%7) * 20 * time.Minute, HasMemory: true, Memory: int64(50 + i*37%2000)}
		switch i % 5 {
		case 0, 1:
			k.Key, k.Encoding = fmt.Sprint("v1:session:", i), "embstr"
		case 2:
			k.Key, k.Type, k.HasLen, k.Len = fmt.Sprint("v1:cart:", i), "hash", true, int64(i%9)
		case 3:
			k.Key, k.PTTL = fmt.Sprint("tmp:export:", i), -1
		default:
			k.Key = fmt.Sprint("legacy_", i)
		}
		all = append(all, k)
	}
	all = append(all, scanner.KeyInfo{Key: "v1:rare:1", Type: "string", PTTL: -1})
	ctx := context.Background()
	o := audit.Defaults()
	o.Top = 4
	o.Now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	run := func(keys []scanner.KeyInfo) *audit.Report {
		r, err := audit.Run(ctx, listSource{keys: keys, batch: 50}, reg, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	whole := run(all)
	// Every key's memory was measured but v1:rare:1's: the owner's sum
	// covers one key fewer than it has, and says so.
	if o := whole.Owners[0]; o.MemoryKeys != o.Keys-1 || whole.Totals.MemoryKeys != whole.Totals.Keys-1 {
		t.Errorf("memory measured for %d of %d owner keys, %d of %d in all; want one key fewer", o.MemoryKeys, o.Keys, whole.Totals.MemoryKeys, whole.Totals.Keys)
	}
	// The key names' bytes, and the measured memory per TTL bucket, add
	// up to what was audited.
	var names, memory int64
	for _, k := range all {
		names += int64(len(k.Key))
		memory += k.Memory
	}
	if whole.KeyBytes != names || whole.TTLMemory.Total() != memory || memory != whole.Totals.Memory {
		t.Errorf("key names %d bytes, want %d; memory per TTL bucket %d, want %d (totals %d)", whole.KeyBytes, names, whole.TTLMemory.Total(), memory, whole.Totals.Memory)
	}
	// The encodings read are counted per type: the sessions' (360 keys).
	for _, ts := range whole.Types {
		if ts.Type == "string" && fmt.Sprint(ts.Encodings) != "[{embstr 360}]" {
			t.Errorf("string encodings %v, want [{embstr 360}]", ts.Encodings)
		}
	}
	// The unregistered groups name the databases of their keys (0 and 1).
	for _, g := range whole.Unregistered.Groups {
		if fmt.Sprint(g.DBs) != "[0 1]" {
			t.Errorf("group %q lives in databases %v, want [0 1]", g.Prefix, g.DBs)
		}
	}
	var parts []*audit.Report
	for p := range 3 {
		var keys []scanner.KeyInfo
		for i, k := range all {
			if i%3 == p {
				keys = append(keys, k)
			}
		}
		parts = append(parts, run(keys))
	}
	merged, err := audit.Merge(parts, audit.MergeOptions{Top: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*audit.Report{whole, merged} {
		r.Started, r.Target, r.Scan.Duration, r.Scan.KeysPerSec, r.Scan.Nodes = time.Time{}, "", 0, 0, 0
		for _, f := range r.Findings {
			f.Examples = f.Examples[:0] // which keys serve as examples depends on the order
		}
		for _, g := range r.Unregistered.Groups {
			g.Examples = g.Examples[:0]
		}
	}
	if !reflect.DeepEqual(merged, whole) {
		t.Errorf("merged report differs from the whole:\nmerged %+v\nwhole  %+v", merged, whole)
		for i := range whole.Findings {
			if i < len(merged.Findings) && !reflect.DeepEqual(merged.Findings[i], whole.Findings[i]) {
				t.Errorf("finding %d: merged %+v, whole %+v", i, merged.Findings[i], whole.Findings[i])
			}
		}
	}
	// family-unused stays for the family no part has, and only for it.
	unused := map[string]bool{}
	for _, f := range merged.Findings {
		if f.Rule == "family-unused" {
			unused[f.Family] = true
		}
	}
	if !unused["unused"] || unused["rare"] || len(unused) != 1 {
		t.Errorf("family-unused on %v, want only on unused", unused)
	}
}

func TestMergeRefuses(t *testing.T) {
	a := &audit.Report{Version: "1", Families: []*audit.FamilyReport{{Name: "a"}}}
	b := &audit.Report{Version: "1", Families: []*audit.FamilyReport{{Name: "b"}}}
	c := &audit.Report{Version: "2", Families: []*audit.FamilyReport{{Name: "a"}}}
	for _, reps := range [][]*audit.Report{nil, {a, b}, {a, c}, {a, nil}} {
		if _, err := audit.Merge(reps, audit.MergeOptions{}); err == nil {
			t.Errorf("Merge(%v) merged", reps)
		}
	}
	p := &audit.Report{Version: "1", Families: []*audit.FamilyReport{{Name: "a"}}, Partial: true, PartialReason: "--max-keys 10 reached"}
	m, err := audit.Merge([]*audit.Report{a, p}, audit.MergeOptions{})
	if err != nil || !m.Partial || m.PartialReason != "--max-keys 10 reached" {
		t.Errorf("partial input: %+v, %v", m, err)
	}
}
