package audit

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/keyreg/keyreg/internal/secret"
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

// MaxMergeInputs bounds the reports one merge folds in, and MaxCount every
// count, size and sum a report to merge may hold (about 2.8e14: far more
// keys and bytes than any instance holds). Together they are why no sum of
// a merge can overflow: at most MaxMergeInputs counts of at most MaxCount
// each add up to at most 2^58, and a report sums fewer than 32 such.
const (
	MaxMergeInputs = 1024
	MaxCount       = 1 << 48
)

// maxMergeTargets bounds the targets a merged report lists.
const maxMergeTargets = MaxMergeInputs

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
// side by side. The inputs are not changed. Merge is a Merger fed reps in
// order.
func Merge(reps []*Report, o MergeOptions) (*Report, error) {
	if len(reps) == 0 {
		return nil, errors.New("no reports to merge")
	}
	m := NewMerger(o)
	for i, r := range reps {
		if r == nil {
			return nil, fmt.Errorf("report %d is missing", i+1)
		}
		if err := m.Add(r); err != nil {
			return nil, err
		}
	}
	return m.Report()
}

// A Merger folds reports in one at a time, holding only the merged state,
// so that merging many large reports takes the memory of about one. Its
// result is Merge's for the same reports in the same order.
type Merger struct {
	o       MergeOptions
	n       int // reports added
	m       *Report
	st      stats
	targets []string
	reasons []string
	notes   map[string]bool
	dbs     map[int]bool
	famDBs  []map[int]*DBReport
	// contacts holds the first contact each owner of a family has.
	contacts map[string]string
	groups   map[string]*Group
	// channels merges the inputs' channel audits; chInputs counts the
	// inputs that have one.
	channels *ChannelsReport
	// chNames are the channel declarations of the first input with a
	// channel audit: every other such input must have the same.
	chNames  []string
	chDecl   map[string]*ChannelDeclReport
	chGroups map[string]*ChannelGroup
	chInputs int
	// fanOut merges the inputs' fan-out estimates; fanTargets are the
	// targets of the inputs that have an estimate.
	fanOut     *FanOutReport
	fanTargets []string
	findings   map[findingKey]*mergedFinding
	order      []findingKey
}

type findingKey struct{ rule, family, channel string }

// mergedFinding is a finding being merged: seen counts the inputs that
// have it; msg is the first input's message, base its summary before
// ": N of M" when it has one (cut).
type mergedFinding struct {
	f         *Finding
	seen      int
	msg, base string
	cut       bool
	// first and firstNodes are the count and the channel audit's nodes of
	// the first input, which msg states (a channel finding's message).
	first, firstNodes int64
}

// NewMerger returns an empty Merger.
func NewMerger(o MergeOptions) *Merger {
	o.MaxGroups = cmp.Or(o.MaxGroups, Defaults().MaxGroups)
	return &Merger{
		o: o, st: newStats(min(cmp.Or(o.Top, DefaultTopN), MaxTopN)),
		notes: map[string]bool{}, dbs: map[int]bool{}, contacts: map[string]string{},
		groups: map[string]*Group{}, findings: map[findingKey]*mergedFinding{},
	}
}

