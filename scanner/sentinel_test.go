package scanner_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyreg/keyreg/internal/redistest"
	"github.com/keyreg/keyreg/scanner"
)

// TestSentinelAuth scans a master behind two sentinels that require a
// password of their own, the first of them down: the sentinel password
// goes to the sentinels, the URL's to the master, and the live sentinel is
// found. No error holds either password.
func TestSentinelAuth(t *testing.T) {
	t.Parallel()
	const sentPW, masterPW = "Zq9#Sx/Wv7", "Kv4?Lm@Jp2"
	ss := redistest.Sentinels(t, redistest.SentinelConfig{N: 2, Password: sentPW})
	w := seed(t, ss.Master.Client(t), "sa:", 60)
	redistest.ACLUser(t, ss.Master, "audit", masterPW, strings.Fields(scanner.MinimalACL)...)
	ss.Sentinels[0].Stop()
	url := "redis://audit:" + strings.NewReplacer("?", "%3F", "@", "%40").Replace(masterPW) + "@" + ss.Sentinels[0].Addr
	o := scanner.Options{URL: url, SentinelMaster: ss.MasterName, SentinelAddrs: []string{ss.Sentinels[1].Addr},
		SentinelPassword: sentPW, Count: 10, Timeout: 2 * time.Second}
	conn := connect(t, o)
	got, st, err := collect(t, conn)
	if err != nil || st.Partial {
		t.Fatalf("scan: %v, stats %+v", err, st)
	}
	checkKeys(t, got, 0, w)
	if ki, err := conn.Probe(context.Background(), "sa:1"); err != nil || ki.Type != "string" {
		t.Errorf("probe: %+v, %v", ki, err)
	}

	fails := func(name string, o scanner.Options, want string) {
		t.Helper()
		_, err := scanner.Connect(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, want)
			return
		}
		for _, pw := range []string{sentPW, masterPW} {
			if f := leak(err.Error(), pw); f != "" {
				t.Errorf("%s: error %q holds %q", name, err, f)
			}
		}
		var ue *scanner.UsageError
		if errors.As(err, &ue) {
			t.Errorf("%s: a usage error: %v", name, err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: the error spans lines: %q", name, err)
		}
	}
	noPW := o
	noPW.SentinelPassword = ""
	fails("no sentinel password", noPW, "NOAUTH")
	wrong := o
	wrong.SentinelPassword = sentPW + "-wrong"
	fails("wrong sentinel password", wrong, "WRONGPASS")
	onlyDown := o
	onlyDown.SentinelAddrs = nil
	fails("only the sentinel that is down", onlyDown, "unreachable")

	var ue *scanner.UsageError
	for _, bad := range []scanner.Options{
		{URL: url, SentinelAddrs: []string{ss.Sentinels[1].Addr}},
		{URL: url, SentinelPassword: sentPW},
		{URL: url, SentinelMaster: ss.MasterName, SentinelAddrs: []string{"nohost"}},
		{URL: url, SentinelMaster: ss.MasterName, SentinelAddrs: []string{"h:port"}},
	} {
		if _, err := scanner.Connect(context.Background(), bad); !errors.As(err, &ue) {
			t.Errorf("%+v: %v, want a usage error", bad.SentinelAddrs, err)
		}
	}
}

// TestSentinelTLS resolves the master through a sentinel reached over
// mutual TLS: the TLS options must reach the sentinel connections as well
// as the master's and the probe's.
func TestSentinelTLS(t *testing.T) {
	t.Parallel()
	certs := redistest.NewCerts(t)
	ss := redistest.Sentinels(t, redistest.SentinelConfig{TLS: certs})
	w := seed(t, ss.Master.Client(t), "st:", 40)
	o := scanner.Options{URL: "rediss://" + ss.Sentinel.TLSAddr, SentinelMaster: ss.MasterName, Count: 10, Timeout: 2 * time.Second,
		TLS: scanner.TLSOptions{CACert: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}}
	conn := connect(t, o)
	got, st, err := collect(t, conn)
	if err != nil || st.Partial {
		t.Fatalf("scan: %v, stats %+v", err, st)
	}
	checkKeys(t, got, 0, w)
	if ki, err := conn.Probe(context.Background(), "st:1"); err != nil || ki.Type != "string" {
		t.Errorf("probe: %+v, %v", ki, err)
	}
	// Without the client certificate the sentinel refuses the handshake.
	o.TLS.Cert, o.TLS.Key = "", ""
	if _, err := scanner.Connect(context.Background(), o); err == nil {
		t.Error("connected to a mutual-TLS sentinel without a client certificate")
	}
}

