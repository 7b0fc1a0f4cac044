// Package scanner is the only part of keyreg that talks to Redis.
//
// Connect opens a read-only view of a standalone server, a Redis Cluster or a
// Sentinel-managed master. Conn.Scan walks the keyspace with SCAN (on every
// cluster master concurrently, or on one replica per shard) and probes each
// SCAN batch with one pipelined round trip of TYPE and PTTL (plus OBJECT
// IDLETIME, MEMORY USAGE and a collection's length when asked; a length
// command stands in for TYPE; OBJECT ENCODING of a fence and EXISTS of a
// lock's fence key; and, in one more round trip, XINFO GROUPS and XINFO
// CONSUMERS of a stream with planned consumer groups). Batches of KeyInfo are handed to a
// callback one at a time, so memory stays bounded by the batch size, never by
// the number of keys.
//
// The package never sends a write command, KEYS, DEBUG or CONFIG, and works
// with the ACL rules in MinimalACL. It never prints or logs: go-redis' own
// logger is replaced by a no-op logger when Connect is called.
package scanner

import (
	"errors"
	"strings"
	"time"

	"github.com/keyreg/keyreg/internal/secret"
	"github.com/keyreg/keyreg/source"
)

// AllDBs as Options.DB scans every logical database listed in INFO keyspace
// (standalone and Sentinel only; a cluster has database 0 only).
const AllDBs = -1

// DefaultCount is the SCAN COUNT hint used when Options.Count is 0.
const DefaultCount = 1000

// DefaultTimeout is the per-command network timeout used when
// Options.Timeout is 0.
const DefaultTimeout = 5 * time.Second

// MinimalACL is the smallest set of ACL rules keyreg needs: read-only access
// to every key, and only the commands the scanner sends. Create a user with
//
//	ACL SETUSER keyreg reset on >password <MinimalACL>
//
// %R~* grants read-only access to every key but the empty one, which the
// glob * does not match; %R~ (an empty pattern) grants that one, since a key
// named "" would otherwise fail the whole scan with NOPERM. +select is needed
// for databases other than 0, +cluster|nodes in cluster mode, +readonly in
// cluster replica mode. HELLO and AUTH need no rule. The tests check that a
// scan under these rules leaves ACL LOG and INFO errorstats empty.
const MinimalACL = "%R~* %R~ +ping +info +select +scan +type +pttl +object|idletime +memory|usage +cluster|nodes +readonly" +
	" +strlen +get +hlen +llen +scard +zcard +xlen +hscan +sscan +zscan +lrange +xrange" +
	" +exists +object|encoding +xinfo|groups +xinfo|consumers +pubsub +cluster|info"

// Options selects the server and what to collect per key.
type Options struct {
	// URL is a redis://, rediss:// or unix:// URL, with optional ACL user and
	// password (redis://user:pass@host:6379/0). With SentinelMaster set, the
	// host is a sentinel and the credentials apply to the data nodes.
	URL string
	// Cluster forces cluster mode. When false, Connect still switches to
	// cluster mode when the server reports cluster_enabled:1.
	Cluster bool
	// SentinelMaster, when set, is the master name to resolve through the
	// sentinel at URL (and those of SentinelAddrs).
	SentinelMaster string
	// SentinelAddrs are more sentinels ("host:port") to ask, besides the
	// URL's host; go-redis asks them in random order until one answers.
	SentinelAddrs []string
	// SentinelUsername and SentinelPassword authenticate to the sentinels
	// (requirepass or an ACL user of the sentinel). The URL's credentials
	// go to the data nodes only.
	SentinelUsername, SentinelPassword string
	// TLS configures certificates for a rediss:// URL; setting any of it
	// with another scheme is a usage error.
	TLS TLSOptions
	// Replica scans replicas instead of masters: one replica per cluster
	// shard (with READONLY), an online replica of a standalone master, or a
	// replica chosen by the sentinel.
	Replica bool
	// DB is the logical database to scan. 0 means the database in the URL
	// path (default 0); AllDBs scans every database in INFO keyspace.
	DB int
	// Match is a Redis glob, sent as the SCAN MATCH pattern: * ? [abc]
	// [^a] [a-z], and \ to take the next byte literally. Empty (or "*")
	// matches all keys and sends no MATCH. A literal prefix followed by one
	// trailing * (see GlobPrefix) is sent in the canonical form PrefixGlob
	// gives it; PrefixGlob turns a literal prefix into a glob.
	Match string
	// Count is the SCAN COUNT hint; 0 means DefaultCount.
	Count int
	// Rate caps the number of keys probed per second across all nodes;
	// 0 means no cap.
	Rate int
	// Parallel caps the cluster shards scanned at the same time; 0 means
	// all at once. 1 scans them one after another, which spreads an audit's
	// load over time instead of over every master. A standalone or
	// Sentinel target is one node and is not affected.
	Parallel int
	// MaxKeys stops the scan after this many keys were delivered; 0 means
	// no limit. Stopping early sets Stats.Partial.
	MaxKeys int64
	// Timeout is the dial, read and write timeout of every command;
	// 0 means DefaultTimeout.
	Timeout time.Duration
	// Memory adds MEMORY USAGE to each probe. It uses the server's default
	// of 5 samples per collection: exact for strings and small collections,
	// an estimate for large ones, and never a walk of every element.
	Memory bool
	// Idle adds OBJECT IDLETIME to each probe, sent before any other command
	// on the key.
	Idle bool
	// SampleBudget caps the bytes of sampled values one SampleEach call
	// holds at once (see SampleEach); 0 or below means DefaultSampleBudget. It is
	// raised to the maxBytes of the call when that is larger, so that one
	// value always fits.
	SampleBudget int64
	// AllowTouch lets the scanner send reads that reset a key's LRU idle
	// time and LFU counter on a primary without CLIENT NO-TOUCH (Redis
	// before 7.2): samples, STRLEN and length commands. Off, they are not
	// sent (see TouchState); on, they are sent and counted.
	AllowTouch bool
	// Plan, when set, decides per key what Scan and Probe add to TYPE and
	// PTTL, on top of Idle and Memory. ScanKeys takes its plan as an
	// argument instead.
	Plan source.Planner
}

