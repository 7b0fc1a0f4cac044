package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/keyreg/keyreg/registry"
	"github.com/redis/go-redis/v9"
)

// env is what the cases run against.
type env struct {
	cfg           *config
	self          string // the bench binary, re-executed for the Go baselines
	tmp           string // scratch directory
	timeBin       string // GNU time, for peak RSS; "" to poll VmHWM
	logf          func(string, ...any)
	main          *server
	cluster       []*server // the three masters
	seeded        seedStats
	clusterSeeded seedStats
	rdb           string // the snapshot of main, once taken
}

// sample is one run of one case.
type sample struct {
	Wall      time.Duration `json:"wall_ns"`
	Keys      int64         `json:"keys"`
	ServerCPU float64       `json:"server_cpu_s"` // INFO cpu used_cpu_sys+used_cpu_user delta
	ClientCPU float64       `json:"client_cpu_s"` // rusage user+sys of the child
	MaxRSS    int64         `json:"client_max_rss_bytes"`
}

// caseDef is one measured case.
type caseDef struct {
	name, desc string
	run        func(ctx context.Context, e *env) (sample, error)
}

var caseDefs = map[string]caseDef{
	"scan": {"scan", "Go: SCAN COUNT 1000 alone (the floor)", func(ctx context.Context, e *env) (sample, error) {
		return e.baseline(ctx, "scan")
	}},
	"pipe1": {"pipe1", "Go: SCAN + 1 pipelined TYPE+PTTL round trip per batch", func(ctx context.Context, e *env) (sample, error) {
		return e.baseline(ctx, "pipe1")
	}},
	"pipe4": {"pipe4", "Go: SCAN + TYPE+PTTL, 4 pipelines in flight", func(ctx context.Context, e *env) (sample, error) {
		return e.baseline(ctx, "pipe4")
	}},
	"cli-scan": {"cli-scan", "redis-cli --scan (redis-cli 7.0 has no --count: SCAN's default COUNT 10)", func(ctx context.Context, e *env) (sample, error) {
		var lines lineCounter
		s, err := e.proc(ctx, []*server{e.main}, &lines, e.cfg.redisCLI, "-h", "127.0.0.1", "-p", strconv.Itoa(e.main.Port), "--scan")
		s.Keys = lines.n
		return s, err
	}},
	"cli-bigkeys": {"cli-bigkeys", "redis-cli --bigkeys", func(ctx context.Context, e *env) (sample, error) {
		var out bytes.Buffer
		s, err := e.proc(ctx, []*server{e.main}, &out, e.cfg.redisCLI, "-h", "127.0.0.1", "-p", strconv.Itoa(e.main.Port), "--bigkeys")
		if err != nil {
			return s, err
		}
		m := regexp.MustCompile(`Sampled (\d+) keys`).FindSubmatch(out.Bytes())
		if m == nil {
			return s, fmt.Errorf("redis-cli --bigkeys: no key count in its output")
		}
		s.Keys, _ = strconv.ParseInt(string(m[1]), 10, 64)
		return s, nil
	}},
	"audit": {"audit", "keyreg audit (default)", func(ctx context.Context, e *env) (sample, error) {
		return e.audit(ctx, e.main)
	}},
	"audit-lean": {"audit-lean", "keyreg audit with the registry's max_bytes, max_len and max_idle removed: TYPE+PTTL on every key, like pipe1 and pipe4", func(ctx context.Context, e *env) (sample, error) {
		return e.audit(ctx, e.main, "--registry", e.cfg.registryLean)
	}},
	"audit-idle": {"audit-idle", "keyreg audit with a blanket max_idle (keys-idle.yaml: OBJECT IDLETIME on every key)", func(ctx context.Context, e *env) (sample, error) {
		return e.audit(ctx, e.main, "--registry", e.cfg.registryIdle)
	}},
	"audit-memory": {"audit-memory", "keyreg audit --memory", func(ctx context.Context, e *env) (sample, error) {
		return e.audit(ctx, e.main, "--memory")
	}},
	"audit-compare": {"audit-compare", "the audit case run by the -compare binary", func(ctx context.Context, e *env) (sample, error) {
		return e.auditBin(ctx, e.cfg.compare, e.main)
	}},
	"audit-memory-compare": {"audit-memory-compare", "the audit-memory case run by the -compare binary", func(ctx context.Context, e *env) (sample, error) {
		return e.auditBin(ctx, e.cfg.compare, e.main, "--memory")
	}},
	"audit-validate": {"audit-validate", "keyreg audit --sample 2000000000 (every schema-bearing payload)", func(ctx context.Context, e *env) (sample, error) {
		return e.audit(ctx, e.main, "--sample", "2000000000")
	}},
	"check-rdb": {"check-rdb", "redis-check-rdb on a SAVE of the same keyspace (the snapshot floor: it reads every value)", func(ctx context.Context, e *env) (sample, error) {
		return e.checkRDB(ctx)
	}},
	"rdb": {"rdb", "keyreg audit --rdb on the same snapshot (default audit, no Redis connection)", func(ctx context.Context, e *env) (sample, error) {
		path, err := e.snapshot(ctx)
		if err != nil {
			return sample{}, err
		}
		return e.auditRun(ctx, e.cfg.keyreg, nil, "--rdb", path)
	}},
	"init": {"init", "keyreg init (read-only scan, inference, 20 sampled values per family), then checked: families, share of keys registered", func(ctx context.Context, e *env) (sample, error) {
		return e.initCase(ctx, e.main)
	}},
	"cluster-parallel": {"cluster-parallel", "keyreg audit on the 3-master Cluster (masters in parallel)", func(ctx context.Context, e *env) (sample, error) {
		return e.audit(ctx, e.cluster[0])
	}},
	"cluster-sequential": {"cluster-sequential", "keyreg audit --parallel 1 on the 3-master Cluster (one master after another)", func(ctx context.Context, e *env) (sample, error) {
		return e.audit(ctx, e.cluster[0], "--parallel", "1")
	}},
}

