package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/keyreg/keyreg/diag"
	"github.com/keyreg/keyreg/payload"
	"github.com/keyreg/keyreg/source"
)

// SourceOptions configure a Source.
type SourceOptions struct {
	// Sample is the audit's sample quota per family: the source keeps the
	// values of that many keys of each family the planner marks (Plan.Sample),
	// read as the file streams past, for SampleEach.
	Sample int
	// SampleLen and MaxValueBytes bound each kept value, as for a live
	// sample: elements of a collection, and bytes in all.
	SampleLen     int
	MaxValueBytes int64
	// MaxKeyBytes bounds a key name; 0 means 1 MiB. A longer key is a
	// FormatError: a name is held whole, and LZF lets a small file claim
	// names of any size.
	MaxKeyBytes int64
	// Stdin is read for the path "-".
	Stdin io.Reader
}

// defaultMaxKey is SourceOptions.MaxKeyBytes by default.
const defaultMaxKey = 1 << 20

// FileInfo describes one snapshot file a Source read.
type FileInfo struct {
	Path     string
	Version  int    // RDB version
	Valkey   bool   // the file starts with VALKEY
	RedisVer string // the redis-ver (or valkey-ver) AUX field
	Created  time.Time
	Keys     int64
}

// Source reads snapshot files as an audit source: one pass over each file,
// front to back, so that a pipe will do. It reads no Redis and touches no
// key, so it never refuses a sample. Values are kept only for the keys the
// planner asks samples of, up to the per-family quota, each bounded like a
// live sample; SampleEach hands them over and forgets them.
type Source struct {
	paths []string
	o     SourceOptions

	mu     sync.Mutex
	kept   map[keptKey]kept
	files  []FileInfo
	noIdle int64 // keys whose idle time was planned but is not in the file
	// noFence counts the locks whose fence key was planned: a snapshot
	// audit does not look it up.
	noFence int64
}

type keptKey struct {
	db  int
	key string
}

type kept struct {
	s   payload.Sample
	err error
}

// maxKept bounds the bytes of a batch, its key names and the values kept
// for SampleEach: a batch is handed over early when they reach it. At most
// readAhead+3 batches are held at once (read ahead, handed over, and the
// audit's pending one), so 8 MiB keeps them well within the RSS bar, and a
// file of many long (or LZF-amplified) names costs no more than one of
// short ones.
const maxKept = 8 << 20

// batchSize is the keys per batch handed to ScanKeys' callback.
const batchSize = 1000

// NewSource returns a Source of the files at paths ("-" is o.Stdin).
func NewSource(paths []string, o SourceOptions) *Source {
	return &Source{paths: paths, o: o, kept: map[keptKey]kept{}}
}

// Files describes the files read so far.
func (s *Source) Files() []FileInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]FileInfo(nil), s.files...)
}

