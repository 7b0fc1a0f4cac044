// Package redistest starts real redis-server processes for tests.
//
// Every server listens on a free loopback port (127.0.0.1), keeps its files in
// t.TempDir(), persists nothing (--save "" --appendonly no) and is killed by
// t.Cleanup. Helpers cover a standalone server, a server with a TLS port
// (NewCerts makes a CA and certificates for mutual TLS), a 3-master cluster
// (with or without one replica per master), a master watched by one or more
// sentinels (optionally behind a password, or over TLS), ACL users, and
// faults: a server paused with SIGSTOP, and the bytes it left unread.
//
// When redis-server is not on PATH the helpers skip the test, except when the
// environment variable CI is "true": there a missing server fails the test, so
// CI never passes by skipping.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/keyreg/keyreg/internal/testenv"
)

// startTimeout bounds how long a single server may take to answer PING.
const startTimeout = 10 * time.Second

// RedisServerPath returns the path of redis-server found on PATH. When it is
// missing the test is skipped with an installation hint, or failed when the
// environment variable CI is "true".
func RedisServerPath(t testing.TB) string {
	t.Helper()
	return testenv.LookPath(t, "redis-server not found on PATH; install it (apt-get install redis-server, brew install redis)", "redis-server")
}

// Server is one redis-server process started by this package.
type Server struct {
	// Addr is the "127.0.0.1:port" address the server listens on.
	Addr string
	// Port is the TCP port the server listens on.
	Port int
	// TLSPort and TLSAddr are the TLS port and address of a server started
	// by StandaloneTLS; 0 and "" otherwise.
	TLSPort int
	TLSAddr string

	bin  string
	dir  string
	args []string // extra arguments after the generated ones
	conf string   // config file passed as the first argument, if any
	mode string   // "" or "--sentinel"

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// URL returns the redis:// URL of the server (no credentials, DB 0).
func (s *Server) URL() string { return "redis://" + s.Addr }

// Dir returns the working directory of the server (inside t.TempDir()).
func (s *Server) Dir() string { return s.dir }

// Stop kills the server and waits for the process to exit. Stopping a stopped
// server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Restart stops the server and starts it again on the same port and
// directory, then waits until it answers PING.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		t.Fatalf("redistest: restarting %s: %v", s.Addr, err)
	}
}

// Client returns a go-redis client for the server with the quiet settings the
// harness uses; it is closed by t.Cleanup.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := newClient(s.Addr)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// quietOnce silences go-redis' own logging (it logs failed dials to stderr,
// which clutters test output after a server is stopped on purpose).
var quietOnce sync.Once

type nopLogger struct{}

func (nopLogger) Printf(context.Context, string, ...any) {}

func newClient(addr string) *redis.Client {
	quietOnce.Do(func() { redis.SetLogger(nopLogger{}) })
	return redis.NewClient(&redis.Options{
		Addr:                     addr,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		DialTimeout:              2 * time.Second,
		ReadTimeout:              5 * time.Second,
		MaxRetries:               -1,
	})
}

