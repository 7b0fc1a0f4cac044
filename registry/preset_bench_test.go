package registry

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/keyreg/keyreg/internal/synth"
)

// allPresets returns presets: entries that use every preset with its
// defaults, owned by owner.
func allPresets(owner string) string {
	var b strings.Builder
	b.WriteString("presets:\n")
	for _, p := range Presets() {
		fmt.Fprintf(&b, "  - use: %s\n    owner: %s\n", p.Name, owner)
	}
	return b.String()
}

// BenchmarkLoadPresets loads this repository's keys.yaml as it is and with
// every preset added (the bar: presets add less than 20 ms to a load).
func BenchmarkLoadPresets(b *testing.B) {
	base, err := os.ReadFile("../keys.yaml")
	if err != nil {
		b.Fatal(err)
	}
	fsys := os.DirFS("..")
	all := stripPresets(string(base)) + "\n" + allPresets("platform")
	for _, c := range []struct{ name, src string }{{"keys.yaml", stripPresets(string(base))}, {"keys.yaml+all-presets", all}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				reg, err := Parse(fsys, "keys.yaml", []byte(c.src))
				if err != nil {
					b.Fatal(err)
				}
				n = len(reg.Families)
			}
			b.ReportMetric(float64(n), "families")
		})
	}
}

// stripPresets drops a top-level presets: block from a registry, so the
// benchmark compares a registry without presets with one with all.
func stripPresets(src string) string {
	lines := strings.SplitAfter(src, "\n")
	var out strings.Builder
	skip := false
	for _, l := range lines {
		if strings.HasPrefix(l, "presets:") {
			skip = true
			continue
		}
		if skip && l != "\n" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "#") {
			skip = false
		}
		if !skip {
			out.WriteString(l)
		}
	}
	return out.String()
}

// BenchmarkMatchPresets matches the keys of BenchmarkMatch against 100
// generated families alone and with every preset's families added: a
// team's keys must match as fast with presets in the registry.
func BenchmarkMatchPresets(b *testing.B) {
	m, keys := benchMatcher(b, 100)
	src := "version: 1\nowners:\n  t: {contact: t}\nfamilies: []\n" + allPresets("t")
	reg, err := Parse(fstest.MapFS{}, "keys.yaml", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	fams := append(families(b, ':', synth.Patterns(100)...), reg.Families...)
	for i, f := range fams {
		f.Index = i
	}
	mp := NewMatcher(fams, ':')
	for _, c := range []struct {
		name string
		m    *Matcher
	}{{"families=100", m}, {"families=100+presets", mp}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			hits := 0
			for i := range b.N {
				if c.m.Match(keys[i&(len(keys)-1)]) != nil {
					hits++
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}