// Add folds r in. r must have the first report's version and families,
// and is not kept (nor changed): the caller may drop it.
func (mg *Merger) Add(r *Report) error {
	if mg.n >= MaxMergeInputs {
		return fmt.Errorf("more than %d reports to merge", MaxMergeInputs)
	}
	mg.n++
	i := mg.n
	if mg.m == nil {
		mg.m = &Report{
			Version: r.Version, Registry: r.Registry, Mode: r.Mode, Started: r.Started,
			Findings: []*Finding{}, Owners: []*OwnerReport{},
		}
		for _, f := range r.Families {
			if f == nil {
				return fmt.Errorf("report %d has a missing family", i)
			}
			mg.m.Families = append(mg.m.Families, &FamilyReport{Name: f.Name, Owner: f.Owner, Preset: f.Preset, Pos: f.Pos, Position: f.Position})
			mg.famDBs = append(mg.famDBs, map[int]*DBReport{})
		}
	}
	m := mg.m
	if r.Version != m.Version {
		return fmt.Errorf("report %d has version %q, report 1 %q", i, r.Version, m.Version)
	}
	if !slices.EqualFunc(m.Families, r.Families, func(x, y *FamilyReport) bool { return y != nil && x.Name == y.Name }) {
		return fmt.Errorf("report %d audits other families than report 1: merge reports of the same registry", i)
	}
	if c := r.Channels; c != nil {
		var names []string
		for _, d := range c.Declared {
			if d != nil {
				names = append(names, d.Name)
			}
		}
		if mg.channels == nil {
			mg.chNames = names
		} else if !slices.Equal(mg.chNames, names) {
			return fmt.Errorf("report %d audits other channels than the first report with a channel audit: merge reports of the same registry", i)
		}
	}
	if r.Mode != m.Mode {
		m.Mode = "merged"
	}
	if r.Started.Before(m.Started) {
		m.Started = r.Started
	}
	instance := r.Target
	for _, t := range r.targets() {
		if !slices.Contains(mg.targets, t) && len(mg.targets) < maxMergeTargets {
			mg.targets = append(mg.targets, t)
		}
	}
	if r.Partial {
		m.Partial = true
		reason := cmp.Or(r.PartialReason, "an input report is partial")
		if !slices.Contains(mg.reasons, reason) && len(mg.reasons) < maxMergeTargets {
			mg.reasons = append(mg.reasons, reason)
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
		if !mg.notes[n] && len(mg.notes) < maxMergeNotes {
			mg.notes[n] = true
			s.Notes = append(s.Notes, n)
		}
	}
	for _, id := range r.Scan.NotChecked {
		if !slices.Contains(s.NotChecked, id) && len(s.NotChecked) < maxMergeNotes {
			s.NotChecked = append(s.NotChecked, id)
		}
	}
	for _, d := range r.DBs {
		if len(mg.dbs) < maxDBs {
			mg.dbs[d] = true
		}
	}
	for _, t := range r.TopKeys.ByBytes {
		mg.st.bytes.offer(clonedTop(t))
	}
	for _, t := range r.TopKeys.ByElements {
		mg.st.elements.offer(clonedTop(t))
	}
	for _, t := range r.Types {
		mt := mg.st.typeOf(t.Type)
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
	mg.addFamilies(r)
	mg.addUnregistered(r)
	mg.addChannels(r)
	mg.addFindings(r, instance)
	return nil
}

// addChannels folds r's channel audit in: node and subscriber counts
// summed, declarations by name, unregistered channel groups by prefix
// (at most MaxGroups), unread nodes and misplaced subscribers listed.
func (mg *Merger) addChannels(r *Report) {
	c := r.Channels
	if c == nil {
		return
	}
	mg.chInputs++
	if mg.channels == nil {
		mg.channels = &ChannelsReport{Declared: []*ChannelDeclReport{}, Unregistered: []*ChannelGroup{}}
		mg.chDecl, mg.chGroups = map[string]*ChannelDeclReport{}, map[string]*ChannelGroup{}
	}
	m := mg.channels
	m.Nodes += c.Nodes
	m.PatternSubscriptions += c.PatternSubscriptions
	for _, d := range c.Declared {
		if d == nil {
			continue
		}
		md := mg.chDecl[d.Name]
		if md == nil {
			if len(m.Declared) >= maxMergeNotes*10 {
				continue
			}
			md = &ChannelDeclReport{Name: d.Name, Mode: d.Mode, Owner: d.Owner, Pos: d.Pos, Position: d.Position}
			mg.chDecl[d.Name] = md
			m.Declared = append(m.Declared, md)
		}
		md.Live += d.Live
		md.Subscribers += d.Subscribers
		md.Nodes = max(md.Nodes, d.Nodes)
	}
	for _, g := range c.Unregistered {
		if g == nil {
			continue
		}
		prefix := g.Prefix
		if mg.chGroups[prefix] == nil && len(m.Unregistered) >= mg.o.MaxGroups {
			prefix = OtherChannels // counted, never dropped
		}
		mgp := mg.chGroups[prefix]
		if mgp == nil {
			mgp = &ChannelGroup{Prefix: prefix, Examples: []string{}}
			mg.chGroups[prefix] = mgp
			m.Unregistered = append(m.Unregistered, mgp)
		}
		mgp.Channels += g.Channels
		mgp.Subscribers += g.Subscribers
		for _, e := range g.Examples {
			if len(mgp.Examples) < maxChannelExamples && !slices.Contains(mgp.Examples, e) {
				mgp.Examples = append(mgp.Examples, e)
			}
		}
	}
	for _, n := range c.NotChecked {
		if len(m.NotChecked) < maxMergeNotes {
			m.NotChecked = append(m.NotChecked, clip(secret.Redact(r.Target)+": "+n, maxDetailBytes, true))
		}
	}
	for _, n := range c.Misplaced {
		if len(m.Misplaced) < maxMergeNotes {
			m.Misplaced = append(m.Misplaced, n)
		}
	}
	mg.addFanOut(r, c.FanOut)
}

// addFanOut folds an input's fan-out estimate in. The inputs of a merge are
// separate deployments (a fleet, the shards of one audit), so their rates
// add up; but two estimates of the same target are two measures of the
// same traffic, and adding them would double it: the merged estimate is
// then unknown. An input with no bus adds nothing; an input whose estimate
// is skipped or unknown makes the merged one unknown, since its traffic is
// not in the sum. An input that does not carry fan_out (an older report)
// is treated as skipped.
func (mg *Merger) addFanOut(r *Report, f *FanOutReport) {
	if f == nil {
		f = &FanOutReport{Status: FanOutSkipped, Reason: "no fan-out in the report"}
	}
	m := mg.fanOut
	if m == nil {
		m = &FanOutReport{Status: FanOutNoBus, Reason: "not a Redis Cluster: a PUBLISH is not copied to other nodes, there is no cluster bus"}
		mg.fanOut = m
	}
	if m.Status == FanOutUnknown {
		return
	}
	target := secret.Redact(r.Target)
	switch f.Status {
	case FanOutNoBus:
		return
	case FanOutEstimated:
		if f.Estimate == nil {
			break
		}
		if slices.Contains(mg.fanTargets, target) {
			*m = FanOutReport{Status: FanOutUnknown, Reason: clip("fan-out unknown: two reports estimate "+target+"; the same traffic is not added twice", maxDetailBytes, true)}
			return
		}
		if len(mg.fanTargets) < maxMergeTargets {
			mg.fanTargets = append(mg.fanTargets, target)
		}
		e := f.Estimate
		if m.Status != FanOutEstimated {
			*m = FanOutReport{Status: FanOutEstimated, WindowSeconds: f.WindowSeconds, Estimate: &FanOutEstimate{BusHeaderBytes: e.BusHeaderBytes}}
		}
		me := m.Estimate
		me.Nodes += e.Nodes
		me.Published += e.Published
		me.BusMessages += e.BusMessages
		me.PublishedPerSecond += e.PublishedPerSecond
		me.BusMessagesPerSecond += e.BusMessagesPerSecond
		me.BusBytesPerSecondMin += e.BusBytesPerSecondMin
		me.BusHeaderBytes = min(me.BusHeaderBytes, e.BusHeaderBytes)
		m.WindowSeconds = min(m.WindowSeconds, f.WindowSeconds) // the shortest input window
		m.Reason = fmt.Sprintf("the sum of %d reports' estimates (separate deployments; the window is the shortest of theirs)", len(mg.fanTargets))
		return
	}
	*m = FanOutReport{Status: FanOutUnknown, Reason: clip("fan-out unknown: "+target+": "+f.Reason, maxDetailBytes, true)}
}

// targets returns the instances r audited: its Targets, else its Target.
func (r *Report) targets() []string {
	if len(r.Targets) > 0 {
		return r.Targets
	}
	return []string{r.Target}
}

// Report returns the merged report. The Merger must not be used after.
func (mg *Merger) Report() (*Report, error) {
	m := mg.m
	if m == nil {
		return nil, errors.New("no reports to merge")
	}
	if len(mg.targets) > 1 {
		for i, t := range mg.targets {
			mg.targets[i] = clip(t, maxDetailBytes, true)
		}
		m.Targets = mg.targets
	}
	m.Target = clip(strings.Join(mg.targets, ", "), maxDetailBytes, true)
	if m.Partial {
		m.PartialReason = clip(strings.Join(mg.reasons, "; "), maxDetailBytes, true)
	}
	if secs := m.Scan.Duration.Seconds(); secs > 0 {
		m.Scan.KeysPerSec = float64(m.Scan.Keys) / secs
	}
	m.DBs = slices.Sorted(maps.Keys(mg.dbs))
	m.TopKeys = TopKeys{ByBytes: mg.st.bytes.sorted(), ByElements: mg.st.elements.sorted()}
	m.Types = mg.st.types
	if m.Types == nil {
		m.Types = []*TypeStats{}
	}
	sortTypes(m.Types)
	mg.settleFamilies()
	mg.settleUnregistered()
	mg.settleFindings()
	if c := mg.channels; c != nil {
		slices.SortFunc(c.Unregistered, func(a, b *ChannelGroup) int {
			return cmp.Or(cmp.Compare(b.Channels, a.Channels), strings.Compare(a.Prefix, b.Prefix))
		})
		c.FanOut = mg.fanOut
		m.Channels = c
		// A merged finding has the first input's message: its fan-out is
		// replaced by the merged one.
		for _, f := range m.Findings {
			if f.Rule == RuleChannelClassicOnCluster && f.Channel != "" {
				if i := strings.Index(f.Message, "; fan-out"); i >= 0 {
					f.Message = f.Message[:i]
				}
				f.Message = clip(f.Message+fanOutMessage(c.FanOut), maxDetailBytes, true)
			}
		}
	}
	return m, nil
}

func clonedTop(t *TopKey) *TopKey {
	c := *t
	return &c
}

// addFamilies adds r's families, their databases and owner contacts.
func (mg *Merger) addFamilies(r *Report) {
	for i, rf := range r.Families {
		mf := mg.m.Families[i]
		mf.Keys += rf.Keys
		mf.WithTTL += rf.WithTTL
		mf.Memory += rf.Memory
		mf.MemoryMeasured = mf.MemoryMeasured || rf.MemoryMeasured
		mf.MemoryKeys += rf.MemoryKeys
		mf.Sampled += rf.Sampled
		mf.Findings += rf.Findings
		mf.TTL.Merge(&rf.TTL)
		dbs := mg.famDBs[i]
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
	for _, o := range r.Owners {
		if o == nil || o.Contact == "" || mg.contacts[o.Name] != "" {
			continue
		}
		for _, f := range mg.m.Families {
			if f.Owner == o.Name {
				mg.contacts[o.Name] = o.Contact
				break
			}
		}
	}
}

// settleFamilies rolls the families up into their owners and the totals.
func (mg *Merger) settleFamilies() {
	m := mg.m
	owners := map[string]*OwnerReport{}
	for i, mf := range m.Families {
		for _, d := range mg.famDBs[i] {
			mf.DBs = append(mf.DBs, d)
		}
		mf.DBs = sortedDBs(mf.DBs)
		m.Totals.Keys += mf.Keys
		m.Totals.Registered += mf.Keys
		m.Totals.WithTTL += mf.WithTTL
		m.Totals.Memory += mf.Memory
		m.Totals.MemoryKeys += mf.MemoryKeys
		ow := owners[mf.Owner]
		if ow == nil {
			ow = &OwnerReport{Name: mf.Owner, Contact: mg.contacts[mf.Owner]}
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
	slices.SortFunc(m.Owners, func(a, b *OwnerReport) int { return strings.Compare(a.Name, b.Name) })
}

// addUnregistered adds r's unregistered keys and prefix groups. The groups
// held stay bounded: past four times MaxGroups the smallest go to Other, so
// the merged groups are exact while the inputs hold at most that many
// distinct prefixes together.
func (mg *Merger) addUnregistered(r *Report) {
	u := &mg.m.Unregistered
	ru := &r.Unregistered
	u.Keys += ru.Keys
	u.Other += ru.Other
	u.WithTTL += ru.WithTTL
	u.Memory += ru.Memory
	u.MemoryMeasured = u.MemoryMeasured || ru.MemoryMeasured
	u.MemoryKeys += ru.MemoryKeys
	u.TTL.Merge(&ru.TTL)
	for _, g := range ru.Groups {
		mgr := mg.groups[g.Prefix]
		if mgr == nil {
			mgr = &Group{Prefix: g.Prefix, Examples: []string{}}
			mg.groups[g.Prefix] = mgr
		}
		mgr.Keys += g.Keys
		mgr.WithTTL += g.WithTTL
		mgr.Memory += g.Memory
		mgr.MemoryKeys += g.MemoryKeys
		for _, db := range g.DBs {
			mgr.DBs = addDB(mgr.DBs, db)
		}
		for _, e := range g.Examples {
			if len(mgr.Examples) < 3 {
				mgr.Examples = append(mgr.Examples, e)
			}
		}
	}
	if len(mg.groups) > 4*mg.o.MaxGroups {
		mg.pruneGroups(mg.o.MaxGroups)
	}
}

// pruneGroups keeps the largest n groups and counts the others' keys as
// Other.
func (mg *Merger) pruneGroups(n int) {
	u := &mg.m.Unregistered
	u.Groups = u.Groups[:0]
	for _, g := range mg.groups {
		u.Groups = append(u.Groups, g)
	}
	slices.SortFunc(u.Groups, func(a, b *Group) int {
		return cmp.Or(cmp.Compare(b.Keys, a.Keys), strings.Compare(a.Prefix, b.Prefix))
	})
	if len(u.Groups) > n {
		for _, g := range u.Groups[n:] {
			u.Other += g.Keys
			delete(mg.groups, g.Prefix)
		}
		u.Groups = u.Groups[:n]
	}
}

// settleUnregistered keeps the largest MaxGroups groups and adds the
// unregistered keys to the totals.
func (mg *Merger) settleUnregistered() {
	m := mg.m
	u := &m.Unregistered
	u.Groups = []*Group{}
	mg.pruneGroups(mg.o.MaxGroups)
	m.Totals.Keys += u.Keys
	m.Totals.Unregistered = u.Keys
	m.Totals.WithTTL += u.WithTTL
	m.Totals.Memory += u.Memory
	m.Totals.MemoryKeys += u.MemoryKeys
}

// addFindings adds r's findings per (rule, family); each example kept
// names instance, the target of r, unless it names one already (an input
// that is itself a merge).
func (mg *Merger) addFindings(r *Report, instance string) {
	for _, f := range r.Findings {
		k := findingKey{f.Rule, f.Family, f.Channel}
		mf := mg.findings[k]
		if mf == nil {
			c := *f
			c.Count, c.Of, c.Examples = 0, 0, []Example{}
			mf = &mergedFinding{f: &c, msg: f.Message, first: f.Count}
			if r.Channels != nil {
				mf.firstNodes = int64(r.Channels.Nodes)
			}
			mf.base, _, mf.cut = strings.Cut(f.Message, fmt.Sprintf(": %d of %d", f.Count, f.Of))
			mg.findings[k] = mf
			mg.order = append(mg.order, k)
		}
		mf.seen++
		mf.f.Count += f.Count
		mf.f.Of += f.Of
		limit := mg.o.Examples
		if limit <= 0 {
			limit = max(len(f.Examples), len(mf.f.Examples))
		}
		for _, e := range f.Examples {
			if len(mf.f.Examples) < limit {
				if e.Instance == "" {
					e.Instance = clip(instance, maxDetailBytes, true)
				}
				mf.f.Examples = append(mf.f.Examples, e)
			}
		}
	}
}

// settleFindings keeps the findings that count a key, or that every input
// has, with their "N of M" summaries rebuilt from the merged counts: the
// summary before the first input's ": N of M" stays, and the top prefixes
// of unregistered keys are those of the merged groups. A message without
// counts is kept.
func (mg *Merger) settleFindings() {
	m := mg.m
	for _, k := range mg.order {
		mf := mg.findings[k]
		f := mf.f
		if f.Count == 0 && mf.seen < mg.n {
			continue // fires on no key: only where no input saw one
		}
		if f.Rule == RuleChannelNoSubscribers {
			if mf.seen < mg.chInputs {
				continue // subscribed on some instance
			}
			f.Count = 1
		}
		f.Message = mf.msg
		if k.channel != "" {
			f.Message = recountChannelMessage(f.Message, channelCountPhrases, mf.first, f.Count)
			if c := mg.channels; c != nil && f.Rule == RuleChannelNoSubscribers {
				f.Message = recountChannelMessage(f.Message, []string{channelNodesPhrase}, mf.firstNodes, int64(c.Nodes))
			}
		}
		if mf.cut {
			f.Message = mf.base + fmt.Sprintf(": %d of %d", f.Count, f.Of)
			if k.family == "" {
				if gs := topPrefixes(mg.groups, 3); gs != "" {
					f.Message += "; top prefixes: " + gs
				}
			}
		}
		m.Findings = append(m.Findings, f)
	}
	settleFindings(m)
}
