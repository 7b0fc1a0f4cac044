package redistest_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
)

func TestStandaloneRestart(t *testing.T) {
	s := redistest.Standalone(t, "--maxmemory", "10mb")
	c := s.Client(t)
	ctx := context.Background()
	if got, err := c.ConfigGet(ctx, "maxmemory").Result(); err != nil || got["maxmemory"] != "10485760" {
		t.Fatalf("extra args not applied: %v %v", got, err)
	}
	if got, err := c.ConfigGet(ctx, "save").Result(); err != nil || got["save"] != "" {
		t.Fatalf("save = %q, %v; want empty", got["save"], err)
	}
	s.Stop()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("ping succeeded after Stop")
	}
	s.Restart(t)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("ping after restart: %v", err)
	}
}

func TestCluster(t *testing.T) {
	start := time.Now()
	cs := redistest.Cluster(t)
	t.Logf("cluster up in %s", time.Since(start))
	if len(cs.Addrs) != 3 {
		t.Fatalf("got %d nodes, want 3", len(cs.Addrs))
	}
	for _, n := range cs.Nodes {
		info, err := n.Client(t).ClusterInfo(context.Background()).Result()
		if err != nil || !strings.Contains(info, "cluster_state:ok") {
			t.Fatalf("%s: cluster info %q %v", n.Addr, info, err)
		}
	}
}

func TestClusterWithReplicas(t *testing.T) {
	start := time.Now()
	cs := redistest.ClusterWithReplicas(t)
	t.Logf("cluster with replicas up in %s", time.Since(start))
	if len(cs.Nodes) != 6 || len(cs.Replicas) != 3 {
		t.Fatalf("got %d nodes, %d replicas", len(cs.Nodes), len(cs.Replicas))
	}
	for _, r := range cs.Replicas {
		info, err := r.Client(t).Info(context.Background(), "replication").Result()
		if err != nil || !strings.Contains(info, "role:slave") {
			t.Fatalf("%s not a replica: %v", r.Addr, err)
		}
	}
}

func TestSentinel(t *testing.T) {
	start := time.Now()
	ss := redistest.Sentinel(t)
	t.Logf("sentinel up in %s", time.Since(start))
	if ss.MasterName != "mymaster" || ss.SentinelAddr == "" {
		t.Fatalf("bad sentinel: %+v", ss)
	}
}

func TestACLUser(t *testing.T) {
	s := redistest.Standalone(t)
	redistest.ACLUser(t, s, "reader", "pw", "~*", "+get")
	c := s.Client(t)
	ctx := context.Background()
	if err := c.Do(ctx, "AUTH", "reader", "pw").Err(); err != nil {
		t.Fatalf("auth: %v", err)
	}
	if err := c.Do(ctx, "ACL", "WHOAMI").Err(); err == nil {
		// the pooled connection may differ; check via a fresh AUTH on a conn
		t.Log("whoami allowed on pooled conn")
	}
	conn := c.Conn()
	defer conn.Close()
	if err := conn.Do(ctx, "AUTH", "reader", "pw").Err(); err != nil {
		t.Fatalf("auth: %v", err)
	}
	if err := conn.Do(ctx, "SET", "k", "v").Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("SET as reader: %v, want NOPERM", err)
	}
}

// TestPauseResume checks that a paused server accepts bytes it does not
// answer (Unread sees them) and answers again after Resume.
func TestPauseResume(t *testing.T) {
	s := redistest.Standalone(t)
	c := s.Client(t)
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if n := s.Unread(t); n != 0 {
		t.Fatalf("%d unread bytes on a running server", n)
	}
	s.Pause(t)
	done := make(chan error, 1)
	go func() { done <- c.Ping(ctx).Err() }()
	s.WaitUnread(t)
	select {
	case err := <-done:
		t.Fatalf("a paused server answered: %v", err)
	default:
	}
	s.Resume(t)
	if err := <-done; err != nil {
		t.Fatalf("ping after resume: %v", err)
	}
}

func TestSentinelsWithPassword(t *testing.T) {
	ss := redistest.Sentinels(t, redistest.SentinelConfig{N: 2, Password: "sent-pw"})
	if len(ss.Sentinels) != 2 || ss.Sentinel != ss.Sentinels[0] {
		t.Fatalf("sentinels: %+v", ss)
	}
	ctx := context.Background()
	for _, s := range ss.Sentinels {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true})
		err := c.Do(ctx, "SENTINEL", "MASTERS").Err()
		if err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Errorf("%s without password: %v, want NOAUTH", s.Addr, err)
		}
		_ = c.Close()
		c = redis.NewClient(&redis.Options{Addr: s.Addr, Password: "sent-pw", DisableIdentity: true})
		if err := c.Do(ctx, "SENTINEL", "MASTERS").Err(); err != nil {
			t.Errorf("%s with password: %v", s.Addr, err)
		}
		_ = c.Close()
	}
}

func TestStandaloneTLS(t *testing.T) {
	certs := redistest.NewCerts(t)
	s := redistest.StandaloneTLS(t, certs, true)
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(certs.CA)
	if err != nil || !pool.AppendCertsFromPEM(ca) {
		t.Fatal("reading the ca", err)
	}
	pair, err := tls.LoadX509KeyPair(certs.ClientCert, certs.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.TLSAddr, DisableIdentity: true,
		TLSConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, ServerName: "127.0.0.1"}})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("mutual tls ping: %v", err)
	}
	noCert := redis.NewClient(&redis.Options{Addr: s.TLSAddr, DisableIdentity: true, MaxRetries: -1,
		TLSConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}})
	defer noCert.Close()
	if err := noCert.Ping(ctx).Err(); err == nil {
		t.Error("a client without certificate was let in")
	}
}
