package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// result is everything one run measured.
type result struct {
	Machine       machine         `json:"machine"`
	Command       string          `json:"command"`
	N             int             `json:"n"`
	Rounds        int             `json:"rounds"`
	Seeded        seedStats       `json:"seeded"`
	ClusterN      int             `json:"cluster_n,omitempty"`
	ClusterSeeded *seedStats      `json:"cluster_seeded,omitempty"`
	Cases         []*caseResult   `json:"cases"`
	Safety        *safetyResult   `json:"safety,omitempty"`
	Cluster       *clusterSummary `json:"cluster,omitempty"`
	Costs         []costResult    `json:"costs,omitempty"`
	Bars          []bar           `json:"bars"`
}

type machine struct {
	CPUs        int    `json:"cpus"`
	CPUModel    string `json:"cpu_model"`
	MemTotal    string `json:"mem_total"`
	RedisServer string `json:"redis_server"`
	Go          string `json:"go"`
	OS          string `json:"os"`
	PeakRSS     string `json:"peak_rss_method"`
}

// caseResult is one case over all rounds.
type caseResult struct {
	Name    string   `json:"name"`
	Desc    string   `json:"description"`
	Samples []sample `json:"samples"`

	Keys         int64   `json:"keys"`            // of the last round
	KeysPerSec   float64 `json:"keys_per_second"` // keys / median wall
	WallMedian   float64 `json:"wall_median_s"`
	WallMin      float64 `json:"wall_min_s"`
	WallMax      float64 `json:"wall_max_s"`
	ServerCPU    float64 `json:"server_cpu_s"` // median
	ServerUSKey  float64 `json:"server_us_per_key"`
	ClientCPU    float64 `json:"client_cpu_s"`         // median
	ClientMaxRSS int64   `json:"client_max_rss_bytes"` // max over rounds
	VsFloor      float64 `json:"vs_floor"`             // keys/s relative to the scan case
}

type safetyResult struct {
	Rate         int     `json:"rate"`
	MaxKeys      int     `json:"max_keys"`
	PingInterval string  `json:"ping_interval"`
	Keys         int64   `json:"keys"`
	Wall         float64 `json:"wall_s"`
	KeysPerSec   float64 `json:"keys_per_second"`
	ServerCPU    float64 `json:"server_cpu_s"`
	ClientCPU    float64 `json:"client_cpu_s"`
	CPUShare     float64 `json:"server_cpu_share"`      // server CPU s / wall s during the audit (PING included)
	IdleCPUShare float64 `json:"idle_server_cpu_share"` // the same with only the PING client
	Pings        int     `json:"pings"`
	P50ms        float64 `json:"ping_p50_ms"`
	P99ms        float64 `json:"ping_p99_ms"`
	Maxms        float64 `json:"ping_max_ms"`
	IdlePings    int     `json:"idle_pings"`
	IdleP50ms    float64 `json:"idle_ping_p50_ms"`
	IdleP99ms    float64 `json:"idle_ping_p99_ms"`
	IdleMaxms    float64 `json:"idle_ping_max_ms"`
}

type clusterSummary struct {
	ParallelWall   float64 `json:"parallel_wall_median_s"`
	SequentialWall float64 `json:"sequential_wall_median_s"`
	Speedup        float64 `json:"speedup"`
}

// bar is one target of the issue, checked against this run.
type bar struct {
	Bar      string `json:"bar"`
	Measured string `json:"measured"`
	Verdict  string `json:"verdict"` // holds, misses or n/a
}

func newResult(e *env) *result {
	r := &result{
		Machine: machineInfo(e.cfg.redisServer, e.timeBin),
		Command: "go run ./bench " + strings.Join(e.cfg.args, " "),
		N:       e.cfg.n,
		Rounds:  e.cfg.rounds,
		Seeded:  e.seeded,
	}
	if e.cfg.cluster {
		r.ClusterN = e.cfg.clusterN
		cs := e.clusterSeeded
		r.ClusterSeeded = &cs
	}
	return r
}

