// Command bench measures keyreg audit against a real redis-server and the
// baselines it has to beat. It starts its own servers on free loopback
// ports, seeds a deterministic, realistic keyspace, runs every case
// round-robin for several rounds and prints a markdown table (or JSON).
//
//	go run ./bench                    # 1,000,000 keys, 5 rounds
//	go run ./bench -n 10000 -rounds 1 # a quick smoke run
//	go run ./bench -cluster           # add the 3-master Cluster cases
//
// See docs/benchmarks.md for what each case measures and the latest figures.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

func main() {
	if handled, err := childMain(os.Stdout); handled {
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench baseline:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench: error:", err)
		var ue usageErr
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageErr struct{ error }

// config is the parsed command line.
type config struct {
	n, clusterN   int
	rounds        int
	cases         []string
	cluster       bool
	jsonOut       bool
	keep          bool
	redisServer   string
	redisCLI      string
	redisCheckRDB string
	keyreg        string
	compare       string // -compare: a second keyreg binary
	registry      string
	registryIdle  string
	registryLean  string // generated: -registry without max_bytes, max_len and max_idle
	rate          int
	rateKeys      int
	seed          uint64
	subscribers   int // -subscribers: classic and sharded channels held subscribed during the run
	args          []string
}

// allCases lists every case in table order.
var allCases = []string{
	"scan", "pipe1", "pipe4", "cli-scan", "cli-bigkeys",
	"audit", "audit-lean", "audit-idle", "audit-memory", "audit-validate", "check-rdb", "rdb", "init", "rate", "costs",
	"cluster-parallel", "cluster-sequential",
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{args: args}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.n, "n", 1_000_000, "number of keys to seed")
	fs.IntVar(&c.clusterN, "cluster-n", 0, "number of keys seeded into the cluster (0: same as -n)")
	fs.IntVar(&c.rounds, "rounds", 5, "rounds; each round runs every case once, round-robin")
	cases := fs.String("cases", "", "comma-separated cases (default: all standalone cases, plus the cluster cases with -cluster): "+strings.Join(allCases, ","))
	fs.BoolVar(&c.cluster, "cluster", false, "also start a 3-master Cluster and run the cluster cases")
	fs.BoolVar(&c.jsonOut, "json", false, "print JSON instead of markdown")
	fs.BoolVar(&c.keep, "keep", false, "leave the servers running (and their directory) when done")
	fs.StringVar(&c.redisServer, "redis-server", "redis-server", "redis-server binary")
	fs.StringVar(&c.redisCLI, "redis-cli", "redis-cli", "redis-cli binary")
	fs.StringVar(&c.redisCheckRDB, "redis-check-rdb", "redis-check-rdb", "redis-check-rdb binary (the check-rdb case)")
	fs.StringVar(&c.keyreg, "keyreg", "", "prebuilt keyreg binary (default: go build ./cmd/keyreg into a temp dir)")
	fs.StringVar(&c.compare, "compare", "", "a second keyreg binary, such as a build of the previous commit: adds the cases audit-compare and audit-memory-compare, which it runs, round-robin with the others")
	fs.StringVar(&c.registry, "registry", "", "registry for the audit cases (default: bench/keys.yaml of the module)")
	fs.StringVar(&c.registryIdle, "registry-idle", "", "registry of the audit-idle case (default: keys-idle.yaml next to -registry)")
	fs.IntVar(&c.rate, "rate", 50000, "--rate of the production-safety case")
	fs.IntVar(&c.rateKeys, "rate-keys", 500_000, "--max-keys of the production-safety case (0: whole keyspace)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the generated keyspace")
	fs.IntVar(&c.subscribers, "subscribers", 0, "hold this many classic and this many sharded channels subscribed on the standalone server during the run, for the channel audit to read")
	if err := fs.Parse(args); err != nil {
		return nil, usageErr{err}
	}
	if fs.NArg() > 0 {
		return nil, usageErr{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	if c.subscribers < 0 || c.subscribers > 1_000_000 {
		return nil, usageErr{errors.New("-subscribers must be between 0 and 1000000")}
	}
	if c.n < 1 || c.rounds < 1 || c.rate < 1 {
		return nil, usageErr{errors.New("-n, -rounds and -rate must be at least 1")}
	}
	if c.clusterN == 0 {
		c.clusterN = c.n
	}
	if *cases == "" {
		for _, name := range allCases {
			if c.cluster || !strings.HasPrefix(name, "cluster-") {
				c.cases = append(c.cases, name)
			}
		}
	} else {
		for _, name := range strings.Split(*cases, ",") {
			name = strings.TrimSpace(name)
			if !contains(allCases, name) {
				return nil, usageErr{fmt.Errorf("unknown case %q (want %s)", name, strings.Join(allCases, ", "))}
			}
			if strings.HasPrefix(name, "cluster-") {
				c.cluster = true
			}
			c.cases = append(c.cases, name)
		}
	}
	if c.compare != "" {
		for _, name := range []string{"audit", "audit-memory"} {
			if contains(c.cases, name) {
				c.cases = append(c.cases, name+"-compare")
			}
		}
	}
	return c, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// run is the whole benchmark; main and the test call it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (*result, error) {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return nil, err
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", a...) }
	for _, bin := range []*string{&cfg.redisServer, &cfg.redisCLI} {
		p, err := exec.LookPath(*bin)
		if err != nil {
			return nil, fmt.Errorf("%s not found; install redis (apt-get install redis-server redis-tools) or pass its path", *bin)
		}
		*bin = p
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "keyreg-bench-")
	if err != nil {
		return nil, err
	}
	p := &procs{bin: cfg.redisServer, root: tmp}
	defer func() {
		if cfg.keep {
			logf("-keep: servers left running; files in %s", tmp)
			for _, s := range p.servers {
				logf("  redis://%s (pid %d)", s.Addr, s.cmd.Process.Pid)
			}
			return
		}
		p.stopAll()
		_ = os.RemoveAll(tmp)
	}()

	if cfg.registry == "" || cfg.keyreg == "" {
		root, err := moduleRoot()
		if err != nil {
			return nil, err
		}
		if cfg.registry == "" {
			cfg.registry = filepath.Join(root, "bench", "keys.yaml")
		}
		if cfg.keyreg == "" {
			cfg.keyreg = filepath.Join(tmp, "keyreg")
			logf("building keyreg")
			b := exec.CommandContext(ctx, "go", "build", "-o", cfg.keyreg, "./cmd/keyreg")
			b.Dir = root
			var out bytes.Buffer
			b.Stdout, b.Stderr = &out, &out
			if err := b.Run(); err != nil {
				return nil, fmt.Errorf("go build ./cmd/keyreg: %v\n%s", err, out.String())
			}
		}
	}
	if cfg.registryIdle == "" {
		cfg.registryIdle = filepath.Join(filepath.Dir(cfg.registry), "keys-idle.yaml")
	}

	if cfg.registryLean, err = leanRegistry(cfg.registry, filepath.Join(tmp, "lean")); err != nil {
		return nil, err
	}

	env := &env{cfg: cfg, self: self, logf: logf, tmp: tmp, timeBin: findGNUTime()}
	logf("peak RSS: %s", peakRSSMethod(env.timeBin))
	logf("starting redis-server")
	env.main, err = p.start("standalone", false, 15*time.Second)
	if err != nil {
		return nil, err
	}
	logf("seeding %d keys into %s", cfg.n, env.main.Addr)
	st, err := seed([]string{env.main.Addr}, cfg.n, cfg.seed)
	if err != nil {
		return nil, err
	}
	env.seeded = st
	if cfg.subscribers > 0 {
		logf("subscribing %d classic and %d sharded channels", cfg.subscribers, cfg.subscribers)
		done, err := holdSubscribers(ctx, env.main.Addr, cfg.subscribers)
		if err != nil {
			return nil, err
		}
		defer done()
	}
	logf("seeded %d keys (%d commands) in %s (%.0f keys/s)", st.Keys, st.Commands, st.Duration.Round(time.Millisecond), float64(st.Keys)/st.Duration.Seconds())
	if cfg.cluster {
		logf("starting a 3-master cluster")
		env.cluster, err = p.startCluster(ctx)
		if err != nil {
			return nil, err
		}
		addrs := []string{env.cluster[0].Addr, env.cluster[1].Addr, env.cluster[2].Addr}
		logf("seeding %d keys into the cluster", cfg.clusterN)
		cst, err := seed(addrs, cfg.clusterN, cfg.seed)
		if err != nil {
			return nil, err
		}
		env.clusterSeeded = cst
		logf("seeded the cluster in %s", cst.Duration.Round(time.Millisecond))
	}
	res, err := measure(ctx, env)
	if err != nil {
		return res, err
	}
	if cfg.jsonOut {
		err = writeJSON(stdout, res)
	} else {
		err = writeMarkdown(stdout, res)
	}
	return res, err
}

// moduleRoot is the directory of the go.mod of the working directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the keyreg module; run from the repository or pass -keyreg and -registry")
	}
	return filepath.Dir(mod), nil
}

// leanRegistry writes to dir a copy of the registry at src without its
// max_bytes, max_len and max_idle lines, with a copy of the schemas next to
// src in dir/schemas (a link would leave the registry's tree, which the
// loader refuses), and returns the copy's path. Auditing with it, the
// probe of every key is TYPE and PTTL alone: the same commands as the
// hand-written pipelines.
func leanRegistry(src, dir string) (string, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	limit := regexp.MustCompile(`(?m)^[ \t]+max_(bytes|len|idle):.*\n`)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	schemas := os.DirFS(filepath.Join(filepath.Dir(src), "schemas"))
	if err := os.CopyFS(filepath.Join(dir, "schemas"), schemas); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "keys-lean.yaml")
	return out, os.WriteFile(out, limit.ReplaceAll(b, nil), 0o644)
}
