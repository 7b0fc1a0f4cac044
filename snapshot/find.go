package snapshot

import (
	"context"
	"errors"

	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/source"
)

// Found is one key looked up in snapshot files, for keyreg explain --rdb:
// the facts the audit would have of it and, when asked, its value. Its
// Probe and Sample methods make it an audit.Prober, so the key is checked
// exactly as the audit of the same files checks it.
type Found struct {
	info   source.KeyInfo
	sample payload.Sample
	err    error // of the value read
	notes  []string
}

// errFound stops the scan once the key is found.
var errFound = errors.New("found")

// Find streams the files until it meets key (in any database, the first
// one), with the facts plan asks for; when sample is set, it keeps the
// key's value within n elements and maxBytes. A key in no file is a Found
// whose Probe says it vanished.
func Find(ctx context.Context, s *Source, key string, plan source.Planner, sample bool) (*Found, error) {
	f := &Found{info: source.KeyInfo{Key: key, Vanished: true}}
	p := func(k string) source.Plan {
		pl := plan(k)
		pl.Sample = ""
		if k == key && sample {
			pl.Sample = "*"
		}
		return pl
	}
	if s.o.Sample < 1 {
		s.o.Sample = 1
	}
	_, err := s.ScanKeys(ctx, p, func(batch []source.KeyInfo) error {
		for _, k := range batch {
			if k.Key == key {
				f.info = k
				return errFound
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return nil, err
	}
	if !f.info.Vanished {
		s.mu.Lock()
		if v, ok := s.kept[keptKey{f.info.DB, key}]; ok {
			f.sample, f.err = v.s, v.err
		} else {
			f.err = source.ErrVanished
		}
		s.mu.Unlock()
	}
	f.notes = s.Notes()
	return f, nil
}

// Probe returns the key's facts.
func (f *Found) Probe(context.Context, string) (source.KeyInfo, error) { return f.info, nil }

// Sample returns the key's value as read from the file.
func (f *Found) Sample(context.Context, source.KeyInfo, int, int64) (payload.Sample, error) {
	return f.sample, f.err
}

// Notes describes the files read, as Source.Notes does.
func (f *Found) Notes() []string { return f.notes }
