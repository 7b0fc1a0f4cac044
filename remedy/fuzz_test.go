package remedy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func seedPlan(t testing.TB) []byte {
	p := &Plan{Version: PlanVersion, Kind: KindPrune, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Finished: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC), Server: Server{Target: "redis://h:1", Mode: "standalone"}}
	for _, name := range []string{"tmp:a", "\xff\x00bin", ""} {
		k := newKey(name)
		k.Reason, k.Type, k.Size, k.TTLMillis, k.IdleSec, k.Group = ReasonUnregistered, "string", 10, -1, 5, "tmp:"
		p.Keys = append(p.Keys, k)
	}
	p.Digest = p.digest()
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// FuzzReadPlan: whatever the bytes, ReadPlan returns a plan that passes its
// own validation and writes back to the same digest, or an error; it never
// panics.
func FuzzReadPlan(f *testing.F) {
	f.Add(seedPlan(f))
	f.Add([]byte(`{"version":1,"kind":"prune","keys":[{"key_base64":"////","db":-1}]}`))
	f.Add([]byte(`{"version":1,"kind":"expire","created":"2026-01-01T00:00:00Z","finished":"2026-01-01T00:00:01Z","keys":[{"key":"a","reason":"ttl-missing","type":"hash","size":-1,"ttl_ms":-1,"idle_s":-1,"ttl_set_ms":5}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadPlan(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := p.validate(); err != nil {
			t.Fatalf("a plan read back fails validation: %v", err)
		}
		if p.digest() != p.Digest {
			t.Fatal("digest changed")
		}
	})
}

func seedBackup(t testing.TB) []byte {
	path := filepath.Join(t.TempDir(), "b.rdb")
	b, err := CreateBackup(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range []BackupEntry{
		{DB: 0, Key: "a", ExpireAtMs: -1, IdleSec: 3, Payload: Payload{Type: 0, Value: []byte{3, 'a', 'b', 'c'}, Version: 10}},
		{DB: 2, Key: string(bytes.Repeat([]byte{'k'}, 20000)), ExpireAtMs: 1 << 41, IdleSec: -1, Payload: Payload{Type: 0, Value: []byte{0xc0, 7}, Version: 10}},
	} {
		if err := b.Add(&e); err != nil {
			t.Fatal(i, err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestBackupRoundTrip(t *testing.T) {
	data := seedBackup(t)
	var keys []int
	err := ReadBackup(bytes.NewReader(data), Limits{}, func(e *BackupEntry) error {
		keys = append(keys, len(e.Key))
		return nil
	})
	if err != nil || len(keys) != 2 || keys[1] != 20000 {
		t.Fatalf("read %v, %v", keys, err)
	}
	// Every one-byte change and every cut is an error, never a panic.
	for i := range min(len(data), 200) {
		bad := bytes.Clone(data)
		bad[i] ^= 0x41
		if ReadBackup(bytes.NewReader(bad), Limits{}, nil) == nil {
			t.Errorf("byte %d changed: no error", i)
		}
		if ReadBackup(bytes.NewReader(data[:i]), Limits{}, nil) == nil {
			t.Errorf("cut at %d: no error", i)
		}
	}
	if err := ReadBackup(bytes.NewReader(data), Limits{MaxKeyBytes: 100}, nil); err == nil {
		t.Error("a 20000-byte key under MaxKeyBytes 100: no error")
	}
}

// FuzzReadBackup: ReadBackup bounds every length by the limits and the
// bytes present, and never panics.
func FuzzReadBackup(f *testing.F) {
	f.Add(seedBackup(f))
	f.Add([]byte("REDIS0010\xfa\x0akeyreg-len\x0a9999999999\xfe\x00\x00\x01a"))
	f.Add([]byte("REDIS0010\xfe\x00\xfa\x0akeyreg-len\x012\x00\x81\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		total := 0
		_ = ReadBackup(bytes.NewReader(data), Limits{MaxKeyBytes: 1 << 16, MaxValueBytes: 1 << 16, MaxEntries: 1000}, func(e *BackupEntry) error {
			total += len(e.Key) + len(e.Payload.Value)
			if total > len(data) {
				t.Fatalf("read %d bytes of keys and values from %d bytes", total, len(data))
			}
			return nil
		})
	})
}

func FuzzParseDump(f *testing.F) {
	f.Add(Payload{Type: 0, Value: []byte{3, 'a', 'b', 'c'}, Version: 10}.Dump())
	f.Fuzz(func(t *testing.T, d []byte) {
		p, err := ParseDump(d)
		if err == nil && !bytes.Equal(p.Dump(), d) {
			t.Fatal("a parsed DUMP does not rebuild to itself")
		}
	})
}

// TestSummaryEscapes: key-derived names cannot break the markdown table or
// the text lines.
func TestSummaryEscapes(t *testing.T) {
	p := &Plan{Kind: KindPrune, Server: Server{Target: "redis://h"}}
	for _, g := range []string{"a|b:", "`x`\n# y:", "<script>:"} {
		k := newKey(g + "1")
		k.Reason, k.Group, k.Size = ReasonUnregistered, g, 5
		p.Keys = append(p.Keys, k)
	}
	s := Summarize(p)
	if s.Keys != 3 || s.Bytes != 15 || len(s.ByGroup) != 3 {
		t.Fatalf("summary %+v", s)
	}
	var md, txt bytes.Buffer
	if err := WriteSummary(&md, FormatMarkdown, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummary(&txt, FormatText, s); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "| `") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 4 {
			t.Errorf("a table row with a stray pipe: %q", line)
		}
		if strings.HasPrefix(line, "# y") || strings.Contains(line, "<script>") && !strings.Contains(line, "`<script>:`") {
			t.Errorf("an unescaped name: %q", line)
		}
	}
	if strings.Contains(txt.String(), "\n# y") {
		t.Errorf("a line break from a name in the text summary:\n%s", txt.String())
	}
	if err := WriteSummary(&txt, "yaml", s); err == nil {
		t.Error("an unknown format: no error")
	}
}

