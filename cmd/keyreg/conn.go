package main

import (
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

// connOptions are the flags that say which Redis to talk to.
type connOptions struct {
	url        string
	cluster    bool
	sentinel   string
	replica    bool
	db         int
	dbSet      bool
	cmdTimeout time.Duration
}

func (o *connOptions) flags(f *pflag.FlagSet) {
	f.StringVarP(&o.url, "url", "u", "", "redis://, rediss:// or unix:// URL (env REDIS_URL; default redis://localhost:6379)")
	f.BoolVar(&o.cluster, "cluster", false, "require Redis Cluster (detected automatically)")
	f.StringVar(&o.sentinel, "sentinel-master", "", "resolve this master name through the Sentinel at --url")
	f.BoolVar(&o.replica, "replica", false, "read from replicas instead of masters (one per shard, with READONLY)")
	f.Func("db", "logical database (default: the URL's, else every database in INFO keyspace)", func(s string) error {
		var err error
		o.db, err = parseInt(s)
		o.dbSet = true
		return err
	})
	f.DurationVar(&o.cmdTimeout, "command-timeout", scanner.DefaultTimeout, "timeout of each Redis round trip")
}

// scannerOptions turns the flags into scanner options. The database is
// --db, else the one in the URL path, else every database.
func (o *connOptions) scannerOptions(plan scanner.Plan) scanner.Options {
	so := scanner.Options{
		URL:            redisURL(o.url),
		Cluster:        o.cluster,
		SentinelMaster: o.sentinel,
		Replica:        o.replica,
		DB:             scanner.AllDBs,
		Timeout:        o.cmdTimeout,
		Idle:           plan.Idle,
		Memory:         plan.Memory,
	}
	switch {
	case o.dbSet:
		so.DB = o.db
	case urlHasDB(so.URL):
		so.DB = 0 // the database in the URL path
	}
	return so
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

// connectError maps a scanner.Connect error to an exit code: bad options
// are usage errors, everything else (unreachable, auth) runtime errors.
func connectError(err error) error {
	var ue *scanner.UsageError
	if errors.As(err, &ue) {
		return usageError(err, "")
	}
	return runtimeError(err, "check --url (or $REDIS_URL) and that the server is reachable")
}

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return n, nil
}
