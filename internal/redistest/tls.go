package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// Certs are PEM files for TLS tests, made fresh by NewCerts: a CA, a server
// certificate it signed (for 127.0.0.1 and localhost), a client
// certificate it signed, and a second CA that signed nothing here.
type Certs struct {
	CA                    string // the CA certificate
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	OtherCA               string // a CA unrelated to the server's certificate
}

// NewCerts writes a fresh CA, server and client certificates (ECDSA P-256,
// valid for an hour) to a temporary directory.
func NewCerts(t testing.TB) *Certs {
	t.Helper()
	dir := t.TempDir()
	ca, caKey := newCA(t, "keyreg test ca")
	other, _ := newCA(t, "keyreg other ca")
	c := &Certs{
		CA:         writePEM(t, dir, "ca.pem", "CERTIFICATE", ca.Raw),
		OtherCA:    writePEM(t, dir, "other-ca.pem", "CERTIFICATE", other.Raw),
		ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem"),
	}
	leaf(t, ca, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "redis"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:    []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}, c.ServerCert, c.ServerKey)
	leaf(t, ca, caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "keyreg"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, c.ClientCert, c.ClientKey)
	return c
}

var serial atomic.Int64

func nextSerial() *big.Int { return big.NewInt(time.Now().UnixNano() + serial.Add(1)) }

func newCA(t testing.TB, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          nextSerial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// leaf signs tmpl with the CA and writes the certificate and its key.
func leaf(t testing.TB, ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate, certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = nextSerial()
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Dir(certPath), filepath.Base(certPath), "CERTIFICATE", der)
	writePEM(t, filepath.Dir(keyPath), filepath.Base(keyPath), "EC PRIVATE KEY", kb)
}

func writePEM(t testing.TB, dir, name, typ string, der []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// StandaloneTLS starts one redis-server that also listens for TLS on
// TLSPort (TLSAddr), with c's server certificate. With authClients the
// server asks every TLS client for a certificate signed by c.CA (mutual
// TLS). The plain port stays open for the test's own admin client.
func StandaloneTLS(t testing.TB, c *Certs, authClients bool, extraArgs ...string) *Server {
	t.Helper()
	portMu.Lock()
	port, err := FreePort(false)
	portMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	auth := "no"
	if authClients {
		auth = "yes"
	}
	args := append([]string{"--tls-port", strconv.Itoa(port), "--tls-cert-file", c.ServerCert, "--tls-key-file", c.ServerKey,
		"--tls-ca-cert-file", c.CA, "--tls-auth-clients", auth}, extraArgs...)
	s := Standalone(t, args...)
	s.TLSPort, s.TLSAddr = port, "127.0.0.1:"+strconv.Itoa(port)
	return s
}
