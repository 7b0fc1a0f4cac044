package infer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
)

// Options configure an Inference.
type Options struct {
	Separator byte // default ':'
	// Owner owns every family and preset entry; keyreg init writes
	// "unknown", declared with contact TODO.
	Owner string
	// Limits proposes max_bytes from the 99th percentile of the memory
	// sizes the scan measured.
	Limits bool
	// SchemaDir is where schema files go, relative to keys.yaml.
	SchemaDir string
	// Existing is the registry keyreg suggest extends: the keys it
	// registers are not inferred again, the proposed names avoid its
	// names, and proposals that would overlap its families are dropped.
	Existing *registry.Registry
	// MaxShapes bounds the miner (MinerOptions.MaxShapes).
	MaxShapes int
}

// Inference turns the facts of a keyspace into a draft registry. Feed it
// every key with Add, then call Candidates, read the values of the keys it
// returns and hand them over with AddSamples, and finally take Draft.
type Inference struct {
	o        Options
	miner    *Miner
	probes   []registry.Probe
	probeM   *registry.Matcher
	votes    map[voteKey]map[string]int64
	params   []registry.Param
	keys     int64
	existing int64 // keys the existing registry already registers
	partial  string
	cands    []*candidate
	entries  []*entry
	dropped  []*candidate           // proposals that would overlap an existing family
	shapes   *registry.ShapeMatcher // of Existing

	// detector holds every preset with its defaults; keys it matches are
	// claimed for their preset's bucket, not mined with the rest.
	detector *registry.Matcher
	// alone holds, for presets that coexist (bull and bullmq), a matcher
	// of the preset by itself, to tell which of them a key fits.
	alone   map[string]*registry.Matcher
	buckets map[string]*bucket
}

// bucket holds the keys that a preset, with its defaults, claims.
type bucket struct {
	preset    *registry.Preset
	parts     map[string]int64         // keys per part, its own and those shared with a coexisting preset
	claimed   int64                    // keys claimed for it (in its miner)
	maxTTL    map[string]time.Duration // the longest TTL of its keys, per part
	exclusive int64                    // of those, keys no coexisting preset fits
	miner     *Miner                   // the same keys mined, for when the preset is not kept
}

type voteKey struct{ preset, param string }

// maxVotes bounds the distinct values counted per preset parameter.
const maxVotes = 64

// Bounds of the keys the probes read, as lint bounds patterns: a probe's
// {name:any} makes matching superlinear in a key's segments (a 40 KB key
// of 20,000 segments took 21 s), and no longer key can bind a value a
// preset takes (registry.MaxPresetValueLen bytes, after a pattern of at
// most registry.MaxPatternLen). The miner bounds its own work (maxSegs,
// maxTyped).
const (
	maxProbeKey  = registry.MaxPatternLen + registry.MaxPresetValueLen
	maxProbeSegs = 64
)

// probeable reports whether the probes read key: at most maxProbeKey
// bytes and maxProbeSegs separators.
func probeable(key string, sep byte) bool {
	if len(key) > maxProbeKey {
		return false
	}
	n := 0
	for i := 0; i < len(key); i++ {
		if key[i] == sep {
			if n++; n > maxProbeSegs {
				return false
			}
		}
	}
	return true
}

// New starts an inference.
func New(o Options) *Inference {
	if o.Separator == 0 {
		o.Separator = ':'
	}
	if o.Owner == "" {
		o.Owner = "unknown"
	}
	if o.SchemaDir == "" {
		o.SchemaDir = "schemas"
	}
	in := &Inference{o: o, miner: NewMiner(MinerOptions{Separator: o.Separator, MaxShapes: o.MaxShapes}), votes: map[voteKey]map[string]int64{}}
	if o.Existing != nil {
		in.shapes = o.Existing.ShapeMatcher()
	}
	if o.Separator == ':' { // presets need it
		var fams []*registry.Family
		for _, p := range registry.Presets() {
			for _, pr := range p.Probes() {
				in.probes = append(in.probes, pr)
				fams = append(fams, &registry.Family{Index: len(fams), Name: pr.Part + "/" + pr.Param, Pattern: pr.Pattern})
			}
		}
		in.probeM = registry.NewMatcher(fams, ':')
		in.detector, in.alone = detectors(o.Owner)
		in.buckets = map[string]*bucket{}
	}
	return in
}

// detectors builds a matcher of every preset with its defaults, and one
// of each preset that coexists with another.
func detectors(owner string) (*registry.Matcher, map[string]*registry.Matcher) {
	var all []*registry.Family
	alone := map[string]*registry.Matcher{}
	for _, p := range registry.Presets() {
		reg, err := registry.ExpandPreset(p.Name, owner, nil)
		if err != nil {
			panic("infer: preset " + p.Name + " does not expand: " + err.Error()) // a bug of keyreg's, caught by tests
		}
		if len(p.Coexists) > 0 {
			alone[p.Name] = reg.Matcher()
		}
		all = append(all, reg.Families...)
	}
	// The families belong to registries made for this; renumbered, the
	// first declared wins ties as in a registry of them all.
	for i, f := range all {
		f.Index = i
	}
	return registry.NewMatcher(all, ':'), alone
}