// Plan is what one probe reads about a key beyond TYPE and PTTL (see
// source.Plan): OBJECT IDLETIME (sent first: later reads reset it), MEMORY
// USAGE, and the length command of a collection type, sent instead of
// TYPE; TYPE follows only when the length does not prove the key's type.
type Plan = source.Plan

// KeyInfo is what one probe learned about one key (see source.KeyInfo).
type KeyInfo = source.KeyInfo

// NoExpiry is the KeyInfo.PTTL of a key without a TTL.
const NoExpiry = source.NoExpiry

// Stats summarizes one Scan (see source.Stats). Stats.Errors keeps at most
// maxNotes notes.
type Stats = source.Stats

// maxNotes caps Stats.Errors.
const maxNotes = 20

// UsageError reports invalid Options or an unparsable URL, as opposed to a
// runtime failure such as an unreachable server. Callers map it to exit code
// 2 and every other Connect error to exit code 3.
type UsageError struct {
	// Err is the underlying problem; its text is already redacted.
	Err error
	// Hint, when set, says how to fix it (for example how to
	// percent-encode a password).
	Hint    string
	secrets []string
}

// Error returns the redacted message.
func (e *UsageError) Error() string { return secret.Mask(e.Err.Error(), e.secrets...) }

// Unwrap returns the underlying error.
func (e *UsageError) Unwrap() error { return e.Err }

func usageErr(err error) error { return &UsageError{Err: err} }

// redactedError hides passwords in the text of an error while keeping
// errors.Is and errors.As working.
type redactedError struct {
	err     error
	secrets []string
}

// Error returns the masked text on one line (go-redis joins the errors of
// several sentinels with newlines).
func (e redactedError) Error() string {
	return strings.ReplaceAll(secret.Mask(e.err.Error(), e.secrets...), "\n", "; ")
}
func (e redactedError) Unwrap() error { return e.err }

// redact wraps err so its text never contains a URL password nor a
// password of the Conn's options. Every error that leaves the Conn goes
// through it: a server's error reply may quote anything, the password
// included (a proxy that echoes its AUTH line, a module's message).
func (c *Conn) redact(err error) error { return mask(err, c.secrets...) }

// mask wraps err so its text never contains a URL password nor any of
// secrets.
func mask(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	var u *UsageError
	if errors.As(err, &u) {
		u.secrets = append(u.secrets, secrets...)
		return err
	}
	var r redactedError
	if errors.As(err, &r) && len(secrets) == 0 {
		return err
	}
	return redactedError{err, secrets}
}

// RedactURL replaces the password of every URL in s with "xxxxx", so
// "redis://user:secret@h:1/0" becomes "redis://user:xxxxx@h:1/0", and masks
// password parameters (see internal/secret). A lone URL that parses has its
// password hidden whole, whatever characters it holds; other text is
// redacted as free text, so it also applies to error messages.
func RedactURL(s string) string { return secret.URLString(s) }

// GlobPrefix reports whether glob matches exactly the keys starting with
// some literal prefix: literal bytes (a metacharacter escaped with \
// counts as literal) followed by one trailing *, and returns that prefix.
// "v1:*" is the prefix "v1:", "*" the empty prefix; "v1:*:x", "v?:*" and
// "v1:" (no trailing *) are not prefixes.
func GlobPrefix(glob string) (prefix string, ok bool) {
	if !strings.HasSuffix(glob, "*") {
		return "", false
	}
	var b strings.Builder
	body := glob[:len(glob)-1]
	for i := 0; i < len(body); i++ {
		switch c := body[i]; c {
		case '\\':
			if i+1 == len(body) {
				return "", false // the * is escaped: a literal, not a wildcard
			}
			i++
			b.WriteByte(body[i])
		case '*', '?', '[':
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// scanMatch is the SCAN MATCH pattern of glob: none for every key, the
// canonical PrefixGlob form for a prefix, else glob as given.
func scanMatch(glob string) string {
	if p, ok := GlobPrefix(glob); ok {
		return PrefixGlob(p)
	}
	return glob
}

// PrefixGlob returns the SCAN MATCH glob that matches exactly the keys
// starting with prefix: the glob metacharacters * ? [ ] \ are escaped with a
// backslash and "*" is appended. An empty prefix returns "" (no MATCH).
func PrefixGlob(prefix string) string {
	if prefix == "" {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(prefix); i++ {
		switch c := prefix[i]; c {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('*')
	return b.String()
}
