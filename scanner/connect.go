package scanner

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/keyreg/keyreg/internal/secret"
)

// mode is the kind of deployment a Conn talks to.
type mode int

const (
	modeStandalone mode = iota
	modeCluster
	modeSentinel
)

func (m mode) String() string {
	switch m {
	case modeCluster:
		return "cluster"
	case modeSentinel:
		return "sentinel"
	default:
		return "standalone"
	}
}

// Conn is an open, read-only connection to a Redis deployment. It is safe for
// use by one Scan or Probe at a time (sampling inside Scan's callback, with
// the same context, is fine); Close releases every client. When the context
// of a call ends, the reads and writes of every call in flight on the Conn
// fail at once, however long Options.Timeout is.
type Conn struct {
	opts  Options
	mode  mode
	base  *redis.Options // parsed URL plus keyreg's quiet settings
	addr  string         // redacted display address of the entry point
	url   *url.URL       // the parsed Options.URL
	entry string         // the address of the entry point (base.Addr before replica mode)
	db    int            // database from Options.DB or the URL path

	tls      *tls.Config // of a rediss:// URL; every dial does the handshake itself
	insecure bool        // certificates are not verified
	watcher  watcher     // aborts blocked I/O when an operation's context ends

	mu      sync.Mutex
	clients map[clientKey]*redis.Client
	raw     map[*redis.Client]*rawPool // the probe's own connections, per client
	topo    *topology                  // cluster only; refreshed by Probe on MOVED
	noTouch bool                       // the server has CLIENT NO-TOUCH (Redis 7.2+)
	touch   touchState                 // whether reads touch a primary's keys (touch.go)
	secrets []string                   // the passwords of opts, masked in every error (redact)
	primary string                     // standalone replica mode: the primary's address, "" when unknown
}

// primaryClient returns the client of the primary of node, a replica
// scanned in replica mode, with its display address.
func (c *Conn) primaryClient(node string, db int) (*redis.Client, string, error) {
	switch c.mode {
	case modeSentinel:
		return c.clientOf(clientKey{db: db, primary: true}), c.opts.SentinelMaster + " (master)", nil
	case modeCluster:
		c.mu.Lock()
		topo := c.topo
		c.mu.Unlock()
		for _, s := range topo.shards {
			if s.scan == node {
				return c.client(s.master.addr, 0, false), s.master.addr, nil
			}
		}
		return nil, "", fmt.Errorf("the primary of %s is not known", node)
	}
	if c.primary == "" {
		return nil, "", fmt.Errorf("the primary of %s is not known (INFO replication names no master)", node)
	}
	return c.client(c.primary, db, false), c.primary, nil
}

type clientKey struct {
	addr     string // node address; "" for the sentinel-managed master
	db       int
	readOnly bool
	primary  bool // sentinel: the master even in replica mode
}

// Connect parses o.URL, connects, and works out the deployment kind: Sentinel
// when o.SentinelMaster is set, cluster when o.Cluster is set or the server
// reports cluster_enabled:1, standalone otherwise. It pings the server before
// returning. Invalid options yield a *UsageError; every other error (for
// example an unreachable server) is a runtime error, a *TLSError when the
// TLS handshake failed or the server looks like a TLS port. Error texts
// never contain a password of the options: a URL that does not parse is
// described in words, never quoted.
//
// Connect leaves go-redis' process-wide logger alone: silencing it is the
// program's choice (cmd/keyreg does, in main).
func Connect(ctx context.Context, o Options) (*Conn, error) {
	c, err := connect(ctx, o)
	if err == nil {
		if err = c.initTouch(ctx); err != nil {
			_ = c.Close()
			err = fmt.Errorf("connecting to %s: %w", c.addr, err)
		}
	}
	if err != nil {
		return nil, mask(err, secretsOf(o)...)
	}
	return c, nil
}

// secretsOf lists the passwords o holds, raw and as the URL carries them.
func secretsOf(o Options) []string {
	s := []string{o.SentinelPassword}
	if u, err := url.Parse(o.URL); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			s = append(s, pw)
		}
	}
	return s
}

