package audit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/audit"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/registry"
	"github.com/keyreg/keyreg/scanner"
	"github.com/keyreg/keyreg/source"
)

// failingSource delivers two batches of counter keys. Its batch read says
// the first key vanished, which frees a quota that a later key takes with
// a read of its own, and that read fails.
type failingSource struct{ batches [][]scanner.KeyInfo }

var errSample = errors.New("sample failed")

func (s failingSource) ScanKeys(ctx context.Context, _ source.Planner, fn func([]scanner.KeyInfo) error) (scanner.Stats, error) {
	var st scanner.Stats
	for _, b := range s.batches {
		if err := fn(b); err != nil {
			st.Partial = true
			return st, err
		}
		st.Keys += int64(len(b))
	}
	return st, nil
}

func (failingSource) SampleEach(_ context.Context, keys []scanner.KeyInfo, _ int, _ int64, fn func([]int, []payload.Sample, []error)) {
	if len(keys) == 1 { // the read of the key that took the freed quota
		fn([]int{0}, []payload.Sample{{}}, []error{errSample})
		return
	}
	idx := make([]int, len(keys))
	ss := make([]payload.Sample, len(keys))
	errs := make([]error, len(keys))
	for i := range keys {
		idx[i] = i
		ss[i].String = []byte("1")
	}
	errs[0] = scanner.ErrVanished
	fn(idx, ss, errs)
}

func (failingSource) Touch() source.TouchState { return source.TouchState{} }

// TestFailedEvaluationCountsOnce checks that a batch whose evaluation fails
// (here a sample read fails) is not evaluated a second time when the scan
// ends: every key is counted at most once, and the error is returned.
func TestFailedEvaluationCountsOnce(t *testing.T) {
	reg, err := registry.Load(fstest.MapFS{"keys.yaml": {Data: []byte(`version: 1
owners:
  platform: {contact: platform@example.com}
families:
  - name: counter
    description: a counter
    pattern: "v1:counter:{id:int}"
    owner: platform
    type: string
    encoding: int
    ttl: persistent
`)}}, "keys.yaml")
	if err != nil {
		t.Fatal(err)
	}
	batch := func(from int) []scanner.KeyInfo {
		var b []scanner.KeyInfo
		for i := from; i < from+5; i++ {
			b = append(b, scanner.KeyInfo{Key: fmt.Sprint("v1:counter:", i), Type: "string", PTTL: scanner.NoExpiry})
		}
		return b
	}
	o := audit.Defaults()
	o.Sample = 3 // keys 0-2 are read ahead; key 0 vanished, so key 3 is sampled on its own
	rep, err := audit.Run(context.Background(), failingSource{[][]scanner.KeyInfo{batch(0), batch(5)}}, reg, o)
	if !errors.Is(err, errSample) {
		t.Fatalf("error %v, want the sample error", err)
	}
	if rep == nil || !rep.Partial {
		t.Fatalf("report %+v, want a partial one", rep)
	}
	// Keys 1 and 2 are audited before key 3's sample fails; key 0 vanished.
	if rep.Totals.Keys != 2 || rep.Scan.Vanished != 1 {
		t.Errorf("%d keys audited, %d vanished; want 2 and 1 (each key counted once)", rep.Totals.Keys, rep.Scan.Vanished)
	}
}
