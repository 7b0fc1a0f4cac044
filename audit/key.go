package audit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
	"github.com/keyreg/keyreg/source"
)

// checker decides what the key rules say about one probed key: its family
// (or the family whose shape it has), whether its payload is checked, and
// which rules fire. The audit runs it on every key and CheckKey (explain
// --live) on one, so the two cannot disagree about a key.
type checker struct {
	reg   *registry.Registry
	match *registry.Matcher
	shape *registry.ShapeMatcher
	rules []*rules.Rule
}

func newChecker(reg *registry.Registry) *checker {
	return &checker{reg: reg, match: reg.Matcher(), shape: reg.ShapeMatcher(), rules: rules.KeyRules()}
}

// keyFacts starts the facts of a probed key; classify fills the family.
func keyFacts(k *source.KeyInfo, now time.Time) rules.KeyFacts {
	return rules.KeyFacts{
		Key: k.Key, Type: k.Type, PTTL: k.PTTL,
		Idle: k.Idle, HasIdle: k.HasIdle, Memory: k.Memory, HasMemory: k.HasMemory,
		Len: k.Len, HasLen: k.HasLen, Now: now,
		Fence: k.Fence, FenceExists: k.FenceExists, HasFence: k.HasFence,
		Encoding: k.Encoding, Groups: k.Groups, HasGroups: k.HasGroups,
	}
}

// family returns the family of a probed key, from the tag Plan gave it
// when there is one, else by matching.
func (c *checker) family(k *source.KeyInfo) *registry.Family {
	if k.Family == source.NoFamily {
		return nil
	}
	if i, ok := k.Family.Index(); ok && i < len(c.reg.Families) {
		return c.reg.Families[i]
	}
	return c.match.Match(k.Key)
}

// classify sets facts.Family to the family of k, or, for a key of no
// family, facts.Shape to the family whose shape it has and ShapeReason to
// why its placeholders fail. A key with neither is unregistered.
func (c *checker) classify(k *source.KeyInfo, facts *rules.KeyFacts) {
	if facts.Family = c.family(k); facts.Family != nil {
		return
	}
	f := c.shape.Match(k.Key)
	if f == nil {
		return
	}
	facts.Shape = f
	if cl, reason := c.match.Closest(k.Key); cl == f {
		facts.ShapeReason = reason
	} else {
		facts.ShapeReason = fmt.Sprintf("placeholder types of %q do not accept the key", f.Pattern.Source)
	}
}

// samplable reports whether the payload of a key of family f and Redis
// type typ is checked: the family has a schema or an encoding, and the key
// has the family's type (else type-mismatch says it all; the payload would
// not decode).
func samplable(f *registry.Family, typ string) bool {
	return f != nil && (f.Schema != nil || f.Encoding != "") && (f.Type == "" || typ == f.Type)
}

// fire decides the findings of one key: it calls fn with the index in
// c.rules of every key rule that fires on facts, in rule order. PhaseKey
// rules run on every key, PhaseSample rules on keys whose payload was
// checked (facts.Payload set), PhaseRun rules not at all (the audit runs
// them per family at the end). It allocates nothing.
func (c *checker) fire(facts *rules.KeyFacts, fn func(j int, r *rules.Rule)) {
	for j, r := range c.rules {
		switch {
		case r.Key == nil, r.Phase == rules.PhaseRun:
		case r.Phase == rules.PhaseSample && facts.Payload == nil:
		case r.Key(facts):
			fn(j, r)
		}
	}
}

// detail is what rule r says about a key it fired on, bounded like a key
// name: it may quote part of the key, or a value with ShowValues.
func detail(r *rules.Rule, facts *rules.KeyFacts) string {
	if r.Detail == nil {
		return ""
	}
	return clip(r.Detail(facts), maxDetailBytes, true)
}

// Prober reads one key: a *scanner.Conn, or the *snapshot.Found of a
// snapshot read until the key. Probe should read what the audit
// reads for the key (Plan's probe plan), so that CheckKey sees the same
// facts.
type Prober interface {
	Probe(ctx context.Context, key string) (source.KeyInfo, error)
	Sample(ctx context.Context, k source.KeyInfo, n int, maxBytes int64) (payload.Sample, error)
}

