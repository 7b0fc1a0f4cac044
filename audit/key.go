package audit

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/rules"
	"github.com/keyreg/keyreg/scanner"
)

// Prober reads one key: a *scanner.Conn.
type Prober interface {
	Probe(ctx context.Context, key string) (scanner.KeyInfo, error)
	Sample(ctx context.Context, k scanner.KeyInfo, n int, maxBytes int64) (payload.Sample, error)
}

// KeyCheck is what the key rules say about one live key.
type KeyCheck struct {
	Info     scanner.KeyInfo
	Detected string // encodings found in the sampled value, such as "json"; empty when not read
	Skipped  bool   // the value was larger than Options.MaxValueBytes and not read
	// NotTouched says the value was not read because reading it would
	// reset its LRU/LFU state (scanner.ErrTouch).
	NotTouched bool
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
// with the registry's overrides and ignores applied, as the audit would.
// A key that does not exist yields Info.Vanished and no findings.
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
	facts := keyFacts(&ki, o.Now)
	f := reg.Matcher().Match(key)
	facts.Family = f
	if f == nil {
		if s := reg.ShapeMatcher().Match(key); s != nil {
			facts.Shape = s
			_, facts.ShapeReason = reg.Matcher().Closest(key)
		}
	}
	if o.Sample > 0 && ki.Type != "" {
		s, err := p.Sample(ctx, ki, max(o.SampleLen, 10), o.MaxValueBytes)
		switch {
		case errors.Is(err, scanner.ErrTooLarge):
			kc.Skipped = true
		case errors.Is(err, scanner.ErrTouch):
			kc.NotTouched = true
		case errors.Is(err, scanner.ErrVanished):
			kc.Info.Vanished = true
			return kc, nil
		case err != nil:
			return nil, err
		default:
			detectOnly := f
			if detectOnly == nil {
				detectOnly = &registry.Family{} // no encoding, no schema: detect only
			}
			res := payload.Check(detectOnly, s, payload.Options{ShowValues: o.ShowValues})
			kc.Detected = strings.Join(slices.Sorted(maps.Keys(res.Detected)), ", ")
			if f != nil && (f.Schema != nil || f.Encoding != "") && (f.Type == "" || f.Type == ki.Type) {
				facts.Payload = &res
			}
		}
	}
	family := ""
	if f != nil {
		family = f.Name
	} else if facts.Shape != nil {
		family = facts.Shape.Name
	}
	for _, r := range rules.KeyRules() {
		if r.Key == nil || !r.Key(&facts) {
			continue
		}
		sev, sup, _ := rules.Effective(reg, r, family, r.Severity)
		if sev == diag.Off {
			continue
		}
		kf := KeyFinding{Rule: r.ID, Severity: sev, Suppressed: sup}
		if r.Detail != nil {
			kf.Detail = r.Detail(&facts)
		}
		kc.Findings = append(kc.Findings, kf)
	}
	return kc, nil
}
