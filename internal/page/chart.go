package page

import (
	"cmp"
	"fmt"
	"slices"
)

// Chart is a horizontal bar chart, drawn as inline SVG by the shell's
// "chart" template.
type Chart struct {
	Title  string
	Note   string
	Width  int
	Height int
	Rows   []chartRow
	Legend []legend
}

type chartRow struct {
	Label  string // clipped for the axis
	Full   string // the whole label, in the row's <title>
	Y, TY  int    // the bar's top and the text baseline
	Segs   []seg
	Value  string
	ValueX int
}

type seg struct {
	X, W  int
	Class string
}

type legend struct{ Class, Text string }

// Chart geometry, in SVG user units.
const (
	chartLabelW = 150
	chartBarW   = 250
	chartValueW = 130
	chartRowH   = 18
	chartGap    = 6
	chartRows   = 12 // rows shown; the rest are summed into one
)

// Bar is one row of a chart before layout: its label, the values of its
// segments, and the text after the bar (empty: the sum, formatted).
type Bar struct {
	Label  string
	Values []int64
	Text   string
}

// NewChart lays out bars (at most chartRows of them, the largest first;
// the rest summed into one "others" row) with one CSS class per segment.
func NewChart(title, note string, bars []Bar, classes []string, legends []string, format func(int64) string) Chart {
	slices.SortStableFunc(bars, func(a, b Bar) int { return cmp.Compare(sum(b.Values), sum(a.Values)) })
	return LayoutChart(title, note, bars, classes, legends, format)
}

// LayoutChart is NewChart that keeps the bars in their order (a
// histogram's buckets).
func LayoutChart(title, note string, bars []Bar, classes []string, legends []string, format func(int64) string) Chart {
	if len(bars) > chartRows {
		rest := Bar{Values: make([]int64, len(classes))}
		for _, b := range bars[chartRows-1:] {
			for i, v := range b.Values {
				rest.Values[i] += v
			}
		}
		rest.Label = fmt.Sprintf("%d others", len(bars)-chartRows+1)
		bars = append(bars[:chartRows-1:chartRows-1], rest)
	}
	var top int64
	for _, b := range bars {
		top = max(top, sum(b.Values))
	}
	c := Chart{Title: title, Note: note, Width: chartLabelW + chartBarW + chartValueW}
	for i, b := range bars {
		y := i * (chartRowH + chartGap)
		row := chartRow{Label: clipLabel(b.Label), Full: b.Label, Y: y, TY: y + chartRowH - 5}
		x := chartLabelW
		for j, v := range b.Values {
			w := 0
			if top > 0 {
				w = int(float64(v) / float64(top) * chartBarW)
			}
			if v > 0 && w == 0 {
				w = 1
			}
			row.Segs = append(row.Segs, seg{X: x, W: w, Class: classes[j]})
			x += w
		}
		row.Value, row.ValueX = cmp.Or(b.Text, format(sum(b.Values))), x+6
		c.Rows = append(c.Rows, row)
	}
	c.Height = max(len(bars)*(chartRowH+chartGap), chartRowH)
	if len(legends) > 1 {
		for i, l := range legends {
			c.Legend = append(c.Legend, legend{Class: classes[i], Text: l})
		}
	}
	return c
}

func sum(vs []int64) int64 {
	var n int64
	for _, v := range vs {
		n += v
	}
	return n
}

// clipLabel shortens a label for the chart's axis, on a rune boundary.
func clipLabel(s string) string {
	const max = 22
	if len([]rune(s)) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}