// FuzzReadJournal: a journal is a file on disk anyone may have edited: its
// reader bounds lines and indexes and never panics.
func FuzzReadJournal(f *testing.F) {
	p := &Plan{Digest: "d", Keys: make([]Key, 3)}
	f.Add([]byte("{\"plan\":\"d\",\"backup\":\"b\"}\n{\"i\":0,\"sha\":\"x\",\"abs\":-1,\"idle\":-1}\n{\"off\":99}\n{\"i\":0,\"done\":\"deleted\"}\n"))
	f.Add([]byte("{\"plan\":\"d\"}\n{\"i\":7,\"done\":\"x\"}\n"))
	f.Add([]byte("{\"plan\":\"d\",\"target\":\"other\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		states, off, end, err := readJournal(bytes.NewReader(data), p, "t")
		if err != nil {
			return
		}
		if len(states) != 3 || off < 0 || end > int64(len(data)) {
			t.Fatalf("states %d, off %d, end %d of %d bytes", len(states), off, end, len(data))
		}
	})
}

// TestOutcomeEscapes: key names and skip reasons (from error replies and
// journals) cannot break the markdown tables or add lines to the text.
func TestOutcomeEscapes(t *testing.T) {
	p := &Plan{Kind: KindPrune, Keys: make([]Key, 3)}
	res := &Result{Deleted: 1, SkipCount: map[string]int{"error: a|b\n# x": 1, "`y`\x1b[2J": 1},
		Skipped: []Skip{{Key: quoteKey("k|`\n# h"), Reason: "error: a|b\n# x"}, {Key: quoteKey("k2"), Reason: "`y`\x1b[2J"}}}
	o := NewOutcome(p, res, errors.New("stopped\n# here"))
	if o.State != "partial" || o.Skipped != 2 || o.Error != "stopped" {
		t.Fatalf("outcome %+v", o)
	}
	for _, f := range Formats {
		var b bytes.Buffer
		if err := WriteOutcome(&b, f, o); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.ContainsAny(out, "\x1b") || strings.Contains(out, "\n# ") {
			t.Errorf("%s: an escape or a line from a name:\n%s", f, out)
		}
		if !strings.Contains(out, "partial") {
			t.Errorf("%s: a partial run does not say so:\n%s", f, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if f == FormatMarkdown && strings.HasPrefix(line, "| `") {
				cells := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
				if cells != 3 && cells != 4 {
					t.Errorf("a table row with a stray pipe: %q", line)
				}
			}
		}
	}
	if err := WriteOutcome(io.Discard, "yaml", o); err == nil {
		t.Error("an unknown format: no error")
	}
	ro := NewRestoreOutcome(&RestoreResult{Exists: 1, Skipped: []Skip{{Key: quoteKey("k|`\n# h"), Reason: "exists\x1b[2J"}}}, false, errors.New("NOPERM x\n# y"))
	for _, f := range Formats {
		var b bytes.Buffer
		if err := WriteRestoreOutcome(&b, f, ro); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.ContainsAny(out, "\x1b") || strings.Contains(out, "\n# ") || !strings.Contains(out, "partial") {
			t.Errorf("restore %s: an escape, a line from a name, or no partial:\n%s", f, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if f == FormatMarkdown && strings.HasPrefix(line, "| `") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 4 {
				t.Errorf("a table row with a stray pipe: %q", line)
			}
		}
	}
	if err := WriteRestoreOutcome(io.Discard, "yaml", ro); err == nil {
		t.Error("restore, an unknown format: no error")
	}
}
