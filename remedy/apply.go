package remedy

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Target finds the primary that holds a key (scanner.Conn.WriteClient and
// WriteNodes), and names what it is connected to (scanner.Conn.Target).
type Target interface {
	WriteClient(key string, db int) (*redis.Client, error)
	WriteNodes(db int) ([]*redis.Client, error)
	Target() string
}

// Defaults of ApplyOptions.
const (
	DefaultRate        = 500
	DefaultMaxLatency  = 50 * time.Millisecond
	DefaultMaxPause    = 30 * time.Second
	DefaultMaxKeyBytes = 16 << 20
	DefaultMaxPlanAge  = 24 * time.Hour
)

// ApplyOptions say how to apply a plan.
type ApplyOptions struct {
	// Backup is the RDB file the keys go to before they are deleted; its
	// journal is Backup + ".journal". When both exist the run resumes.
	Backup string
	// Rate caps the keys handled per second.
	Rate int
	// MaxLatency is the longest round trip (a PING before every batch, and
	// every batch's own) before the run pauses; MaxPause how long it waits
	// for the latency to come back before it aborts.
	MaxLatency, MaxPause time.Duration
	// MaxKeyBytes skips keys whose size or DUMP is larger.
	MaxKeyBytes int64
	// MaxPlanAge refuses older plans.
	MaxPlanAge time.Duration
	// Now is the clock; nil for time.Now.
	Now func() time.Time
	// Hook, when set, is called after each step of a batch with the step
	// and the number of plan keys handled so far: "read" (the keys are in
	// the backup's buffer), "synced" (the backup is on disk, the journal
	// not yet), "backed" (both), "unlinked" (the deletes ran, the journal
	// does not say so yet) and "deleted" (it does);
	// tests stop the process there. An error aborts the run.
	Hook func(step string, handled int) error
}

// Result is what an apply did.
type Result struct {
	Deleted, Expired int
	// Gone counts keys that had vanished when checked (expired, deleted by
	// someone else, or by the run that was interrupted before it
	// journaled the delete).
	Gone int
	// Skipped lists the keys left alone, with why (at most MaxListed).
	Skipped   []Skip
	SkipCount map[string]int
	// Resumed says the run carried on from an interrupted one.
	Resumed bool
	// Paused counts the pauses for latency.
	Paused int
	// WorstRTT is the longest latency probe seen.
	WorstRTT time.Duration
}

// MaxListed bounds Result.Skipped.
const MaxListed = 1000

// Skip is a key left alone.
type Skip struct {
	Key    string `json:"key"` // Go-quoted, clipped
	DB     int    `json:"db"`
	Reason string `json:"reason"`
}

// RefusedError is a plan or a server that apply refuses before it writes
// anything: a stale or edited plan, a replica, a read-only user.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

func refused(format string, a ...any) error {
	return &RefusedError{fmt.Errorf(format, a...)}
}

// ErrLatency aborts a run whose server stayed slow past MaxPause.
var ErrLatency = errors.New("the server's latency stayed over --max-latency")

func (o *ApplyOptions) defaults() {
	if o.Rate <= 0 {
		o.Rate = DefaultRate
	}
	if o.MaxLatency <= 0 {
		o.MaxLatency = DefaultMaxLatency
	}
	if o.MaxPause <= 0 {
		o.MaxPause = DefaultMaxPause
	}
	if o.MaxKeyBytes <= 0 {
		o.MaxKeyBytes = DefaultMaxKeyBytes
	}
	o.MaxKeyBytes = min(o.MaxKeyBytes, MaxBackupValue-1024)
	if o.MaxPlanAge <= 0 {
		o.MaxPlanAge = DefaultMaxPlanAge
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

type applier struct {
	p     *Plan
	o     ApplyOptions
	t     Target
	res   *Result
	nodes []*redis.Client
	sha   map[string]string // script -> sha1
	touch bool              // reads reset idle times (Redis before 7.2)
	// sameServer: the plan was made on the server applied to, so MEMORY
	// USAGE is compared.
	sameServer bool
	states     []keyState
	// sharedRead: the nodes where this run has DUMPed (or may have, in a
	// batch that failed) a key whose value is a shared integer object,
	// resetting the idle time of every key holding the same integer.
	sharedRead map[*redis.Client]bool
	j          *journal
	b          *Backup
	start      time.Time
	sent       int // keys sent to the server by this run, for the rate
}

// Apply carries out a plan: prune (backup, then check-and-UNLINK) or
// expire (a TTL on keys that still have none). A refusal is a
// *RefusedError, before anything was written.
func Apply(ctx context.Context, p *Plan, t Target, o ApplyOptions) (*Result, error) {
	o.defaults()
	a := &applier{p: p, o: o, t: t, res: &Result{SkipCount: map[string]int{}}, sha: map[string]string{}, sharedRead: map[*redis.Client]bool{}}
	a.sameServer = p.Server.Mode != "snapshot" && p.Server.Target == t.Target()
	if err := p.Fresh(o.Now(), o.MaxPlanAge); err != nil {
		return a.res, &RefusedError{err}
	}
	if err := a.preflight(ctx); err != nil {
		return a.res, err
	}
	a.states = make([]keyState, len(p.Keys))
	if p.Kind == KindPrune {
		if err := a.openFiles(); err != nil {
			return a.res, err
		}
		defer a.j.f.Close()
	}
	a.start = o.Now()
	err := a.run(ctx)
	if a.b != nil {
		err = errors.Join(err, a.b.Close())
	}
	return a.res, err
}

// preflight refuses replicas and users that cannot write, and loads the
// scripts on every primary.
func (a *applier) preflight(ctx context.Context) error {
	dbs := map[int]bool{}
	for i := range a.p.Keys {
		dbs[a.p.Keys[i].DB] = true
	}
	seen := map[*redis.Client]bool{}
	for db := range dbs {
		nodes, err := primaries(ctx, a.t, db, a.p.Kind)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if seen[n.cl] {
				continue
			}
			seen[n.cl] = true
			a.nodes = append(a.nodes, n.cl)
			a.touch = a.touch || !noTouch(n.version)
			if a.p.Kind == KindPrune && known(n.version) && !atLeast(n.version, 5, 0) {
				return tooOld(n, "prune")
			}
		}
	}
	for _, n := range a.nodes {
		for _, s := range []string{checkScript, readScript, deleteScript, expireScript} {
			sha, err := n.ScriptLoad(ctx, s).Result()
			if err != nil {
				if isPerm(err) {
					return refused("%s: the user may not run scripts (%v): see docs/remediation.md for the ACL", n.Options().Addr, err)
				}
				return fmt.Errorf("%s: SCRIPT LOAD: %w", n.Options().Addr, err)
			}
			a.sha[s] = sha
		}
	}
	// A write that changes nothing shows a read-only user or replica before
	// any key is touched: SETRANGE with an empty value on a key that does
	// not exist creates nothing. The key is in the slot of each node's
	// first planned key (probeKey), and not a planned key itself, whose
	// idle time the write would reset.
	probed := map[*redis.Client]bool{}
	for i := range a.p.Keys {
		k := &a.p.Keys[i]
		cl, err := a.t.WriteClient(k.key, k.DB)
		if err != nil {
			return &RefusedError{err}
		}
		if probed[cl] {
			continue
		}
		probed[cl] = true
		pk := probeKey(k.key)
		err = cl.SetRange(ctx, pk, 0, "").Err()
		switch {
		case err == nil, strings.HasPrefix(err.Error(), "WRONGTYPE"):
		case isPerm(err) || strings.HasPrefix(err.Error(), "READONLY"):
			return refused("%s: the user may not write (SETRANGE %s 0 \"\": %v): see docs/remediation.md for the ACL", cl.Options().Addr, pk, err)
		default:
			return fmt.Errorf("%s: checking write access: %w", cl.Options().Addr, err)
		}
	}
	return nil
}

// primary is one node a remediation writes to, with its redis_version.
type primary struct {
	cl      *redis.Client
	version string
}

// primaries returns the nodes that serve database db, after checking, with
// INFO, that each is a primary: a replica (INFO role not master, or a
// connection opened with --replica) is the wrong target, refused as a
// *RefusedError before anything is written. what names the command in the
// message.
func primaries(ctx context.Context, t Target, db int, what string) ([]primary, error) {
	nodes, err := t.WriteNodes(db)
	if err != nil {
		return nil, &RefusedError{err}
	}
	out := make([]primary, 0, len(nodes))
	for _, n := range nodes {
		info, err := n.Info(ctx, "replication", "server").Result()
		if err != nil {
			return nil, fmt.Errorf("%s: INFO: %w", n.Options().Addr, err)
		}
		f := infoFields(info)
		if role := f["role"]; role != "master" {
			return nil, refused("%s is a replica (role:%s), which does not take writes: %s writes to the primary; point --url at it (or use --sentinel-master)", n.Options().Addr, clip(role), what)
		}
		out = append(out, primary{cl: n, version: f["redis_version"]})
	}
	return out, nil
}

// clip bounds a value a server sent before it goes into a message, and
// quotes it when it is not plain.
func clip(s string) string {
	if len(s) > 40 {
		s = s[:40]
	}
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			return strconv.Quote(s)
		}
	}
	return s
}