// Notes says, for the report, what the audit read and how it differs from
// a live audit: each file with its RDB version, server version and
// creation time; that TTLs are as of that time; that sizes are those in
// the file; and which keys had no idle time or fence to check.
func (s *Source) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, f := range s.files {
		magic := "RDB"
		if f.Valkey {
			magic = "Valkey RDB"
		}
		created := "no creation time (ctime) in the file: TTLs are compared with now"
		if !f.Created.IsZero() {
			created = "created " + f.Created.UTC().Format(time.RFC3339) + "; TTLs are as of then, and keys expired by then are not audited"
		}
		out = append(out, fmt.Sprintf("snapshot %s: %s version %d, server %s, %s, %s", f.Path, magic, f.Version, orUnknown(f.RedisVer), diag.Count(f.Keys, "key"), created))
	}
	if len(s.files) > 0 {
		out = append(out, "snapshot sizes: a key's memory is an estimate of MEMORY USAGE on Redis 7, from its decoded value and encoding (not its compressed bytes in the file; see docs/audit.md for the error bound); lengths are read from the file")
	}
	if s.noIdle > 0 {
		out = append(out, fmt.Sprintf("stale-key not checked on %s: the snapshot holds no idle time for them (saved without an LRU maxmemory-policy), so staleness is not measurable, not clean", diag.Count(s.noIdle, "key")))
	}
	if s.noFence > 0 {
		out = append(out, fmt.Sprintf("fence-missing not checked on %d locks: a snapshot audit does not look their fence keys up", s.noFence))
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Touch reports that reading a snapshot touches nothing.
func (s *Source) Touch() source.TouchState { return source.TouchState{} }

// ScanKeys reads every file in turn and hands its keys to fn in batches.
// A key's PTTL is its expiry less the file's creation time (AUX ctime), so
// TTL rules judge the keys as of the moment the snapshot was taken; a key
// already expired then is counted as vanished. A damaged file stops the
// scan with a *FormatError, its byte offset and what was expected, and
// marks the stats partial.
func (s *Source) ScanKeys(ctx context.Context, plan source.Planner, fn func(batch []source.KeyInfo) error) (source.Stats, error) {
	start := time.Now()
	var st source.Stats
	for _, p := range s.paths {
		if err := s.scanFile(ctx, p, plan, fn, &st); err != nil {
			st.Partial = true
			st.Duration = time.Since(start)
			return st, err
		}
		st.Nodes++
	}
	st.Duration = time.Since(start)
	return st, nil
}

func (s *Source) scanFile(ctx context.Context, path string, plan source.Planner, fn func([]source.KeyInfo) error, st *source.Stats) error {
	in, closeIn, err := openInput(ctx, path, s.o.Stdin)
	if err != nil {
		return err
	}
	defer closeIn()
	// The reader buffers for itself (input.go); a bufio.Reader in front
	// would only copy every byte once more.
	maxKey := s.o.MaxKeyBytes
	if maxKey <= 0 {
		maxKey = defaultMaxKey
	}
	r, err := NewReader(in, Options{MaxKeyBytes: maxKey, MaxValueBytes: s.o.MaxValueBytes, ParallelCRC: true})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	s.mu.Lock()
	s.files = append(s.files, FileInfo{Path: path, Version: r.Version(), Valkey: r.Valkey()})
	idx := len(s.files) - 1
	s.mu.Unlock()

	// The file is parsed on its own goroutine, at most readAhead batches
	// ahead of fn, and checksummed on another (ParallelCRC); fn, the
	// audit, runs on the caller's goroutine, one batch at a time.
	batches := make(chan []source.KeyInfo, readAhead)
	stop := make(chan struct{})
	var (
		read    fileStats
		readErr error
	)
	go func() {
		defer close(batches)
		read, readErr = s.read(ctx, r, path, idx, plan, batches, stop)
	}()
	var fnErr error
	for b := range batches {
		if fnErr != nil {
			continue // drain, so that the reader ends
		}
		st.Keys += int64(len(b))
		s.mu.Lock()
		s.files[idx].Keys += int64(len(b))
		s.mu.Unlock()
		if fnErr = fn(b); fnErr != nil {
			close(stop)
		}
	}
	st.Scanned += read.scanned
	st.Vanished += read.vanished
	if fnErr != nil {
		return fnErr
	}
	if readErr != nil && !errors.Is(readErr, errStopped) {
		return fmt.Errorf("%s: %w", path, readErr)
	}
	return readErr
}

// errNoStdin is the error for "-" without a standard input.
var errNoStdin = errors.New("--rdb -: no standard input")

// readAhead is how many batches the reader may finish before fn takes them.
const readAhead = 1

// errStopped ends a read whose consumer failed.
var errStopped = errors.New("snapshot: read stopped")

type fileStats struct{ scanned, vanished int64 }

// read parses the file and sends its keys to out in batches, until the end,
// an error, ctx's end or stop.
func (s *Source) read(ctx context.Context, r *Reader, path string, idx int, plan source.Planner, out chan<- []source.KeyInfo, stop <-chan struct{}) (fileStats, error) {
	var (
		fs     fileStats
		keys   keyArena
		batch  = make([]source.KeyInfo, 0, batchSize)
		keptB  int64
		quota  = map[source.Family]int{}
		ctime  time.Time
		ctimeK bool
	)
	send := func() error {
		if len(batch) == 0 {
			return nil
		}
		select {
		case out <- batch:
		case <-stop:
			return errStopped
		}
		batch, keptB = make([]source.KeyInfo, 0, batchSize), 0
		return nil
	}
	// flush hands over the keys read before err, so that a damaged or
	// interrupted file still counts every key read up to the damage.
	flush := func(err error) error {
		_ = send() // a consumer that stopped has its own error
		return err
	}
	for {
		if fs.scanned%batchSize == 0 {
			if err := ctx.Err(); err != nil {
				return fs, flush(err)
			}
		}
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fs, flush(err)
		}
		if !ctimeK {
			ctime, ctimeK = auxTime(r.Aux()), true
			s.mu.Lock()
			s.files[idx].RedisVer = firstOf(r.Aux(), "redis-ver", "valkey-ver")
			s.files[idx].Created = ctime
			s.mu.Unlock()
		}
		fs.scanned++
		k := source.KeyInfo{Key: keys.string(e.Key), DB: e.DB, Node: path, Type: e.Type, PTTL: source.NoExpiry}
		p := plan(k.Key)
		k.Family = p.Family
		if !e.ExpireAt.IsZero() {
			// ctime has second precision: the save happened within the
			// second after it, so the TTL then was at most this.
			left := e.ExpireAt.Sub(ctime.Add(time.Second - time.Millisecond))
			if ctime.IsZero() {
				left = time.Until(e.ExpireAt)
			}
			if left <= 0 {
				if err := e.Skip(); err != nil {
					return fs, flush(err)
				}
				fs.vanished++ // expired when the snapshot was taken
				continue
			}
			k.PTTL = left
		}
		if e.HasIdle {
			k.Idle, k.HasIdle = e.Idle, true
		} else if p.Idle {
			s.mu.Lock()
			s.noIdle++
			s.mu.Unlock()
		}
		if p.Groups != nil && e.Type == "stream" {
			e.WantGroups(p.Groups) // read with the value, below
		}
		if want := p.Sample; want != "" && (want == "*" || want == e.Type) && quota[p.Family] < s.o.Sample {
			quota[p.Family]++
			v, err := e.Value(s.o.SampleLen, s.o.MaxValueBytes)
			var fe *FormatError
			if errors.As(err, &fe) {
				return fs, flush(err)
			}
			s.mu.Lock()
			s.kept[keptKey{k.DB, k.Key}] = kept{v, err}
			s.mu.Unlock()
			keptB += sampleBytes(v)
		} else if err := e.Skip(); err != nil {
			return fs, flush(err)
		}
		// The in-memory size, estimated from the decoded value (never
		// the compressed bytes in the file), and the length come with the
		// value, for free: the snapshot fills them without being asked.
		if e.Memory > 0 {
			k.Memory, k.HasMemory = e.Memory, true
		}
		if e.Len >= 0 && e.Type != "string" {
			k.Len, k.HasLen = e.Len, true
		}
		// A string's encoding, as OBJECT ENCODING says it, too. A stream's
		// consumer groups are in the file, as XINFO would have given them
		// when it was saved. Fence keys are not looked up (fence-missing):
		// a lock's fence may come anywhere in the file, so the rule is
		// silent on a snapshot, and a note counts the locks.
		if p.Encoding && e.Type == "string" {
			k.Encoding = e.Encoding
		}
		if e.HasGroups {
			k.Groups, k.HasGroups = groupInfos(e.Groups, ctime), true
		}
		if p.Fence != "" {
			s.mu.Lock()
			s.noFence++
			s.mu.Unlock()
		}
		batch = append(batch, k)
		keptB += int64(len(k.Key))
		if len(batch) == batchSize || keptB >= maxKept {
			if err := send(); err != nil {
				return fs, err
			}
		}
	}
	return fs, send()
}