// maxTokenBytes bounds the bytes of a lock's token that KeyCheck.Token
// shows under Options.ShowValues.
const maxTokenBytes = 128

// KeyCheck is what the key rules say about one live key.
type KeyCheck struct {
	Info     source.KeyInfo
	Detected string // encodings found in the sampled value, such as "json"; empty when not read
	Skipped  bool   // the value was larger than Options.MaxValueBytes and not read
	// NotTouched says the value was not read because reading it would
	// reset its LRU/LFU state (source.ErrTouch).
	NotTouched bool
	// Token is the shape of a lock's value, such as "uuid" or "text 20
	// bytes" (TokenShape), followed by the value, quoted and clipped to
	// maxTokenBytes, only with Options.ShowValues; empty when not read.
	Token string
	// FenceValue is the value of a lock's fence key when it exists, or of
	// a fence itself: an integer, or why there is none ("(not an
	// integer)", "(not read: ...)"); empty when not read.
	FenceValue string
	Findings   []KeyFinding
}

// KeyFinding is one key rule firing on one key.
type KeyFinding struct {
	Rule       string
	Severity   diag.Severity
	Detail     string // value-free unless Options.ShowValues
	Suppressed bool
}

// CheckKey probes one key, samples its value, and runs the key rules on it
// with the registry's overrides and ignores applied, deciding as the audit
// does (the same classification, sampling condition and rules). For the
// same facts it reports the rules the audit reports for the key; the probe
// should follow Plan, as the audit's does. A key that does not exist
// yields Info.Vanished and no findings.
func CheckKey(ctx context.Context, p Prober, reg *registry.Registry, key string, o Options) (*KeyCheck, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	ki, err := p.Probe(ctx, key)
	if err != nil {
		return nil, err
	}
	kc := &KeyCheck{Info: ki}
	if ki.Vanished {
		return kc, nil
	}
	c := newChecker(reg)
	facts := keyFacts(&ki, o.Now)
	facts.ShowValues = o.ShowValues
	c.classify(&ki, &facts)
	f := facts.Family
	if o.Sample > 0 && ki.Type != "" {
		s, err := p.Sample(ctx, ki, max(o.SampleLen, 10), o.MaxValueBytes)
		switch {
		case errors.Is(err, source.ErrTooLarge):
			kc.Skipped = true
		case errors.Is(err, source.ErrTouch):
			kc.NotTouched = true
		case errors.Is(err, source.ErrVanished):
			kc.Info.Vanished = true
			return kc, nil
		case err != nil:
			return nil, err
		default:
			check := f
			if !samplable(f, ki.Type) {
				check = &registry.Family{} // no encoding, no schema: detect only
			}
			res := payload.Check(check, s, payload.Options{ShowValues: o.ShowValues})
			kc.Detected = strings.Join(slices.Sorted(maps.Keys(res.Detected)), ", ")
			if samplable(f, ki.Type) {
				facts.Payload = &res
			}
			if f != nil && ki.Type == "string" {
				switch f.Kind {
				case registry.KindLock:
					kc.Token = TokenShape(s.String)
					if o.ShowValues {
						kc.Token += " " + strconv.Quote(clip(string(s.String), maxTokenBytes, true))
					}
				case registry.KindFence:
					kc.FenceValue = fenceValue(s.String)
				}
			}
		}
	}
	if f != nil && f.Kind == registry.KindLock {
		if kc.FenceValue, err = readFence(ctx, p, ki); err != nil {
			return nil, err
		}
	}
	family := ""
	if f != nil {
		family = f.Name
	} else if facts.Shape != nil {
		family = facts.Shape.Name
	}
	c.fire(&facts, func(_ int, r *rules.Rule) {
		sev, sup, _ := rules.Effective(reg, r, family, r.Severity)
		if sev == diag.Off {
			return
		}
		kc.Findings = append(kc.Findings, KeyFinding{Rule: r.ID, Severity: sev, Detail: detail(r, &facts), Suppressed: sup})
	})
	return kc, nil
}