// TestSentinelACLUser authenticates to the sentinel as an ACL user of its
// own (SentinelUsername), not as its default user.
func TestSentinelACLUser(t *testing.T) {
	t.Parallel()
	const defaultPW, userPW = "Zq9-default-Wv7", "Kv4-watcher-Jp2"
	ss := redistest.Sentinels(t, redistest.SentinelConfig{Password: defaultPW})
	seed(t, ss.Master.Client(t), "su:", 10)
	admin := redis.NewClient(&redis.Options{Addr: ss.SentinelAddr, Password: defaultPW, DisableIdentity: true})
	defer admin.Close()
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "watcher", "on", ">"+userPW, "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	o := scanner.Options{URL: "redis://" + ss.SentinelAddr, SentinelMaster: ss.MasterName, SentinelUsername: "watcher", SentinelPassword: userPW, Timeout: 2 * time.Second}
	conn := connect(t, o)
	if _, st, err := collect(t, conn); err != nil || st.Keys == 0 {
		t.Fatalf("scan as a sentinel ACL user: %v, %+v", err, st)
	}
	o.SentinelUsername = ""
	if _, err := scanner.Connect(ctx, o); err == nil || !strings.Contains(err.Error(), "WRONGPASS") || leak(err.Error(), userPW) != "" {
		t.Errorf("the user's password as the default user's: %v", err)
	}
}

// TestSentinelNamesReplica: a sentinel that names a replica as the master
// is refused with a clear error, not audited as the master.
func TestSentinelNamesReplica(t *testing.T) {
	t.Parallel()
	m := redistest.Standalone(t)
	r := redistest.Standalone(t, "--replicaof", "127.0.0.1", fmt.Sprint(m.Port))
	host, port, _ := net.SplitHostPort(r.Addr)
	addrReply := "*2\r\n" + redistest.Bulk(host) + redistest.Bulk(port)
	fakeFor := func(reply string) *redistest.Fake {
		return redistest.StartFake(t, func(args []string) (string, bool) {
			if strings.EqualFold(args[0], "SENTINEL") && len(args) > 1 {
				switch strings.ToLower(args[1]) {
				case "get-master-addr-by-name":
					return reply, true
				case "sentinels", "replicas", "slaves":
					return "*0\r\n", true
				}
			}
			return "", false
		})
	}
	o := scanner.Options{URL: fakeFor(addrReply).URL(""), SentinelMaster: "mymaster", Timeout: 2 * time.Second}
	_, err := scanner.Connect(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "has the role slave, not master") {
		t.Errorf("a replica named as master: %v, want a refusal", err)
	}
	// The same fake naming the master connects.
	host, port, _ = net.SplitHostPort(m.Addr)
	o.URL = fakeFor("*2\r\n" + redistest.Bulk(host) + redistest.Bulk(port)).URL("")
	c, err := scanner.Connect(context.Background(), o)
	if err != nil {
		t.Fatalf("the master named: %v", err)
	}
	_ = c.Close()
}

// TestSentinelReplicaIdleFromMaster: in sentinel replica mode the keys come
// from the replica the sentinel names, and their idle times from the
// master, where an application's GET resets them.
func TestSentinelReplicaIdleFromMaster(t *testing.T) {
	t.Parallel()
	ss := redistest.Sentinel(t)
	r := redistest.Standalone(t, "--replicaof", "127.0.0.1", fmt.Sprint(ss.Master.Port))
	admin := ss.Master.Client(t)
	ctx := context.Background()
	for i := range 20 {
		k := fmt.Sprint("sr:", i)
		if err := admin.Set(ctx, k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		dump, err := admin.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.Do(ctx, "RESTORE", k, 0, dump, "REPLACE", "IDLETIME", 7200).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := admin.Do(ctx, "WAIT", 1, 10000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}
	if err := admin.Get(ctx, "sr:3").Err(); err != nil {
		t.Fatal(err)
	}
	// The sentinel learns of the replica from the master's INFO, which it
	// reads every 10 s: poll it under a deadline.
	sc := redis.NewClient(&redis.Options{Addr: ss.SentinelAddr, DisableIdentity: true})
	defer sc.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		reps, err := sc.Do(ctx, "SENTINEL", "REPLICAS", ss.MasterName).Slice()
		// go-redis passes over a replica flagged disconnected (the sentinel's
		// link to it is not up yet) and reads the master instead.
		if s := fmt.Sprint(reps); err == nil && len(reps) > 0 && strings.Contains(s, "slave") &&
			!strings.Contains(s, "s_down") && !strings.Contains(s, "disconnected") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel never listed the replica: %v %v", reps, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	conn := connect(t, scanner.Options{URL: "redis://" + ss.SentinelAddr, SentinelMaster: ss.MasterName, Replica: true, Idle: true})
	got, st, err := collect(t, conn)
	if err != nil || len(st.Refused) > 0 || len(got) != 20 {
		t.Fatalf("scan: %d keys, %v, refused %+v", len(got), err, st.Refused)
	}
	for _, k := range got {
		fresh := k.Key == "sr:3"
		if !k.HasIdle || (fresh && k.Idle > time.Minute) || (!fresh && k.Idle < time.Hour) {
			t.Errorf("%s: idle %v (has %v), fresh on the master: %v", k.Key, k.Idle, k.HasIdle, fresh)
		}
	}
	// The values came from the replica: it served the SCAN.
	if n := redistest.CommandStats(t, r.Client(t))["scan"]; n == 0 {
		t.Error("the replica served no SCAN")
	}
}