// start launches the process and waits for PING. It is used for the first
// start and for restarts.
func (s *Server) start() error {
	var args []string
	if s.conf != "" {
		args = append(args, s.conf)
	}
	args = append(args,
		"--port", strconv.Itoa(s.Port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--protected-mode", "no",
		"--logfile", "",
	)
	if s.mode == "" {
		// Replicas sync right away instead of waiting the default 5s for
		// more replicas to join a diskless transfer.
		args = append(args, "--enable-debug-command", "no", "--repl-diskless-sync-delay", "0")
	}
	args = append(args, s.args...)
	if s.mode != "" {
		args = append(args, s.mode)
	}
	logPath := filepath.Join(s.dir, "redis.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening log: %w", err)
	}
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("starting redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()

	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-done:
			s.mu.Lock()
			s.cmd = nil
			s.mu.Unlock()
			return fmt.Errorf("redis-server exited during startup: %s", LogTail(logPath))
		default:
		}
		if pid, ok := serverPID(s.Addr); ok {
			if pid == cmd.Process.Pid {
				return nil
			}
			// Another server (from a test binary running in parallel)
			// took the port between FreePort and bind; ours will exit.
			// Never accept its replies as our own.
			s.Stop()
			return fmt.Errorf("port %d answered for process %d, not %d: Address already in use", s.Port, pid, cmd.Process.Pid)
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("redis-server did not answer PING within %s: %s", startTimeout, LogTail(logPath))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Ping sends an inline PING and reports whether +PONG came back. It avoids
// go-redis so that polling a starting server stays cheap and silent.
func Ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// serverPID asks the server at addr for INFO server with an inline command
// and returns its process_id, so start can tell its own child from a server
// another test binary started on the same port.
func serverPID(addr string) (int, bool) {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return 0, false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("INFO server\r\n")); err != nil {
		return 0, false
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		return 0, false // -LOADING, -NOAUTH or not a server yet
	}
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil || n < 0 || n > 1<<16 {
		return 0, false
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			pid, err := strconv.Atoi(v)
			return pid, err == nil
		}
	}
	return 0, false
}

// LogTail returns the last lines of a log file for error messages.
func LogTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, " | ")
}

// portMu serializes port selection inside one test binary so two helpers never
// pick the same port between "close" and "bind".
var portMu sync.Mutex

// FreePort returns a loopback port that is free right now; when bus is true
// port+10000 (the cluster bus port) is free too.
func FreePort(bus bool) (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("finding a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !bus {
			return port, nil
		}
		if port+10000 > 65535 {
			continue
		}
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		if err != nil {
			continue
		}
		_ = l2.Close()
		return port, nil
	}
	return 0, errors.New("no free port pair (port, port+10000) found")
}

// newServer allocates a port and directory and starts the process, retrying
// with a new port when the chosen one was taken in the meantime. It fails the
// test on error.
func newServer(t testing.TB, bus bool, mode string, mkConf func(dir string, port int) (string, error), extraArgs ...string) *Server {
	t.Helper()
	bin := RedisServerPath(t)
	s, err := tryStart(t, bin, bus, mode, mkConf, extraArgs)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return s
}

// tryStart is newServer without t.Fatal, so it can run in goroutines.
func tryStart(t testing.TB, bin string, bus bool, mode string, mkConf func(dir string, port int) (string, error), extraArgs []string) (*Server, error) {
	var lastErr error
	for range 5 {
		portMu.Lock()
		port, err := FreePort(bus)
		portMu.Unlock()
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(t.TempDir(), "redis-"+strconv.Itoa(port))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("creating server directory: %w", err)
		}
		s := &Server{
			Addr: "127.0.0.1:" + strconv.Itoa(port),
			Port: port,
			bin:  bin,
			dir:  dir,
			args: extraArgs,
			mode: mode,
		}
		if mkConf != nil {
			conf, err := mkConf(dir, port)
			if err != nil {
				return nil, fmt.Errorf("writing config: %w", err)
			}
			s.conf = conf
		}
		if err := s.start(); err != nil {
			lastErr = err
			if strings.Contains(err.Error(), "Address already in use") {
				continue
			}
			return nil, err
		}
		t.Cleanup(s.Stop)
		return s, nil
	}
	return nil, fmt.Errorf("no usable port after 5 attempts: %w", lastErr)
}

// Standalone starts one redis-server (no cluster, no persistence) and returns
// it once it answers PING. extraArgs are appended to the command line, for
// example "--maxmemory-policy", "allkeys-lfu".
func Standalone(t testing.TB, extraArgs ...string) *Server {
	t.Helper()
	return newServer(t, false, "", nil, extraArgs...)
}

