package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/keyreg/keyreg/source"
)

// Options bound what the reader allocates.
type Options struct {
	// MaxKeyBytes bounds a key name; 0 means 512 MiB, Redis's own limit. A
	// longer key is a FormatError.
	MaxKeyBytes int64
	// MaxValueBytes bounds what Value reads, whatever its maxBytes; 0 means
	// 512 MiB.
	MaxValueBytes int64
	// ParallelCRC computes the checksum on a goroutine of its own, which
	// Close ends: a file is read about a fifth faster on two cores.
	ParallelCRC bool
}

const defaultMax = 512 << 20

// AUX fields kept (Aux): at most maxAuxFields, of names up to maxAuxName
// bytes and values up to maxAuxValue. Redis writes about ten, all short;
// the others are skipped and not kept.
const (
	maxAuxFields = 64
	maxAuxName   = 256
	maxAuxValue  = 4 << 10
)

// Opcodes and value types (redis src/rdb.h).
const (
	opSlotImport    = 243 // Valkey 9
	opSlotInfo      = 244
	opFunction2     = 245
	opFunctionPreGA = 246
	opModuleAux     = 247
	opIdle          = 248
	opFreq          = 249
	opAux           = 250
	opResizeDB      = 251
	opExpireMS      = 252
	opExpire        = 253
	opSelectDB      = 254
	opEOF           = 255

	tString            = 0
	tList              = 1
	tSet               = 2
	tZset              = 3
	tHash              = 4
	tZset2             = 5
	tModulePreGA       = 6
	tModule2           = 7
	tHashZipmap        = 9
	tListZiplist       = 10
	tSetIntset         = 11
	tZsetZiplist       = 12
	tHashZiplist       = 13
	tListQuicklist     = 14
	tStreamListpacks   = 15
	tHashListpack      = 16
	tZsetListpack      = 17
	tListQuicklist2    = 18
	tStreamListpacks2  = 19
	tSetListpack       = 20
	tStreamListpacks3  = 21
	tHashMetadataPreGA = 22 // Redis 7.4 RC; in VALKEY files, Valkey 9's RDB_TYPE_HASH_2
	tHashListpackExPre = 23
	tHashMetadata      = 24
	tHashListpackEx    = 25
)

// types gives, per value type, the Redis type and the encoding name.
var types = [26]struct{ typ, enc string }{
	tString:            {"string", ""},
	tList:              {"list", "linkedlist"},
	tSet:               {"set", "hashtable"},
	tZset:              {"zset", "skiplist"},
	tHash:              {"hash", "hashtable"},
	tZset2:             {"zset", "skiplist"},
	tModule2:           {"", "module"},
	tHashZipmap:        {"hash", "zipmap"},
	tListZiplist:       {"list", "ziplist"},
	tSetIntset:         {"set", "intset"},
	tZsetZiplist:       {"zset", "ziplist"},
	tHashZiplist:       {"hash", "ziplist"},
	tListQuicklist:     {"list", "quicklist"},
	tStreamListpacks:   {"stream", "stream"},
	tHashListpack:      {"hash", "listpack"},
	tZsetListpack:      {"zset", "listpack"},
	tListQuicklist2:    {"list", "quicklist2"},
	tStreamListpacks2:  {"stream", "stream"},
	tSetListpack:       {"set", "listpack"},
	tStreamListpacks3:  {"stream", "stream"},
	tHashMetadataPreGA: {"hash", "hash_metadata"},
	tHashListpackExPre: {"hash", "hash_listpack_ex"},
	tHashMetadata:      {"hash", "hash_metadata"},
	tHashListpackEx:    {"hash", "hash_listpack_ex"},
}

// Reader reads an RDB file front to back, one key at a time.
type Reader struct {
	in      *input
	o       Options
	version int
	valkey  bool
	aux     map[string]string
	db      int
	key     []byte
	cur     *Entry // the entry whose value is next in the file, if any
	ent     Entry  // reused by Next
	done    bool
	err     error // sticky

	functions int
	scratch   [320]byte
}

