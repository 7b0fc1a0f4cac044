package scanner

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Every connection the scanner opens (go-redis' pools, the probe's own
// connections, the sentinel's) is dialled by Conn.dial. It does the TLS
// handshake itself, under the caller's context, so a rediss:// URL pointed
// at a plain port fails once, within the dial timeout, with a message that
// says so. And it registers the connection with the Conn's watcher, so that
// a cancelled context aborts reads and writes that go-redis would otherwise
// leave blocked until --command-timeout: go-redis never watches a context
// while it waits for a reply.

// TLSOptions configure the TLS of a rediss:// URL beyond what the URL says.
// They apply to every connection: data nodes, the probe's own connections,
// cluster nodes and sentinels alike.
type TLSOptions struct {
	// CACert is a PEM file of the certificate authorities to trust instead
	// of the system's.
	CACert string
	// Cert and Key are the PEM files of a client certificate and its key,
	// for servers with tls-auth-clients. Give both or neither.
	Cert, Key string
	// ServerName is the name to verify the server's certificate against;
	// default: the URL's host.
	ServerName string
	// Insecure turns certificate verification off. A scan made with it says
	// so in Stats.Errors.
	Insecure bool
}

func (t TLSOptions) set() bool {
	return t.CACert != "" || t.Cert != "" || t.Key != "" || t.ServerName != "" || t.Insecure
}

// maxPEM bounds a certificate or key file.
const maxPEM = 1 << 20

// InsecureNote is the note a scan carries when certificates are not verified.
const InsecureNote = "tls certificate verification is off: the server was not authenticated"

// tlsConfig builds the TLS configuration of a rediss:// URL whose host is
// host, with o applied. urlInsecure is the URL's skip_verify.
func tlsConfig(o TLSOptions, host string, urlInsecure bool) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.Insecure || urlInsecure}
	if o.ServerName != "" {
		cfg.ServerName = o.ServerName
	}
	if o.CACert != "" {
		pem, err := readPEM(o.CACert)
		if err != nil {
			return nil, fmt.Errorf("reading the ca certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca certificate %q holds no PEM certificate", o.CACert)
		}
		cfg.RootCAs = pool
	}
	if (o.Cert == "") != (o.Key == "") {
		return nil, errors.New("a client certificate needs both its certificate and its key file")
	}
	if o.Cert != "" {
		cert, err := readPEM(o.Cert)
		if err != nil {
			return nil, fmt.Errorf("reading the client certificate: %w", err)
		}
		key, err := readPEM(o.Key)
		if err != nil {
			return nil, fmt.Errorf("reading the client key: %w", err)
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			// The error text of X509KeyPair never holds key material.
			return nil, fmt.Errorf("client certificate %q and key %q: %w", o.Cert, o.Key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// readPEM reads a file of at most maxPEM bytes.
func readPEM(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPEM+1))
	if err != nil {
		return nil, fmt.Errorf("%q: %w", path, err)
	}
	if len(b) > maxPEM {
		return nil, fmt.Errorf("%q is larger than %d bytes", path, maxPEM)
	}
	return b, nil
}

// TLSError reports a TLS handshake that failed, or a plain connection that
// the server closed before answering, as a TLS port does.
type TLSError struct {
	// Addr is the address dialled.
	Addr string
	// Handshake is true for a failed handshake, false for a plain
	// connection closed by the server.
	Handshake bool
	// Reason says what went wrong, in words.
	Reason string
	// Err is the underlying error.
	Err error
}

// Error says what failed where, and why.
func (e *TLSError) Error() string {
	if e.Handshake {
		return fmt.Sprintf("tls handshake with %s failed: %s", e.Addr, e.Reason)
	}
	return fmt.Sprintf("%s %s", e.Addr, e.Reason)
}

// Unwrap returns the underlying error.
func (e *TLSError) Unwrap() error { return e.Err }

// handshakeError explains a failed handshake with addr.
func handshakeError(addr string, err error, timeout time.Duration) error {
	var rh tls.RecordHeaderError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var inval x509.CertificateInvalidError
	var alert tls.AlertError
	reason := err.Error()
	switch {
	case errors.As(err, &rh):
		reason = "the server answered in plain text, not TLS; for a plain port use redis:// instead of rediss://"
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		reason = fmt.Sprintf("no TLS answer within %s; for a plain port use redis:// instead of rediss://", timeout)
	case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		reason = "the server closed the connection (a plain port, or it asks for a client certificate)"
	case errors.As(err, &unknown):
		reason = "the server's certificate is signed by an unknown authority"
	case errors.As(err, &host):
		reason = fmt.Sprintf("the server's certificate is not valid for %q", host.Host)
	case errors.As(err, &inval):
		reason = "the server's certificate is invalid: " + inval.Error()
	case errors.As(err, &alert):
		reason = "the server refused it: " + err.Error()
	}
	return &TLSError{Addr: addr, Handshake: true, Reason: reason, Err: err}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// plainClosed explains a plain connection that the server closed before
// its first reply: what a TLS port does with a plain-text command.
func plainClosed(addr string, err error) error {
	if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
		return err
	}
	return &TLSError{Addr: addr, Reason: "closed the connection without answering; if it is a TLS port, use rediss:// instead of redis://", Err: err}
}

// plainClosed is plainClosed for a Conn without TLS; with TLS it returns
// err as is.
func (c *Conn) plainClosed(addr string, err error) error {
	if c.tls != nil {
		return err
	}
	return plainClosed(addr, err)
}

// dial opens a connection to addr: TCP (or a unix socket), then the TLS
// handshake when the URL is rediss://, both under ctx. The connection is
// bounded (bound.go); the probe's own connections unwrap it.
func (c *Conn) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: c.opts.Timeout, KeepAlive: 5 * time.Minute}
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	ac := c.watcher.track(nc)
	if c.tls == nil {
		return bounded(ac), nil
	}
	tc := tls.Client(ac, c.tls)
	// The handshake has the timeout of a round trip, or less when ctx ends
	// sooner.
	hctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		_ = ac.Close()
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, ctx.Err()
		}
		return nil, handshakeError(addr, err, c.opts.Timeout)
	}
	return bounded(tc), nil
}

