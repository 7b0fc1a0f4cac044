package redistest_test

import (
	"context"
	"strings"
	"testing"
	"time"

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