// ClusterSrv is a Redis Cluster started by Cluster or ClusterWithReplicas.
type ClusterSrv struct {
	// Addrs holds the address of every node, masters first.
	Addrs []string
	// Nodes holds every node, masters first (Nodes[0..2] are the masters).
	Nodes []*Server
	// Masters holds the three masters; Masters[i] serves the i-th third of
	// the slot space.
	Masters []*Server
	// Replicas holds the replicas; Replicas[i] replicates Masters[i]. It is
	// empty for Cluster.
	Replicas []*Server
}

// URL returns a redis:// URL of the first master, usable as a cluster seed.
func (c *ClusterSrv) URL() string { return c.Nodes[0].URL() }

// SlotRanges are the slots of the three masters of a cluster that
// FormCluster forms: Masters[i] serves SlotRanges[i].
var SlotRanges = [3][2]int64{{0, 5460}, {5461, 10922}, {10923, 16383}}

// Cluster starts a Redis Cluster of three masters without replicas and waits
// until every node reports cluster_state:ok and knows the full slot map.
func Cluster(t testing.TB) *ClusterSrv {
	t.Helper()
	return startCluster(t, false)
}

// ClusterWithReplicas starts a Redis Cluster of three masters with one replica
// each, and waits until every replica's link to its master is up and every
// node sees all six nodes in their roles.
func ClusterWithReplicas(t testing.TB) *ClusterSrv {
	t.Helper()
	return startCluster(t, true)
}

// ClusterArgs are the redis-server arguments of a node FormCluster can
// join into a cluster.
func ClusterArgs() []string {
	return []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", "3000",
		"--cluster-require-full-coverage", "yes",
	}
}

func startCluster(t testing.TB, withReplicas bool) *ClusterSrv {
	t.Helper()
	n := 3
	if withReplicas {
		n = 6
	}
	cs := &ClusterSrv{}
	bin := RedisServerPath(t)
	servers := make([]*Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { servers[i], errs[i] = tryStart(t, bin, true, "", nil, ClusterArgs()) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("redistest: starting cluster nodes: %v", err)
	}
	cs.Nodes = servers
	cs.Masters = servers[:3]
	if withReplicas {
		cs.Replicas = servers[3:]
	}
	for _, s := range servers {
		cs.Addrs = append(cs.Addrs, s.Addr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := FormCluster(ctx, cs.Addrs); err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return cs
}

// FormCluster joins servers started with ClusterArgs, at addrs
// ("127.0.0.1:port"), into one Redis Cluster: the first three become
// masters serving SlotRanges, and each further node i a replica of master
// i-3. It waits until every node reports cluster_state:ok and sees every
// node in its role, and every replica is in sync, or ctx ends. It returns
// an error instead of failing a test, so that a program (the bench) forms
// its cluster with it too.
func FormCluster(ctx context.Context, addrs []string) error {
	n := len(addrs)
	if n != 3 && n != 6 {
		return fmt.Errorf("cluster of %d nodes: want 3 masters, or 3 masters and 3 replicas", n)
	}
	ports := make([]int, n)
	clients := make([]*redis.Client, n)
	for i, addr := range addrs {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return err
		}
		if ports[i], err = strconv.Atoi(port); err != nil {
			return fmt.Errorf("cluster node %s: %w", addr, err)
		}
		clients[i] = newClient(addr)
		defer clients[i].Close()
	}
	ids := make([]string, n)
	for i, c := range clients {
		id, err := c.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			return fmt.Errorf("cluster myid on %s: %w", addrs[i], err)
		}
		ids[i] = id
		// Distinct config epochs avoid the epoch-collision dance on startup.
		if err := c.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("cluster set-config-epoch on %s: %w", addrs[i], err)
		}
	}
	for i := range 3 {
		r := SlotRanges[i]
		if err := clients[i].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", r[0], r[1]).Err(); err != nil {
			return fmt.Errorf("cluster addslotsrange on %s: %w", addrs[i], err)
		}
	}
	for i := 1; i < n; i++ {
		if err := clients[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", ports[i]).Err(); err != nil {
			return fmt.Errorf("cluster meet %s: %w", addrs[i], err)
		}
	}
	for i := 3; i < n; i++ {
		master := ids[i-3]
		// The replica must know the master's node ID before REPLICATE.
		if err := waitUntil(ctx, "replica "+addrs[i]+" to learn its master", func() (bool, error) {
			nodes, err := clients[i].ClusterNodes(ctx).Result()
			return err == nil && strings.Contains(nodes, master), err
		}); err != nil {
			return err
		}
		if err := clients[i].Do(ctx, "CLUSTER", "REPLICATE", master).Err(); err != nil {
			return fmt.Errorf("cluster replicate on %s: %w", addrs[i], err)
		}
	}
	for i, c := range clients {
		if err := waitUntil(ctx, "cluster_state:ok on "+addrs[i], func() (bool, error) {
			info, err := c.ClusterInfo(ctx).Result()
			if err != nil {
				return false, err
			}
			if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_assigned:16384") {
				return false, nil
			}
			nodes, err := c.ClusterNodes(ctx).Result()
			if err != nil {
				return false, err
			}
			return countRoles(nodes, "master") == 3 && countRoles(nodes, "slave") == n-3, nil
		}); err != nil {
			return err
		}
	}
	for i := 3; i < n; i++ {
		c := clients[i]
		if err := waitUntil(ctx, "replica "+addrs[i]+" in sync", func() (bool, error) {
			info, err := c.Info(ctx, "replication").Result()
			return err == nil && strings.Contains(info, "master_link_status:up") &&
				strings.Contains(info, "master_sync_in_progress:0"), err
		}); err != nil {
			return err
		}
	}
	return nil
}