// Add counts one key of the keyspace.
func (in *Inference) Add(f Fact) {
	in.keys++
	if in.o.Existing != nil && (in.o.Existing.Matcher().Match(f.Key) != nil || in.shapes.Match(f.Key) != nil) {
		// Registered, or of a family's shape with a value it refuses
		// (placeholder-invalid): either way, not a new family.
		in.existing++
		return
	}
	claimed := in.detector != nil && in.claim(f)
	if !claimed {
		in.miner.Add(f)
	}
	if in.probeM == nil || !probeable(f.Key, in.o.Separator) {
		return
	}
	fam, params := in.probeM.MatchParams(f.Key, in.params[:0])
	in.params = params
	if fam == nil {
		return
	}
	pr := in.probes[fam.Index]
	if claimed && !pr.Sure {
		// A key of a preset with its defaults tells nothing new, but
		// a part's own probe (a Celery queue from its binding).
		return
	}
	for _, b := range params {
		if b.Name != pr.Capture || slices.Contains(pr.Ignore, b.Value) {
			continue
		}
		k := voteKey{pr.Preset.Name, pr.Param}
		t := in.votes[k]
		if t == nil {
			t = map[string]int64{}
			in.votes[k] = t
		}
		if _, ok := t[b.Value]; ok || len(t) < maxVotes {
			t[b.Value]++
			if pr.Sure {
				t[b.Value]++ // one key is evidence enough (topValues wants two)
			}
		}
	}
}

// claim puts a key that a preset's family (with its defaults) declares,
// with the type it declares, into the preset's bucket.
func (in *Inference) claim(f Fact) bool {
	fam := in.detector.Match(f.Key)
	if fam == nil || (fam.Type != "" && fam.Type != f.Type) {
		return false
	}
	b := in.bucket(fam.Preset)
	b.claimed++
	b.parts[fam.PresetPart]++
	if f.TTL > b.maxTTL[fam.PresetPart] {
		b.maxTTL[fam.PresetPart] = f.TTL
	}
	b.miner.Add(f)
	p := b.preset
	exclusive := true
	for _, other := range p.Coexists {
		if g := in.alone[other].Match(f.Key); g != nil && (g.Type == "" || g.Type == f.Type) {
			exclusive = false
			in.bucket(other).parts[g.PresetPart]++
		}
	}
	if exclusive {
		b.exclusive++
	}
	return true
}

func (in *Inference) bucket(preset string) *bucket {
	b := in.buckets[preset]
	if b == nil {
		p, _ := registry.LookupPreset(preset)
		b = &bucket{preset: p, parts: map[string]int64{}, maxTTL: map[string]time.Duration{}, miner: NewMiner(MinerOptions{Separator: ':', MaxShapes: 1000})}
		in.buckets[preset] = b
	}
	return b
}

// Partial records that the scan did not cover the whole keyspace, and
// why: the draft says so at its top.
func (in *Inference) Partial(reason string) { in.partial = reason }

// candidate is one family the miner proposes.
type candidate struct {
	Candidate
	name    string
	covered *entry // the preset entry whose families hold these keys
	enc     string // the encoding its samples have
	share   float64
	schema  map[string]any
	sampled int
	// tentative is the preset entry these keys go to if their values
	// fit its families: a preset whose keys alone are weak evidence
	// (sess:{sid} could be anyone's) is kept only then.
	tentative *entry
	fit       int // sampled values that fit the tentative entry's family
	// disagree counts, by their own encoding, the sampled keys whose
	// values do not decode as enc, the majority's: the first audit
	// reports them (encoding-mismatch), rather than binary hiding them.
	disagree map[string]int
	// leftover: the keys fit no shared shape (a pattern without a
	// placeholder is one key; one without a literal byte would register
	// every key of its form), so they are listed, not proposed.
	leftover bool
}

// entry is a proposed presets: entry.
type entry struct {
	preset *registry.Preset
	name   string // the entry's name: when the preset is proposed twice
	with   []registry.DraftParam
	reg    *registry.Registry
	parts  map[string]bool
	keys   int64
}

// Target is a key to sample for candidate Candidate.
type Target struct {
	Candidate int
	Key, Type string
	DB        int // the logical database of the key
}

// Candidates ends the scan: it mines the families, decides which presets
// the keyspace holds, and returns the keys whose values to read, at most
// n per family, grouped by candidate.
func (in *Inference) Candidates(n int) []Target {
	for _, c := range in.miner.Families() {
		in.cands = append(in.cands, &candidate{Candidate: c})
	}
	in.detectPresets()
	in.dropOverlaps()
	for _, c := range in.cands {
		c.leftover = c.covered == nil && c.tentative == nil && isLeftover(c.Candidate, in.o.Separator)
	}
	var out []Target
	for i, c := range in.cands {
		if c.covered != nil || c.leftover {
			continue
		}
		ex := c.Stats.Examples
		for j, k := range ex[:min(n, len(ex))] {
			out = append(out, Target{Candidate: i, Key: k, Type: c.Stats.ExampleTypes[j], DB: c.Stats.ExampleDBs[j]})
		}
	}
	return out
}

