package remedy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// The backup is a real RDB file: a DUMP payload is a value type byte and
// the value in RDB encoding, followed by a 2-byte RDB version and an
// 8-byte CRC64. The backup writes each key as an RDB key entry (its
// database, LRU idle time and absolute expiry in milliseconds, then the
// payload's type byte, the key and the payload's value), preceded by an
// AUX field keyreg-len giving the value's length, which lets Restore cut
// the payloads out again without decoding them. redis-check-rdb and
// `keyreg audit --rdb` read it as any snapshot.
//
// Each Sync ends the file with the EOF opcode and the checksum, so the file
// on disk is a complete RDB after every batch; the next batch overwrites
// those 9 bytes.

const (
	opIdle     = 248
	opAux      = 250
	opExpireMS = 252
	opSelectDB = 254
	opEOF      = 255
)

// auxLen names the AUX field before each key that holds its value's length.
const auxLen = "keyreg-len"

var crcTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// crc is Redis's crc64 (Jones, reflected, no complement).
func crc(c uint64, p []byte) uint64 { return ^crc64.Update(^c, crcTable, p) }

// Payload is a DUMP payload split into its parts.
type Payload struct {
	Type    byte
	Value   []byte
	Version uint16
}

// ParseDump checks a DUMP payload's trailer (version and CRC64) and splits it.
func ParseDump(d []byte) (Payload, error) {
	if len(d) < 11 {
		return Payload{}, errors.New("DUMP payload too short")
	}
	body, trailer := d[:len(d)-8], d[len(d)-8:]
	if crc(0, body) != binary.LittleEndian.Uint64(trailer) {
		return Payload{}, errors.New("DUMP payload checksum mismatch")
	}
	v := binary.LittleEndian.Uint16(body[len(body)-2:])
	if v < 1 || v > 12 {
		return Payload{}, fmt.Errorf("DUMP payload of RDB version %d", v)
	}
	return Payload{Type: body[0], Value: body[1 : len(body)-2], Version: v}, nil
}

// Dump rebuilds the DUMP payload RESTORE takes.
func (p Payload) Dump() []byte {
	b := make([]byte, 0, len(p.Value)+11)
	b = append(b, p.Type)
	b = append(b, p.Value...)
	b = binary.LittleEndian.AppendUint16(b, p.Version)
	return binary.LittleEndian.AppendUint64(b, crc(0, b))
}

// BackupEntry is one key of a backup.
type BackupEntry struct {
	DB  int
	Key string
	// ExpireAtMs is the absolute expiry in Unix milliseconds, -1 for none.
	ExpireAtMs int64
	// IdleSec is the LRU idle time when backed up, -1 when not known.
	IdleSec int64
	Payload Payload
}

// Backup appends keys to an RDB file.
type Backup struct {
	f       *os.File
	w       *bufio.Writer
	crc     uint64
	off     int64 // bytes written before the EOF opcode
	version uint16
	db      int // the database of the last SELECTDB; -1 before the first
}

func appendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= 1<<32-1:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x81), n)
}

func appendStr(b []byte, s []byte) []byte { return append(appendLen(b, uint64(len(s))), s...) }

func (b *Backup) write(p []byte) error {
	b.crc = crc(b.crc, p)
	b.off += int64(len(p))
	_, err := b.w.Write(p)
	return err
}