func connect(ctx context.Context, o Options) (*Conn, error) {
	if o.Count < 0 || o.Rate < 0 || o.MaxKeys < 0 || o.Timeout < 0 || o.DB < AllDBs || o.Parallel < 0 {
		return nil, usageErr(errors.New("count, rate, parallel, max keys, timeout and db must not be negative"))
	}
	if o.Count == 0 {
		o.Count = DefaultCount
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Cluster && o.SentinelMaster != "" {
		return nil, usageErr(errors.New("cluster and sentinel master are mutually exclusive"))
	}
	if o.SentinelMaster == "" && (len(o.SentinelAddrs) > 0 || o.SentinelUsername != "" || o.SentinelPassword != "") {
		return nil, usageErr(errors.New("sentinel addresses and credentials need a sentinel master name"))
	}
	for _, a := range o.SentinelAddrs {
		if h, p, err := net.SplitHostPort(a); err != nil || h == "" || p == "" || strings.Trim(p, "0123456789") != "" {
			return nil, usageErr(fmt.Errorf("sentinel address %q is not host:port", a))
		}
	}
	u, err := parseURL(o.URL)
	if err != nil {
		return nil, err
	}
	base, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, goRedisURLError(err)
	}
	c := &Conn{
		opts:    o,
		base:    base,
		addr:    secret.URL(u),
		url:     u,
		entry:   base.Addr,
		db:      base.DB,
		clients: map[clientKey]*redis.Client{},
		raw:     map[*redis.Client]*rawPool{},
		secrets: secretsOf(o),
	}
	switch {
	case base.TLSConfig != nil:
		c.tls, err = tlsConfig(o.TLS, base.TLSConfig.ServerName, base.TLSConfig.InsecureSkipVerify)
		if err != nil {
			return nil, usageErr(err)
		}
		c.insecure = c.tls.InsecureSkipVerify
	case o.TLS.set():
		return nil, usageErr(errors.New("tls options need a rediss:// url"))
	}
	defer c.watcher.watch(ctx)()
	// Every connection goes through c.dial, which does the TLS handshake.
	base.TLSConfig = nil
	base.Dialer = c.dial
	base.DisableIdentity = true
	base.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	base.DialTimeout = o.Timeout
	base.ReadTimeout = o.Timeout
	base.WriteTimeout = o.Timeout
	base.ContextTimeoutEnabled = true
	base.PoolSize = 4
	// Fail fast on a dead node: a scan must error, not hang in retries.
	base.MaxRetries = 2
	base.DialerRetries = 2
	if o.DB != 0 {
		c.db = o.DB
	}
	fail := func(err error) (*Conn, error) {
		_ = c.Close()
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return nil, fmt.Errorf("connecting to %s: %w", c.addr, err)
	}
	switch {
	case o.SentinelMaster != "":
		c.mode = modeSentinel
		if err := c.client("", c.firstDB(), false).Ping(ctx).Err(); err != nil {
			return fail(fmt.Errorf("master %q via sentinel: %w", o.SentinelMaster, c.plainClosed(base.Addr, err)))
		}
		return c, nil
	}
	if c.tls != nil {
		// One handshake first: a TLS failure is reported once, not after
		// go-redis' retries.
		nc, err := c.dial(ctx, base.Network, base.Addr)
		if err != nil {
			return fail(err)
		}
		_ = nc.Close()
	}
	seed := c.client(base.Addr, c.firstDB(), false)
	info, err := serverInfo(ctx, seed)
	if err != nil {
		return fail(c.plainClosed(base.Addr, err))
	}
	if supportsNoTouch(infoFields(info)["redis_version"]) {
		// Reconnect so that every connection, the seed's too, sends
		// CLIENT NO-TOUCH ON when it opens.
		c.noTouch = true
		_ = c.Close()
		seed = c.client(base.Addr, c.firstDB(), false)
	}
	clusterOn := strings.Contains(info, "cluster_enabled:1")
	if o.Cluster && !clusterOn {
		return fail(errors.New("server is not a cluster node (cluster_enabled:0)"))
	}
	if clusterOn {
		c.mode = modeCluster
		if o.DB > 0 || base.DB != 0 {
			return nil, usageErr(fmt.Errorf("cluster mode supports database 0 only, not %d", c.db))
		}
		c.db = 0
		topo, err := c.loadTopology(ctx)
		if err != nil {
			return fail(err)
		}
		c.topo = topo
		return c, nil
	}
	if o.Replica {
		addr, primary, err := c.standaloneReplica(ctx, seed)
		if err != nil {
			return fail(err)
		}
		c.base.Addr, c.primary = addr, primary
	}
	return c, nil
}

// serverInfo reads the server and cluster sections of INFO in one round
// trip. Servers that take at most one section (Redis before 7.0, and
// in-process fakes such as miniredis) reply with an error; then the default
// INFO reply is used, which holds both sections where they exist. A server
// whose reply has no cluster_enabled field is treated as standalone.
func serverInfo(ctx context.Context, cl *redis.Client) (string, error) {
	info, err := cl.Info(ctx, "server", "cluster").Result()
	var rerr redis.Error
	if err == nil || !errors.As(err, &rerr) {
		return info, err
	}
	return cl.Info(ctx).Result()
}

// supportsNoTouch reports whether a redis_version has CLIENT NO-TOUCH (7.2+).
func supportsNoTouch(version string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 7 || (major == 7 && minor >= 2)
}

// firstDB is the database used for the connection test and Probe.
func (c *Conn) firstDB() int {
	if c.db == AllDBs {
		return c.base.DB
	}
	return c.db
}

// Target returns the URL of what is read, password hidden: Options.URL,
// except in standalone replica mode, where it names the replica read
// instead of the primary given.
func (c *Conn) Target() string {
	if c.mode != modeStandalone || c.base.Addr == c.entry {
		return c.addr
	}
	u := *c.url
	if u.Scheme == "unix" {
		u.Scheme, u.Path = "redis", "/"+strconv.Itoa(c.base.DB)
	}
	u.Host = c.base.Addr
	return secret.URL(&u)
}