// detectPresets decides which presets the keyspace holds. A preset whose
// defaults claimed keys of two of its parts (or of one specific part) is
// kept, with the list values its probes found added (Celery queues); of
// two coexisting presets (bull, bullmq) whose keys fit both, the one with
// keys only it fits wins. A string parameter the probes found with another
// value (a BullMQ prefix of its own) makes one more entry, kept when its
// families hold whole mined candidates. The keys of a preset not kept are
// mined like the rest.
func (in *Inference) detectPresets() {
	if in.probeM == nil {
		return
	}
	mined := in.cands
	var rejected []*bucket
	kept := map[string]bool{}
	for _, p := range registry.Presets() {
		b := in.buckets[p.Name]
		if b == nil || b.claimed == 0 {
			continue
		}
		e := in.entry(p, "", in.withTTLs(p, b, in.listVotes(p, "")))
		if e == nil {
			continue
		}
		for part := range b.parts {
			e.parts[part] = true
		}
		if in.outshone(p, kept) {
			rejected = append(rejected, b)
			continue
		}
		if !e.evidence() {
			// Weak evidence: the values decide (resolveTentative).
			e.keys = b.claimed
			for _, c := range b.miner.Families() {
				in.cands = append(in.cands, &candidate{Candidate: c, tentative: e})
			}
			continue
		}
		kept[p.Name] = true
		e.keys = b.claimed
		in.entries = append(in.entries, e)
	}
	// Keys a preset claimed but that no kept preset holds are mined.
	for _, b := range rejected {
		if in.heldBySibling(b, kept) {
			for _, e := range in.entries {
				if slices.Contains(b.preset.Coexists, e.preset.Name) && e.name == "" {
					e.keys += b.claimed
					break
				}
			}
			continue
		}
		for _, c := range b.miner.Families() {
			in.cands = append(in.cands, &candidate{Candidate: c})
		}
	}
	// Entries with other values of a string parameter, and coverage of
	// mined candidates by every entry.
	entries := slices.Clone(in.entries)
	for _, p := range registry.Presets() {
		entries = append(entries, in.valueEntries(p, kept[p.Name])...)
	}
	for _, e := range entries {
		m := e.reg.Matcher()
		for _, c := range mined {
			if c.covered != nil {
				continue
			}
			hit := 0
			parts := map[string]bool{}
			for i, k := range c.Stats.Examples {
				if f := m.Match(k); f != nil && (f.Type == "" || f.Type == c.Stats.ExampleTypes[i]) {
					hit++
					parts[f.PresetPart] = true
				}
			}
			if len(c.Stats.Examples) == 0 || hit*10 < len(c.Stats.Examples)*9 {
				continue
			}
			if !slices.Contains(in.entries, e) {
				for part := range parts {
					e.parts[part] = true
				}
				if !e.evidence() {
					continue
				}
				in.entries = append(in.entries, e)
			}
			c.covered = e
			e.keys += c.Stats.Keys
		}
	}
}

// outshone reports whether a preset that coexists with another is the
// wrong one of the two: its claimed keys all fit the other, which has keys
// of its own (or, when neither has, was kept first).
func (in *Inference) outshone(p *registry.Preset, kept map[string]bool) bool {
	b := in.buckets[p.Name]
	if b.exclusive > 0 {
		return false
	}
	for _, o := range p.Coexists {
		if kept[o] {
			return true
		}
		if ob := in.buckets[o]; ob != nil && ob.exclusive > 0 {
			return true
		}
	}
	return false
}

// heldBySibling reports whether every key of a preset's bucket fits a
// coexisting preset that is kept.
func (in *Inference) heldBySibling(b *bucket, kept map[string]bool) bool {
	if b.exclusive > 0 {
		return false
	}
	for _, o := range b.preset.Coexists {
		if kept[o] {
			return true
		}
	}
	return false
}

// listVotes returns the list parameters of p that its probes found more
// values of: the defaults and the values found. Under prefix (a value of
// one of p's string parameters, such as Celery's global_keyprefix
// "myapp:"), values that start with it lose it, and without one, values
// that start with any prefix the probes found are left to that prefix's
// entry: "myapp:reports" is the queue "reports" of the "myapp:" app.
func (in *Inference) listVotes(p *registry.Preset, prefix string) map[string][]string {
	var prefixes []string
	for _, q := range p.Params {
		if q.Kind == registry.ParamString {
			for _, v := range topValues(in.votes[voteKey{p.Name, q.Name}]) {
				if v != q.Default[0] {
					prefixes = append(prefixes, v)
				}
			}
		}
	}
	with := map[string][]string{}
	for _, q := range p.Params {
		if q.Kind != registry.ParamStrings {
			continue
		}
		vals := topValues(in.votes[voteKey{p.Name, q.Name}])
		all := slices.Clone(q.Default)
		for _, v := range vals {
			switch {
			case prefix != "" && strings.HasPrefix(v, prefix):
				v = strings.TrimPrefix(v, prefix)
			case prefix != "":
				continue
			case slices.ContainsFunc(prefixes, func(pre string) bool { return strings.HasPrefix(v, pre) }):
				continue
			}
			if v != "" && !slices.Contains(all, v) && len(all) < 16 {
				all = append(all, v)
			}
		}
		if len(all) > len(q.Default) {
			with[q.Name] = all
		}
	}
	return with
}

// withTTLs raises the duration parameters of p that bound a part's TTL
// (express-session's max_ttl) to the longest TTL its claimed keys have,
// rounded up, where the default is shorter: a 7-day cookie is the app's
// choice, not a finding.
func (in *Inference) withTTLs(p *registry.Preset, b *bucket, with map[string][]string) map[string][]string {
	for _, part := range p.Parts {
		ttl := part.Template()["ttl"]
		seen := b.maxTTL[p.FamilyPrefix+"-"+part.Name]
		for _, q := range p.Params {
			if q.Kind != registry.ParamDuration || !strings.Contains(ttl, "${"+q.Name+"}") {
				continue
			}
			def, err := registry.ParseDuration(q.Default[0])
			if err != nil || seen <= def {
				continue
			}
			if cur, ok := with[q.Name]; ok {
				if d, err := registry.ParseDuration(cur[0]); err == nil && d >= roundUp(seen) {
					continue
				}
			}
			with[q.Name] = []string{registry.FormatDuration(roundUp(seen))}
		}
	}
	return with
}

// valueEntries proposes one entry per value the probes found of a string
// parameter of p other than its default (a BullMQ prefix, a Sidekiq
// namespace): named after the value when the preset is also used with
// its defaults.
func (in *Inference) valueEntries(p *registry.Preset, defaultKept bool) []*entry {
	var out []*entry
	for _, q := range p.Params {
		if q.Kind != registry.ParamString {
			continue
		}
		vals := topValues(in.votes[voteKey{p.Name, q.Name}])
		for i, v := range vals[:min(len(vals), 4)] {
			v = strings.TrimSuffix(v, q.Suffix)
			if v == q.Default[0] {
				continue
			}
			with := in.listVotes(p, vals[i])
			with[q.Name] = []string{v}
			name := ""
			if defaultKept || i > 0 {
				name = p.FamilyPrefix + "-" + kebab(v)
			}
			if e := in.entry(p, name, with); e != nil {
				out = append(out, e)
			}
		}
	}
	return out
}