// Entry is one key. Next reuses it: the Entry and its Key are valid until
// the next call of Next; copy what must outlive it.
type Entry struct {
	DB       int
	Key      []byte
	Type     string // as TYPE reports it: string, list, set, zset, hash, stream, or the module type name
	Encoding string // the value's encoding in the file: see the package documentation
	RDBType  int    // the value type byte
	ExpireAt time.Time
	Idle     time.Duration
	HasIdle  bool
	Freq     int
	HasFreq  bool
	// Size is the bytes the value takes in the file, and Len the elements
	// of a collection (for a string: its length in bytes). Next sets what
	// the value's first bytes give: Size for a value held in one string
	// (a string, listpack, ziplist, intset, zipmap) and Len where a count
	// or header gives it; else -1. Value and Skip, which read the whole
	// value, set both (Len stays -1 only when no header gives it).
	Size int64
	Len  int64
	// Memory estimates, once Value or Skip read the value, what MEMORY
	// USAGE reports of the key on a Redis 7 that loaded the file: from the
	// decoded value and the encoding Redis gives it, never the compressed
	// bytes (see memory.go and docs/audit.md for the error bound).
	Memory int64
	// Groups are the consumer groups WantGroups asked for that a stream
	// has, read with its value (Skip or Value); valid when HasGroups.
	Groups    []StreamGroup
	HasGroups bool

	want     []source.GroupQuery
	r        *Reader
	start    int64 // offset of the value
	module   uint64
	consumed bool
	bad      *FormatError // a header its bytes cannot hold (peekInfo)
	ulen     int64        // an encoded structure's decompressed length (peekInfo)
	mem      int64        // the in-memory bytes the walk added up (memory.go)
}

// NewReader reads and checks the magic ("REDIS" or "VALKEY") and version.
func NewReader(src io.Reader, o Options) (*Reader, error) {
	if o.MaxKeyBytes <= 0 {
		o.MaxKeyBytes = defaultMax
	}
	if o.MaxValueBytes <= 0 {
		o.MaxValueBytes = defaultMax
	}
	r := &Reader{in: newInput(src), o: o, aux: map[string]string{}}
	m, err := r.in.next(9, `the magic "REDIS" or "VALKEY" and a version`)
	if err != nil {
		return nil, err
	}
	var digits []byte
	switch {
	case string(m[:5]) == "REDIS":
		digits = m[5:]
	case string(m[:6]) == "VALKEY":
		digits, r.valkey = m[6:], true
	default:
		return nil, &FormatError{Offset: 0, Expected: `the magic "REDIS" or "VALKEY"`, Found: fmt.Sprintf("%q", m)}
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return nil, &FormatError{Offset: 9 - int64(len(digits)), Expected: "a decimal RDB version", Found: fmt.Sprintf("%q", digits)}
		}
		r.version = r.version*10 + int(c-'0')
	}
	if !r.valkey && (r.version < 1 || r.version > 12) {
		return nil, &FormatError{Offset: 5, Expected: "an RDB version from 1 to 12", Found: fmt.Sprint(r.version)}
	}
	if r.valkey && r.version < 80 {
		return nil, &FormatError{Offset: 6, Expected: "a Valkey RDB version of 80 or more", Found: fmt.Sprint(r.version)}
	}
	if o.ParallelCRC {
		// The header is still in the buffer, not yet summed.
		r.in.sums = newCRCWorker()
	}
	return r, nil
}

// Version returns the RDB version.
func (r *Reader) Version() int { return r.version }

// Valkey reports whether the file has Valkey's "VALKEY" magic.
func (r *Reader) Valkey() bool { return r.valkey }

// Aux returns the AUX fields read so far (redis-ver, ctime, used-mem, ...):
// the first 64, with names of at most 256 bytes and values of at most 4
// KiB; longer or later ones are skipped.
func (r *Reader) Aux() map[string]string { return r.aux }

// Functions returns how many function libraries were read so far.
func (r *Reader) Functions() int { return r.functions }