func isPerm(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "NOPERM") || strings.HasPrefix(s, "NOAUTH")
}

func noTouch(version string) bool { return atLeast(version, 7, 2) }

// expiryTolerance is the delete script's tolerance on a key's expiry, in
// ms, where PEXPIRETIME fails (Redis before 7.0, or a user refused it);
// where it works the expiry must be the same to the millisecond. Without
// it both scripts compute the absolute expiry as TIME plus PTTL, read back
// to back, so each is the true expiry or 1 ms before it (PTTL counts from
// the server's millisecond clock, TIME is rounded down from microseconds),
// and two readings differ by at most 1 ms while the gap between the two
// commands stays under a millisecond. 0 ms skipped such keys as
// "ttl-changed" whenever the two readings fell on different sides of a
// millisecond (TestExpiryWithoutPEXPIRETIME on 7.0.15: 3 and 5 of 300
// keys, in two of three runs). The 5 ms admit a gap of up to 4 ms (a
// server stalled between two commands of one script). What it lets
// through unseen is an expiry moved by 5 ms or less, which a TTL set again
// after the backup's read can only be for a key whose previous TTL was set
// less than 5 ms before that read; its value is still checked byte for
// byte.
const expiryTolerance = 5

// atLeast says whether a redis_version is major.minor or later; a version
// that does not parse (INFO server hidden by a proxy) is not.
func atLeast(version string, major, minor int) bool {
	var ma, mi int
	if _, err := fmt.Sscanf(version, "%d.%d", &ma, &mi); err != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// known says whether a redis_version parses at all.
func known(version string) bool {
	var ma, mi int
	_, err := fmt.Sscanf(version, "%d.%d", &ma, &mi)
	return err == nil
}

// tooOld refuses a server before Redis 5.0, where prune's scripts fail
// (a write after TIME needs script effects replication, the default only
// from 5.0) and RESTORE has no ABSTTL or IDLETIME: what writes nothing
// right is refused before anything is written.
func tooOld(n primary, what string) error {
	return refused("%s runs Redis %s: keyreg %s needs Redis 5.0 or later", n.cl.Options().Addr, clip(n.version), what)
}

func infoFields(info string) map[string]string {
	m := map[string]string{}
	for line := range strings.SplitSeq(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok {
			m[k] = v
		}
	}
	return m
}

// openFiles creates the backup and its journal, or resumes both.
func (a *applier) openFiles() error {
	jpath := a.o.Backup + ".journal"
	_, berr := os.Stat(a.o.Backup)
	_, jerr := os.Stat(jpath)
	switch {
	case berr == nil && jerr != nil:
		return refused("the backup %s exists and has no journal: give a new file", a.o.Backup)
	case jerr == nil:
		f, err := os.OpenFile(jpath, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		if !lock(f) {
			f.Close()
			return refused("another run is applying with the backup %s (its journal is locked)", a.o.Backup)
		}
		states, off, end, err := readJournal(f, a.p, a.t.Target())
		if errors.Is(err, errJournalEmpty) && berr != nil {
			// Killed before the first line was synced: nothing was
			// backed up or deleted, start afresh in this file.
			if err := f.Truncate(0); err != nil {
				f.Close()
				return err
			}
			if _, err := f.Seek(0, 0); err != nil {
				f.Close()
				return err
			}
			return a.startJournal(f, jpath)
		}
		if err != nil {
			f.Close()
			return &RefusedError{err}
		}
		if berr != nil && off > 0 {
			// The backup is created with the first key backed up: a
			// journal that committed none may have no backup.
			f.Close()
			return refused("the journal %s exists without its backup %s", jpath, a.o.Backup)
		}
		if err := f.Truncate(end); err != nil {
			f.Close()
			return err
		}
		if _, err := f.Seek(end, 0); err != nil {
			f.Close()
			return err
		}
		a.j = &journal{f: f}
		if off > 0 {
			if a.b, err = ResumeBackup(a.o.Backup, off); err != nil {
				f.Close()
				return err
			}
		} else if err := os.Remove(a.o.Backup); err != nil && !os.IsNotExist(err) {
			f.Close()
			return err
		}
		a.states, a.res.Resumed = states, true
		for i := range states {
			a.count(i, states[i].done)
		}
		return nil
	}
	f, err := os.OpenFile(jpath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		// A --backup where no file can be made (no such directory, no
		// permission): refused before anything is read.
		return &RefusedError{err}
	}
	if !lock(f) {
		f.Close()
		return refused("another run is applying with the backup %s (its journal is locked)", a.o.Backup)
	}
	return a.startJournal(f, jpath)
}

// startJournal writes a new journal's first line, and makes the file and
// its directory entry durable before any key is read.
func (a *applier) startJournal(f *os.File, jpath string) error {
	a.j = &journal{f: f}
	a.j.add(journalLine{Plan: a.p.Digest, Backup: a.o.Backup, Target: a.t.Target()})
	if err := a.j.commit(); err != nil {
		return err
	}
	return syncDir(jpath)
}

// count records a key's outcome in the result.
func (a *applier) count(i int, done string) {
	switch done {
	case "":
		return
	case "deleted":
		a.res.Deleted++
	case "expired":
		a.res.Expired++
	case "gone":
		a.res.Gone++
	default:
		a.res.SkipCount[done]++
		if len(a.res.Skipped) < MaxListed {
			k := &a.p.Keys[i]
			a.res.Skipped = append(a.res.Skipped, Skip{Key: quoteKey(k.key), DB: k.DB, Reason: done})
		}
	}
}

func quoteKey(k string) string {
	if len(k) > 200 {
		return strconv.Quote(k[:200]) + "…"
	}
	return strconv.Quote(k)
}

// rateTime is how long n keys take at the rate.
func (a *applier) rateTime(n int) time.Duration {
	return time.Duration(float64(n) / float64(a.o.Rate) * float64(time.Second))
}

func (a *applier) batchSize() int { return max(1, min(a.o.Rate/20, maxBatch)) }

func (a *applier) run(ctx context.Context) error {
	n := a.batchSize()
	for lo := 0; lo < len(a.p.Keys); lo += n {
		hi := min(lo+n, len(a.p.Keys))
		todo := 0
		for i := lo; i < hi; i++ {
			if a.states[i].done == "" {
				todo++
			}
		}
		if todo == 0 {
			continue // decided by the run this one resumes
		}
		if err := a.pace(ctx, todo); err != nil {
			return err
		}
		if err := a.retry(ctx, func() error { return a.batch(ctx, lo, hi) }); err != nil {
			return err
		}
		a.sent += todo
	}
	return nil
}

// pace waits until sending n more keys keeps to the rate, then until the
// latency is under the limit.
func (a *applier) pace(ctx context.Context, n int) error {
	due := a.start.Add(a.rateTime(a.sent + n))
	if d := due.Sub(a.o.Now()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	if a.healthy(ctx) {
		return nil
	}
	return a.pause(ctx)
}

// healthy PINGs every primary and says whether each answered within
// MaxLatency.
func (a *applier) healthy(ctx context.Context) bool {
	ok := true
	for _, n := range a.nodes {
		start := time.Now()
		err := n.Ping(ctx).Err()
		rtt := time.Since(start)
		a.res.WorstRTT = max(a.res.WorstRTT, rtt)
		if err != nil || rtt > a.o.MaxLatency {
			ok = false
		}
	}
	return ok
}

// pause waits, polling, for the latency to come back under the limit, up
// to MaxPause.
func (a *applier) pause(ctx context.Context) error {
	a.res.Paused++
	deadline := time.Now().Add(a.o.MaxPause)
	step := min(max(a.o.MaxLatency*10, 100*time.Millisecond), time.Second)
	for time.Now().Before(deadline) {
		t := time.NewTimer(step)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if a.healthy(ctx) {
			// Start the schedule again from now: keys are not sent in a
			// burst to catch up with the time lost.
			a.start = a.o.Now().Add(-a.rateTime(a.sent))
			return nil
		}
	}
	return fmt.Errorf("%w (%s) for --max-pause %s: stopped; the journal is consistent, run again to resume", ErrLatency, a.o.MaxLatency, a.o.MaxPause)
}

// retry runs a batch step; a network error (a timeout: the server is
// stalled) pauses, then runs it again, since every step can be repeated:
// keys already decided are not read again, and a repeated delete finds the
// key gone.
func (a *applier) retry(ctx context.Context, step func() error) error {
	for {
		err := step()
		// Only a network error is a stall. A file error (*fs.PathError
		// has a Timeout method too) ends the run: retried, it would be
		// swallowed (the first read reset idle times on Redis before
		// 7.2, so the retry skips the keys as touched and the run ends
		// "done") or loop, and a journal write cut short would be
		// written again after its own first half.
		var ne net.Error
		var pe *fs.PathError
		if err == nil || !errors.As(err, &ne) || errors.As(err, &pe) || ctx.Err() != nil {
			return err
		}
		if perr := a.pause(ctx); perr != nil {
			return errors.Join(perr, err)
		}
	}
}

// batch handles the plan keys lo to hi.
func (a *applier) batch(ctx context.Context, lo, hi int) error {
	if a.p.Kind == KindExpire {
		return a.expire(ctx, lo, hi)
	}
	// Read and back up the keys not read yet.
	var read []int
	for i := lo; i < hi; i++ {
		s := &a.states[i]
		if s.backed || s.done != "" {
			continue
		}
		k := &a.p.Keys[i]
		if k.Size > a.o.MaxKeyBytes {
			a.decide(i, "too-large")
			continue
		}
		read = append(read, i)
	}
	// An untouched key has been idle since the plan, too: ask for its
	// planned idle time plus the whole seconds since the scan ended, less
	// two for the LRU clock's resolution.
	since := int64(a.o.Now().Sub(a.p.Finished)/time.Second) - 2
	minIdle := func(i int) int64 {
		idle := a.p.Keys[i].IdleSec
		if idle >= 0 && since > 0 {
			idle += since
		}
		return idle
	}
	// On Redis before 7.2 the DUMP of a key whose value is a shared
	// integer resets the idle time of every key holding the same integer
	// (see Shared integers in scripts.go): checkScript checks every key's
	// idle time first, in the same pipeline, before any read script DUMPs.
	prechecked := "0"
	stages := []stage{{readScript, nil}}
	if a.touch {
		prechecked = "1"
		stages = []stage{{checkScript, func(i int) []any { return []any{minIdle(i)} }}, stages[0]}
	}
	stages[len(stages)-1].args = func(i int) []any {
		k := &a.p.Keys[i]
		idle := minIdle(i)
		hasTTL := "0"
		if k.TTLMillis >= 0 {
			hasTTL = "1"
		}
		size := k.Size
		if !a.sameServer {
			// An estimate from a snapshot, or MEMORY USAGE of another
			// server (a replica, where a string loaded from RDB has no
			// spare allocation), which would make every key "changed".
			size = -1
		}
		return []any{idle, hasTTL, a.o.MaxKeyBytes, k.Type, size, prechecked}
	}
	out, err := a.evalStages(ctx, read, stages)
	if err != nil {
		if len(stages) > 1 {
			// The read scripts may have run: their DUMPs count.
			for _, i := range read {
				if cl, cerr := a.t.WriteClient(a.p.Keys[i].key, a.p.Keys[i].DB); cerr == nil {
					a.sharedRead[cl] = true
				}
			}
		}
		return err
	}
	replies := out[len(out)-1]
	var shared []*redis.Client
	for j, i := range read {
		if len(out) > 1 {
			why, isShared, node := a.checked(i, out[0][j])
			if isShared {
				shared = append(shared, node)
			}
			// The read script's reason comes first (gone, changed,
			// ttl-changed, touched): a write touches the key too.
			if why != "" && readOK(replies[j]) {
				a.decide(i, why)
				continue
			}
		}
		if err := a.backup(i, replies[j]); err != nil {
			return err
		}
	}
	for _, cl := range shared {
		a.sharedRead[cl] = true
	}
	if err := a.hook("read", hi); err != nil {
		return err
	}
	if a.b != nil {
		off, err := a.b.Sync()
		if err != nil {
			return fmt.Errorf("syncing the backup: %w", err)
		}
		a.j.add(journalLine{Off: off})
		if err := a.hook("synced", hi); err != nil {
			return err
		}
	}
	if err := a.j.commit(); err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	if err := a.hook("backed", hi); err != nil {
		return err
	}
	// Delete what was backed up and not decided.
	var del []int
	for i := lo; i < hi; i++ {
		if s := &a.states[i]; s.backed && s.done == "" {
			del = append(del, i)
		}
	}
	replies, err = a.eval(ctx, deleteScript, del, func(i int) []any {
		s := &a.states[i]
		return []any{s.sha, s.idle, s.abs, expiryTolerance}
	})
	if err != nil {
		return err
	}
	for j, i := range del {
		r, _ := replies[j].(string)
		if r == "" {
			r = "error"
		}
		a.decide(i, r)
	}
	if err := a.hook("unlinked", hi); err != nil {
		return err
	}
	if err := a.j.commit(); err != nil {
		return fmt.Errorf("writing the journal: %w", err)
	}
	return a.hook("deleted", hi)
}

func (a *applier) hook(step string, n int) error {
	if a.o.Hook == nil {
		return nil
	}
	return a.o.Hook(step, n)
}

// decide journals and counts a key's outcome.
func (a *applier) decide(i int, done string) {
	a.states[i].done = done
	l := journalLine{I: &i, Done: done}
	if a.j != nil {
		a.j.add(l)
	}
	a.count(i, done)
}

// backup writes one read reply to the backup, or decides the key.
func (a *applier) backup(i int, reply any) error {
	r, _ := reply.([]any)
	if len(r) == 0 {
		why, _ := reply.(string) // "error: " and the server's reply
		if why == "" {
			why = "error"
		}
		a.decide(i, why)
		return nil
	}
	status, _ := r[0].(string)
	if status != "ok" {
		if status == "" {
			status = "error"
		}
		a.decide(i, status)
		return nil
	}
	if len(r) != 4 {
		a.decide(i, "error")
		return nil
	}
	idle, _ := r[1].(int64)
	abs, _ := r[2].(int64)
	d, _ := r[3].(string)
	pl, err := ParseDump([]byte(d))
	if err != nil {
		a.decide(i, "bad-dump")
		return nil
	}
	k := &a.p.Keys[i]
	if a.b == nil {
		if a.b, err = CreateBackup(a.o.Backup, pl.Version); err != nil {
			return fmt.Errorf("creating the backup: %w", err)
		}
	}
	if pl.Version > a.b.Version() {
		a.decide(i, "rdb-version")
		return nil
	}
	e := BackupEntry{DB: k.DB, Key: k.key, ExpireAtMs: abs, IdleSec: idle, Payload: pl}
	if err := a.b.Add(&e); err != nil {
		return fmt.Errorf("writing the backup: %w", err)
	}
	sum := sha1.Sum([]byte(d))
	// The delete step checks the idle time again only where the DUMP did
	// not reset it (Redis 7.2 and later, with CLIENT NO-TOUCH).
	minIdle := k.IdleSec
	if a.touch {
		minIdle = -1
	}
	s := &a.states[i]
	s.backed, s.sha, s.abs, s.idle = true, hex.EncodeToString(sum[:]), abs, minIdle
	a.j.add(journalLine{I: &i, Sha: s.sha, Abs: abs, Idle: minIdle})
	return nil
}

// checked reads checkScript's reply for key i: why the key is skipped
// ("" for none), whether its value is a shared integer object, and its
// node. A shared key found touched on a node where this run has already
// DUMPed shared keys may have been touched by this run (a DUMP in an
// earlier batch): it is skipped all the same, as touched-shared.
func (a *applier) checked(i int, reply any) (why string, shared bool, node *redis.Client) {
	k := &a.p.Keys[i]
	node, _ = a.t.WriteClient(k.key, k.DB)
	r, _ := reply.([]any)
	if len(r) < 2 {
		return "", false, node // an error: readScript decides
	}
	status, _ := r[0].(string)
	flag, _ := r[len(r)-1].(int64)
	shared = flag == 1
	if status != "touched" {
		return "", shared, node
	}
	if shared && a.sharedRead[node] {
		return "touched-shared", shared, node
	}
	return "touched", shared, node
}

// readOK says whether a read script's reply is "ok".
func readOK(reply any) bool {
	r, _ := reply.([]any)
	if len(r) == 0 {
		return false
	}
	status, _ := r[0].(string)
	return status == "ok"
}

// stage is one script of a pipeline and its arguments per key.
type stage struct {
	script string
	args   func(i int) []any
}

// eval runs script on each of the keys idx, pipelined per node, and
// returns the replies in order. A reply that is a Redis error is returned
// as its text, prefixed "error: ", so that it is reported as the skip
// reason; a network error fails the whole call.
func (a *applier) eval(ctx context.Context, script string, idx []int, args func(i int) []any) ([]any, error) {
	out, err := a.evalStages(ctx, idx, []stage{{script, args}})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// evalStages runs each stage's script on each of the keys idx, in one
// pipeline per node: every key's first script, then every key's second,
// and so on. out[s][j] is stage s's reply for idx[j].
func (a *applier) evalStages(ctx context.Context, idx []int, stages []stage) ([][]any, error) {
	out := make([][]any, len(stages))
	for s := range out {
		out[s] = make([]any, len(idx))
	}
	if len(idx) == 0 {
		return out, nil
	}
	byNode := map[*redis.Client][]int{}
	var order []*redis.Client
	for j, i := range idx {
		k := &a.p.Keys[i]
		cl, err := a.t.WriteClient(k.key, k.DB)
		if err != nil {
			return nil, err
		}
		if _, ok := byNode[cl]; !ok {
			order = append(order, cl)
		}
		byNode[cl] = append(byNode[cl], j)
	}
	for _, cl := range order {
		js := byNode[cl]
		cmds := make([]*redis.Cmd, len(js)*len(stages))
		start := time.Now()
		_, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
			for s, st := range stages {
				sha := a.sha[st.script]
				for n, j := range js {
					k := &a.p.Keys[idx[j]]
					cmds[s*len(js)+n] = p.EvalSha(ctx, sha, []string{k.key}, st.args(idx[j])...)
				}
			}
			return nil
		})
		a.res.WorstRTT = max(a.res.WorstRTT, time.Since(start))
		for s := range stages {
			for n, j := range js {
				v, cerr := cmds[s*len(js)+n].Result()
				switch {
				case cerr == nil:
					out[s][j] = v
				case errors.Is(cerr, redis.Nil):
					out[s][j] = nil
				default:
					var re redis.Error
					if !errors.As(cerr, &re) || fatalReply(cerr.Error()) {
						return nil, fmt.Errorf("%s: %w", cl.Options().Addr, cerr)
					}
					out[s][j] = "error: " + firstLine(cerr.Error())
				}
			}
		}
		if err != nil {
			var re redis.Error
			if !errors.As(err, &re) {
				return nil, err
			}
		}
	}
	return out, nil
}

// fatalReply says whether an error reply ends the run rather than skipping
// one key: the node restarted (NOSCRIPT), became a replica (READONLY), is
// loading, or the key's slot moved. The run stops with exit 3; the next
// one connects again and resumes.
func fatalReply(msg string) bool {
	for _, p := range []string{"NOSCRIPT", "READONLY", "LOADING", "MASTERDOWN", "CLUSTERDOWN", "MOVED", "ASK", "TRYAGAIN", "NOPERM"} {
		if strings.HasPrefix(msg, p+" ") || msg == p {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// expire sets the planned TTL on keys that still have none.
func (a *applier) expire(ctx context.Context, lo, hi int) error {
	var idx []int
	for i := lo; i < hi; i++ {
		if a.states[i].done == "" {
			idx = append(idx, i)
		}
	}
	replies, err := a.eval(ctx, expireScript, idx, func(i int) []any { return []any{a.p.Keys[i].TTLSet} })
	if err != nil {
		return err
	}
	for j, i := range idx {
		r, _ := replies[j].(string)
		if r == "" {
			r = "error"
		}
		a.states[i].done = r
		a.count(i, r)
	}
	return a.hook("expired", hi)
}

// maxBatch bounds the keys of one batch: a pipeline of this many scripts
// holds the server for about a millisecond, so that the round trips
// of other clients stay short (docs/benchmarks.md).
const maxBatch = 200

// ACL is the smallest set of ACL rules apply, expire and restore need
// (docs/remediation.md): every key, read and write, and only the commands
// they send or their scripts call. The plan step needs only the audit's
// read-only rules (scanner.MinimalACL). The tests apply, expire and
// restore under exactly these rules. On Redis 7.2 and later add
// +client|no-touch, which the connections send there.
const ACL = "~* +ping +info +select +cluster|nodes +script|load +evalsha" +
	" +setrange +object|idletime +object|encoding +object|refcount +type +pttl +pexpiretime +memory|usage +time +dump +unlink +pexpire" +
	" +restore +exists"
