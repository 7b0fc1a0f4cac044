package redistest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Pause stops the server process with SIGSTOP and returns once the kernel
// reports it stopped. Its sockets stay open: clients connect and send, but
// nothing is answered, as with a server stuck in a long command. Resume
// continues it; Stop and the test's cleanup kill a paused server too.
//
// The server is stopped only between event loop iterations (in epoll_wait),
// where every request it read has been answered (replies that fit the
// socket buffers are written before it waits): stopped between reading a
// request and answering it, it would hold a waiting client that Unread
// cannot see. Where /proc/<pid>/syscall cannot tell, the first stop stays.
func (s *Server) Pause(t testing.TB) {
	t.Helper()
	for i := 0; ; i++ {
		s.signal(t, syscall.SIGSTOP, 'T')
		if i == maxRestops || s.idle() {
			return
		}
		s.signal(t, syscall.SIGCONT, 0)
	}
}

// maxRestops bounds how often Pause stops the server again to catch it
// between iterations.
const maxRestops = 1000

// idle reports whether the stopped server sits in epoll_wait, or that it
// cannot be told.
func (s *Server) idle() bool {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/syscall")
	if err != nil {
		return true
	}
	nr, _, _ := strings.Cut(string(b), " ")
	switch runtime.GOARCH + " " + nr {
	case "amd64 232", "amd64 281", "amd64 441": // epoll_wait, epoll_pwait, epoll_pwait2
		return true
	case "arm64 22", "arm64 441": // epoll_pwait, epoll_pwait2
		return true
	}
	return !strings.Contains("amd64 arm64", runtime.GOARCH)
}

// Resume continues a server stopped by Pause and returns once it runs.
func (s *Server) Resume(t testing.TB) {
	t.Helper()
	s.signal(t, syscall.SIGCONT, 0)
}

// signal sends sig and waits until the process state is want ('T': stopped),
// or anything but stopped when want is 0.
func (s *Server) signal(t testing.TB, sig syscall.Signal, want byte) {
	t.Helper()
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		t.Fatalf("redistest: %s is not running", s.Addr)
	}
	pid := cmd.Process.Pid
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatalf("redistest: signalling %s: %v", s.Addr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	waitFor(ctx, t, fmt.Sprintf("process %d to reach state %q", pid, want), func() (bool, error) {
		st, err := procState(pid)
		if err != nil {
			return false, err
		}
		if want == 0 {
			return st != 'T' && st != 't', nil
		}
		return st == want, nil
	})
}

// procState returns the state letter of /proc/<pid>/stat.
func procState(pid int) (byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// "pid (comm) S ...": comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return b[i+2], nil
}

// Unread returns the bytes that clients sent to the server's ports (Port,
// and TLSPort when set) and that it has not read yet, from /proc/net/tcp. On
// a paused server a value above 0 proves that a client is waiting for an
// answer that will not come.
func (s *Server) Unread(t testing.TB) int {
	t.Helper()
	ports := map[int]bool{s.Port: true}
	if s.TLSPort != 0 {
		ports[s.TLSPort] = true
	}
	n, err := unread("/proc/net/tcp", ports)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return n
}

// WaitUnread waits until a client has sent the server bytes it did not
// read (see Unread), up to 10 s.
func (s *Server) WaitUnread(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	waitFor(ctx, t, "a client to wait on "+s.Addr, func() (bool, error) { return s.Unread(t) > 0, nil })
}

// unread sums rx_queue of the established sockets whose local port is in
// ports.
func unread(path string, ports map[int]bool) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	total := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// sl local_address rem_address st tx_queue:rx_queue ...
		if len(fields) < 5 || fields[3] != "01" { // 01: ESTABLISHED
			continue
		}
		_, portHex, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		port, err := strconv.ParseInt(portHex, 16, 32)
		if err != nil || !ports[int(port)] {
			continue
		}
		_, rxHex, ok := strings.Cut(fields[4], ":")
		if !ok {
			continue
		}
		rx, err := strconv.ParseInt(rxHex, 16, 64)
		if err != nil {
			continue
		}
		total += int(rx)
	}
	return total, sc.Err()
}