// Next returns the next key, or io.EOF after the EOF opcode, with the CRC64
// checksum verified when it is not zero. The value of the previous entry,
// unless Value or Skip read it, is skipped by its framing.
func (r *Reader) Next() (*Entry, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.done {
		return nil, io.EOF
	}
	if c := r.cur; c != nil && !c.consumed && c.r != nil {
		if err := c.Skip(); err != nil {
			return nil, err
		}
	}
	r.cur = nil
	e, err := r.next()
	if err != nil {
		if err != io.EOF {
			r.err = err
		}
		return nil, err
	}
	r.cur = e
	return e, nil
}

// Close ends the checksum goroutine of a reader made with ParallelCRC; it
// does nothing otherwise. The reader must not be used after it.
func (r *Reader) Close() {
	if r.in.sums != nil {
		r.in.sums.close()
	}
}

func (r *Reader) next() (*Entry, error) {
	r.ent = Entry{r: r, Size: -1, Len: -1}
	e := &r.ent
	for {
		at := r.in.offset()
		t, err := r.in.byte("an opcode or a value type")
		if err != nil {
			return nil, err
		}
		switch t {
		case opEOF:
			sum := r.in.sum()
			if r.version >= 5 {
				p, err := r.in.next(8, "the CRC64 checksum")
				if err != nil {
					return nil, err
				}
				if got := binary.LittleEndian.Uint64(p); got != 0 && got != sum {
					return nil, &FormatError{Offset: r.in.offset() - 8, Expected: fmt.Sprintf("the checksum %016x", sum), Found: fmt.Sprintf("%016x", got)}
				}
			}
			r.done = true
			return nil, io.EOF
		case opSelectDB:
			n, err := r.readLen("a database number")
			if err != nil {
				return nil, err
			}
			if n > 1<<31-1 {
				return nil, &FormatError{Offset: at + 1, Expected: "a database number", Found: fmt.Sprint(n)}
			}
			r.db = int(n)
		case opExpire:
			p, err := r.in.next(4, "an expire time in seconds")
			if err != nil {
				return nil, err
			}
			e.ExpireAt = time.Unix(int64(int32(binary.LittleEndian.Uint32(p))), 0)
		case opExpireMS:
			p, err := r.in.next(8, "an expire time in milliseconds")
			if err != nil {
				return nil, err
			}
			e.ExpireAt = time.UnixMilli(int64(binary.LittleEndian.Uint64(p)))
		case opResizeDB:
			if _, err := r.readLen("a database size hint"); err != nil {
				return nil, err
			}
			if _, err := r.readLen("an expires size hint"); err != nil {
				return nil, err
			}
		case opSlotInfo:
			for _, w := range [...]string{"a slot id", "a slot size", "a slot expires size"} {
				if _, err := r.readLen(w); err != nil {
					return nil, err
				}
			}
		case opAux:
			if err := r.readAux(); err != nil {
				return nil, err
			}
		case opFreq:
			b, err := r.in.byte("an LFU frequency")
			if err != nil {
				return nil, err
			}
			e.Freq, e.HasFreq = int(b), true
		case opIdle:
			n, err := r.readLen("an LRU idle time")
			if err != nil {
				return nil, err
			}
			e.Idle, e.HasIdle = time.Duration(min(n, 1<<33))*time.Second, true
		case opModuleAux:
			if _, err := r.readLen("a module id"); err != nil {
				return nil, err
			}
			op, err := r.readLen("the module aux when-opcode")
			if err != nil {
				return nil, err
			}
			if op != 2 {
				return nil, &FormatError{Offset: r.in.offset() - 1, Expected: "the module aux when-opcode 2 (unsigned)", Found: fmt.Sprint(op)}
			}
			if _, err := r.readLen("the module aux when"); err != nil {
				return nil, err
			}
			if err := r.skipModule("module aux data"); err != nil {
				return nil, err
			}
		case opFunctionPreGA:
			for _, w := range [...]string{"a function library name", "a function engine name"} {
				if err := r.skipString(w); err != nil {
					return nil, err
				}
			}
			d, err := r.readLen("a function description flag")
			if err != nil {
				return nil, err
			}
			if d != 0 {
				if err := r.skipString("a function description"); err != nil {
					return nil, err
				}
			}
			if err := r.skipString("a function library code"); err != nil {
				return nil, err
			}
			r.functions++
		case opFunction2:
			if err := r.skipString("a function library"); err != nil {
				return nil, err
			}
			r.functions++
		default:
			if int(t) >= len(types) || types[t].enc == "" && t != tString || (r.valkey && t > tHashMetadataPreGA) {
				found := fmt.Sprintf("byte %d", t)
				switch {
				case t == tModulePreGA:
					found = "type 6, a module value of Redis 4.0 release candidates, which has no framing to skip"
				case t == opSlotImport && r.valkey:
					found = "opcode 243 (Valkey slot import), which this reader does not know"
				}
				return nil, &FormatError{Offset: at, Expected: "an opcode or a value type", Found: found}
			}
			return e, r.readKey(e, t)
		}
	}
}

