package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/keyreg/keyreg/scanner"
)

// exactQuantile is the q-quantile of sorted vs by the rank the sketch uses.
func exactQuantile(vs []int64, q float64) int64 {
	rank := max(int(math.Ceil(q*float64(len(vs)))), 1)
	return vs[rank-1]
}

func TestSketchQuantilesWithinError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dists := map[string]func() int64{
		"uniform":     func() int64 { return rng.Int64N(100000) + 1 },
		"exponential": func() int64 { return int64(rng.ExpFloat64()*5000) + 1 },
		"lognormal":   func() int64 { return int64(math.Exp(rng.NormFloat64()*2+8)) + 1 },
		"small-ints":  func() int64 { return rng.Int64N(20) },
		"huge":        func() int64 { return math.MaxInt64 - rng.Int64N(1<<40) },
	}
	for name, gen := range dists {
		t.Run(name, func(t *testing.T) {
			var s Sketch
			vs := make([]int64, 20000)
			for i := range vs {
				vs[i] = gen()
				s.Add(vs[i])
			}
			slices.Sort(vs)
			if s.Count() != int64(len(vs)) || s.Max() != vs[len(vs)-1] {
				t.Fatalf("count %d max %d, want %d and %d", s.Count(), s.Max(), len(vs), vs[len(vs)-1])
			}
			for _, q := range []float64{0, 0.5, 0.9, 0.99, 1} {
				got, want := s.Quantile(q), exactQuantile(vs, q)
				// Rounding to an integer adds at most 0.5 to the relative error.
				if d := math.Abs(float64(got - want)); d > SketchError*float64(want)+0.5 {
					t.Errorf("p%v = %d, exact %d: off by %.3f%%", q*100, got, want, 100*d/float64(want))
				}
			}
		})
	}
}

func TestSketchMergeEqualsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var whole, a, b, c Sketch
	for i := range 10000 {
		v := int64(rng.ExpFloat64() * 1000)
		whole.Add(v)
		switch i % 3 {
		case 0:
			a.Add(v)
		case 1:
			b.Add(v)
		default:
			c.Add(v)
		}
	}
	var m Sketch
	m.Merge(&a)
	m.Merge(&b)
	m.Merge(&c)
	m.Merge(&Sketch{}) // an empty sketch changes nothing
	if fmt.Sprint(m.State()) != fmt.Sprint(whole.State()) {
		t.Fatalf("merged sketch differs from the sketch of the whole")
	}
	for _, q := range []float64{0.5, 0.9, 0.99} {
		if m.Quantile(q) != whole.Quantile(q) {
			t.Errorf("p%v: merged %d, whole %d", q*100, m.Quantile(q), whole.Quantile(q))
		}
	}
}

func TestSketchStateRoundTrip(t *testing.T) {
	var s Sketch
	for _, v := range []int64{0, 0, 1, 7, 7, 1 << 20, math.MaxInt64} {
		s.Add(v)
	}
	back, err := SketchFrom(s.State())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back.State()) != fmt.Sprint(s.State()) || back.Quantile(0.5) != s.Quantile(0.5) {
		t.Fatalf("round trip: %v, want %v", back.State(), s.State())
	}
	if _, err := SketchFrom(SketchState{Buckets: [][2]int64{}}); err != nil {
		t.Fatalf("empty sketch: %v", err)
	}
	bad := []SketchState{
		{Count: 1, Max: 5, Buckets: [][2]int64{{int64(SketchBuckets), 1}}},       // index out of range
		{Count: 2, Max: 5, Buckets: [][2]int64{{int64(bucketOf(5)), 1}}},         // counts do not add up
		{Count: 1, Max: 500, Buckets: [][2]int64{{int64(bucketOf(5)), 1}}},       // max not in the last bucket
		{Count: 2, Max: 7, Buckets: [][2]int64{{int64(bucketOf(7)), 1}, {3, 1}}}, // not increasing
		{Count: -1}, // negative
		{Count: 1 << 62, Max: 5, Buckets: [][2]int64{{int64(bucketOf(5)), 1 << 62}}}, // fine
	}
	for i, st := range bad[:5] {
		if _, err := SketchFrom(st); err == nil {
			t.Errorf("bad sketch %d accepted", i)
		}
	}
	if _, err := SketchFrom(bad[5]); err != nil {
		t.Errorf("large count refused: %v", err)
	}
}

func TestTTLHistogramBuckets(t *testing.T) {
	var h TTLHistogram
	for _, d := range []time.Duration{-1, 0, time.Minute - 1, time.Minute, time.Hour, 24*time.Hour - 1, 24 * time.Hour, 7 * 24 * time.Hour, 30*24*time.Hour - 1, 30 * 24 * time.Hour, 1 << 62} {
		h.add(d)
	}
	want := TTLHistogram{1, 2, 1, 2, 1, 2, 2}
	if h != want {
		t.Fatalf("histogram %v, want %v (buckets %v)", h, want, TTLBuckets)
	}
	if h.Total() != 11 {
		t.Fatalf("total %d", h.Total())
	}
}

func TestTopKeysKeepsLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	s := newStats(10)
	var mems []int64
	for i := range 5000 {
		k := scanner.KeyInfo{Key: fmt.Sprint("k:", i), Type: "hash", PTTL: -1, HasMemory: true, Memory: rng.Int64N(1 << 30), HasLen: i%2 == 0, Len: int64(rng.IntN(1000))}
		mems = append(mems, k.Memory)
		s.add(&k, "fam")
	}
	slices.Sort(mems)
	slices.Reverse(mems)
	got := s.bytes.sorted()
	if len(got) != 10 {
		t.Fatalf("%d top keys", len(got))
	}
	for i, tk := range got {
		if tk.Bytes != mems[i] || tk.Family != "fam" || tk.Type != "hash" || tk.TTL != -1 {
			t.Errorf("#%d: %+v, want bytes %d", i, tk, mems[i])
		}
	}
	if e := s.elements.sorted(); len(e) != 10 || e[0].Elements < e[9].Elements {
		t.Errorf("by elements: %v", e)
	}
	if s.types[0].Keys != 5000 || s.types[0].ElementsDist.Count() != 2500 || s.types[0].BytesDist.Count() != 5000 {
		t.Errorf("type stats: %+v", s.types[0])
	}
}

func TestTypesCapped(t *testing.T) {
	s := newStats(1)
	for i := range 100 {
		k := scanner.KeyInfo{Key: "k", Type: fmt.Sprint("module-", i), PTTL: -1}
		s.add(&k, "")
	}
	if len(s.types) != maxTypes {
		t.Fatalf("%d types kept, want %d", len(s.types), maxTypes)
	}
	var n int64
	for _, ty := range s.types {
		n += ty.Keys
	}
	if n != 100 || s.typeOf("other").Keys != 100-(maxTypes-1) {
		t.Fatalf("keys %d, other %d", n, s.typeOf("other").Keys)
	}
}
