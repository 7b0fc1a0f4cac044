package remedy_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/internal/testenv"
	"github.com/keyreg/keyreg/remedy"
	"github.com/keyreg/keyreg/scanner"
	"github.com/redis/go-redis/v9"
)

const benchKeys = 100_000

// redisCPU is the server's used_cpu_user + used_cpu_sys, in seconds.
func redisCPU(b *testing.B, c *redis.Client) float64 {
	info, err := c.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	for line := range strings.SplitSeq(info, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if k == "used_cpu_user" || k == "used_cpu_sys" {
			f, _ := strconv.ParseFloat(v, 64)
			sum += f
		}
	}
	return sum
}

// watch PINGs the server from its own connection until stop, and returns
// the round trips seen.
func watch(addr string, stop <-chan struct{}) <-chan []time.Duration {
	out := make(chan []time.Duration, 1)
	go func() {
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		var rtts []time.Duration
		for {
			select {
			case <-stop:
				out <- rtts
				return
			default:
			}
			start := time.Now()
			c.Ping(context.Background())
			rtts = append(rtts, time.Since(start))
			time.Sleep(time.Millisecond)
		}
	}()
	return out
}

func report(b *testing.B, rtts []time.Duration, cpu float64, wall time.Duration) {
	slices.Sort(rtts)
	b.ReportMetric(cpu/benchKeys*1e6, "redis-cpu-µs/key")
	b.ReportMetric(float64(rtts[len(rtts)*99/100])/1e6, "p99-ms")
	b.ReportMetric(float64(rtts[len(rtts)-1])/1e6, "worst-ms")
	b.ReportMetric(wall.Seconds(), "wall-s")
}

func seedBench(b *testing.B, c *redis.Client) {
	ctx := context.Background()
	for lo := 0; lo < benchKeys; lo += 1000 {
		p := c.Pipeline()
		for i := lo; i < lo+1000; i++ {
			p.Set(ctx, fmt.Sprintf("tmp:junk:%06d", i), "some junk value", 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrune100k: keyreg's plan then apply (backup, check-and-UNLINK)
// of 100,000 unregistered keys at --rate 20000, against redis-cli --scan |
// xargs redis-cli unlink on the same keys; Redis CPU per key and the round
// trips of a concurrent client. Run with -benchtime=1x.
func BenchmarkPrune100k(b *testing.B) {
	ctx := context.Background()
	reg, err := loadRegB()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("keyreg-rate-20000", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			srv := redistest.Standalone(b)
			c := srv.Client(b)
			seedBench(b, c)
			conn := connect(b, ctx, srv.URL(), scanner.Options{})
			b.StartTimer()
			stop := make(chan struct{})
			rtts := watch(srv.Addr, stop)
			cpu0, start := redisCPU(b, c), time.Now()
			p, err := remedy.Build(ctx, conn, reg, remedy.KindPrune, remedy.Options{Selection: remedy.Selection{Unregistered: true}, Now: time.Now()}, remedy.Server{})
			if err != nil {
				b.Fatal(err)
			}
			planned := time.Since(start)
			cpuPlan := redisCPU(b, c) - cpu0
			close(stop)
			planRTT := <-rtts
			stop = make(chan struct{})
			rtts = watch(srv.Addr, stop)
			applyStart := time.Now()
			res, err := remedy.Apply(ctx, p, conn, remedy.ApplyOptions{Backup: filepath.Join(b.TempDir(), "b.rdb"), Rate: 20000})
			if err != nil || res.Deleted != benchKeys {
				b.Fatalf("apply: %v, %d deleted", err, res.Deleted)
			}
			applied := time.Since(applyStart)
			cpu := redisCPU(b, c) - cpu0
			close(stop)
			applyRTT := <-rtts
			report(b, append(slices.Clone(planRTT), applyRTT...), cpu, time.Since(start))
			slices.Sort(planRTT)
			slices.Sort(applyRTT)
			b.ReportMetric(float64(planRTT[len(planRTT)*99/100])/1e6, "plan-p99-ms")
			b.ReportMetric(float64(applyRTT[len(applyRTT)*99/100])/1e6, "apply-p99-ms")
			b.ReportMetric(planned.Seconds(), "plan-s")
			b.ReportMetric(cpuPlan/benchKeys*1e6, "plan-cpu-µs/key")
			b.ReportMetric(applied.Seconds()/(float64(benchKeys)/20000), "apply/rate-time")
		}
	})
	b.Run("redis-cli-xargs-unlink", func(b *testing.B) {
		cli := testenv.LookPath(b, "apt-get install redis-tools", "redis-cli")
		for range b.N {
			b.StopTimer()
			srv := redistest.Standalone(b)
			c := srv.Client(b)
			seedBench(b, c)
			b.StartTimer()
			stop := make(chan struct{})
			rtts := watch(srv.Addr, stop)
			cpu0, start := redisCPU(b, c), time.Now()
			port := strconv.Itoa(srv.Port)
			sh := cli + " -p " + port + " --scan --pattern 'tmp:junk:*' | xargs " + cli + " -p " + port + " unlink > /dev/null"
			if out, err := exec.Command("sh", "-c", sh).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			cpu := redisCPU(b, c) - cpu0
			close(stop)
			if n := c.DBSize(ctx).Val(); n != 0 {
				b.Fatalf("%d keys left", n)
			}
			report(b, <-rtts, cpu, time.Since(start))
		}
	})
}