// watcher aborts the blocked reads and writes of a Conn's connections when
// the context of the operation using them ends.
type watcher struct {
	mu    sync.Mutex
	conns map[*abortConn]struct{}
	// aborting counts the watched operations whose context ended and that
	// have not returned yet. While it is above 0 every deadline set on a
	// connection is moved into the past, so a read that go-redis starts
	// after the cancellation fails at once too.
	aborting atomic.Int32
}

// past is a deadline that has passed.
var past = time.Unix(1, 0)

func (w *watcher) track(nc net.Conn) *abortConn {
	ac := &abortConn{Conn: nc, w: w}
	w.mu.Lock()
	if w.conns == nil {
		w.conns = map[*abortConn]struct{}{}
	}
	w.conns[ac] = struct{}{}
	w.mu.Unlock()
	if w.aborting.Load() > 0 {
		_ = nc.SetDeadline(past)
	}
	return ac
}

// watch makes the end of ctx abort every blocked read and write of the
// Conn's connections until the returned func is called, when the
// operation that ctx belongs to has returned.
func (w *watcher) watch(ctx context.Context) (done func()) {
	if ctx.Done() == nil {
		return func() {}
	}
	var fired, returned bool // guarded by w.mu
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if returned {
			return
		}
		fired = true
		w.aborting.Add(1)
		for ac := range w.conns {
			_ = ac.Conn.SetDeadline(past)
		}
	})
	return func() {
		stop()
		w.mu.Lock()
		defer w.mu.Unlock()
		returned = true
		if fired {
			w.aborting.Add(-1)
		}
	}
}

// abortConn is a connection registered with a watcher.
type abortConn struct {
	net.Conn
	w *watcher
}

func (a *abortConn) SetDeadline(t time.Time) error {
	return a.set(a.Conn.SetDeadline, t)
}

func (a *abortConn) SetReadDeadline(t time.Time) error {
	return a.set(a.Conn.SetReadDeadline, t)
}

func (a *abortConn) SetWriteDeadline(t time.Time) error {
	return a.set(a.Conn.SetWriteDeadline, t)
}

// set applies t, or a past deadline while an operation is being aborted.
// It checks again after setting t: an abort that began meanwhile may have
// set its past deadline before t replaced it.
func (a *abortConn) set(f func(time.Time) error, t time.Time) error {
	if a.w.aborting.Load() > 0 {
		t = past
	}
	err := f(t)
	if a.w.aborting.Load() > 0 {
		_ = f(past)
	}
	return err
}

func (a *abortConn) Close() error {
	a.w.mu.Lock()
	delete(a.w.conns, a)
	a.w.mu.Unlock()
	return a.Conn.Close()
}

// SyscallConn exposes the socket, so that go-redis' health check of idle
// connections keeps working.
func (a *abortConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := a.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("not a socket")
	}
	return sc.SyscallConn()
}