type lineCounter struct{ n int64 }

func (l *lineCounter) Write(p []byte) (int, error) {
	l.n += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// baseline runs a Go baseline as a child of the bench binary; extraEnv
// carries settings of the mode (the probe mode's, see costs.go).
func (e *env) baseline(ctx context.Context, mode string, extraEnv ...string) (sample, error) {
	var out bytes.Buffer
	env := append([]string{envChild + "=" + mode, envAddr + "=" + e.main.Addr}, extraEnv...)
	s, err := e.procEnv(ctx, []*server{e.main}, env, &out, e.self)
	if err != nil {
		return s, err
	}
	if _, err := fmt.Sscanf(out.String(), "keys %d", &s.Keys); err != nil {
		return s, fmt.Errorf("baseline %s: unexpected output %q", mode, out.String())
	}
	return s, nil
}

// audit runs the keyreg binary against srv and reads the key count from its
// JSON report.
func (e *env) audit(ctx context.Context, srv *server, extra ...string) (sample, error) {
	return e.auditBin(ctx, e.cfg.keyreg, srv, extra...)
}

// auditBin is audit with the keyreg binary bin.
func (e *env) auditBin(ctx context.Context, bin string, srv *server, extra ...string) (sample, error) {
	// --allow-touch: on redis before 7.2 the audit would otherwise sample
	// nothing and read no length on these throwaway primaries, and the
	// cases would stop measuring what they have always measured.
	args := append([]string{"--url", "redis://" + srv.Addr, "--allow-touch"}, extra...)
	servers := []*server{srv}
	if srv == e.cluster0() {
		servers = e.cluster
	}
	return e.auditRun(ctx, bin, servers, args...)
}

// auditRun runs keyreg audit (the binary bin) with the bench registry and
// args, measuring the CPU of servers meanwhile, and reads the key count
// from its JSON report.
func (e *env) auditRun(ctx context.Context, bin string, servers []*server, extra ...string) (sample, error) {
	var out bytes.Buffer
	args := append([]string{"audit", "--registry", e.cfg.registry, "--format", "json", "--fail-on", "never"}, extra...)
	s, err := e.proc(ctx, servers, &out, bin, args...)
	if err != nil {
		return s, err
	}
	var rep struct {
		Partial bool `json:"partial"`
		Scan    struct {
			Keys int64 `json:"keys"`
		} `json:"scan"`
		Totals struct {
			Keys int64 `json:"keys"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return s, fmt.Errorf("keyreg audit: reading its JSON report: %w", err)
	}
	if rep.Partial && !slices.Contains(extra, "--max-keys") {
		return s, fmt.Errorf("keyreg audit: the report is partial")
	}
	s.Keys = rep.Totals.Keys
	return s, nil
}

// snapshot SAVEs the main server once and returns the path of its RDB
// file; the audit cases write nothing, so one file serves every round.
func (e *env) snapshot(ctx context.Context) (string, error) {
	if e.rdb != "" {
		return e.rdb, nil
	}
	// SAVE of 10M keys takes longer than go-redis' default 3 s read timeout.
	cl := redis.NewClient(&redis.Options{Addr: e.main.Addr, ReadTimeout: 10 * time.Minute})
	defer cl.Close()
	if err := cl.Do(ctx, "SAVE").Err(); err != nil {
		return "", fmt.Errorf("SAVE: %w", err)
	}
	path := filepath.Join(e.main.Dir, "dump.rdb")
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	e.logf("snapshot: %s, %.1f MB", path, float64(st.Size())/1e6)
	e.rdb = path
	return path, nil
}

// checkRDB runs redis-check-rdb on the snapshot and reads its key count.
func (e *env) checkRDB(ctx context.Context) (sample, error) {
	path, err := e.snapshot(ctx)
	if err != nil {
		return sample{}, err
	}
	bin, err := exec.LookPath(e.cfg.redisCheckRDB)
	if err != nil {
		return sample{}, fmt.Errorf("%s not found (it comes with redis-server)", e.cfg.redisCheckRDB)
	}
	var out bytes.Buffer
	s, err := e.proc(ctx, nil, &out, bin, path)
	if err != nil {
		return s, err
	}
	m := regexp.MustCompile(`(\d+) keys read`).FindSubmatch(out.Bytes())
	if m == nil || !bytes.Contains(out.Bytes(), []byte("RDB looks OK")) {
		return s, fmt.Errorf("redis-check-rdb: unexpected output %q", out.String())
	}
	s.Keys, _ = strconv.ParseInt(string(m[1]), 10, 64)
	return s, nil
}

// initCase runs keyreg init against srv, then audits srv with what it
// wrote and logs the bar of the init issue: the number of families, the
// share of keys registered and the type of the session id placeholder.
func (e *env) initCase(ctx context.Context, srv *server) (sample, error) {
	out := filepath.Join(e.tmp, "init", "keys.yaml")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return sample{}, err
	}
	s, err := e.proc(ctx, []*server{srv}, io.Discard, e.cfg.keyreg, "init", "--url", "redis://"+srv.Addr, "--out", out, "--force", "--allow-touch")
	if err != nil {
		return s, err
	}
	reg, err := registry.LoadFile(out)
	if err != nil {
		return s, fmt.Errorf("keyreg init wrote a registry that does not load: %w", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return s, err
	}
	if m := regexp.MustCompile(`from a scan of (\d+) keys`).FindSubmatch(data); m != nil {
		s.Keys, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	var rep bytes.Buffer
	if _, err := e.proc(ctx, []*server{srv}, &rep, e.cfg.keyreg, "audit", "--url", "redis://"+srv.Addr, "--registry", out, "--format", "json", "--fail-on", "never", "--sample", "0"); err != nil {
		return s, err
	}
	var r struct {
		Totals struct {
			Keys, Registered int64
		} `json:"totals"`
		Families []struct {
			Keys int64 `json:"keys"`
		} `json:"families"`
	}
	if err := json.Unmarshal(rep.Bytes(), &r); err != nil {
		return s, err
	}
	session := "none"
	if f := reg.Matcher().Match("v2:user:session:0b6f1c1e-8a9d-4c47-9f5e-2b1d7a3c9e10"); f != nil {
		session = f.Name + " " + f.Pattern.Source
	}
	// The bar of issue 22: families that hold keys, per true shape of the
	// seeded keyspace (each kind but the junk, each junk prefix and each
	// hostile shape; the one-off keys are none).
	holding := 0
	for _, f := range r.Families {
		if f.Keys > 0 {
			holding++
		}
	}
	shapes := int(numKinds) - 1 + len(junkPrefixes) + len(hostileShapes)
	e.logf("init: %d families (%d declared by hand, the rest from presets), %d of %d keys registered (%.2f%%); a session key goes to %s; %d families hold keys of the %d true shapes: %.2f per shape",
		len(reg.Families), countHand(reg), r.Totals.Registered, r.Totals.Keys, 100*float64(r.Totals.Registered)/float64(max(1, r.Totals.Keys)), session,
		holding, shapes, float64(holding)/float64(shapes))
	return s, nil
}

func countHand(reg *registry.Registry) int {
	n := 0
	for _, f := range reg.Families {
		if !f.FromPreset() {
			n++
		}
	}
	return n
}

func (e *env) cluster0() *server {
	if len(e.cluster) == 0 {
		return nil
	}
	return e.cluster[0]
}

func (e *env) proc(ctx context.Context, servers []*server, stdout io.Writer, bin string, args ...string) (sample, error) {
	return e.procEnv(ctx, servers, nil, stdout, bin, args...)
}

// procEnv runs one child process and measures its wall time, rusage and the
// CPU time the servers spent meanwhile.
func (e *env) procEnv(ctx context.Context, servers []*server, extraEnv []string, stdout io.Writer, bin string, args ...string) (sample, error) {
	var s sample
	before, err := serversCPU(ctx, servers)
	if err != nil {
		return s, err
	}
	name, argv := bin, args
	rssFile := ""
	if e.timeBin != "" {
		// GNU time forks (a real fork of a ~2 MiB process) and reports the
		// command's own peak RSS; see peakRSSMethod.
		rssFile = filepath.Join(e.tmp, "rss")
		name, argv = e.timeBin, append([]string{"-f", "%M", "-o", rssFile, bin}, args...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Env = append(os.Environ(), extraEnv...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return s, err
	}
	var hwm pollHWM
	if rssFile == "" {
		hwm.start(cmd.Process.Pid)
	}
	err = cmd.Wait()
	s.Wall = time.Since(start)
	polled := hwm.stop()
	if err != nil {
		return s, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	after, err := serversCPU(ctx, servers)
	if err != nil {
		return s, err
	}
	s.ServerCPU = after - before
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		// With GNU time in between, this includes the command (time waits
		// for it) plus time's own negligible CPU.
		s.ClientCPU = tv(ru.Utime) + tv(ru.Stime)
	}
	if rssFile != "" {
		b, err := os.ReadFile(rssFile)
		if err != nil {
			return s, fmt.Errorf("reading the peak RSS from time: %w", err)
		}
		lines := strings.Fields(string(b))
		kb, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		if err != nil {
			return s, fmt.Errorf("time -f %%M printed %q", b)
		}
		s.MaxRSS = kb * 1024
	} else {
		s.MaxRSS = polled
	}
	return s, nil
}

// peakRSSMethod explains how MaxRSS is measured. The rusage of a child
// started by os/exec is no good: Go starts children with vfork semantics
// (CLONE_VM), and on exec Linux folds the old mm's high-water mark, which is
// the bench's own, into the child's ru_maxrss. GNU time forks for real from
// a small process, so its %M is the command's own peak; without it the bench
// polls VmHWM in /proc/<pid>/status every 5 ms, a lower bound that can miss
// the last few milliseconds.
func peakRSSMethod(timeBin string) string {
	if timeBin != "" {
		return "GNU time %M (" + timeBin + ")"
	}
	return "VmHWM polled every 5 ms (GNU time not found)"
}

// findGNUTime returns the path of GNU time, or "" when it is missing or not
// GNU's (BusyBox and BSD time lack -f/-o).
func findGNUTime() string {
	for _, p := range []string{"/usr/bin/time", "/bin/time"} {
		if exec.Command(p, "-f", "%M", "-o", os.DevNull, "true").Run() == nil {
			return p
		}
	}
	return ""
}

// pollHWM reads VmHWM of a process every 5 ms until stopped.
type pollHWM struct {
	done chan struct{}
	res  chan int64
}

func (p *pollHWM) start(pid int) {
	p.done, p.res = make(chan struct{}), make(chan int64, 1)
	go func() {
		var peak int64
		path := fmt.Sprintf("/proc/%d/status", pid)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if b, err := os.ReadFile(path); err == nil {
				for _, line := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
						var kb int64
						fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
						peak = max(peak, kb*1024)
					}
				}
			}
			select {
			case <-p.done:
				p.res <- peak
				return
			case <-t.C:
			}
		}
	}()
}

func (p *pollHWM) stop() int64 {
	if p.done == nil {
		return 0
	}
	close(p.done)
	return <-p.res
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// serversCPU sums used_cpu_sys and used_cpu_user of INFO cpu.
func serversCPU(ctx context.Context, servers []*server) (float64, error) {
	var sum float64
	for _, s := range servers {
		c := newClient(s.Addr, 1)
		info, err := c.Info(ctx, "cpu").Result()
		_ = c.Close()
		if err != nil {
			return 0, fmt.Errorf("INFO cpu on %s: %w", s.Addr, err)
		}
		for _, line := range strings.Split(info, "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
				f, _ := strconv.ParseFloat(v, 64)
				sum += f
			}
		}
	}
	return sum, nil
}

// measure runs the round-robin cases and the production-safety case.
func measure(ctx context.Context, e *env) (*result, error) {
	res := newResult(e)
	var rr []string
	for _, name := range e.cfg.cases {
		if name != "rate" && name != "costs" {
			rr = append(rr, name)
		}
	}
	byName := map[string]*caseResult{}
	for _, name := range rr {
		cr := &caseResult{Name: name, Desc: caseDefs[name].desc}
		byName[name] = cr
		res.Cases = append(res.Cases, cr)
	}
	for round := range e.cfg.rounds {
		// Rotate the order so that no case always runs first or right
		// after the same neighbour.
		for j := range rr {
			name := rr[(j+round)%len(rr)]
			s, err := caseDefs[name].run(ctx, e)
			if err != nil {
				return res, fmt.Errorf("round %d, case %s: %w", round+1, name, err)
			}
			e.logf("round %d/%d %-18s %8d keys %9.3fs  %10.0f keys/s  redis %.2fs  client %.2fs  rss %.1f MiB",
				round+1, e.cfg.rounds, name, s.Keys, s.Wall.Seconds(), float64(s.Keys)/s.Wall.Seconds(), s.ServerCPU, s.ClientCPU, float64(s.MaxRSS)/(1<<20))
			byName[name].Samples = append(byName[name].Samples, s)
		}
	}
	for _, cr := range res.Cases {
		cr.summarize()
	}
	if contains(e.cfg.cases, "rate") {
		sf, err := e.safety(ctx)
		if err != nil {
			return res, fmt.Errorf("case rate: %w", err)
		}
		res.Safety = sf
	}
	if contains(e.cfg.cases, "costs") {
		cs, err := e.costs(ctx)
		if err != nil {
			return res, fmt.Errorf("case costs: %w", err)
		}
		res.Costs = cs
	}
	res.finish()
	return res, nil
}

// safety measures keyreg audit --rate: the share of one core the server
// spends on it, and the latency a concurrent PING client sees, against the
// same client on an idle server.
func (e *env) safety(ctx context.Context) (*safetyResult, error) {
	sf := &safetyResult{Rate: e.cfg.rate, MaxKeys: e.cfg.rateKeys, PingInterval: "1ms"}
	idleWindow := 3 * time.Second
	e.logf("safety: %s of PING against the idle server", idleWindow)
	before, err := serversCPU(ctx, []*server{e.main})
	if err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	idleDone := make(chan pingStats, 1)
	go func() { idleDone <- pingLoop(e.main.Addr, stop) }()
	time.Sleep(idleWindow)
	close(stop)
	idle := <-idleDone
	after, err := serversCPU(ctx, []*server{e.main})
	if err != nil {
		return nil, err
	}
	if idle.err != nil {
		return nil, idle.err
	}
	sf.IdleCPUShare = (after - before) / idleWindow.Seconds()
	sf.IdlePings, sf.IdleP50ms, sf.IdleP99ms, sf.IdleMaxms = idle.summary()

	args := []string{"--rate", strconv.Itoa(e.cfg.rate)}
	if e.cfg.rateKeys > 0 {
		args = append(args, "--max-keys", strconv.Itoa(e.cfg.rateKeys))
	}
	e.logf("safety: keyreg audit %s with PING running", strings.Join(args, " "))
	stop = make(chan struct{})
	busyDone := make(chan pingStats, 1)
	go func() { busyDone <- pingLoop(e.main.Addr, stop) }()
	s, err := e.audit(ctx, e.main, args...)
	close(stop)
	busy := <-busyDone
	if err != nil {
		return nil, err
	}
	if busy.err != nil {
		return nil, busy.err
	}
	sf.Keys, sf.Wall, sf.ServerCPU, sf.ClientCPU = s.Keys, s.Wall.Seconds(), s.ServerCPU, s.ClientCPU
	sf.KeysPerSec = float64(s.Keys) / s.Wall.Seconds()
	sf.CPUShare = s.ServerCPU / s.Wall.Seconds()
	sf.Pings, sf.P50ms, sf.P99ms, sf.Maxms = busy.summary()
	e.logf("safety: %d keys in %.2fs, redis CPU share %.1f%% (idle+ping %.1f%%), PING p99 %.3f ms (idle %.3f ms)",
		sf.Keys, sf.Wall, 100*sf.CPUShare, 100*sf.IdleCPUShare, sf.P99ms, sf.IdleP99ms)
	return sf, nil
}

type pingStats struct {
	lat []time.Duration
	err error
}

// maxPings bounds the latencies kept by one ping loop (about 10 minutes at
// one PING per millisecond).
const maxPings = 600_000

// pingLoop sends an inline PING on one raw connection about every
// millisecond until stop is closed, and records each round-trip time.
func pingLoop(addr string, stop <-chan struct{}) pingStats {
	var ps pingStats
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		ps.err = err
		return ps
	}
	defer c.Close()
	r := bufio.NewReader(c)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for len(ps.lat) < maxPings {
		select {
		case <-stop:
			return ps
		case <-tick.C:
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		t := time.Now()
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			ps.err = err
			return ps
		}
		line, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "+PONG") {
			ps.err = fmt.Errorf("ping: %q %v", line, err)
			return ps
		}
		ps.lat = append(ps.lat, time.Since(t))
	}
	<-stop
	return ps
}

func (p pingStats) summary() (n int, p50, p99, maxv float64) {
	if len(p.lat) == 0 {
		return 0, 0, 0, 0
	}
	l := slices.Clone(p.lat)
	slices.Sort(l)
	q := func(f float64) float64 { return float64(l[int(f*float64(len(l)-1))]) / 1e6 }
	return len(l), q(0.5), q(0.99), float64(l[len(l)-1]) / 1e6
}
