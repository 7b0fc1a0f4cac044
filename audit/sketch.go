package audit

import (
	"errors"
	"fmt"
	"math"
)

// Sketch is a mergeable quantile sketch of non-negative integers (bytes,
// element counts): a histogram over logarithmic buckets, each SketchGamma
// times wider than the one before, in the manner of DDSketch. Every
// quantile it returns is within SketchError of a true value of the
// distribution (relative error), its size is fixed whatever it counts
// (at most SketchBuckets counters), and two sketches merge by adding
// their counters, so the sketches of several audits combine into the
// sketch of their union. The zero Sketch is empty and ready to use.
type Sketch struct {
	count  int64
	zeros  int64 // values of 0
	max    int64
	counts []int64 // by bucket index; allocated on the first value above 0
}

// SketchError is the relative error of a Sketch's quantiles: 1%.
const SketchError = 0.01

// SketchGamma is the ratio of a bucket's upper bound to its lower bound.
const SketchGamma = (1 + SketchError) / (1 - SketchError)

// SketchBuckets is the number of buckets, enough for every positive int64.
var SketchBuckets = bucketOf(math.MaxInt64) + 1

var logGamma = math.Log(SketchGamma)

// bucketOf returns the bucket of v > 0: ceil(log_gamma(v)).
func bucketOf(v int64) int {
	return int(math.Ceil(math.Log(float64(v)) / logGamma))
}

// Add counts one value; a negative one counts as 0. It allocates only on
// the first value above 0.
func (s *Sketch) Add(v int64) {
	s.count++
	if v <= 0 {
		s.zeros++
		return
	}
	s.max = max(s.max, v)
	if s.counts == nil {
		s.counts = make([]int64, SketchBuckets)
	}
	s.counts[bucketOf(v)]++
}

// Count is the number of values added.
func (s *Sketch) Count() int64 { return s.count }

// Max is the largest value added, exactly.
func (s *Sketch) Max() int64 { return s.max }

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of the values added, within
// SketchError of a true value, and never above Max; 0 for an empty sketch.
func (s *Sketch) Quantile(q float64) int64 {
	if s.count == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := int64(math.Ceil(q * float64(s.count))) // 1-based rank of the value wanted
	rank = max(rank, 1)
	seen := s.zeros
	if seen >= rank {
		return 0
	}
	for i, c := range s.counts {
		if seen += c; seen >= rank {
			// The middle of the bucket in relative terms: within
			// SketchError of every value it holds.
			v := 2 * math.Pow(SketchGamma, float64(i)) / (SketchGamma + 1)
			return min(int64(math.Round(v)), s.max)
		}
	}
	return s.max
}

// Merge adds the values counted by o to s.
func (s *Sketch) Merge(o *Sketch) {
	s.count += o.count
	s.zeros += o.zeros
	s.max = max(s.max, o.max)
	if o.counts == nil {
		return
	}
	if s.counts == nil {
		s.counts = make([]int64, SketchBuckets)
	}
	for i, c := range o.counts {
		s.counts[i] += c
	}
}

// SketchState is a Sketch as the json report holds it, so that keyreg
// report merge can merge the sketches of several reports: Buckets lists
// the non-empty buckets as [index, count] pairs, in index order.
type SketchState struct {
	Count   int64      `json:"count"`
	Zeros   int64      `json:"zeros"`
	Max     int64      `json:"max"`
	Buckets [][2]int64 `json:"buckets"`
}

// State returns s in its serialised form.
func (s *Sketch) State() SketchState {
	st := SketchState{Count: s.count, Zeros: s.zeros, Max: s.max, Buckets: [][2]int64{}}
	for i, c := range s.counts {
		if c > 0 {
			st.Buckets = append(st.Buckets, [2]int64{int64(i), c})
		}
	}
	return st
}

// SketchFrom rebuilds a Sketch from its serialised form, checking that it
// is one State could have written: indices in range and increasing,
// counts above 0 that add up to Count with Zeros, a Max in the last
// bucket. Its size is fixed whatever st holds.
func SketchFrom(st SketchState) (Sketch, error) {
	s := Sketch{count: st.Count, zeros: st.Zeros, max: st.Max}
	if st.Count < 0 || st.Zeros < 0 || st.Max < 0 || st.Zeros > st.Count {
		return Sketch{}, errors.New("sketch: negative or inconsistent counts")
	}
	if len(st.Buckets) > SketchBuckets {
		return Sketch{}, fmt.Errorf("sketch: %d buckets, at most %d", len(st.Buckets), SketchBuckets)
	}
	sum, last := st.Zeros, int64(-1)
	for _, b := range st.Buckets {
		i, c := b[0], b[1]
		if i <= last || i >= int64(SketchBuckets) || c <= 0 || c > st.Count-sum {
			return Sketch{}, fmt.Errorf("sketch: bad bucket [%d, %d]", i, c)
		}
		if s.counts == nil {
			s.counts = make([]int64, SketchBuckets)
		}
		s.counts[i] = c
		sum += c
		last = i
	}
	if sum != st.Count {
		return Sketch{}, fmt.Errorf("sketch: buckets count %d values, count says %d", sum, st.Count)
	}
	if (last < 0) != (st.Max == 0) || (last >= 0 && int64(bucketOf(st.Max)) != last) {
		return Sketch{}, fmt.Errorf("sketch: max %d is not in the last bucket", st.Max)
	}
	return s, nil
}
