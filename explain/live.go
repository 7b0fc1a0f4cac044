package explain

import (
	"time"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/registry"
)

// Live turns what audit.CheckKey found on a key into the explanation's
// live facts and verdict: the reads, the lock, fence and stream facts, the
// checks that did not run and the findings. touchWhy says why reads of
// the primary were refused (--no-touch on a server without CLIENT
// NO-TOUCH), empty when they were not; snapshot says the key was read from
// an RDB snapshot.
func Live(kc *audit.KeyCheck, reg *registry.Registry, touchWhy string, snapshot bool) *LiveFacts {
	ki := kc.Info
	if ki.Vanished {
		return &LiveFacts{DB: ki.DB, Verdict: VerdictAbsent, Verdicts: []string{}, NotChecked: []NotChecked{}}
	}
	l := &LiveFacts{Exists: true, DB: ki.DB, Type: ki.Type, Encoding: kc.Detected, Verdicts: []string{}}
	f, _ := reg.Match(ki.Key)
	if f != nil {
		lockFacts(l, kc, f, snapshot)
	}
	l.NotChecked = NotCheckedOf(kc, f, touchWhy, snapshot)
	l.Verdict = Verdict(true, kc.Findings, l.NotChecked)
	if ki.HasLen {
		l.Len = &ki.Len
	}
	l.TTL = "none"
	if ki.PTTL >= 0 {
		l.TTL = registry.FormatDuration(ki.PTTL.Round(time.Second))
	}
	if ki.HasMemory {
		l.Memory = ki.Memory
	}
	if ki.HasIdle {
		l.Idle = registry.FormatDuration(ki.Idle)
		if ki.Idle == 0 {
			l.Idle = "0s"
		}
	}
	for _, f := range kc.Findings {
		v := f.Severity.Label() + ": " + f.Rule
		if f.Detail != "" {
			v += " (" + f.Detail + ")"
		}
		if f.Suppressed {
			v += " [ignored in keys.yaml]"
		}
		l.Verdicts = append(l.Verdicts, v)
	}
	return l
}

// lockFacts adds what explain shows about a lock (lease left, token shape,
// fence), a fence (its value) and a stream's declared consumer groups.
func lockFacts(l *LiveFacts, kc *audit.KeyCheck, f *registry.Family, snapshot bool) {
	ki := kc.Info
	notRead := "(not read: it would reset the key's LRU/LFU state on a primary before redis 7.2; run without --no-touch, or use --replica)"
	if snapshot {
		notRead = "(not read from a snapshot)"
	}
	switch f.Kind {
	case registry.KindLock:
		if ki.PTTL >= 0 && f.TTL.Kind == registry.TTLMax {
			l.Lease = registry.FormatDuration(ki.PTTL.Round(time.Second)) + " left of " + registry.FormatDuration(f.TTL.Max)
		}
		l.Token = kc.Token
		if l.Token == "" && ki.Type == "string" {
			l.Token = "(not read)"
			if kc.NotTouched {
				l.Token = notRead
			}
		}
		if fence := f.FencingFamily; fence != nil {
			key, ok := f.FenceKey(ki.Key)
			if ok {
				l.Fence = &LiveFence{Key: key, Value: kc.FenceValue}
				if ki.HasFence {
					l.Fence.Exists = &ki.FenceExists
				}
			}
		}
	case registry.KindFence:
		exists := true
		l.Fence = &LiveFence{Key: ki.Key, Exists: &exists, Value: kc.FenceValue}
		if kc.FenceValue == "" && kc.NotTouched {
			l.Fence.Value = notRead
		}
	}
	if len(f.Groups) == 0 || ki.Type != "stream" {
		return
	}
	if !ki.HasGroups {
		l.GroupsNote = notRead
		return
	}
	for _, d := range f.Groups {
		g := LiveGroup{Name: d.Name}
		for _, got := range ki.Groups {
			if got.Name != d.Name {
				continue
			}
			g.Exists, g.Consumers, g.Pending = true, got.Consumers, got.Pending
			if got.HasLag {
				g.Lag = &got.Lag
			}
			if got.HasIdle {
				g.IdleConsumer = got.IdleConsumer
				g.Idle = registry.FormatDuration(got.IdlePending.Round(time.Second))
				if got.IdlePending < time.Second {
					g.Idle = got.IdlePending.Round(time.Millisecond).String()
				}
			}
		}
		l.Groups = append(l.Groups, g)
	}
}