func machineInfo(redisServer, timeBin string) machine {
	m := machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, PeakRSS: peakRSSMethod(timeBin)}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && k == "MemTotal" {
				var kb int64
				fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
				m.MemTotal = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
	}
	if out, err := exec.Command(redisServer, "--version").Output(); err == nil {
		m.RedisServer = strings.TrimSpace(string(out))
	}
	return m
}

func (c *caseResult) summarize() {
	if len(c.Samples) == 0 {
		return
	}
	walls := make([]float64, len(c.Samples))
	srv := make([]float64, len(c.Samples))
	cli := make([]float64, len(c.Samples))
	for i, s := range c.Samples {
		walls[i] = s.Wall.Seconds()
		srv[i] = s.ServerCPU
		cli[i] = s.ClientCPU
		c.ClientMaxRSS = max(c.ClientMaxRSS, s.MaxRSS)
	}
	c.Keys = c.Samples[len(c.Samples)-1].Keys
	c.WallMedian, c.WallMin, c.WallMax = median(walls), slices.Min(walls), slices.Max(walls)
	c.ServerCPU, c.ClientCPU = median(srv), median(cli)
	if c.WallMedian > 0 {
		c.KeysPerSec = float64(c.Keys) / c.WallMedian
	}
	if c.Keys > 0 {
		c.ServerUSKey = c.ServerCPU / float64(c.Keys) * 1e6
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (r *result) find(name string) *caseResult {
	for _, c := range r.Cases {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// finish fills the ratios, the cluster summary and the bars.
func (r *result) finish() {
	if f := r.find("scan"); f != nil && f.KeysPerSec > 0 {
		for _, c := range r.Cases {
			c.VsFloor = c.KeysPerSec / f.KeysPerSec
		}
	}
	par, seq := r.find("cluster-parallel"), r.find("cluster-sequential")
	if par != nil && seq != nil && par.WallMedian > 0 {
		r.Cluster = &clusterSummary{ParallelWall: par.WallMedian, SequentialWall: seq.WallMedian, Speedup: seq.WallMedian / par.WallMedian}
	}
	r.Bars = r.bars()
}

func verdict(ok bool) string {
	if ok {
		return "holds"
	}
	return "misses"
}

func (r *result) bars() []bar {
	floor, audit := r.find("scan"), r.find("audit")
	p1, p4, big, val := r.find("pipe1"), r.find("pipe4"), r.find("cli-bigkeys"), r.find("audit-validate")
	var bs []bar
	add := func(name string, ok bool, have bool, measured string) {
		if !have {
			bs = append(bs, bar{name, "not measured", "n/a"})
			return
		}
		bs = append(bs, bar{name, measured, verdict(ok)})
	}
	ratio := func(a, b *caseResult) float64 { return a.KeysPerSec / b.KeysPerSec }
	have := func(cs ...*caseResult) bool {
		for _, c := range cs {
			if c == nil || c.KeysPerSec == 0 {
				return false
			}
		}
		return true
	}
	if have(audit, floor) {
		x := ratio(audit, floor)
		add("default audit ≥ 50% of the SCAN floor", x >= 0.5, true, fmt.Sprintf("%.0f%%", 100*x))
	} else {
		add("default audit ≥ 50% of the SCAN floor", false, false, "")
	}
	if have(audit, p1, p4) {
		add("default audit faster than the 1-pipeline baseline", audit.KeysPerSec > p1.KeysPerSec, true, fmt.Sprintf("%.2f×", ratio(audit, p1)))
		add("default audit faster than the 4-pipeline baseline", audit.KeysPerSec > p4.KeysPerSec, true, fmt.Sprintf("%.2f×", ratio(audit, p4)))
	} else {
		add("default audit faster than the 1-pipeline baseline", false, false, "")
		add("default audit faster than the 4-pipeline baseline", false, false, "")
	}
	// The same bars for audit-lean, whose probe is TYPE+PTTL alone like the
	// baselines': keyreg against hand-written code doing the same Redis work.
	if lean := r.find("audit-lean"); have(lean, floor, p1, p4) {
		add("TYPE+PTTL audit (audit-lean) ≥ 50% of the SCAN floor", ratio(lean, floor) >= 0.5, true, fmt.Sprintf("%.0f%%", 100*ratio(lean, floor)))
		add("TYPE+PTTL audit (audit-lean) faster than both pipeline baselines", lean.KeysPerSec > max(p1.KeysPerSec, p4.KeysPerSec), true,
			fmt.Sprintf("%.2f× pipe1, %.2f× pipe4", ratio(lean, p1), ratio(lean, p4)))
	} else {
		add("TYPE+PTTL audit (audit-lean) ≥ 50% of the SCAN floor", false, false, "")
		add("TYPE+PTTL audit (audit-lean) faster than both pipeline baselines", false, false, "")
	}
	if have(audit, big) {
		x := ratio(audit, big)
		add("default audit ≥ 8× redis-cli --bigkeys", x >= 8, true, fmt.Sprintf("%.1f×", x))
	} else {
		add("default audit ≥ 8× redis-cli --bigkeys", false, false, "")
	}
	if have(val, floor) {
		x := ratio(val, floor)
		add("validating every schema-bearing payload ≥ 20% of the floor", x >= 0.2, true, fmt.Sprintf("%.1f%%", 100*x))
	} else {
		add("validating every schema-bearing payload ≥ 20% of the floor", false, false, "")
	}
	if have(audit) {
		add("Redis CPU ≤ 2.5 µs per key (default audit)", audit.ServerUSKey <= 2.5, true, fmt.Sprintf("%.2f µs", audit.ServerUSKey))
		mib := float64(audit.ClientMaxRSS) / (1 << 20)
		add(fmt.Sprintf("client peak RSS ≤ 50 MiB (default audit, %s keys)", human(int64(r.N))), mib <= 50, true, fmt.Sprintf("%.1f MiB", mib))
	} else {
		add("Redis CPU ≤ 2.5 µs per key (default audit)", false, false, "")
		add("client peak RSS ≤ 50 MiB (default audit)", false, false, "")
	}
	if rdb, chk := r.find("rdb"), r.find("check-rdb"); have(rdb, chk) {
		add("audit --rdb ≥ 1.5× redis-check-rdb", ratio(rdb, chk) >= 1.5, true, fmt.Sprintf("%.2f×", ratio(rdb, chk)))
	} else {
		add("audit --rdb ≥ 1.5× redis-check-rdb", false, false, "")
	}
	if rdb := r.find("rdb"); have(rdb, audit) {
		add("audit --rdb ≥ 3× the live default audit", ratio(rdb, audit) >= 3, true, fmt.Sprintf("%.2f×", ratio(rdb, audit)))
		mib := float64(rdb.ClientMaxRSS) / (1 << 20)
		add(fmt.Sprintf("audit --rdb peak RSS ≤ 64 MiB (%s keys)", human(int64(r.N))), mib <= 64, true, fmt.Sprintf("%.1f MiB", mib))
	} else {
		add("audit --rdb ≥ 3× the live default audit", false, false, "")
		add("audit --rdb peak RSS ≤ 64 MiB", false, false, "")
	}
	if r.Safety != nil {
		add(fmt.Sprintf("--rate %d: Redis CPU share ≤ 15%%", r.Safety.Rate), r.Safety.CPUShare <= 0.15, true,
			fmt.Sprintf("%.1f%% (p99 PING %.3f ms vs %.3f ms idle)", 100*r.Safety.CPUShare, r.Safety.P99ms, r.Safety.IdleP99ms))
	} else {
		add("--rate 50000: Redis CPU share ≤ 15%", false, false, "")
	}
	if r.Cluster != nil {
		add("cluster parallel ≥ 1.5× sequential", r.Cluster.Speedup >= 1.5, true, fmt.Sprintf("%.2f×", r.Cluster.Speedup))
	} else {
		add("cluster parallel ≥ 1.5× sequential", false, false, "")
	}
	return bs
}

func human(n int64) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func writeJSON(w io.Writer, r *result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func writeMarkdown(w io.Writer, r *result) error {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "Machine: %d CPUs, %s, %s RAM, %s, %s, %s\n\n", m.CPUs, m.CPUModel, m.MemTotal, m.RedisServer, m.Go, m.OS)
	fmt.Fprintf(&b, "Command: `%s`\n\n", r.Command)
	fmt.Fprintf(&b, "Seeded %d keys (%d commands, %d of %d JSON payloads broken) in %s.\n\n",
		r.Seeded.Keys, r.Seeded.Commands, r.Seeded.Broken, r.Seeded.JSON, r.Seeded.Duration.Round(time.Millisecond))
	fmt.Fprintf(&b, "Wall time: median of %d rounds (min–max); Redis and client CPU: medians; client peak RSS: max over rounds, measured with %s.\n\n", r.Rounds, m.PeakRSS)
	b.WriteString("| case | keys | keys/s | wall median | wall min–max | Redis CPU | Redis µs/key | client CPU | client peak RSS | × floor |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range r.Cases {
		fmt.Fprintf(&b, "| %s | %d | %s | %.3f s | %.3f–%.3f s | %.2f s | %.2f | %.2f s | %.1f MiB | %.2f |\n",
			c.Name, c.Keys, thousands(c.KeysPerSec), c.WallMedian, c.WallMin, c.WallMax, c.ServerCPU, c.ServerUSKey,
			c.ClientCPU, float64(c.ClientMaxRSS)/(1<<20), c.VsFloor)
	}
	b.WriteString("\nCases:\n\n")
	for _, c := range r.Cases {
		fmt.Fprintf(&b, "- `%s`: %s\n", c.Name, c.Desc)
	}
	if s := r.Safety; s != nil {
		fmt.Fprintf(&b, "\nProduction safety: `keyreg audit --rate %d --max-keys %d` while a client sends one PING every %s:\n\n", s.Rate, s.MaxKeys, s.PingInterval)
		b.WriteString("| | keys | keys/s | Redis CPU share | PINGs | PING p50 | PING p99 | PING max |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
		fmt.Fprintf(&b, "| idle server | – | – | %.1f%% | %d | %.3f ms | %.3f ms | %.3f ms |\n", 100*s.IdleCPUShare, s.IdlePings, s.IdleP50ms, s.IdleP99ms, s.IdleMaxms)
		fmt.Fprintf(&b, "| during the audit | %d | %s | %.1f%% | %d | %.3f ms | %.3f ms | %.3f ms |\n", s.Keys, thousands(s.KeysPerSec), 100*s.CPUShare, s.Pings, s.P50ms, s.P99ms, s.Maxms)
	}
	if len(r.Costs) > 0 {
		b.WriteString("\nRedis CPU per key by probe (`costs`: SCAN COUNT 1000 plus one pipelined round trip of these commands per key; medians of 3 runs):\n\n")
		b.WriteString("| commands per key | paced | keys | Redis µs/key | Redis CPU share |\n|---|--:|--:|--:|--:|\n")
		for _, c := range r.Costs {
			probe, paced := "SCAN alone", "–"
			if c.Probe != "" {
				probe = "`" + strings.ReplaceAll(strings.ToUpper(c.Probe), ";", "` + `") + "`"
			}
			if c.Rate > 0 {
				paced = thousands(float64(c.Rate)) + " keys/s"
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %.2f | %.1f%% |\n", probe, paced, c.Keys, c.ServerUSKey, 100*c.CPUShare)
		}
	}
	if c := r.Cluster; c != nil {
		fmt.Fprintf(&b, "\nCluster (%d keys over 3 masters): parallel %.3f s, sequential %.3f s, speedup %.2f×.\n", r.ClusterN, c.ParallelWall, c.SequentialWall, c.Speedup)
	}
	b.WriteString("\n| bar | measured | verdict |\n|---|--:|---|\n")
	for _, x := range r.Bars {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", x.Bar, x.Measured, x.Verdict)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// thousands formats a rate with thin separators: 1234567 -> 1,234,567.
func thousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
