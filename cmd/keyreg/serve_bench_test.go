package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
)

// benchKeys is the keyspace of the serve benchmarks: $KEYREG_BENCH_KEYS,
// 200,000 by default (docs/benchmarks.md has the 1M figures).
func benchKeys(b *testing.B) int {
	n := 200000
	if s := os.Getenv("KEYREG_BENCH_KEYS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		n = v
	}
	return n
}

// seedBench writes n session keys (with a TTL) and n/10 unregistered
// ones, in pipelines of 10,000.
func seedBench(b *testing.B, srv *redistest.Server, n int) {
	b.Helper()
	c := srv.Client(b)
	ctx := context.Background()
	p := c.Pipeline()
	for i := range n + n/10 {
		if i < n {
			p.Set(ctx, fmt.Sprintf("v1:session:%d", i+1), `{"user_id":1}`, time.Hour)
		} else {
			p.Set(ctx, fmt.Sprintf("tmp:job%c:%d", 'a'+i%26, i), "v", 0)
		}
		if p.Len() == 10000 {
			if _, err := p.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := p.Exec(ctx); err != nil {
		b.Fatal(err)
	}
}

// startServeProcess runs keyreg serve as a process (the test binary as
// keyreg) and returns its address and pid.
func startServeProcess(b *testing.B, args ...string) (addr string, pid int) {
	b.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "KEYREG_TEST_MAIN=1")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitFor(b, "the listener", func() bool {
		m := listenLog.FindStringSubmatch(stderr.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	return addr, cmd.Process.Pid
}

// procUsage reads a process's CPU time (user+system) and resident and
// peak resident memory from /proc.
func procUsage(b *testing.B, pid int) (cpu time.Duration, rss, hwm int64) {
	b.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	cpu = time.Duration(ut+st) * time.Second / 100 // USER_HZ
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			hwm = kb << 10
		}
	}
	return cpu, rss, hwm
}

func scrapeValue(b *testing.B, addr, name string) float64 {
	b.Helper()
	_, _, body := httpGet(b, "http://"+addr+"/metrics", "")
	for line := range strings.SplitSeq(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

// BenchmarkServeSteady runs keyreg serve as a process on a large keyspace
// with audits back to back (--interval 1s), and reports the CPU time and
// the resident memory per audit over 10 audits, then the CPU of an idle
// exporter scraped every second between audits:
//
//	KEYREG_BENCH_KEYS=1000000 go test ./cmd/keyreg -run '^$' -bench BenchmarkServeSteady -benchtime 1x
func BenchmarkServeSteady(b *testing.B) {
	n := benchKeys(b)
	srv := redistest.Standalone(b)
	seedBench(b, srv, n)
	addr, pid := startServeProcess(b, "--url", srv.URL(), "--registry", auditRegistry, "--interval", "1s")
	const audits = 10
	var cpus []time.Duration
	var rsss []int64
	var hwm int64
	b.ResetTimer()
	for range b.N {
		done := scrapeValue(b, addr, `keyreg_audits_total{result="success"}`)
		for len(cpus) < audits {
			waitFor(b, "an audit", func() bool {
				v := scrapeValue(b, addr, `keyreg_audits_total{result="success"}`)
				return v > done
			})
			done++
			cpu, rss, h := procUsage(b, pid)
			cpus, rsss, hwm = append(cpus, cpu), append(rsss, rss), h
		}
	}
	b.StopTimer()
	dur := scrapeValue(b, addr, "keyreg_audit_duration_seconds")
	perAudit := (cpus[len(cpus)-1] - cpus[0]) / time.Duration(len(cpus)-1)
	b.ReportMetric(float64(n+n/10), "keys")
	b.ReportMetric(perAudit.Seconds(), "cpu-s/audit")
	b.ReportMetric(dur, "s/audit")
	b.ReportMetric(float64(rsss[0])/(1<<20), "MiB-rss-first")
	b.ReportMetric(float64(rsss[len(rsss)-1])/(1<<20), "MiB-rss-last")
	b.ReportMetric(float64(slices.Max(rsss))/(1<<20), "MiB-rss-max")
	b.ReportMetric(float64(hwm)/(1<<20), "MiB-hwm")
	// At --interval 5m the exporter audits once per 300s: its mean CPU.
	b.ReportMetric(100*perAudit.Seconds()/300, "%cpu@5m")
}

// BenchmarkServeScrape measures /metrics latency over 1,000 scrapes per
// run, with no audit running (the baseline) and with audits of a large
// keyspace running back to back, and reports the p50 and p99:
//
//	go test ./cmd/keyreg -run '^$' -bench BenchmarkServeScrape -benchtime 1x
func BenchmarkServeScrape(b *testing.B) {
	n := benchKeys(b)
	srv := redistest.Standalone(b)
	seedBench(b, srv, n)
	for _, bc := range []struct{ name, interval string }{{"idle", "1h"}, {"during-audits", "1s"}} {
		b.Run(bc.name, func(b *testing.B) {
			addr, _ := startServeProcess(b, "--url", srv.URL(), "--registry", auditRegistry, "--interval", bc.interval)
			waitFor(b, "the first audit", func() bool {
				code, _, _ := httpGet(b, "http://"+addr+"/readyz", "")
				return code == 200
			})
			var lat []time.Duration
			running := 0
			b.ResetTimer()
			for range b.N {
				for range 1000 {
					start := time.Now()
					_, _, body := httpGet(b, "http://"+addr+"/metrics", "")
					lat = append(lat, time.Since(start))
					if strings.Contains(string(body), "\nkeyreg_audit_running 1\n") {
						running++
					}
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "ms-p99")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "ms-max")
			b.ReportMetric(100*float64(running)/float64(len(lat)), "%mid-audit")
		})
	}
}