// readAux reads an AUX field. It keeps at most maxAuxFields of them, of
// names up to maxAuxName bytes and values up to maxAuxValue: the others are
// skipped by their framing, undecoded, so that a file of many large (or
// LZF-amplified) AUX fields costs no memory.
func (r *Reader) readAux() error {
	kh, err := r.readStrHdr("an AUX field name")
	if err != nil {
		return err
	}
	var k []byte
	if kh.size() <= maxAuxName {
		if k, err = r.readStr(kh, maxAuxName, r.scratch[:0], "an AUX field name"); err != nil {
			return err
		}
	} else if err := r.skipStr(kh, "an AUX field name"); err != nil {
		return err
	}
	h, err := r.readStrHdr("an AUX field value")
	if err != nil {
		return err
	}
	_, known := r.aux[string(k)]
	if k == nil || h.size() > maxAuxValue || !known && len(r.aux) >= maxAuxFields {
		return r.skipStr(h, "an AUX field value")
	}
	name := string(k)
	v, err := r.readStr(h, maxAuxValue, nil, "an AUX field value")
	if err != nil {
		return err
	}
	r.aux[name] = string(v)
	return nil
}

// readKey reads the key of a value of type t and what the value's first
// bytes tell.
func (r *Reader) readKey(e *Entry, t byte) error {
	at := r.in.offset()
	h, err := r.readStrHdr("a key")
	if err != nil {
		return err
	}
	if n := h.size(); n > r.o.MaxKeyBytes {
		return &FormatError{Offset: at, Expected: fmt.Sprintf("a key of at most %d bytes", r.o.MaxKeyBytes), Found: fmt.Sprintf("a key of %d bytes", n)}
	}
	r.key, err = r.readStr(h, r.o.MaxKeyBytes, r.key[:0], "a key")
	if err != nil {
		return err
	}
	e.DB, e.Key, e.RDBType = r.db, r.key, int(t)
	e.Type, e.Encoding = types[t].typ, types[t].enc
	if r.valkey && t == tHashMetadataPreGA {
		e.Encoding = "hash2"
	}
	e.start = r.in.offset()
	if t == tModule2 {
		id, err := r.readLen("a module id")
		if err != nil {
			return err
		}
		e.module = id
		e.Type = ModuleName(id)
	}
	r.peekInfo(e, t)
	return nil
}

// ModuleName returns the module type name a module id encodes (its top 54
// bits, 9 characters of 6 bits; the low 10 bits are the encoding version).
func ModuleName(id uint64) string {
	const set = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var b [9]byte
	id >>= 10
	for j := 8; j >= 0; j-- {
		b[j] = set[id&63]
		id >>= 6
	}
	return string(b[:])
}

// errSequence is returned by Value and Skip on an entry whose value was
// read already or that is not the current one.
var errSequence = errors.New("snapshot: Value or Skip called after the value was read or after the next Next")
