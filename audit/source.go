package audit

import (
	"context"

	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/source"
)

// Source is where an audit's key facts come from: a *scanner.Conn reads a
// live Redis, a *snapshot.Source RDB files (cmd/keyreg/source.go asserts
// both). The audit hands it a plan and consumes what it yields, and needs
// nothing else from it: it imports package source, never an
// implementation.
type Source interface {
	// ScanKeys calls fn with batches of keys and their facts, never
	// concurrently, never with an empty batch or a vanished key; fn owns
	// each batch. plan says per key which facts beyond type and TTL to
	// read, and tags it with its family (KeyInfo.Family). An error of fn
	// stops the scan and is returned as is; an interrupted or failed scan
	// returns what it counted, with Stats.Partial set.
	ScanKeys(ctx context.Context, plan source.Planner, fn func(batch []source.KeyInfo) error) (source.Stats, error)
	// SampleEach reads a bounded part of the value of every key, at most
	// n elements of a collection and maxBytes of one value, and hands the
	// samples to fn in waves, reading the next wave only after fn
	// returned: ss[j] and errs[j] belong to keys[idx[j]], and every key is
	// handed over once. An error is source.ErrTooLarge, source.ErrVanished,
	// a refusal (see Touch), or a read that failed. The audit checks each
	// wave before fn returns, and keeps two calls at most in flight, so
	// the samples it holds at once are two waves', bounded by twice the
	// source's budget.
	SampleEach(ctx context.Context, keys []source.KeyInfo, n int, maxBytes int64, fn func(idx []int, ss []payload.Sample, errs []error))
	// Touch reports whether the source's reads change the eviction state
	// of a primary's keys: when Blocked, it refuses every sample and
	// planned length, and the audit samples nothing and says so. It is
	// asked before the scan and after, for the counts.
	Touch() source.TouchState
}

// sampleOne reads the sample of one key through SampleEach.
func sampleOne(ctx context.Context, src Source, k source.KeyInfo, n int, maxBytes int64) (s payload.Sample, err error) {
	src.SampleEach(ctx, []source.KeyInfo{k}, n, maxBytes, func(_ []int, ss []payload.Sample, errs []error) {
		s, err = ss[0], errs[0]
	})
	return s, err
}

// Plan returns the probe plan for a registry: OBJECT IDLETIME for keys of
// families with max_idle, MEMORY USAGE for families with max_bytes (or
// every key when memory is set), and the length of collections whose family
// has max_len; for a lock with a fence, EXISTS of its fence key; for a
// fence, OBJECT ENCODING; for a stream with groups, XINFO GROUPS (and XINFO
// CONSUMERS of the groups with max_consumer_idle). Run gives its Source Plan(reg, Options.Memory); explain
// --live gives it to the scanner (scanner.Options.Plan), so that the key is
// probed as the audit probes it.
//
// The plan tags every key with its family (source.FamilyAt, or
// source.NoFamily), so Run does not match the key again: pass Run the
// same registry.
func Plan(reg *registry.Registry, memory bool) source.Planner {
	m := reg.Matcher()
	plans := make([]source.Plan, len(reg.Families))
	for i, f := range reg.Families {
		plans[i] = source.Plan{Idle: f.MaxIdle > 0, Memory: memory || f.MaxBytes > 0, Family: source.FamilyAt(i)}
		if f.Schema != nil || f.Encoding != "" { // samplable (key.go), once the type fits
			plans[i].Sample = f.Type
			if f.Type == "" {
				plans[i].Sample = "*"
			}
		}
		if f.MaxLen > 0 {
			plans[i].Len = f.Type
		}
		plans[i].Encoding = f.Kind == registry.KindFence
		for _, g := range f.Groups {
			plans[i].Groups = append(plans[i].Groups, source.GroupQuery{Name: g.Name, Consumers: g.MaxConsumerIdle != registry.NoLimit})
		}
	}
	none := source.Plan{Memory: memory, Family: source.NoFamily}
	return func(key string) source.Plan {
		f := m.Match(key)
		if f == nil {
			return none
		}
		p := plans[f.Index]
		if f.FencingFamily != nil {
			p.Fence, _ = f.FenceKey(key)
		}
		return p
	}
}
