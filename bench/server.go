package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// This file is a small redis-server process manager. It shares the
// primitives of internal/redistest (FreePort, Ping, LogTail, ClusterArgs,
// FormCluster) but works in a standalone program: errors are returned
// instead of failing a testing.TB, and servers live until stopAll (or stay
// with -keep), so it starts the processes itself rather than through
// redistest's Standalone or Cluster, which tie them to a test's cleanup.

// server is one redis-server process started by the bench.
type server struct {
	Addr string
	Port int
	Dir  string

	cmd  *exec.Cmd
	done chan struct{}
}

// procs tracks every server so that stopAll can kill them.
type procs struct {
	bin     string
	root    string // parent directory of every server directory
	mu      sync.Mutex
	servers []*server
}

func (p *procs) stopAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.servers {
		s.stop()
	}
	p.servers = nil
}

func (s *server) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

var portMu sync.Mutex

// start launches a redis-server in a fresh directory under p.root and waits
// until it answers PING.
func (p *procs) start(name string, bus bool, timeout time.Duration, extra ...string) (*server, error) {
	var lastErr error
	for range 5 {
		portMu.Lock()
		port, err := redistest.FreePort(bus)
		portMu.Unlock()
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(p.root, fmt.Sprintf("%s-%d", name, port))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		s := &server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, Dir: dir}
		args := append([]string{
			"--port", strconv.Itoa(port),
			"--bind", "127.0.0.1",
			"--dir", dir,
			"--dbfilename", "dump.rdb",
			"--save", "",
			"--appendonly", "no",
			"--daemonize", "no",
			"--protected-mode", "no",
			"--logfile", "",
		}, extra...)
		if err := p.launch(s, args, timeout); err != nil {
			lastErr = err
			if strings.Contains(err.Error(), "Address already in use") {
				continue
			}
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("no usable port after 5 attempts: %w", lastErr)
}

func (p *procs) launch(s *server, args []string, timeout time.Duration) error {
	logPath := filepath.Join(s.Dir, "redis.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.bin, args...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: a Ctrl-C on the terminal reaches the bench,
	// which then stops the servers itself (or leaves them with -keep).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("starting %s: %w", p.bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(done) }()
	s.cmd, s.done = cmd, done
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-done:
			s.cmd = nil
			return fmt.Errorf("redis-server exited during startup: %s", redistest.LogTail(logPath))
		default:
		}
		if redistest.Ping(s.Addr) {
			p.mu.Lock()
			p.servers = append(p.servers, s)
			p.mu.Unlock()
			return nil
		}
		if time.Now().After(deadline) {
			s.stop()
			return fmt.Errorf("redis-server did not answer PING within %s: %s", timeout, redistest.LogTail(logPath))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type nopLogger struct{}

func (nopLogger) Printf(context.Context, string, ...any) {}

var quietOnce sync.Once

// newClient returns a go-redis client with the quiet settings scanner uses:
// no CLIENT SETINFO, no maintenance notifications, no log lines.
func newClient(addr string, pool int) *redis.Client {
	quietOnce.Do(func() { redis.SetLogger(nopLogger{}) })
	return redis.NewClient(&redis.Options{
		Addr:                     addr,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		DialTimeout:              5 * time.Second,
		ReadTimeout:              30 * time.Second,
		WriteTimeout:             30 * time.Second,
		PoolSize:                 pool,
		MaxRetries:               2,
	})
}

// startCluster starts three cluster-enabled masters and forms them into a
// cluster with internal/redistest's FormCluster, the one the tests use.
func (p *procs) startCluster(ctx context.Context) ([]*server, error) {
	nodes := make([]*server, 3)
	addrs := make([]string, 3)
	for i := range nodes {
		s, err := p.start(fmt.Sprintf("cluster%d", i), true, 15*time.Second, redistest.ClusterArgs()...)
		if err != nil {
			return nil, fmt.Errorf("starting cluster node %d: %w", i, err)
		}
		nodes[i], addrs[i] = s, s.Addr
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := redistest.FormCluster(ctx, addrs); err != nil {
		return nil, err
	}
	return nodes, nil
}
