package audit

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MergeOptions tunes Merge.
type MergeOptions struct {
	// Top is the number of largest keys kept per measure, as Options.Top.
	Top int
	// MaxGroups caps the unregistered prefix groups, as Options.MaxGroups;
	// the keys of the smallest groups beyond it count as other.
	MaxGroups int
	// Examples caps the examples kept per finding; 0 keeps as many as the
	// inputs' largest list.
	Examples int
}

// maxMergeNotes bounds the distinct scan notes a merged report keeps.
const maxMergeNotes = 100

// Merge combines the reports of audits of disjoint keyspaces, such as one
// per cluster shard or per Redis instance, into the report of their union,
// audited against the same registry: every count adds up, the sketches and
// TTL histograms merge, the top keys are the largest of all, examples stay
// bounded, and the result is partial when an input is. The inputs must list
// the same families in the same order, and share the report version.
//
// A finding that counts no key (family-unused, which fires on a family
// with no keys) is kept only when every input has it: an instance without
// the family's keys does not make the family unused in the fleet. Scan
// durations do not add: the merged duration is the longest, as for jobs run
// side by side. The inputs are not changed.
func Merge(reps []*Report, o MergeOptions) (*Report, error) {
	if len(reps) == 0 {
		return nil, errors.New("no reports to merge")
	}
	o.MaxGroups = cmp.Or(o.MaxGroups, Defaults().MaxGroups)
	first := reps[0]
	for i, r := range reps {
		if r == nil {
			return nil, fmt.Errorf("report %d is missing", i+1)
		}
		if r.Version != first.Version {
			return nil, fmt.Errorf("report %d has version %q, report 1 %q", i+1, r.Version, first.Version)
		}
		if !sameFamilies(first, r) {
			return nil, fmt.Errorf("report %d audits other families than report 1: merge reports of the same registry", i+1)
		}
	}
	m := &Report{
		Version: first.Version, Registry: first.Registry, Mode: first.Mode, Started: first.Started,
		Findings: []*Finding{}, Owners: []*OwnerReport{},
	}
	var (
		targets, reasons []string
		notes            = map[string]bool{}
		dbs              = map[int]bool{}
		st               = newStats(min(cmp.Or(o.Top, DefaultTopN), MaxTopN))
	)
	for _, r := range reps {
		if r.Mode != m.Mode {
			m.Mode = "merged"
		}
		if r.Started.Before(m.Started) {
			m.Started = r.Started
		}
		if !slices.Contains(targets, r.Target) {
			targets = append(targets, r.Target)
		}
		if r.Partial {
			m.Partial = true
			reason := cmp.Or(r.PartialReason, "an input report is partial")
			if !slices.Contains(reasons, reason) {
				reasons = append(reasons, reason)
			}
		}
		s := &m.Scan
		s.Nodes += r.Scan.Nodes
		s.Keys += r.Scan.Keys
		s.Scanned += r.Scan.Scanned
		s.Duplicates += r.Scan.Duplicates
		s.Vanished += r.Scan.Vanished
		s.Sampled += r.Scan.Sampled
		s.Skipped += r.Scan.Skipped
		s.Duration = max(s.Duration, r.Scan.Duration)
		for _, n := range r.Scan.Notes {
			if !notes[n] && len(notes) < maxMergeNotes {
				notes[n] = true
				s.Notes = append(s.Notes, n)
			}
		}
		for _, d := range r.DBs {
			dbs[d] = true
		}
		for _, t := range r.TopKeys.ByBytes {
			st.bytes.offer(clonedTop(t))
		}
		for _, t := range r.TopKeys.ByElements {
			st.elements.offer(clonedTop(t))
		}
		for _, t := range r.Types {
			mt := st.typeOf(t.Type)
			mt.Keys += t.Keys
			mt.Bytes += t.Bytes
			mt.Elements += t.Elements
			mt.BytesDist.Merge(&t.BytesDist)
			mt.ElementsDist.Merge(&t.ElementsDist)
			for _, e := range t.Encodings {
				mt.addEncoding(e.Encoding, e.Keys)
			}
		}
		m.TTL.Merge(&r.TTL)
		m.TTLMemory.Merge(&r.TTLMemory)
		m.KeyBytes += r.KeyBytes
	}
	m.Target = clip(strings.Join(targets, ","), maxDetailBytes, true)
	if m.Partial {
		m.PartialReason = clip(strings.Join(reasons, "; "), maxDetailBytes, true)
	}
	if secs := m.Scan.Duration.Seconds(); secs > 0 {
		m.Scan.KeysPerSec = float64(m.Scan.Keys) / secs
	}
	m.DBs = slices.Sorted(func(yield func(int) bool) {
		for d := range dbs {
			if !yield(d) {
				return
			}
		}
	})
	m.TopKeys = TopKeys{ByBytes: st.bytes.sorted(), ByElements: st.elements.sorted()}
	m.Types = st.types
	if m.Types == nil {
		m.Types = []*TypeStats{}
	}
	sortTypes(m.Types)

	mergeFamilies(m, reps)
	groups := mergeUnregistered(m, reps, o.MaxGroups)
	mergeFindings(m, reps, groups, o.Examples)
	return m, nil
}

