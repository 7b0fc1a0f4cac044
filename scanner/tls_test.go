package scanner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

// TestMutualTLS scans a server that demands a client certificate, with a
// private CA: every connection (SCAN, the probe's own, sampling) must come
// in on the TLS port with the client certificate.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	certs := redistest.NewCerts(t)
	s := redistest.StandaloneTLS(t, certs, true)
	admin := s.Client(t)
	ctx := context.Background()
	for i := range 300 {
		if err := admin.Set(ctx, fmt.Sprint("tls:", i), `{"a":1}`, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	url := "rediss://" + s.TLSAddr + "/0"
	full := scanner.TLSOptions{CACert: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}
	// AllowTouch: the test server is Redis 7.0, where a sample read is
	// refused unless the caller accepts resetting LRU/LFU state.
	c := connect(t, scanner.Options{URL: url, TLS: full, Memory: true, Count: 50, AllowTouch: true})
	var n int
	var sampled []scanner.KeyInfo
	st, err := c.Scan(ctx, func(b []scanner.KeyInfo) error {
		n += len(b)
		sampled = append(sampled, b[0])
		return nil
	})
	if err != nil || n != 300 || st.Partial || slices.Contains(st.Errors, scanner.InsecureNote) {
		t.Fatalf("scanned %d keys of 300, stats %+v, err %v", n, st, err)
	}
	ss, errs := c.SampleBatch(ctx, sampled, 10, 1<<20)
	if errs[0] != nil || string(ss[0].String) != `{"a":1}` {
		t.Errorf("sample over TLS: %q, %v", ss[0].String, errs[0])
	}
	list, err := admin.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	tls := 0
	for line := range strings.SplitSeq(strings.TrimSpace(list), "\n") {
		if strings.Contains(line, fmt.Sprintf("laddr=%s ", s.TLSAddr)) {
			tls++
		} else if !strings.Contains(line, "cmd=client|list") {
			t.Errorf("a connection outside TLS: %s", line)
		}
	}
	if tls < 2 {
		t.Errorf("%d TLS connections, want the scan's and the probe's", tls)
	}

	fails := func(name string, o scanner.Options, want string) {
		t.Helper()
		o.Timeout = 2 * time.Second
		_, err := scanner.Connect(ctx, o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, want)
		}
	}
	fails("no client certificate", scanner.Options{URL: url, TLS: scanner.TLSOptions{CACert: certs.CA}}, "certificate")
	fails("wrong ca", scanner.Options{URL: url, TLS: scanner.TLSOptions{CACert: certs.OtherCA, Cert: certs.ClientCert, Key: certs.ClientKey}},
		"failed: the server's certificate is signed by an unknown authority")
	fails("system ca", scanner.Options{URL: url, TLS: scanner.TLSOptions{Cert: certs.ClientCert, Key: certs.ClientKey}}, "unknown authority")
	wrongName := full
	wrongName.ServerName = "redis.example"
	fails("wrong server name", scanner.Options{URL: url, TLS: wrongName}, `not valid for "redis.example"`)
	var te *scanner.TLSError
	if _, err := scanner.Connect(ctx, scanner.Options{URL: url, TLS: scanner.TLSOptions{CACert: certs.OtherCA, Cert: certs.ClientCert, Key: certs.ClientKey}}); !errors.As(err, &te) || te.Addr != s.TLSAddr {
		t.Errorf("wrong ca: %v is not a *TLSError for %s", err, s.TLSAddr)
	}

	// --tls-insecure with the wrong CA connects, and the scan says so.
	insecure := scanner.TLSOptions{CACert: certs.OtherCA, Cert: certs.ClientCert, Key: certs.ClientKey, Insecure: true}
	ci := connect(t, scanner.Options{URL: url, TLS: insecure, Match: "tls:1"})
	st, err = ci.Scan(ctx, func([]scanner.KeyInfo) error { return nil })
	if err != nil || !slices.Contains(st.Errors, scanner.InsecureNote) {
		t.Errorf("insecure scan: notes %q, %v; want %q", st.Errors, err, scanner.InsecureNote)
	}
	if st.Partial {
		t.Error("the insecure note made the scan partial")
	}
	// The URL's own skip_verify=true does the same, with the note.
	cu := connect(t, scanner.Options{URL: url + "?skip_verify=true", TLS: scanner.TLSOptions{Cert: certs.ClientCert, Key: certs.ClientKey}, Match: "tls:1"})
	if st, err = cu.Scan(ctx, func([]scanner.KeyInfo) error { return nil }); err != nil || !slices.Contains(st.Errors, scanner.InsecureNote) {
		t.Errorf("skip_verify scan: notes %q, %v; want %q", st.Errors, err, scanner.InsecureNote)
	}
}

// TestTLSMismatch points rediss:// at a plain port and redis:// at a TLS
// port: both fail once, with a message that names the scheme to use.
func TestTLSMismatch(t *testing.T) {
	t.Parallel()
	certs := redistest.NewCerts(t)
	s := redistest.StandaloneTLS(t, certs, false)
	ctx := context.Background()
	const timeout = 2 * time.Second
	// The caller's deadline is far away: the handshake still ends at the
	// command timeout.
	far, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	_, err := scanner.Connect(far, scanner.Options{URL: "rediss://" + s.Addr, TLS: scanner.TLSOptions{CACert: certs.CA}, Timeout: timeout})
	took := time.Since(start)
	var te *scanner.TLSError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "use redis:// instead of rediss://") {
		t.Errorf("rediss:// on a plain port: %v", err)
	}
	t.Logf("rediss:// on a plain port failed after %v: %v", took, err)
	if took >= 2*timeout {
		t.Errorf("rediss:// on a plain port took %v: the handshake was retried", took)
	}
	_, err = scanner.Connect(ctx, scanner.Options{URL: "redis://" + s.TLSAddr, Timeout: timeout})
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "use rediss:// instead of redis://") {
		t.Errorf("redis:// on a TLS port: %v", err)
	}
	t.Logf("redis:// on a TLS port: %v", err)

	// TLS options need rediss://, and unreadable files are usage errors.
	var ue *scanner.UsageError
	for _, o := range []scanner.Options{
		{URL: "redis://" + s.Addr, TLS: scanner.TLSOptions{CACert: certs.CA}},
		{URL: "redis://" + s.Addr, TLS: scanner.TLSOptions{Insecure: true}},
		{URL: "rediss://" + s.TLSAddr, TLS: scanner.TLSOptions{CACert: filepath.Join(t.TempDir(), "none.pem")}},
		{URL: "rediss://" + s.TLSAddr, TLS: scanner.TLSOptions{CACert: certs.ClientKey}},
		{URL: "rediss://" + s.TLSAddr, TLS: scanner.TLSOptions{Cert: certs.ClientCert}},
		{URL: "rediss://" + s.TLSAddr, TLS: scanner.TLSOptions{Cert: certs.ClientCert, Key: certs.CA}},
	} {
		if _, err := scanner.Connect(ctx, o); !errors.As(err, &ue) {
			t.Errorf("%+v: %v, want a usage error", o.TLS, err)
		}
	}
	big := filepath.Join(t.TempDir(), "big.pem")
	if err := os.WriteFile(big, make([]byte, 2<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := scanner.Connect(ctx, scanner.Options{URL: "rediss://" + s.TLSAddr, TLS: scanner.TLSOptions{CACert: big}}); !errors.As(err, &ue) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a 2 MiB ca file: %v", err)
	}
}
