package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/keyreg/keyreg/scanner"
	"github.com/spf13/pflag"
)

// connOptions are the flags that say which Redis to talk to, shared by
// every command that connects (audit, explain --live).
type connOptions struct {
	url        string
	cluster    bool
	sentinel   string
	replica    bool
	allowTouch bool
	db         int
	dbSet      bool
	cmdTimeout time.Duration

	sentinelAddrs []string
	sentinelUser  string
	sentinelPass  string
	tls           scanner.TLSOptions
	tlsInsecure   *pflag.Flag // --tls-insecure; $REDIS_TLS_INSECURE applies when it is not given
}

func (o *connOptions) flags(f *pflag.FlagSet) {
	f.StringVarP(&o.url, "url", "u", "", "redis://, rediss:// or unix:// URL (env REDIS_URL; default redis://localhost:6379)")
	f.BoolVar(&o.cluster, "cluster", false, "require Redis Cluster (detected automatically)")
	f.StringVar(&o.sentinel, "sentinel-master", "", "resolve this master name through the Sentinel at --url")
	f.StringSliceVar(&o.sentinelAddrs, "sentinel-addr", nil, "more sentinels (host:port, repeatable or comma-separated) besides the --url host")
	f.StringVar(&o.sentinelUser, "sentinel-username", "", "ACL user of the sentinels (env REDIS_SENTINEL_USERNAME)")
	f.StringVar(&o.sentinelPass, "sentinel-password", "", "password of the sentinels (env REDIS_SENTINEL_PASSWORD, preferred: flags show in ps)")
	f.BoolVar(&o.replica, "replica", false, "read from replicas instead of masters (one per shard, with READONLY)")
	f.Func("db", "logical database (default: the URL's, else every database in INFO keyspace)", func(s string) error {
		var err error
		o.db, err = parseInt(s)
		o.dbSet = true
		return err
	})
	f.DurationVar(&o.cmdTimeout, "command-timeout", scanner.DefaultTimeout, "timeout of each Redis round trip")
	f.StringVar(&o.tls.CACert, "tls-ca-cert", "", "rediss://: PEM file of the CAs to trust instead of the system's (env REDIS_TLS_CA_CERT)")
	f.StringVar(&o.tls.Cert, "tls-cert", "", "rediss://: PEM client certificate, for tls-auth-clients (env REDIS_TLS_CERT)")
	f.StringVar(&o.tls.Key, "tls-key", "", "rediss://: PEM key of --tls-cert (env REDIS_TLS_KEY)")
	f.StringVar(&o.tls.ServerName, "tls-server-name", "", "rediss://: name to verify the server certificate against (env REDIS_TLS_SERVER_NAME; default: the URL host)")
	f.BoolVar(&o.tls.Insecure, "tls-insecure", false, "rediss://: do not verify the server certificate; warns, and the report says so (env REDIS_TLS_INSECURE)")
	o.tlsInsecure = f.Lookup("tls-insecure")
	f.BoolVar(&o.allowTouch, "allow-touch", false, "on a primary before redis 7.2, sample and read lengths anyway, resetting those keys' LRU/LFU state (counted in a report note)")
}

// env returns flag when it is set, else the environment variable name.
func env(flag, name string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(name)
}