// sameFamilies reports whether a and b list the same families in order.
func sameFamilies(a, b *Report) bool {
	return slices.EqualFunc(a.Families, b.Families, func(x, y *FamilyReport) bool {
		return x != nil && y != nil && x.Name == y.Name
	})
}

func clonedTop(t *TopKey) *TopKey {
	c := *t
	return &c
}

// mergeFamilies adds up the families, their owners and the totals.
func mergeFamilies(m *Report, reps []*Report) {
	owners := map[string]*OwnerReport{}
	for i, f := range reps[0].Families {
		mf := &FamilyReport{Name: f.Name, Owner: f.Owner, Preset: f.Preset, Pos: f.Pos, Position: f.Position}
		dbs := map[int]*DBReport{}
		for _, r := range reps {
			rf := r.Families[i]
			mf.Keys += rf.Keys
			mf.WithTTL += rf.WithTTL
			mf.Memory += rf.Memory
			mf.MemoryMeasured = mf.MemoryMeasured || rf.MemoryMeasured
			mf.MemoryKeys += rf.MemoryKeys
			mf.Sampled += rf.Sampled
			mf.Findings += rf.Findings
			mf.TTL.Merge(&rf.TTL)
			for _, d := range rf.DBs {
				md := dbs[d.DB]
				if md == nil {
					if len(dbs) >= maxDBs {
						continue
					}
					md = &DBReport{DB: d.DB}
					dbs[d.DB] = md
				}
				md.Keys += d.Keys
				md.WithTTL += d.WithTTL
				md.Memory += d.Memory
				md.MemoryKeys += d.MemoryKeys
			}
		}
		for _, d := range dbs {
			mf.DBs = append(mf.DBs, d)
		}
		mf.DBs = sortedDBs(mf.DBs)
		m.Families = append(m.Families, mf)
		m.Totals.Keys += mf.Keys
		m.Totals.Registered += mf.Keys
		m.Totals.WithTTL += mf.WithTTL
		m.Totals.Memory += mf.Memory
		m.Totals.MemoryKeys += mf.MemoryKeys
		ow := owners[mf.Owner]
		if ow == nil {
			ow = &OwnerReport{Name: mf.Owner}
			owners[mf.Owner] = ow
			m.Owners = append(m.Owners, ow)
		}
		ow.Families = append(ow.Families, mf.Name)
		ow.Keys += mf.Keys
		ow.WithTTL += mf.WithTTL
		ow.Memory += mf.Memory
		ow.MemoryKeys += mf.MemoryKeys
		ow.Findings += mf.Findings
	}
	for _, r := range reps {
		for _, o := range r.Owners {
			if ow := owners[o.Name]; ow != nil && ow.Contact == "" {
				ow.Contact = o.Contact
			}
		}
	}
	slices.SortFunc(m.Owners, func(a, b *OwnerReport) int { return strings.Compare(a.Name, b.Name) })
}