// countRoles counts CLUSTER NODES lines whose flags contain role and no
// failure flag.
func countRoles(nodes, role string) int {
	n := 0
	for line := range strings.SplitSeq(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		flags := "," + f[2] + ","
		if strings.Contains(flags, ","+role+",") && !strings.Contains(flags, "fail") &&
			!strings.Contains(flags, "handshake") && !strings.Contains(flags, "noaddr") {
			n++
		}
	}
	return n
}

// waitFor polls cond every 10ms until it reports true, and fails the test
// when ctx ends first.
func waitFor(ctx context.Context, t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	if err := waitUntil(ctx, what, cond); err != nil {
		t.Fatalf("redistest: %v", err)
	}
}

// waitUntil polls cond every 10ms until it reports true, or returns an
// error when ctx ends first.
func waitUntil(ctx context.Context, what string, cond func() (bool, error)) error {
	var lastErr error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out waiting for %s (last error: %v)", what, lastErr)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// SentinelSrv is a master watched by sentinels, started by Sentinel or
// Sentinels.
type SentinelSrv struct {
	// Master is the monitored master.
	Master *Server
	// Sentinel is the first sentinel process.
	Sentinel *Server
	// SentinelAddr is the "127.0.0.1:port" address of the first sentinel.
	SentinelAddr string
	// Sentinels holds every sentinel, Sentinel first.
	Sentinels []*Server
	// MasterName is the name the sentinels monitor the master under
	// ("mymaster").
	MasterName string
}

// Sentinel starts a standalone master and one sentinel (quorum 1) monitoring
// it as "mymaster", and waits until the sentinel reports the master address.
func Sentinel(t testing.TB) *SentinelSrv {
	t.Helper()
	return Sentinels(t, SentinelConfig{})
}

// SentinelConfig shapes the deployment Sentinels starts.
type SentinelConfig struct {
	// N is the number of sentinels; 0 means 1. Each monitors the master
	// with quorum 1, so any one of them can answer alone.
	N int
	// Password, when set, is required by every sentinel (the password of
	// its default user), as a sentinel's requirepass does.
	Password string
	// MasterArgs are extra arguments of the master.
	MasterArgs []string
	// TLS, when set, starts the master with StandaloneTLS (mutual TLS) and
	// gives every sentinel a TLS port (Server.TLSAddr) with the same
	// certificates; the sentinels monitor the master's TLS port over TLS.
	TLS *Certs
}

// Sentinels starts a standalone master and cfg.N sentinels monitoring it as
// "mymaster", and waits until each sentinel reports the master address.
func Sentinels(t testing.TB, cfg SentinelConfig) *SentinelSrv {
	t.Helper()
	var master *Server
	monitored := 0
	if cfg.TLS != nil {
		master = StandaloneTLS(t, cfg.TLS, true, cfg.MasterArgs...)
		monitored = master.TLSPort
	} else {
		master = Standalone(t, cfg.MasterArgs...)
		monitored = master.Port
	}
	const name = "mymaster"
	var tlsPort int // of the sentinel being started
	mkConf := func(dir string, port int) (string, error) {
		conf := filepath.Join(dir, "sentinel.conf")
		body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 1\n"+
			"sentinel down-after-milliseconds %s 5000\n", port, dir, name, monitored, name)
		if c := cfg.TLS; c != nil {
			portMu.Lock()
			p, err := FreePort(false)
			portMu.Unlock()
			if err != nil {
				return "", err
			}
			tlsPort = p
			body += fmt.Sprintf("tls-port %d\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\ntls-auth-clients yes\ntls-replication yes\n",
				p, c.ServerCert, c.ServerKey, c.CA)
		}
		return conf, os.WriteFile(conf, []byte(body), 0o644)
	}
	ss := &SentinelSrv{Master: master, MasterName: name}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for range max(cfg.N, 1) {
		sent := newServer(t, false, "--sentinel", mkConf)
		if tlsPort != 0 {
			sent.TLSPort, sent.TLSAddr = tlsPort, "127.0.0.1:"+strconv.Itoa(tlsPort)
		}
		c := sent.Client(t)
		waitFor(ctx, t, "sentinel to report "+name, func() (bool, error) {
			addr, err := c.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", name).StringSlice()
			return err == nil && len(addr) == 2 && addr[1] == strconv.Itoa(monitored), err
		})
		if cfg.Password != "" {
			// The password is set once the sentinel is up: start() polls
			// it without credentials.
			if err := c.Do(ctx, "ACL", "SETUSER", "default", "resetpass", ">"+cfg.Password).Err(); err != nil {
				t.Fatalf("redistest: setting the password of sentinel %s: %v", sent.Addr, err)
			}
		}
		ss.Sentinels = append(ss.Sentinels, sent)
	}
	ss.Sentinel, ss.SentinelAddr = ss.Sentinels[0], ss.Sentinels[0].Addr
	return ss
}

// ACLUser creates (or resets) the ACL user user with password pass on s and
// applies rules, for example "~*", "+@read". The user starts from "reset", so
// it has no permissions except those in rules.
func ACLUser(t testing.TB, s *Server, user, pass string, rules ...string) {
	t.Helper()
	args := []any{"ACL", "SETUSER", user, "reset", "on", ">" + pass}
	for _, r := range rules {
		args = append(args, r)
	}
	c := newClient(s.Addr)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("redistest: acl setuser %q on %s: %v", user, s.Addr, err)
	}
}

// CommandStats returns the calls of every command in INFO commandstats of
// the server behind c, by name ("get", "memory|usage").
func CommandStats(t testing.TB, c *redis.Client) map[string]int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatalf("info commandstats: %v", err)
	}
	m := map[string]int{}
	for line := range strings.SplitSeq(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var calls int
		if _, err := fmt.Sscanf(rest, "calls=%d", &calls); err != nil {
			t.Fatalf("parsing %q: %v", line, err)
		}
		m[strings.TrimPrefix(name, "cmdstat_")] = calls
	}
	return m
}