// minDistinctLiteral is the literal bytes of a preset family whose keys
// alone show the preset is there.
const minDistinctLiteral = 10

// evidence reports whether the keys an entry holds show that the framework
// is there: keys of two of its parts, or of one part whose pattern is
// specific (celery-task-meta-{uuid}).
func (e *entry) evidence() bool {
	if len(e.parts) >= 2 {
		return true
	}
	for _, f := range e.reg.Families {
		if e.parts[f.PresetPart] && f.Pattern.LiteralBytes() >= minDistinctLiteral {
			return true
		}
	}
	return false
}

// topValues returns the values found at least twice, most first, then in
// byte order.
func topValues(t map[string]int64) []string {
	var vals []string
	for v, n := range t {
		if n >= 2 && v != "" {
			vals = append(vals, v)
		}
	}
	slices.SortFunc(vals, func(a, b string) int {
		if c := cmp.Compare(t[b], t[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return vals
}

// entry expands preset p with the parameters, or returns nil when they do
// not load (a value the preset refuses).
func (in *Inference) entry(p *registry.Preset, name string, with map[string][]string) *entry {
	raw := map[string]string{}
	var params []registry.DraftParam
	for _, q := range p.Params {
		vals, ok := with[q.Name]
		if !ok {
			continue
		}
		list := q.Kind == registry.ParamStrings || q.Kind == registry.ParamInts
		quoted := make([]string, len(vals))
		for i, v := range vals {
			quoted[i] = strconv.Quote(v)
		}
		if list {
			raw[q.Name] = "[" + strings.Join(quoted, ", ") + "]"
		} else {
			raw[q.Name] = quoted[0]
		}
		params = append(params, registry.DraftParam{Name: q.Name, Values: vals, List: list})
	}
	if !validYAMLQuoted(raw) {
		return nil
	}
	reg, err := registry.ExpandPresetAs(p.Name, name, in.o.Owner, raw)
	if err != nil {
		return nil
	}
	return &entry{preset: p, name: name, with: params, reg: reg, parts: map[string]bool{}}
}

// validYAMLQuoted reports whether every value survives Go quoting as a
// YAML double-quoted string: Go's \x escapes mean code points in YAML,
// so a value with bytes that are not UTF-8 is not offered.
func validYAMLQuoted(raw map[string]string) bool {
	for _, v := range raw {
		if strings.Contains(v, `\x`) {
			return false
		}
	}
	return true
}

// dropOverlaps drops, for keyreg suggest, the proposals that could match a
// key of an existing family: such keys have the family's shape but a value
// it refuses (placeholder-invalid), and a new family would make the
// registry ambiguous.
func (in *Inference) dropOverlaps() {
	if in.o.Existing == nil {
		return
	}
	var fams []*registry.Family
	fams = append(fams, in.o.Existing.Families...)
	idx := map[*registry.Family]*candidate{}
	for _, c := range in.cands {
		p, err := registry.ParsePattern(c.Pattern, in.o.Separator)
		if err != nil {
			continue
		}
		f := &registry.Family{Name: "proposed", Pattern: p, Index: len(fams)}
		fams = append(fams, f)
		idx[f] = c
	}
	ovs, _ := registry.OverlapsWithin(fams, in.o.Separator, registry.OverlapBudget, -1)
	gone := map[*candidate]bool{}
	for _, o := range ovs {
		if c, ok := idx[o.B]; ok && idx[o.A] == nil {
			gone[c] = true
		}
	}
	var keep []*candidate
	for _, c := range in.cands {
		if gone[c] {
			in.dropped = append(in.dropped, c)
		} else {
			keep = append(keep, c)
		}
	}
	in.cands = keep
}

// AddSamples hands over the values read for one candidate, keys[i] the key
// of ss[i]: they decide its encoding and, for json and msgpack, its
// schema, and whether a preset with weak evidence holds the keys.
func (in *Inference) AddSamples(candidate int, keys []string, ss []payload.Sample) {
	c := in.cands[candidate]
	if e := c.tentative; e != nil {
		m := e.reg.Matcher()
		for i, s := range ss {
			f := m.Match(keys[i])
			if f == nil {
				continue
			}
			r := payload.Check(f, s, payload.Options{})
			if r.DecodeErrors == 0 && len(r.Violations) == 0 {
				c.fit++
			}
		}
	}
	var tally EncodingTally
	for _, s := range ss {
		units(s, tally.Add)
	}
	c.sampled = len(ss)
	c.enc, c.share = tally.Encoding()
	if c.enc == payload.Binary {
		c.enc, c.disagree = majorityEncoding(ss)
	}
	if c.enc != payload.JSON && c.enc != payload.Msgpack {
		return
	}
	si := NewSchemaInferrer(SchemaOptions{})
	for _, s := range ss {
		eachValue(s, c.enc, si.Add)
	}
	c.schema = si.Schema()
}

// majorityEncoding decides the encoding of a family whose sampled values
// have no one encoding: the encoding of more than half of the sampled
// keys, each key's values taken alone (17 json profiles and 3 msgpack are
// json), and, by their own encoding, the keys whose values do not decode
// as it. With no majority, or a binary one, it is binary.
func majorityEncoding(ss []payload.Sample) (string, map[string]int) {
	keys := map[string]int{}
	own := make([]string, len(ss))
	for i, s := range ss {
		var t EncodingTally
		units(s, t.Add)
		own[i], _ = t.Encoding()
		keys[own[i]]++
	}
	best := ""
	for _, e := range slices.Sorted(maps.Keys(keys)) {
		if e != "" && (best == "" || keys[e] > keys[best]) {
			best = e
		}
	}
	if best == "" || best == payload.Binary || keys[best]*2 <= len(ss) {
		return payload.Binary, nil
	}
	off := map[string]int{}
	for i, s := range ss {
		ok := true
		units(s, func(b []byte) {
			if ok && !decodesAs(best, b) {
				ok = false
			}
		})
		if !ok {
			off[own[i]]++
		}
	}
	return best, off
}

// decodesAs reports whether a unit is a value of the declared encodings
// enc ("pickle|int": one of them).
func decodesAs(enc string, b []byte) bool {
	for _, e := range strings.Split(enc, "|") {
		if _, err := payload.Decode(e, b); err == nil {
			return true
		}
	}
	return false
}

// units calls fn on each unit of a sample: a string value, hash value,
// member or stream field value, in a fixed order.
func units(s payload.Sample, fn func([]byte)) {
	switch {
	case s.String != nil:
		fn(s.String)
	case s.Fields != nil:
		for _, k := range slices.Sorted(maps.Keys(s.Fields)) {
			fn(s.Fields[k])
		}
	case s.Members != nil:
		for _, m := range s.Members {
			fn(m)
		}
	case s.Entries != nil:
		for _, e := range s.Entries {
			for _, k := range slices.Sorted(maps.Keys(e)) {
				fn(e[k])
			}
		}
	}
}

// eachValue calls fn with each value of a sample that a family's schema
// validates, as payload.Check forms them: a string's value, a hash's
// object of fields, each member of a list, set or zset, each entry of a
// stream. Values that do not decode in enc are left out.
func eachValue(s payload.Sample, enc string, fn func(any)) {
	dec := func(b []byte) (any, bool) {
		v, err := payload.Decode(enc, b)
		return v, err == nil
	}
	fields := func(m map[string][]byte) {
		obj := make(map[string]any, len(m))
		for k, b := range m {
			v, ok := dec(b)
			if !ok {
				return
			}
			obj[k] = v
		}
		fn(obj)
	}
	switch {
	case s.Fields != nil:
		fields(s.Fields)
	case s.Members != nil:
		for _, m := range s.Members {
			if v, ok := dec(m); ok {
				fn(v)
			}
		}
	case s.Entries != nil:
		for _, e := range s.Entries {
			fields(e)
		}
	case s.String != nil:
		if v, ok := dec(s.String); ok {
			fn(v)
		}
	}
}

// resolveTentative keeps the presets with weak evidence whose sampled
// values fit their families: nine in ten at least.
func (in *Inference) resolveTentative() {
	fit, sampled := map[*entry]int{}, map[*entry]int{}
	for _, c := range in.cands {
		if e := c.tentative; e != nil {
			fit[e] += c.fit
			sampled[e] += c.sampled
		}
	}
	for _, c := range in.cands {
		e := c.tentative
		if e == nil || sampled[e] == 0 || fit[e]*10 < sampled[e]*9 {
			continue
		}
		c.covered = e
		if !slices.Contains(in.entries, e) {
			for _, f := range e.reg.Families {
				for _, k := range c.Stats.Examples {
					if e.reg.Matcher().Match(k) == f {
						e.parts[f.PresetPart] = true
					}
				}
			}
			in.entries = append(in.entries, e)
		}
	}
	slices.SortStableFunc(in.entries, func(a, b *entry) int {
		if c := strings.Compare(a.preset.Name, b.preset.Name); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
}

// Summary counts what a draft holds.
type Summary struct {
	Keys       int64 // keys scanned
	Existing   int64 // keys the existing registry registers (suggest)
	Registered int64 // keys the draft's families and presets hold
	Families   int
	Presets    int
	Dropped    int   // proposals left out because they overlap existing families
	Leftovers  int64 // keys of no shared shape, listed in the draft's footer, not registered
}

// Draft writes the inference out: a registry and its schema files (by path
// relative to keys.yaml, JSON bytes).
func (in *Inference) Draft() (*registry.Draft, map[string][]byte, Summary) {
	in.resolveTentative()
	d := &registry.Draft{Separator: in.o.Separator}
	sum := Summary{Keys: in.keys, Existing: in.existing}
	if in.o.Existing == nil {
		d.Header = []string{
			"yaml-language-server: $schema=https://keyreg.dev/schemas/keys.v1.schema.json",
			"",
			fmt.Sprintf("A first registry, written by keyreg init from a scan of %d keys.", in.keys),
			"Review it before you rely on it: find the team that owns each family (they",
			"all say owner: unknown), check each pattern and TTL policy, describe each",
			"family, then run keyreg lint and keyreg audit. Reference: docs/registry.md.",
		}
		if in.partial != "" {
			d.Header = append(d.Header, "", "PARTIAL: "+in.partial+". Families of the keys not scanned are missing.")
		}
	}
	declared := false
	if in.o.Existing != nil {
		_, declared = in.o.Existing.Owner(in.o.Owner)
	}
	if !declared {
		d.Owners = []registry.DraftOwner{{Name: in.o.Owner, Contact: "TODO", Comment: []string{"A placeholder (lint warns: owner-placeholder): declare the real owners and move the families to them."}}}
	}
	// Names are unique across the registry: the existing families, and the
	// families the preset entries expand into (a mined "sidekiq-queues"
	// beside the sidekiq preset's would not load).
	used := map[string]bool{}
	if in.o.Existing != nil {
		for _, f := range in.o.Existing.Families {
			used[f.Name] = true
		}
	}
	for _, e := range in.entries {
		for _, f := range e.reg.Families {
			used[f.Name] = true
		}
	}
	var named []*candidate
	schemas := map[string][]byte{}
	var total int64
	for _, c := range in.cands {
		if c.covered == nil {
			total += c.Stats.Memory
		}
	}
	var leftovers []*candidate
	for _, c := range in.cands {
		if c.covered != nil {
			continue
		}
		if c.leftover || c.tentative != nil && isLeftover(c.Candidate, in.o.Separator) {
			leftovers = append(leftovers, c)
			sum.Leftovers += c.Stats.Keys
			continue
		}
		named = append(named, c)
	}
	nameFamilies(named, in.o.Separator, used)
	for _, c := range named {
		f := registry.DraftFamily{Name: c.name, Pattern: c.Pattern, Version: c.Version, Owner: in.o.Owner}
		typ, all := c.Stats.Type()
		decl, ok := declarableType(typ)
		if all && ok {
			f.Type = decl // mixed types: the comment says which; no type is declared
		}
		if !ok {
			typ = "" // no schema either: the value reads are not of a declarable type
		}
		f.Comment = in.comment(c, all, total)
		if all && !ok {
			f.Comment = append(f.Comment[:1:1], append([]string{fmt.Sprintf("Redis type %s, a module type keys.yaml cannot declare: no type is declared.", strconv.Quote(clipValue(decl)))}, f.Comment[1:]...)...)
		}
		f.TTL, f.TTLComment = ttlPolicy(c.Stats)
		if c.enc != "" {
			f.Encodings = strings.Split(c.enc, "|")
		}
		if c.schema != nil && typ != "" {
			if b, err := json.MarshalIndent(c.schema, "", "  "); err == nil {
				f.Schema = in.o.SchemaDir + "/" + c.name + ".json"
				schemas[f.Schema] = append(b, '\n')
			}
		}
		if in.o.Limits && len(c.Stats.Sizes) > 0 {
			f.MaxBytes = roundBytes(percentile(c.Stats.Sizes, 0.99))
		}
		d.Families = append(d.Families, f)
		sum.Registered += c.Stats.Keys
	}
	for _, e := range in.entries {
		keys := e.keys
		var parts []string
		for p := range e.parts {
			parts = append(parts, p)
		}
		slices.Sort(parts)
		shown := parts[:min(len(parts), 6)]
		more := ""
		if len(parts) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(parts)-len(shown))
		}
		d.Presets = append(d.Presets, registry.DraftPreset{
			Comment: []string{
				fmt.Sprintf("%s (%s): %d keys in %d of its families (%s%s).", e.preset.Name, e.preset.Summary, keys, len(parts), strings.Join(shown, ", "), more),
				"keyreg presets show " + e.preset.Name + " lists every family it declares.",
			},
			Use: e.preset.Name, Name: e.name, Owner: in.o.Owner, With: e.with,
		})
		sum.Registered += keys
	}
	sum.Dropped = len(in.dropped)
	d.Footer = leftoverLines(leftovers)
	in.ignoreOverlaps(d, schemas)
	sum.Families, sum.Presets = len(d.Families), len(d.Presets)
	return d, schemas, sum
}

// ignoreOverlaps marks the overlaps lint would report in the draft: a
// mined family that can match keys a preset also declares (the preset's
// family has more literal bytes, so it gets them), and families of two
// entries of one preset that declare the same keys (two Celery apps'
// results). Each gets an ignore with its reason, on the family lint
// reports, for the reviewer to see and settle.
func (in *Inference) ignoreOverlaps(d *registry.Draft, schemas map[string][]byte) {
	reg, _, err := loadDraft(d, schemas)
	if err != nil {
		return // the command loads what it writes and says so
	}
	mined := map[string]int{}
	for i, f := range d.Families {
		mined[f.Name] = i
	}
	// A preset's families sit at their entry's position: the entries in
	// the order of their lines are d.Presets.
	var lines []int
	for _, f := range reg.Families {
		if f.FromPreset() && !slices.Contains(lines, f.Pos.Line) {
			lines = append(lines, f.Pos.Line)
		}
	}
	slices.Sort(lines)
	entryOf := map[string]int{}
	for _, f := range reg.Families {
		if i := slices.Index(lines, f.Pos.Line); f.FromPreset() && i >= 0 && i < len(d.Presets) {
			entryOf[f.Name] = i
		}
	}
	ovs, _ := registry.OverlapsWithin(reg.Families, in.o.Separator, registry.OverlapBudget, -1)
	for _, o := range ovs {
		reason := fmt.Sprintf("written by keyreg init: %s declares some of the same keys; the family with more literal bytes gets them", o.A.Name)
		if o.A.Preset != "" && o.A.Preset == o.B.Preset {
			reason = fmt.Sprintf("written by keyreg init: %s declares the same keys (preset %s writes them alike for both entries)", o.A.Name, o.A.Preset)
		}
		ig := registry.Ignore{Rule: "pattern-overlap", Reason: reason}
		if i, ok := mined[o.B.Name]; ok && !o.B.FromPreset() {
			if !slices.ContainsFunc(d.Families[i].Ignore, func(x registry.Ignore) bool { return x.Rule == ig.Rule }) {
				d.Families[i].Ignore = append(d.Families[i].Ignore, ig)
			}
			continue
		}
		if i, ok := entryOf[o.B.Name]; ok {
			dp := &d.Presets[i]
			if dp.Ignore == nil {
				dp.Ignore = map[string][]registry.Ignore{}
			}
			if len(dp.Ignore[o.B.Name]) == 0 {
				dp.Ignore[o.B.Name] = []registry.Ignore{ig}
			}
		}
	}
}

// isLeftover reports whether a mined candidate is no family to propose:
// its keys share no shape. It is one key, or has no placeholder (so it is
// one key, of a shape of its own: "foo", "v2:user:session:12345" beside
// the sessions' uuids), or has no literal byte but separators
// ({name:word}, {a:word}:{b:int}), so that it would register every key of
// its form, future junk included.
func isLeftover(c Candidate, sep byte) bool {
	p, err := registry.ParsePattern(c.Pattern, sep)
	if err != nil || c.Stats.Keys < 2 || len(p.Placeholders()) == 0 {
		return true
	}
	for _, part := range p.Parts {
		if strings.Trim(part.Lit, string([]byte{sep})) != "" {
			return false
		}
	}
	return true
}

// Bounds of the leftovers list.
const (
	maxLeftoverLines = 100 // keys and shapes listed
	leftoverExamples = 3   // example keys per shape
)

// leftoverLines lists the leftovers for the draft's footer: each key of a
// shape of its own, and each shape without a literal byte with its count
// and a few example keys, sorted, at most maxLeftoverLines of them. Key
// names only, never a value; comment escapes them.
func leftoverLines(cs []*candidate) []string {
	if len(cs) == 0 {
		return nil
	}
	var keys int64
	var items []string
	for _, c := range cs {
		keys += c.Stats.Keys
		ex := slices.Clone(c.Stats.Examples)
		slices.Sort(ex)
		if c.Stats.Keys == 1 && len(ex) == 1 {
			items = append(items, "  - "+strconv.Quote(clipKey(ex[0])))
			continue
		}
		quoted := make([]string, 0, leftoverExamples)
		for _, k := range ex[:min(len(ex), leftoverExamples)] {
			quoted = append(quoted, strconv.Quote(clipKey(k)))
		}
		items = append(items, fmt.Sprintf("  - %d keys like %s, e.g. %s", c.Stats.Keys, c.Pattern, strings.Join(quoted, ", ")))
	}
	slices.Sort(items)
	lines := []string{
		fmt.Sprintf("unregistered leftovers: %d keys that share no shape with other keys, so no family is", keys),
		"proposed for them (keyreg audit reports them as unregistered-key). Register the ones meant",
		"to stay by hand; the others are candidates for removal.",
	}
	if len(items) > maxLeftoverLines {
		more := len(items) - maxLeftoverLines
		items = append(items[:maxLeftoverLines], fmt.Sprintf("  ... and %d more", more))
	}
	return append(lines, items...)
}

// comment describes a family's keys in the lines above it: how many, their
// share of memory, their types when mixed, their TTLs, the encoding of the
// sampled values and two example keys (key names only: never a value).
func (in *Inference) comment(c *candidate, allOneType bool, totalMemory int64) []string {
	st := c.Stats
	line := fmt.Sprintf("%d keys", st.Keys)
	if st.MemoryKeys > 0 && totalMemory > 0 {
		line += fmt.Sprintf(", %.1f%% of the memory measured", 100*float64(st.Memory)/float64(totalMemory))
	}
	lines := []string{line}
	if !allOneType {
		var parts []string
		for _, t := range slices.Sorted(maps.Keys(st.Types)) {
			parts = append(parts, fmt.Sprintf("%s %d", t, st.Types[t]))
		}
		lines = append(lines, "Mixed Redis types: "+strings.Join(parts, ", ")+"; no type is declared.")
	}
	switch {
	case st.WithTTL == 0:
		lines = append(lines, "No key has a TTL.")
	case st.WithTTL == st.Keys:
		lines = append(lines, fmt.Sprintf("Every key has a TTL: %s to %s left at scan time.", readable(st.MinTTL), readable(st.MaxTTL)))
	default:
		lines = append(lines, fmt.Sprintf("%.0f%% of the keys have a TTL (%s to %s left at scan time), the rest none.", 100*float64(st.WithTTL)/float64(st.Keys), readable(st.MinTTL), readable(st.MaxTTL)))
	}
	if c.sampled > 0 {
		lines = append(lines, fmt.Sprintf("Values of %d sampled keys: %s.", c.sampled, strings.ReplaceAll(c.enc, "|", " or ")))
	}
	for _, sw := range c.Saw {
		vals := make([]string, len(sw.Values))
		for i, v := range sw.Values {
			vals[i] = strconv.Quote(clipValue(v))
		}
		more := ""
		if sw.More > 0 {
			more = fmt.Sprintf(" and %d more", sw.More)
		}
		lines = append(lines, fmt.Sprintf("{%s} is one placeholder for %d literal siblings of one shape: %s%s.", sw.Placeholder, len(sw.Values)+sw.More, strings.Join(vals, ", "), more))
	}
	if n := sumCounts(c.disagree); n > 0 {
		var parts []string
		for _, e := range slices.Sorted(maps.Keys(c.disagree)) {
			parts = append(parts, fmt.Sprintf("%s %d", strings.ReplaceAll(e, "|", " or "), c.disagree[e]))
		}
		lines = append(lines, fmt.Sprintf("%d of them do not decode as %s (%s): the first audit reports them.", n, c.enc, strings.Join(parts, ", ")))
	}
	ex := slices.Clone(st.Examples)
	slices.Sort(ex)
	if len(ex) > 2 {
		ex = ex[:2]
	}
	quoted := make([]string, len(ex))
	for i, k := range ex {
		quoted[i] = strconv.Quote(clipKey(k))
	}
	if len(quoted) > 0 {
		lines = append(lines, "e.g. "+strings.Join(quoted, ", "))
	}
	return lines
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// clipValue shortens a long segment for a comment.
func clipValue(v string) string {
	if len(v) <= 32 {
		return v
	}
	return v[:32] + "..."
}

// clipKey shortens a long example key for a comment.
func clipKey(k string) string {
	const max = 120
	if len(k) <= max {
		return k
	}
	return k[:max] + "..."
}

// declarableType returns the keys.yaml type of a TYPE reply: the reply
// itself for the core types, json for RedisJSON's ReJSON-RL, and false for
// other module types, which keys.yaml cannot declare.
func declarableType(t string) (string, bool) {
	switch t {
	case "string", "hash", "list", "set", "zset", "stream", "json":
		return t, true
	case "ReJSON-RL":
		return "json", true
	}
	return t, false
}

// ttlPolicy proposes a TTL policy from what the keys have: a max (the
// longest TTL seen, rounded up to a readable duration) when every key has
// one, persistent when none has, optional when both.
func ttlPolicy(st *Stats) (registry.TTLPolicy, string) {
	switch {
	case st.WithTTL == 0:
		return registry.TTLPolicy{Kind: registry.TTLPersistent}, ""
	case st.WithTTL == st.Keys:
		return registry.TTLPolicy{Kind: registry.TTLMax, Max: roundUp(st.MaxTTL)}, "the longest TTL seen, rounded up"
	}
	return registry.TTLPolicy{Kind: registry.TTLOptional}, fmt.Sprintf("%.0f%% of the keys have a TTL", 100*float64(st.WithTTL)/float64(st.Keys))
}

// ladder holds the readable durations a TTL is rounded up to.
var ladder = []time.Duration{
	time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 2 * 24 * time.Hour, 3 * 24 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour,
	30 * 24 * time.Hour, 60 * 24 * time.Hour, 90 * 24 * time.Hour, 180 * 24 * time.Hour, 365 * 24 * time.Hour,
}

// roundUp rounds d up to the next duration of the ladder, or to whole years
// beyond it.
func roundUp(d time.Duration) time.Duration {
	for _, l := range ladder {
		if d <= l {
			return l
		}
	}
	// Whole years, at most 100, computed without overflow: an expiry
	// set in year 292,277,026 (PEXPIREAT 2^63-1) is still a TTL.
	year := 365 * 24 * time.Hour
	n := d / year
	if d%year != 0 {
		n++
	}
	return min(n, 100) * year
}

func readable(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	}
	return registry.FormatDuration(d.Round(time.Minute))
}

// percentile returns the q-quantile of vs (q in [0, 1]).
func percentile(vs []int64, q float64) int64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// roundBytes rounds a size up to the next power of two, at least 64.
func roundBytes(n int64) int64 {
	b := int64(64)
	for b < n && b < 1<<40 {
		b <<= 1
	}
	return b
}

// familyName names a family after the literal words of its pattern:
// "v2:user:session:{session_id:uuid}" is user-session. Version segments,
// numbers ("migration:2023:" is migration) and placeholders are left out:
// a number in a name comes only from a version, when two families would
// have one name (nameFamilies).
func familyName(pattern string, sep byte) string {
	p, err := registry.ParsePattern(pattern, sep)
	var words []string
	if err == nil {
		for _, part := range p.Parts {
			if part.IsPlaceholder() {
				continue
			}
			for _, w := range strings.FieldsFunc(strings.ToLower(part.Lit), func(r rune) bool {
				return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
			}) {
				if isVersionWord(w) || allDigits(w) {
					continue
				}
				words = append(words, w)
			}
		}
	}
	if len(words) > 5 {
		words = words[:5]
	}
	name := strings.Join(words, "-")
	if name == "" || !('a' <= name[0] && name[0] <= 'z') {
		name = "keys-" + name
	}
	return strings.TrimSuffix(name, "-")
}

// nameFamilies names the candidates, unique among used and one another.
// Candidates whose literal words give one name are told apart by their
// version ("user-session-v1", "user-session-v2"), then by the types of
// their placeholders ("cart-int", "cart-uuid"), and last by a letter
// ("cart-b"): never by a number that is not a version.
func nameFamilies(cs []*candidate, sep byte, used map[string]bool) {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = familyName(c.Pattern, sep)
	}
	for _, more := range []func(c *candidate) string{
		func(c *candidate) string {
			if c.Version > 0 {
				return "-v" + strconv.Itoa(c.Version)
			}
			return ""
		},
		func(c *candidate) string { return "-" + typeWords(c.Pattern, sep) },
	} {
		count := map[string]int{}
		for _, n := range names {
			count[n]++
		}
		for i, c := range cs {
			if count[names[i]] > 1 || used[names[i]] {
				names[i] += more(c)
			}
		}
	}
	for i, c := range cs {
		c.name = uniqueWord(names[i], used)
	}
}

// typeWords lists the placeholder types of a pattern, "int-word".
func typeWords(pattern string, sep byte) string {
	p, err := registry.ParsePattern(pattern, sep)
	if err != nil {
		return "keys"
	}
	var ws []string
	for _, ph := range p.Placeholders() {
		ws = append(ws, ph.Type.String())
	}
	if len(ws) > 4 {
		ws = ws[:4]
	}
	return strings.Join(ws, "-")
}

// uniqueWord returns name, or name-b, name-c... name-z, name-b-b... when
// it is taken, and marks it used.
func uniqueWord(name string, used map[string]bool) string {
	n := name
	for i := 0; used[n]; i++ {
		suffix := ""
		for j := i; ; j = j/25 - 1 {
			suffix = "-" + string(rune('b'+j%25)) + suffix
			if j < 25 {
				break
			}
		}
		n = name + suffix
	}
	used[n] = true
	return n
}

func isVersionWord(w string) bool {
	if len(w) < 2 || w[0] != 'v' {
		return false
	}
	for _, c := range w[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// kebab makes a value part of a name: lower-case letters and digits, runs
// of anything else as one "-".
func kebab(v string) string {
	words := strings.FieldsFunc(strings.ToLower(v), func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') })
	if len(words) == 0 {
		return "x"
	}
	return strings.Join(words, "-")
}

// loadDraft marshals d and loads it as keys.yaml, with its schema files
// beside it, as the written registry will load; it returns the registry
// and the marshalled file.
func loadDraft(d *registry.Draft, schemas map[string][]byte) (*registry.Registry, []byte, error) {
	data, err := d.Marshal()
	if err != nil {
		return nil, nil, err
	}
	fsys := memFS{"keys.yaml": data}
	for name, b := range schemas {
		fsys[name] = b
	}
	reg, err := registry.Parse(fsys, "keys.yaml", data)
	return reg, data, err
}