// scannerOptions turns the flags (and their environment variables) into
// scanner options. The database is --db, else the one in the URL path,
// else every database. It warns on stderr when certificates go unverified.
func (a *app) scannerOptions(o *connOptions, plan scanner.Plan) (scanner.Options, error) {
	so := scanner.Options{
		URL:            redisURL(o.url),
		Cluster:        o.cluster,
		SentinelMaster: o.sentinel,
		SentinelAddrs:  o.sentinelAddrs,
		Replica:        o.replica,
		AllowTouch:     o.allowTouch,
		DB:             scanner.AllDBs,
		Timeout:        o.cmdTimeout,
		Idle:           plan.Idle,
		Memory:         plan.Memory,
		TLS: scanner.TLSOptions{
			CACert:     env(o.tls.CACert, "REDIS_TLS_CA_CERT"),
			Cert:       env(o.tls.Cert, "REDIS_TLS_CERT"),
			Key:        env(o.tls.Key, "REDIS_TLS_KEY"),
			ServerName: env(o.tls.ServerName, "REDIS_TLS_SERVER_NAME"),
		},
	}
	so.SentinelUsername, so.SentinelPassword = o.sentinelUser, o.sentinelPass
	if o.sentinel != "" {
		// The environment's sentinel credentials apply to a Sentinel
		// deployment only; a flag without --sentinel-master is an error.
		so.SentinelUsername = env(o.sentinelUser, "REDIS_SENTINEL_USERNAME")
		so.SentinelPassword = env(o.sentinelPass, "REDIS_SENTINEL_PASSWORD")
	}
	so.TLS.Insecure = o.tls.Insecure
	if v := os.Getenv("REDIS_TLS_INSECURE"); v != "" && (o.tlsInsecure == nil || !o.tlsInsecure.Changed) {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return so, usageError(fmt.Errorf("$REDIS_TLS_INSECURE %q is not true or false", v), "")
		}
		so.TLS.Insecure = b
	}
	switch {
	case o.dbSet:
		so.DB = o.db
		if o.db == 0 {
			// scanner.Options.DB 0 means the URL's database: --db 0
			// must mean database 0 even when the URL names another.
			so.URL = withoutDB(so.URL)
		}
	case urlHasDB(so.URL):
		so.DB = 0 // the database in the URL path
	}
	if so.TLS.Insecure || urlSkipsVerify(so.URL) {
		fmt.Fprintln(a.stderr, "keyreg: warning: tls certificate verification is off: the server is not authenticated")
	}
	return so, nil
}

// redisURL picks the URL: the flag, then $REDIS_URL, then localhost.
func redisURL(flag string) string {
	if flag != "" {
		return flag
	}
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return "redis://localhost:6379"
}

func urlHasDB(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.Scheme != "unix" && strings.Trim(p.Path, "/") != ""
}

// withoutDB returns u without its database: the path of a redis:// or
// rediss:// URL, the db parameter of a unix:// one. A URL that does not
// parse is returned as it is, for the scanner to describe.
func withoutDB(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	if p.Scheme == "unix" {
		q := p.Query()
		if !q.Has("db") {
			return u
		}
		q.Del("db")
		p.RawQuery = q.Encode()
		return p.String()
	}
	if strings.Trim(p.Path, "/") == "" {
		return u
	}
	p.Path, p.RawPath = "", ""
	return p.String()
}

func urlSkipsVerify(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "rediss" {
		return false
	}
	v, err := strconv.ParseBool(p.Query().Get("skip_verify"))
	return err == nil && v
}

// connectError maps a scanner.Connect error to an exit code: bad options
// are usage errors, everything else (unreachable, auth, TLS) runtime
// errors, with a hint at the flag that fixes it.
func connectError(err error) error {
	var ue *scanner.UsageError
	if errors.As(err, &ue) {
		return usageError(err, ue.Hint)
	}
	if errors.Is(err, context.Canceled) {
		return runtimeError(err, "") // Ctrl-C while connecting
	}
	return runtimeError(err, connectHint(err))
}

func connectHint(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	msg := err.Error()
	switch {
	case errors.As(err, &unknown):
		return "give the server's CA with --tls-ca-cert (or $REDIS_TLS_CA_CERT)"
	case errors.As(err, &host):
		return "give the name its certificate holds with --tls-server-name (or $REDIS_TLS_SERVER_NAME)"
	case strings.Contains(msg, "certificate required") || strings.Contains(msg, "bad certificate"):
		return "the server wants a client certificate: give --tls-cert and --tls-key"
	case strings.Contains(msg, "via sentinel") && (strings.Contains(msg, "NOAUTH") || strings.Contains(msg, "WRONGPASS")):
		return "the sentinels need their own password: set $REDIS_SENTINEL_PASSWORD (or --sentinel-password); the URL's goes to the master"
	case strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "NOAUTH"):
		return "check the user and password in --url (or $REDIS_URL); a password holding # / ? % or a space must be percent-encoded"
	}
	var te *scanner.TLSError
	if errors.As(err, &te) {
		return ""
	}
	return "check --url (or $REDIS_URL) and that the server is reachable"
}

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return n, nil
}