// groupInfos turns a stream's groups as the file holds them into the facts
// a live probe gives, with idle times as of the save: ctime has second
// precision, so, as for TTLs, at the end of that second (now when the file
// has no ctime).
func groupInfos(gs []StreamGroup, ctime time.Time) []source.GroupInfo {
	saved := ctime.Add(time.Second - time.Millisecond)
	if ctime.IsZero() {
		saved = time.Now()
	}
	out := make([]source.GroupInfo, len(gs))
	for i, g := range gs {
		out[i] = source.GroupInfo{Name: g.Name, Consumers: g.Consumers, Pending: g.Pending, Lag: g.Lag, HasLag: g.HasLag}
		if g.HasIdle {
			out[i].IdlePending, out[i].IdleConsumer, out[i].HasIdle = max(0, saved.Sub(g.SeenAt)), g.IdleConsumer, true
		}
	}
	return out
}

// keyArena holds key names in blocks of a few KiB instead of one allocation
// per key, which is most of what reading a file allocates. A block is
// written once, front to back, and never changed, so the strings over it
// stay valid and immutable. Blocks are small so that a key the audit keeps
// (an example, a prefix group) holds little memory besides it.
type keyArena struct{ block []byte }

const arenaBlock = 4 << 10

func (a *keyArena) string(b []byte) string {
	if len(b) == 0 || len(b) > arenaBlock/8 {
		return string(b)
	}
	if cap(a.block)-len(a.block) < len(b) {
		a.block = make([]byte, 0, arenaBlock)
	}
	off := len(a.block)
	a.block = append(a.block, b...)
	return unsafe.String(&a.block[off], len(b))
}

// SampleEach hands over the values kept for keys, in one wave, and forgets
// them. A key whose value was not kept (beyond the quota, or of another
// type than its family's) reports source.ErrVanished: a live scan would
// not have read it either.
func (s *Source) SampleEach(ctx context.Context, keys []source.KeyInfo, n int, maxBytes int64, fn func(idx []int, ss []payload.Sample, errs []error)) {
	idx := make([]int, len(keys))
	ss := make([]payload.Sample, len(keys))
	errs := make([]error, len(keys))
	s.mu.Lock()
	for i, k := range keys {
		idx[i] = i
		kk := keptKey{k.DB, k.Key}
		v, ok := s.kept[kk]
		delete(s.kept, kk)
		if !ok {
			errs[i] = source.ErrVanished
			continue
		}
		ss[i], errs[i] = v.s, v.err
	}
	s.mu.Unlock()
	fn(idx, ss, errs)
}

func sampleBytes(s payload.Sample) int64 {
	n := int64(len(s.String))
	for k, v := range s.Fields {
		n += int64(len(k) + len(v))
	}
	for _, m := range s.Members {
		n += int64(len(m))
	}
	for _, e := range s.Entries {
		for k, v := range e {
			n += int64(len(k) + len(v))
		}
	}
	return n
}

// auxTime reads the ctime AUX field (Unix seconds).
func auxTime(aux map[string]string) time.Time {
	if v, ok := aux["ctime"]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			return time.Unix(n, 0)
		}
	}
	return time.Time{}
}

func firstOf(aux map[string]string, names ...string) string {
	for _, n := range names {
		if v, ok := aux[n]; ok {
			return v
		}
	}
	return ""
}
