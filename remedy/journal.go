package remedy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// The journal is a file of JSON lines beside the backup. Its first line
// names the plan (digest) and the backup. Then, per batch, one line per key
// read (backed up, or skipped before the read) and a commit line with the
// backup's synced size, written and fsynced together after the backup's
// fsync; then one line per key the delete step decided. A line cut by a
// kill is ignored, and so is a batch without its commit line: its keys were
// never deleted (the delete step runs after the commit), and its backup
// bytes are cut off when the run resumes.

type journalLine struct {
	Plan   string `json:"plan,omitempty"`
	Backup string `json:"backup,omitempty"`
	// Target is the server applied to (password hidden), in the first
	// line: a journal is resumed on that server only.
	Target string `json:"target,omitempty"`
	// I is the key's index in the plan.
	I *int `json:"i,omitempty"`
	// Sha is the SHA-1 of the key's DUMP when it was backed up.
	Sha string `json:"sha,omitempty"`
	// Abs is the key's absolute expiry (ms, -1 none) when backed up.
	Abs int64 `json:"abs,omitempty"`
	// Idle is the idle time checked at delete (-1: not checked).
	Idle int64 `json:"idle,omitempty"`
	// Done is the outcome: "deleted", "expired", or why it was skipped.
	Done string `json:"done,omitempty"`
	// Off commits a batch: the backup's size before its EOF opcode.
	Off int64 `json:"off,omitempty"`
}

// keyState is what the journal says of one planned key.
type keyState struct {
	backed bool
	sha    string
	abs    int64
	idle   int64
	done   string
}

// journal appends lines to the journal file.
type journal struct {
	f   *os.File
	buf bytes.Buffer
}

func (j *journal) add(l journalLine) {
	b, _ := json.Marshal(l)
	j.buf.Write(b)
	j.buf.WriteByte('\n')
}

// commit writes the buffered lines and fsyncs.
func (j *journal) commit() error {
	if j.buf.Len() == 0 {
		return nil
	}
	if _, err := j.f.Write(j.buf.Bytes()); err != nil {
		return err
	}
	j.buf.Reset()
	return j.f.Sync()
}

// maxJournalLine bounds one line of a journal.
const maxJournalLine = 4096

// errJournalEmpty is a journal without a whole first line: a run killed
// before that line was synced, which backed up and deleted nothing.
var errJournalEmpty = errors.New("the journal is empty")

// readJournal reads a journal for the plan: the state of each key and the
// committed backup size (0 when no batch was committed). A journal of
// another plan, or of a server other than target ("" when not known), is
// an error.
func readJournal(r io.Reader, p *Plan, target string) (states []keyState, off int64, validEnd int64, err error) {
	states = make([]keyState, len(p.Keys))
	br := bufio.NewReaderSize(r, maxJournalLine+1)
	var pending []journalLine
	first := true
	var pos int64
	for {
		line, err := br.ReadSlice('\n')
		if err == io.EOF {
			break // a last line without its newline was cut: ignore it
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("journal offset %d: %v (lines are at most %d bytes)", pos, err, maxJournalLine)
		}
		var l journalLine
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, 0, 0, fmt.Errorf("journal offset %d: %v", pos, err)
		}
		pos += int64(len(line))
		if first {
			if l.Plan != p.Digest {
				return nil, 0, 0, errors.New("the journal is of another plan: give another --backup, or the plan it was written for")
			}
			if l.Target != "" && target != "" && l.Target != target {
				// Resumed elsewhere, every key the first run decided
				// would be skipped and reported as done.
				return nil, 0, 0, fmt.Errorf("the journal is of a run on %s, not %s: resume with the --url of that run (for a cluster, the same seed node), or give another --backup for this server", strconv.Quote(clipText(l.Target)), strconv.Quote(clipText(target)))
			}
			first = false
			validEnd = pos
			continue
		}
		switch {
		case l.Off > 0:
			for _, q := range pending {
				s := &states[*q.I]
				if q.Sha != "" {
					s.backed, s.sha, s.abs, s.idle = true, q.Sha, q.Abs, q.Idle
				} else {
					s.done = q.Done
				}
			}
			pending = pending[:0]
			off = l.Off
		case l.I == nil || *l.I < 0 || *l.I >= len(states):
			return nil, 0, 0, fmt.Errorf("journal offset %d: a key index out of the plan", pos)
		case l.Sha != "" || (l.Done != "" && !states[*l.I].backed):
			if len(pending) > len(states) {
				return nil, 0, 0, errors.New("the journal has more lines than the plan has keys")
			}
			pending = append(pending, l)
		case l.Done != "":
			states[*l.I].done = l.Done
		default:
			return nil, 0, 0, fmt.Errorf("journal offset %d: a line of no kind", pos)
		}
		if len(pending) == 0 {
			validEnd = pos // a resumed run appends here
		}
	}
	if first {
		return nil, 0, 0, errJournalEmpty
	}
	return states, off, validEnd, nil
}