// CreateBackup creates path (which must not exist) as an RDB file of the
// given version.
func CreateBackup(path string, version uint16) (*Backup, error) {
	if version < 1 || version > 12 {
		return nil, fmt.Errorf("RDB version %d", version)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	b := &Backup{f: f, w: bufio.NewWriterSize(f, 1<<20), version: version, db: -1}
	hdr := []byte(fmt.Sprintf("REDIS%04d", version))
	hdr = append(hdr, opAux)
	hdr = appendStr(hdr, []byte("keyreg-backup"))
	hdr = appendStr(hdr, []byte("1"))
	if err := b.write(hdr); err != nil {
		f.Close()
		return nil, err
	}
	if err := syncDir(path); err != nil {
		f.Close()
		return nil, err
	}
	return b, nil
}

// syncDir fsyncs the directory of path, so that a file just created
// survives a crash of the machine along with its contents.
func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ResumeBackup opens a backup an interrupted run wrote, cut to size (the
// bytes its journal says were synced, before the EOF opcode), re-reading
// that prefix for the checksum.
func ResumeBackup(path string, size int64) (*Backup, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if size < 9 || size > st.Size() {
		f.Close()
		return nil, fmt.Errorf("the journal says %d bytes of backup, the file has %d", size, st.Size())
	}
	b := &Backup{f: f, db: -1}
	hdr := make([]byte, 9)
	if _, err := io.ReadFull(f, hdr); err != nil {
		f.Close()
		return nil, err
	}
	v, err := strconv.Atoi(string(hdr[5:]))
	if string(hdr[:5]) != "REDIS" || err != nil || v < 1 || v > 12 {
		f.Close()
		return nil, errors.New("the backup does not start with an RDB header")
	}
	b.version = uint16(v)
	b.crc = crc(0, hdr)
	if _, err := io.Copy(crcWriter{&b.crc}, io.LimitReader(f, size-9)); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	b.off = size
	b.w = bufio.NewWriterSize(f, 1<<20)
	return b, nil
}

type crcWriter struct{ c *uint64 }

func (w crcWriter) Write(p []byte) (int, error) { *w.c = crc(*w.c, p); return len(p), nil }

// Version is the RDB version of the file.
func (b *Backup) Version() uint16 { return b.version }

// Add appends one key; Sync makes it durable.
func (b *Backup) Add(e *BackupEntry) error {
	if e.Payload.Version > b.version {
		return fmt.Errorf("a DUMP payload of RDB version %d in a backup of version %d", e.Payload.Version, b.version)
	}
	var h []byte
	if e.DB != b.db {
		h = appendLen(append(h, opSelectDB), uint64(e.DB))
		b.db = e.DB
	}
	h = append(h, opAux)
	h = appendStr(h, []byte(auxLen))
	h = appendStr(h, []byte(strconv.Itoa(len(e.Payload.Value))))
	if e.IdleSec >= 0 {
		h = appendLen(append(h, opIdle), uint64(e.IdleSec))
	}
	if e.ExpireAtMs >= 0 {
		h = binary.LittleEndian.AppendUint64(append(h, opExpireMS), uint64(e.ExpireAtMs))
	}
	h = append(h, e.Payload.Type)
	h = appendStr(h, []byte(e.Key))
	if err := b.write(h); err != nil {
		return err
	}
	return b.write(e.Payload.Value)
}

// Sync writes the EOF opcode and the checksum after what was added, flushes
// and fsyncs the file, and returns the offset before the EOF opcode (where
// the next Add writes), for the journal.
func (b *Backup) Sync() (int64, error) {
	if err := b.w.Flush(); err != nil {
		return 0, err
	}
	var tail [9]byte
	tail[0] = opEOF
	binary.LittleEndian.PutUint64(tail[1:], crc(b.crc, tail[:1]))
	if _, err := b.f.WriteAt(tail[:], b.off); err != nil {
		return 0, err
	}
	if err := b.f.Sync(); err != nil {
		return 0, err
	}
	if _, err := b.f.Seek(b.off, io.SeekStart); err != nil {
		return 0, err
	}
	return b.off, nil
}

// Close syncs and closes the file.
func (b *Backup) Close() error {
	_, err := b.Sync()
	return errors.Join(err, b.f.Close())
}

// Limits bound what ReadBackup allocates.
type Limits struct {
	MaxKeyBytes   int64 // 0: MaxKeyName
	MaxValueBytes int64 // 0: MaxBackupValue
	MaxEntries    int64 // 0: MaxPlanKeys
}

// MaxBackupValue bounds a value ReadBackup reads: the largest DUMP reply
// the scanner's connections accept.
const MaxBackupValue = 64 << 20

// ReadBackup reads a backup this package wrote, calling fn for each key in
// file order, and verifies the checksum at the end: fn may be called for
// keys of a file that turns out to be damaged further on, so a caller that
// acts on the keys reads the file once with a nil fn first. Anything that
// is not what Backup writes is an error with its offset.
func ReadBackup(r io.Reader, lim Limits, fn func(*BackupEntry) error) error {
	if lim.MaxKeyBytes <= 0 {
		lim.MaxKeyBytes = MaxKeyName
	}
	if lim.MaxValueBytes <= 0 {
		lim.MaxValueBytes = MaxBackupValue
	}
	if lim.MaxEntries <= 0 {
		lim.MaxEntries = MaxPlanKeys
	}
	br := &backupReader{r: bufio.NewReaderSize(r, 1<<16)}
	hdr, err := br.next(9)
	if err != nil {
		return br.fail("an RDB header", err)
	}
	v, err := strconv.Atoi(string(hdr[5:]))
	if string(hdr[:5]) != "REDIS" || err != nil || v < 1 || v > 12 {
		return br.fail("an RDB header REDIS0001 to REDIS0012", nil)
	}
	db, n := -1, int64(0)
	e := BackupEntry{ExpireAtMs: -1, IdleSec: -1}
	valueLen := int64(-1)
	for {
		op, err := br.byte()
		if err != nil {
			return br.fail("an opcode", err)
		}
		switch op {
		case opEOF:
			sum := br.crc
			t, err := br.next(8)
			if err != nil {
				return br.fail("the checksum", err)
			}
			if binary.LittleEndian.Uint64(t) != sum {
				return br.fail("the checksum of the file", errors.New("mismatch"))
			}
			if valueLen >= 0 || e.IdleSec >= 0 || e.ExpireAtMs >= 0 {
				return br.fail("a key after its header", nil)
			}
			if _, err := br.r.ReadByte(); err != io.EOF {
				return br.fail("the end of the file after the checksum", nil)
			}
			return nil
		case opSelectDB:
			d, err := br.length()
			if err != nil || d >= MaxDB {
				return br.fail("a database number below 65536", err)
			}
			db = int(d)
		case opAux:
			name, err := br.str(64)
			if err != nil {
				return br.fail("an AUX name", err)
			}
			val, err := br.str(64)
			if err != nil {
				return br.fail("an AUX value", err)
			}
			if string(name) == auxLen {
				l, err := strconv.ParseInt(string(val), 10, 64)
				if err != nil || l < 0 || valueLen >= 0 {
					return br.fail("a value length", err)
				}
				if l > lim.MaxValueBytes {
					return br.fail(fmt.Sprintf("a value of at most %d bytes", lim.MaxValueBytes), fmt.Errorf("%d bytes", l))
				}
				valueLen = l
			} else if string(name) != "keyreg-backup" || string(val) != "1" {
				return br.fail("the AUX fields of a keyreg backup", nil)
			}
		case opIdle:
			i, err := br.length()
			if err != nil || i > uint64(maxIdle/1e9) {
				return br.fail("an idle time", err)
			}
			e.IdleSec = int64(i)
		case opExpireMS:
			t, err := br.next(8)
			if err != nil {
				return br.fail("an expiry time", err)
			}
			ms := binary.LittleEndian.Uint64(t)
			if ms > 1<<62 {
				return br.fail("an expiry time", errors.New("out of range"))
			}
			e.ExpireAtMs = int64(ms)
		default:
			if valueLen < 0 || db < 0 {
				return br.fail("a keyreg-len AUX field and a database before a key", nil)
			}
			if op > 21 {
				return br.fail("an RDB value type", fmt.Errorf("byte %d", op))
			}
			k, err := br.str(lim.MaxKeyBytes)
			if err != nil {
				return br.fail("a key", err)
			}
			if n++; n > lim.MaxEntries {
				return br.fail(fmt.Sprintf("at most %d keys", lim.MaxEntries), nil)
			}
			e.DB, e.Key = db, string(k)
			val, err := br.next(int(valueLen))
			if err != nil {
				return br.fail("a value", err)
			}
			e.Payload = Payload{Type: op, Value: val, Version: uint16(v)}
			if fn != nil {
				if err := fn(&e); err != nil {
					return err
				}
			}
			e, valueLen = BackupEntry{ExpireAtMs: -1, IdleSec: -1}, -1
		}
	}
}

// BackupError is a backup that is not what this package writes.
type BackupError struct {
	Offset int64
	What   string
	Err    error
}

func (e *BackupError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("backup offset %d: want %s: %v", e.Offset, e.What, e.Err)
	}
	return fmt.Sprintf("backup offset %d: want %s", e.Offset, e.What)
}

type backupReader struct {
	r   *bufio.Reader
	off int64
	crc uint64
}

func (b *backupReader) fail(what string, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &BackupError{Offset: b.off, What: what, Err: err}
}

func (b *backupReader) byte() (byte, error) {
	c, err := b.r.ReadByte()
	if err != nil {
		return 0, err
	}
	b.off++
	b.crc = crc(b.crc, []byte{c})
	return c, nil
}

// next reads n bytes, growing the buffer as the bytes arrive, so that a
// length the file does not hold allocates no more than the file has.
func (b *backupReader) next(n int) ([]byte, error) {
	out := make([]byte, 0, min(n, 1<<16))
	for len(out) < n {
		chunk := min(n-len(out), 1<<16)
		start := len(out)
		out = append(out, make([]byte, chunk)...)
		if _, err := io.ReadFull(b.r, out[start:]); err != nil {
			return nil, err
		}
	}
	b.off += int64(n)
	b.crc = crc(b.crc, out)
	return out, nil
}

func (b *backupReader) length() (uint64, error) {
	c, err := b.byte()
	if err != nil {
		return 0, err
	}
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3f), nil
	case 1:
		d, err := b.byte()
		return uint64(c&0x3f)<<8 | uint64(d), err
	}
	switch c {
	case 0x80:
		p, err := b.next(4)
		if err != nil {
			return 0, err
		}
		return uint64(binary.BigEndian.Uint32(p)), nil
	case 0x81:
		p, err := b.next(8)
		if err != nil {
			return 0, err
		}
		return binary.BigEndian.Uint64(p), nil
	}
	return 0, fmt.Errorf("length encoding byte %#x, which a keyreg backup does not write", c)
}

func (b *backupReader) str(limit int64) ([]byte, error) {
	n, err := b.length()
	if err != nil {
		return nil, err
	}
	if n > uint64(limit) {
		return nil, fmt.Errorf("a string of %d bytes, over %d", n, limit)
	}
	return b.next(int(n))
}