// Mode returns "standalone", "cluster" or "sentinel".
func (c *Conn) Mode() string { return c.mode.String() }

// Close closes every client the Conn opened.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for k, cl := range c.clients {
		if err := cl.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
			errs = append(errs, fmt.Errorf("closing client for %s: %w", k.addr, err))
		}
		delete(c.clients, k)
		if p := c.raw[cl]; p != nil {
			p.close()
			delete(c.raw, cl)
		}
	}
	return errors.Join(errs...)
}

// client returns the cached client for a node and database, creating it on
// first use. addr "" in sentinel mode means the sentinel-resolved master (or
// replica when Options.Replica is set).
func (c *Conn) client(addr string, db int, readOnly bool) *redis.Client {
	return c.clientOf(clientKey{addr: addr, db: db, readOnly: readOnly})
}

// clientOf is client for a key.
func (c *Conn) clientOf(k clientKey) *redis.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	addr, readOnly := k.addr, k.readOnly
	if cl, ok := c.clients[k]; ok {
		return cl
	}
	var cl *redis.Client
	if c.mode == modeSentinel {
		b := c.base
		cl = redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName:            c.opts.SentinelMaster,
			SentinelAddrs:         append([]string{b.Addr}, c.opts.SentinelAddrs...),
			SentinelUsername:      c.opts.SentinelUsername,
			SentinelPassword:      c.opts.SentinelPassword,
			ReplicaOnly:           c.opts.Replica && !k.primary,
			Username:              b.Username,
			Password:              b.Password,
			Dialer:                b.Dialer,
			DialerRetries:         b.DialerRetries,
			MaxRetries:            b.MaxRetries,
			DB:                    k.db,
			Protocol:              b.Protocol,
			DialTimeout:           b.DialTimeout,
			ReadTimeout:           b.ReadTimeout,
			WriteTimeout:          b.WriteTimeout,
			ContextTimeoutEnabled: true,
			PoolSize:              b.PoolSize,
			DisableIdentity:       true,
			// FailoverClient always disables maintenance notifications.
		})
	} else {
		o := *c.base
		if addr != "" {
			o.Addr = addr
		}
		o.DB = k.db
		noTouch := c.noTouch
		o.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
			// READONLY lets a cluster replica serve reads for its shard.
			if readOnly {
				if err := cn.ReadOnly(ctx).Err(); err != nil {
					return err
				}
			}
			// NO-TOUCH keeps sampling reads from resetting idle times and
			// LRU/LFU state (Redis 7.2 and later).
			if noTouch {
				return cn.Do(ctx, "CLIENT", "NO-TOUCH", "ON").Err()
			}
			return nil
		}
		o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
		cl = redis.NewClient(&o)
	}
	c.clients[k] = cl
	c.raw[cl] = &rawPool{opts: cl.Options(), readOnly: readOnly, noTouch: c.noTouch && c.mode != modeSentinel}
	return cl
}

// rawPool returns the probe connections that go where cl goes.
func (c *Conn) rawPool(cl *redis.Client) *rawPool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw[cl]
}

// standaloneReplica returns the address to scan when Options.Replica is set
// on a standalone server: the server itself when it is a replica, else its
// first online replica from INFO replication.
func (c *Conn) standaloneReplica(ctx context.Context, seed *redis.Client) (replica, primary string, err error) {
	info, err := seed.Info(ctx, "replication").Result()
	if err != nil {
		return "", "", fmt.Errorf("reading replication info: %w", err)
	}
	fields := infoFields(info)
	if fields["role"] == "slave" {
		if h, p := fields["master_host"], fields["master_port"]; h != "" && p != "" {
			primary = net.JoinHostPort(h, p)
		}
		return c.base.Addr, primary, nil
	}
	for i := 0; ; i++ {
		v, ok := fields["slave"+strconv.Itoa(i)]
		if !ok {
			break
		}
		kv := map[string]string{}
		for part := range strings.SplitSeq(v, ",") {
			if k, val, ok := strings.Cut(part, "="); ok {
				kv[k] = val
			}
		}
		if kv["state"] == "online" && kv["ip"] != "" && kv["port"] != "" {
			return net.JoinHostPort(kv["ip"], kv["port"]), c.base.Addr, nil
		}
	}
	return "", "", errors.New("replica mode: the master has no online replica")
}

// infoFields parses "key:value" lines of an INFO reply.
func infoFields(info string) map[string]string {
	m := map[string]string{}
	for line := range strings.SplitSeq(info, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// keyspaceDBs returns the database numbers listed in INFO keyspace, in order.
func keyspaceDBs(ctx context.Context, cl *redis.Client) ([]int, error) {
	info, err := cl.Info(ctx, "keyspace").Result()
	if err != nil {
		return nil, fmt.Errorf("reading keyspace info: %w", err)
	}
	var dbs []int
	for k := range infoFields(info) {
		n, ok := strings.CutPrefix(k, "db")
		if !ok {
			continue
		}
		if d, err := strconv.Atoi(n); err == nil {
			dbs = append(dbs, d)
		}
	}
	slices.Sort(dbs)
	return dbs, nil
}
