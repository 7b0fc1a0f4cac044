package vet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/keyreg/keyreg/diag"
)

// Baseline is what keyreg vet --write-baseline records: per finding its
// rule, file and message, without the line, so that code moving within a
// file keeps its findings known. Only findings beyond the baseline's count
// of the same entry are new.
type Baseline struct {
	Version  int             `json:"version"`
	Findings []BaselineEntry `json:"findings"`
}

// BaselineEntry is one known finding.
type BaselineEntry struct {
	Rule    string `json:"rule"`
	File    string `json:"file"`
	Message string `json:"message"`
}

// maxBaseline bounds a baseline file.
const maxBaseline = 16 << 20

// NewBaseline records the active findings of l.
func NewBaseline(l diag.List) *Baseline {
	b := &Baseline{Version: 1, Findings: []BaselineEntry{}}
	for _, d := range l.Active() {
		b.Findings = append(b.Findings, BaselineEntry{Rule: d.Rule, File: d.Pos.File, Message: d.Message})
	}
	sort.SliceStable(b.Findings, func(i, j int) bool {
		x, y := b.Findings[i], b.Findings[j]
		if x.File != y.File {
			return x.File < y.File
		}
		if x.Rule != y.Rule {
			return x.Rule < y.Rule
		}
		return x.Message < y.Message
	})
	return b
}

// Marshal writes b as indented JSON.
func (b *Baseline) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// LoadBaseline reads a baseline file.
func LoadBaseline(path string) (*Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBaseline+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxBaseline {
		return nil, fmt.Errorf("%s: baseline larger than %d bytes", path, maxBaseline)
	}
	var b Baseline
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if b.Version != 1 {
		return nil, fmt.Errorf("%s: baseline version %d, want 1", path, b.Version)
	}
	return &b, nil
}

// Apply marks the findings of l that b knows as suppressed, and returns
// how many it marked.
func (b *Baseline) Apply(l diag.List) int {
	known := map[BaselineEntry]int{}
	for _, e := range b.Findings {
		known[e]++
	}
	n := 0
	for i := range l {
		d := &l[i]
		if d.Suppressed || d.Severity == diag.Off {
			continue
		}
		e := BaselineEntry{Rule: d.Rule, File: d.Pos.File, Message: d.Message}
		if known[e] > 0 {
			known[e]--
			d.Suppressed, d.Reason = true, "in the baseline"
			n++
		}
	}
	return n
}