// mergeUnregistered adds up the unregistered keys and their prefix groups,
// keeping the largest maxGroups groups; it returns the groups by prefix.
func mergeUnregistered(m *Report, reps []*Report, maxGroups int) map[string]*Group {
	u := &m.Unregistered
	groups := map[string]*Group{}
	for _, r := range reps {
		ru := &r.Unregistered
		u.Keys += ru.Keys
		u.Other += ru.Other
		u.WithTTL += ru.WithTTL
		u.Memory += ru.Memory
		u.MemoryMeasured = u.MemoryMeasured || ru.MemoryMeasured
		u.MemoryKeys += ru.MemoryKeys
		u.TTL.Merge(&ru.TTL)
		for _, g := range ru.Groups {
			mg := groups[g.Prefix]
			if mg == nil {
				mg = &Group{Prefix: g.Prefix, Examples: []string{}}
				groups[g.Prefix] = mg
			}
			mg.Keys += g.Keys
			mg.WithTTL += g.WithTTL
			mg.Memory += g.Memory
			mg.MemoryKeys += g.MemoryKeys
			for _, db := range g.DBs {
				mg.DBs = addDB(mg.DBs, db)
			}
			for _, e := range g.Examples {
				if len(mg.Examples) < 3 {
					mg.Examples = append(mg.Examples, e)
				}
			}
		}
	}
	u.Groups = []*Group{}
	for _, g := range groups {
		u.Groups = append(u.Groups, g)
	}
	slices.SortFunc(u.Groups, func(a, b *Group) int {
		return cmp.Or(cmp.Compare(b.Keys, a.Keys), strings.Compare(a.Prefix, b.Prefix))
	})
	if len(u.Groups) > maxGroups {
		for _, g := range u.Groups[maxGroups:] {
			u.Other += g.Keys
			delete(groups, g.Prefix)
		}
		u.Groups = u.Groups[:maxGroups]
	}
	m.Totals.Keys += u.Keys
	m.Totals.Unregistered = u.Keys
	m.Totals.WithTTL += u.WithTTL
	m.Totals.Memory += u.Memory
	m.Totals.MemoryKeys += u.MemoryKeys
	return groups
}

// mergeFindings adds up the findings per (rule, family).
func mergeFindings(m *Report, reps []*Report, groups map[string]*Group, examples int) {
	type key struct{ rule, family string }
	byKey := map[key]*Finding{}
	seen := map[key]int{} // inputs with the finding
	var order []key
	for _, r := range reps {
		for _, f := range r.Findings {
			k := key{f.Rule, f.Family}
			seen[k]++
			mf := byKey[k]
			if mf == nil {
				c := *f
				c.Count, c.Of, c.Examples = 0, 0, []Example{}
				mf = &c
				byKey[k] = mf
				order = append(order, k)
			}
			mf.Count += f.Count
			mf.Of += f.Of
			limit := examples
			if limit <= 0 {
				limit = max(len(f.Examples), len(mf.Examples))
			}
			for _, e := range f.Examples {
				if len(mf.Examples) < limit {
					mf.Examples = append(mf.Examples, e)
				}
			}
		}
	}
	for _, k := range order {
		f := byKey[k]
		if f.Count == 0 && seen[k] < len(reps) {
			continue // fires on no key: only where no input saw one
		}
		f.Message = mergedMessage(reps, k.rule, k.family, f, groups)
		m.Findings = append(m.Findings, f)
	}
	settleFindings(m)
}

// mergedMessage rebuilds the "N of M" summary of a merged finding from the
// message of an input's: the summary before its ": N of M" stays, the
// counts are the merged ones, and the top prefixes of unregistered keys
// are those of the merged groups. A message without counts is kept.
func mergedMessage(reps []*Report, rule, family string, f *Finding, groups map[string]*Group) string {
	for _, r := range reps {
		for _, in := range r.Findings {
			if in.Rule != rule || in.Family != family {
				continue
			}
			base, _, ok := strings.Cut(in.Message, fmt.Sprintf(": %d of %d", in.Count, in.Of))
			if !ok {
				return in.Message
			}
			msg := base + fmt.Sprintf(": %d of %d", f.Count, f.Of)
			if family == "" {
				if gs := topPrefixes(groups, 3); gs != "" {
					msg += "; top prefixes: " + gs
				}
			}
			return msg
		}
	}
	return f.Message
}
